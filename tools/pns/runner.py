"""Run scenarios in QEMU and judge what the guests produced.

A run builds the kernel the scenario needs (variant, architecture, the
scenario's config fragments), boots it with the initramfs, shares a
fresh results directory with the guest over 9p, captures the serial
console to console.log, and writes run.json and verdict.json
(tools/pns/verdict.py).  A batch runs a list of scenarios, each in its
own guest and results directory, and ends with a table.
"""

import datetime
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

from . import initramfs, kernel, module, qemu, target, tree
from .common import REPO, HarnessError, say, setting, step
from .scenario import Scenario, byte_time_ns, parse_baud, parse_list
from .verdict import (facts_for_judge, format_table, judge, print_verdict,
                      write_run_facts)

CMDLINES = REPO / "tools" / "cmdline"


def kernel_settings(sc=None):
    """(variant, arch, extra fragments): the settings, plus the
    fragments the scenario declares."""
    extra = setting("EXTRA_FRAGMENTS").split() + (sc.fragments if sc else [])
    return setting("VARIANT"), setting("ARCH"), extra


def build_all(sc=None):
    """Kernel, module and initramfs for the settings and scenario."""
    target.require_stressor()  # before a kernel build that could not be run
    variant, arch, extra = kernel_settings(sc)
    bdir = kernel.build(variant, arch, extra)
    ko = module.build(variant, arch, bdir)
    cpio = initramfs.build(variant, arch, ko, name=bdir.name)
    return bdir, cpio


def built(sc=None):
    """The kernel and initramfs as they are (run --no-build)."""
    target.require_stressor()
    variant, arch, extra = kernel_settings(sc)
    bdir = kernel.build_dir(variant, arch, extra)
    cpio = initramfs.cache_dir() / "initramfs" / f"{bdir.name}.cpio"
    for p in (bdir / qemu.arch(arch).image, cpio):
        if not p.exists():
            raise HarnessError(f"{p} is not built (run without --no-build, or make initramfs)")
    return bdir, cpio


def kernel_cmdline(sc=None, mode="scenario", duration=None):
    """common.txt, then nobkl.txt (or console.txt, or the scenario's
    pns-console-cmdline instead), scenario and user extras."""
    parts = [(CMDLINES / "common.txt").read_text().strip()]
    if sc and sc.console_cmdline:
        parts.append(sc.console_cmdline)
    else:
        parts.append(console_cmdline().read_text().strip())
    parts.append(f"pns.mode={mode}")
    if sc:
        parts += [f"pns.scenario={sc.name}", f"pns.duration={duration}", sc.cmdline]
    baud = line_baud(sc)
    if baud:
        parts.append(f"pns.baud={baud}")
    tty_users = setting("TTY_USERS")
    if tty_users:
        if not re.fullmatch(r"off|\d+(,\d+)*", tty_users):
            raise HarnessError(f"TTY_USERS={tty_users}: use baud rates (115200,9600) or off")
        parts.append(f"pns.tty_users={tty_users}")
    parts.append(setting("EXTRA_CMDLINE"))
    return " ".join(p for p in parts if p)


def line_baud(sc=None):
    """The console line's baud rate for a run (0: instant): BAUD when
    set, else the scenario's pns-baud."""
    want = setting("BAUD")
    if not want:
        return sc.baud if sc else 0
    try:
        return parse_baud(want)
    except ValueError as e:
        raise HarnessError(f"BAUD={want}: {e}")


def console_cmdline():
    """The target's tools/cmdline/ file for the CONSOLE setting: on 6.1
    nobkl.txt (the NOBKL earlycon) or console.txt (legacy), on 6.12
    console.txt (the series' nbcon ttyS0)."""
    want = setting("CONSOLE")
    tgt = target.current()
    if want not in tgt.consoles:
        raise HarnessError(f"CONSOLE={want}: KERNEL={tgt.name} has "
                           + " or ".join(sorted(tgt.consoles)))
    return CMDLINES / tgt.consoles[want]


def guest_cpus(sc=None):
    """CPUS when set, else the scenario's pns-cpus, else 4."""
    return int(setting("CPUS", str(sc.cpus if sc and sc.cpus else 4)))


def describe_build(res, bdir, sc=None):
    """kernel.config and source.json: which kernel a results directory
    comes from (the analysis reads the word size from kernel.config) and
    how it drove its consoles: the CONSOLE setting, or `scenario` with the
    line itself when the scenario brought its own (pns-console-cmdline)."""
    variant, arch, _extra = kernel_settings()
    shutil.copy2(bdir / ".config", res / "kernel.config")
    console = dict(console=setting("CONSOLE"))
    if sc and sc.console_cmdline:
        console = dict(console="scenario", console_cmdline=sc.console_cmdline)
    baud = line_baud(sc)
    console.update(baud=baud or "instant", byte_time_ns=byte_time_ns(baud))
    (res / "source.json").write_text(json.dumps(
        dict(tree.state(), variant=variant, arch=arch, build=bdir.name,
             **console), indent=1) + "\n")


class ScenarioRefused(HarnessError):
    """A scenario the kernel cannot run: `missing`, the options it needs
    (pns-needs, and on a slow line the target's byte_delay_ns option)
    that the kernel's .config does not have."""

    def __init__(self, message, missing):
        super().__init__(message)
        self.missing = list(missing)


def check_needs(sc, bdir):
    baud = line_baud(sc)
    missing = sc.missing_needs(kernel.parse_config((bdir / ".config").read_text()), baud,
                               target.current().line_option)
    if missing:
        line = f" on a {baud} baud line" if baud else ""
        raise ScenarioRefused(f"scenario {sc.name}{line} needs {', '.join(missing)}, which "
                              f"kernel {bdir.name} does not have (VARIANT, EXTRA_FRAGMENTS"
                              f"{', BAUD' if baud else ''})", missing)


def new_results_dir(name, explicit=None, latest=True):
    """A fresh results directory: `explicit` (empty), else
    RESULTS/NAME-TIME, which RESULTS/latest then points at unless
    `latest` is false (a directory that is not a run's)."""
    if explicit:
        res = Path(explicit)
        if res.exists() and any(res.iterdir()):
            raise HarnessError(f"results directory {res} is not empty")
        res.mkdir(parents=True, exist_ok=True)
        return res
    root = Path(setting("RESULTS"))
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    res = root / f"{name}-{stamp}"
    n = 1
    while res.exists():
        n += 1
        res = root / f"{name}-{stamp}-{n}"
    res.mkdir(parents=True)
    if latest:
        link = root / "latest"
        if link.is_symlink() or link.exists():
            link.unlink()
        link.symlink_to(res.name)
    return res


def run_scenario(name=None, results=None, build=True, duration=None):
    """Boot the guest for scenario `name` and judge the run.  The run time
    is DURATION if set, else `duration`, else the scenario's own."""
    sc = Scenario.load(name or setting("SCENARIO"))
    duration = int(setting("DURATION", str(duration or sc.duration)))
    bdir, cpio = build_all(sc) if build else built(sc)
    check_needs(sc, bdir)
    res = new_results_dir(sc.name, results)
    cmdline = kernel_cmdline(sc, duration=duration)
    describe_build(res, bdir, sc)
    cpus = guest_cpus(sc)
    boot_timeout = int(setting("BOOT_TIMEOUT"))
    timeout = boot_timeout + duration + int(setting("GRACE"))
    retries = int(setting("BOOT_RETRIES"))
    boot_hangs = []
    t0 = time.monotonic()
    with step(f"boot {sc.name}: {cpus} CPUs, {qemu.accel()}, {bdir.name}, "
              f"{duration}s + up to {timeout - duration}s (results: {res})"):
        for attempt in range(1, retries + 2):
            qemu_rc, hung, booted = qemu.boot(bdir, cpio, cmdline, res, cpus,
                                              timeout, boot_timeout,
                                              serial_logs=sc.serial_logs)
            if booted or not hung or attempt > retries:
                break
            boot_hangs.append(qemu.keep_boot_hang(res, attempt, boot_timeout,
                                                  serial_logs=sc.serial_logs))
    facts = write_run_facts(res, sc, hung=hung, qemu_rc=qemu_rc,
                            elapsed=time.monotonic() - t0, boot_hangs=boot_hangs,
                            duration=duration)
    verdict = judge(res, sc, **facts_for_judge(facts))
    print_verdict(verdict)
    return verdict


def run_batch(text, results=None, build=True):
    """Run a scenario list ("3*storm backlog"), each in its own guest and
    results directory, and end with a summary table.  One scenario runs
    as before; returns 0 when every run passed, else 1."""
    names = parse_list(text)
    if len(names) == 1:
        v = run_scenario(names[0], results, build=build)
        return 0 if v["verdict"] == "pass" else 1
    if results:
        raise HarnessError("--results names one directory: use it with one scenario")
    rows, failed = [], 0
    for i, name in enumerate(names, 1):
        say(f"[batch] {i}/{len(names)}: {name}")
        v = run_scenario(name, build=build)
        failed += v["verdict"] != "pass"
        rows.append(summary_row(v))
    say(format_table(SUMMARY_HEAD, rows))
    say(f"[batch] {len(names) - failed} of {len(names)} passed")
    return 1 if failed else 0


def verdict_soak(n, scenario="stress", arches=("x86_64", "i386"), host_load=True):
    """N runs of a scenario in a row on each architecture, while
    stress-ng loads every host CPU (a loaded host deschedules vCPUs, the
    condition that an ordering by timestamps gets wrong), and how many
    passed.  Returns 0 when all did."""
    load = None
    if host_load:
        if not shutil.which("stress-ng"):
            raise HarnessError("stress-ng is not installed on the host (tools/deps.sh)")
        load = subprocess.Popen(["stress-ng", "--cpu", "0", "--quiet"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    passed, rows = {}, []
    old_arch = os.environ.get("ARCH")
    try:
        for arch in arches:
            os.environ["ARCH"] = arch
            build_all(Scenario.load(scenario))
            passed[arch] = 0
            for i in range(1, n + 1):
                say(f"[soak] {arch} {i}/{n}: {scenario}"
                    + (" (host loaded by stress-ng)" if load else ""))
                v = run_scenario(scenario, build=False)
                passed[arch] += v["verdict"] == "pass"
                rows.append((arch,) + summary_row(v))
    finally:
        if old_arch is None:
            os.environ.pop("ARCH", None)
        else:
            os.environ["ARCH"] = old_arch
        if load:
            load.terminate()
            load.wait()
    say(format_table(("arch",) + SUMMARY_HEAD, rows))
    for arch in arches:
        say(f"[soak] {arch}: {passed[arch]} of {n} {scenario} runs passed")
    return 0 if all(passed[a] == n for a in arches) else 1


SUMMARY_HEAD = ("scenario", "verdict", "records", "takeovers", "handovers", "reprints",
                "emergency delay p99", "splats", "results")


def summary_row(v):
    """One row of the batch table from a run's verdict.  The delay is the
    emergency records' store-to-console delay (analysis/emergency.py),
    with the number of records it rests on."""
    a = v.get("analysis") or {}
    c = a.get("counts") or {}
    tk = c.get("takeovers") or {}
    em = (a.get("latency") or {}).get("emergency_store_to_console") or {}
    p99 = em.get("p99")
    return (v["scenario"], v["verdict"], c.get("records", "-"), tk.get("hostile", "-"),
            tk.get("handover", "-"), c.get("reprints", "-"),
            "-" if p99 is None else f"{p99 / 1000:.1f} ms (n={em['count']})",
            ",".join(f"{k}={n}" for k, n in sorted(v["splats"].items())) or "0",
            Path(v["results"]).name)


def shell():
    """Boot the guest with an interactive shell on the serial port."""
    bdir, cpio = build_all()
    res = new_results_dir("shell")
    # The serial port and the monitor share the terminal (Ctrl-A C
    # switches), and QEMU logs what the port sends to console.log too, so
    # a run by hand can be checked like a scenario run.
    cmd = qemu.command(bdir, cpio, kernel_cmdline(mode="shell"), res, "chardev:con0",
                       guest_cpus()) + [
        "-chardev", f"stdio,id=con0,mux=on,logfile={res / 'console.log'}",
        "-mon", "chardev=con0"]
    (res / "qemu.cmd").write_text(shlex.join(cmd) + "\n")
    describe_build(res, bdir)
    say(f"[shell] /host in the guest is {res}; Ctrl-A X quits QEMU")
    rc = subprocess.call(cmd)
    say(f"[shell] serial log: {res / 'console.log'}")
    if (res / "trace.dat").exists():
        say(f"[shell] check the run: {sys.executable} -m analysis check {res}")
    return rc
