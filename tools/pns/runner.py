"""Run a scenario in QEMU and judge what the guest produced.

A run boots the test kernel with the initramfs, shares a fresh results
directory with the guest over 9p, captures the serial console to
console.log, kills the guest when it overruns its time, and writes
verdict.json from console.log and (when present) the trace analysis.
The guest's own opinion is never the verdict: only its markers and
outputs are read.
"""

import datetime
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import consolelog, initramfs, kernel, module, tree
from .common import REPO, HarnessError, say, setting, step

SCENARIOS = REPO / "workloads" / "scenarios"
CMDLINES = REPO / "tools" / "cmdline"
BOOT_ALLOWANCE = 90   # seconds for a TCG lockdep kernel to reach /init
GRACE = 60            # seconds after the scenario for trace copy and poweroff
# TCG's "max" CPU says AuthenticAMD; a 32-bit SMP kernel then WARNs that the
# AMD model is not SMP-certified (init_amd()), so i386 guests get Intel's.
QEMU_CPU = {"x86_64": "max", "i386": "max,vendor=GenuineIntel"}


@dataclass
class Scenario:
    name: str
    path: Path
    description: str = ""
    duration: int = 10
    cmdline: str = ""
    expect_splat: list = field(default_factory=list)
    expect_end: str = "finish"   # or "panic"
    expect_rule: str = ""        # the analysis must report this rule (breakers)

    @classmethod
    def load(cls, name):
        path = SCENARIOS / f"{name}.sh"
        if not path.exists():
            have = ", ".join(s.name for s in scenarios())
            raise HarnessError(f"no scenario '{name}' (have: {have})")
        sc = cls(name=name, path=path)
        for line in path.read_text().splitlines():
            m = re.match(r"#\s*pns-([\w-]+):\s*(.*)$", line)
            if not m:
                continue
            key, val = m.group(1), m.group(2).strip()
            if key == "description":
                sc.description = val
            elif key == "duration":
                sc.duration = int(val)
            elif key == "cmdline":
                sc.cmdline = val
            elif key == "expect-splat":
                sc.expect_splat = [v.strip() for v in val.split(",") if v.strip()]
            elif key == "expect-end":
                sc.expect_end = val
            elif key == "expect-rule":
                sc.expect_rule = val
        return sc


def scenarios():
    return [Scenario.load(p.stem) for p in sorted(SCENARIOS.glob("*.sh"))]


def kernel_settings():
    extra = setting("EXTRA_FRAGMENTS", "").split()
    return setting("VARIANT", "debug"), setting("ARCH", "x86_64"), extra


def build_all():
    """Kernel, module and initramfs for the current settings."""
    variant, arch, extra = kernel_settings()
    bdir = kernel.build(variant, arch, extra)
    ko = module.build(variant, arch, bdir)
    cpio = initramfs.build(variant, arch, ko)
    return bdir, cpio


def kernel_cmdline(sc=None, mode="scenario", duration=None):
    """common.txt, then nobkl.txt (or console.txt), scenario and user extras."""
    parts = [(CMDLINES / "common.txt").read_text().strip()]
    nobkl = CMDLINES / "nobkl.txt"
    parts.append((nobkl if nobkl.exists() else CMDLINES / "console.txt").read_text().strip())
    parts.append(f"pns.mode={mode}")
    if sc:
        parts += [f"pns.scenario={sc.name}", f"pns.duration={duration}", sc.cmdline]
    parts.append(setting("EXTRA_CMDLINE", ""))
    return " ".join(p for p in parts if p)


def accel():
    """TCG unless KVM is asked for or a probe shows the CPU can do it."""
    want = setting("ACCEL", "auto")
    if want != "auto":
        return want
    try:
        flags = Path("/proc/cpuinfo").read_text()
        ok = os.access("/dev/kvm", os.R_OK | os.W_OK) and re.search(r"\b(vmx|svm)\b", flags)
    except OSError:
        ok = False
    return "kvm" if ok else "tcg,thread=multi"


def qemu_command(bdir, cpio, cmdline, share, serial, monitor=None):
    arch = setting("ARCH", "x86_64")
    extra = ["-monitor", f"unix:{monitor},server,nowait"] if monitor else []
    return ["qemu-system-x86_64" if arch == "x86_64" else "qemu-system-i386",
            "-accel", accel(), "-cpu", setting("QEMU_CPU", QEMU_CPU[arch]),
            "-smp", setting("CPUS", "4"), "-m", setting("MEM", "1024"),
            "-nodefaults", "-display", "none", "-no-reboot",
            "-kernel", str(bdir / kernel.ARCHES[arch]), "-initrd", str(cpio),
            "-append", cmdline, "-serial", serial,
            "-virtfs", f"local,path={share},mount_tag=host,security_model=none,id=host"
            ] + extra


def describe_build(res, bdir):
    """kernel.config and source.json: which kernel a results directory
    comes from (the analysis reads the word size from kernel.config)."""
    variant, arch, _extra = kernel_settings()
    shutil.copy2(bdir / ".config", res / "kernel.config")
    (res / "source.json").write_text(json.dumps(
        dict(tree.state(), variant=variant, arch=arch), indent=1) + "\n")


def new_results_dir(name, explicit=None):
    if explicit:
        res = Path(explicit)
        if res.exists() and any(res.iterdir()):
            raise HarnessError(f"results directory {res} is not empty")
        res.mkdir(parents=True, exist_ok=True)
        return res
    root = Path(setting("RESULTS", str(REPO / "results")))
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    res = root / f"{name}-{stamp}"
    n = 1
    while res.exists():
        n += 1
        res = root / f"{name}-{stamp}-{n}"
    res.mkdir(parents=True)
    latest = root / "latest"
    if latest.is_symlink() or latest.exists():
        latest.unlink()
    latest.symlink_to(res.name)
    return res


def run_scenario(name=None, results=None, build=True, duration=None):
    """Boot the guest for scenario `name` and judge the run.  The run time
    is DURATION if set, else `duration`, else the scenario's own."""
    sc = Scenario.load(name or setting("SCENARIO", "default"))
    duration = int(setting("DURATION", str(duration or sc.duration)))
    variant, arch, extra = kernel_settings()
    if build:
        bdir, cpio = build_all()
    else:
        bdir = kernel.build_dir(variant, arch)
        cpio = initramfs.cache_dir() / "initramfs" / f"{variant}-{arch}.cpio"
    res = new_results_dir(sc.name, results)
    cmdline = kernel_cmdline(sc, duration=duration)
    describe_build(res, bdir)
    boot_timeout = int(setting("BOOT_TIMEOUT", str(BOOT_ALLOWANCE)))
    timeout = boot_timeout + duration + int(setting("GRACE", str(GRACE)))
    retries = int(setting("BOOT_RETRIES", "1"))
    boot_hangs = []
    t0 = time.monotonic()
    with step(f"boot {sc.name}: {setting('CPUS', '4')} CPUs, {accel()}, "
              f"{variant}-{arch}, {duration}s + up to {timeout - duration}s "
              f"(results: {res})"):
        for attempt in range(1, retries + 2):
            qemu_rc, hung, booted = boot_guest(bdir, cpio, cmdline, res, timeout, boot_timeout)
            if booted or not hung or attempt > retries:
                break
            boot_hangs.append(keep_boot_hang(res, attempt, boot_timeout))
    facts = write_run_facts(res, sc, hung=hung, qemu_rc=qemu_rc,
                            elapsed=time.monotonic() - t0, boot_hangs=boot_hangs,
                            duration=duration)
    verdict = judge(res, sc, **facts_for_judge(facts))
    print_verdict(verdict)
    return verdict


# What a run measured about itself and cannot measure again: the verdict
# is rebuilt from these and the files the guest left (recheck).
RUN_FACTS = "run.json"
FACT_KEYS = ("scenario", "hung", "qemu_rc", "elapsed_s", "boot_hangs")


def write_run_facts(res, sc, hung, qemu_rc, elapsed, boot_hangs, duration):
    """Write run.json: the facts of the boot the verdict depends on."""
    facts = {"scenario": sc.name, "hung": hung, "qemu_rc": qemu_rc,
             "elapsed_s": round(elapsed, 1), "boot_hangs": list(boot_hangs),
             "duration_s": duration}
    (Path(res) / RUN_FACTS).write_text(json.dumps(facts, indent=1) + "\n")
    return facts


def read_run_facts(res):
    """The run facts of a results directory: run.json, or the same fields
    of verdict.json for a directory written before run.json existed."""
    res = Path(res)
    for name in (RUN_FACTS, "verdict.json"):
        try:
            facts = json.loads((res / name).read_text())
        except FileNotFoundError:
            continue
        except (OSError, ValueError) as e:
            raise HarnessError(f"{res / name}: unreadable ({e})")
        missing = [k for k in FACT_KEYS if k not in facts]
        if missing:
            raise HarnessError(f"{res / name}: no {', '.join(missing)}")
        return {k: facts[k] for k in FACT_KEYS}
    raise HarnessError(f"{res}: neither {RUN_FACTS} nor verdict.json: not a results directory")


def facts_for_judge(facts):
    return {"hung": facts["hung"], "qemu_rc": facts["qemu_rc"],
            "elapsed": facts["elapsed_s"], "boot_hangs": facts["boot_hangs"]}


def results_dirs(paths):
    """Expand the arguments of recheck: a results directory stands for
    itself, any other directory for the results directories inside it."""
    out = []
    for p in map(Path, paths):
        if not p.is_dir():
            raise HarnessError(f"{p}: no such directory")
        if (p / RUN_FACTS).exists() or (p / "verdict.json").exists():
            out.append(p)
            continue
        inner = sorted(q for q in p.iterdir() if q.is_dir() and not q.is_symlink()
                       and ((q / RUN_FACTS).exists() or (q / "verdict.json").exists()))
        if not inner:
            raise HarnessError(f"{p}: not a results directory and holds none")
        out += inner
    return out


def recheck(paths):
    """Judge results directories again with today's analysis and
    scenario expectations, from what each run left; rewrite verdict.json
    and print a table of old and new verdicts.  Returns the exit code:
    0 all pass, 1 some fail, 2 some directory could not be judged."""
    rows, worst = [], 0
    for res in results_dirs(paths):
        try:
            old = json.loads((res / "verdict.json").read_text()).get("verdict", "-")
        except (OSError, ValueError):
            old = "-"
        try:
            facts = read_run_facts(res)
            with step(f"recheck {res}"):
                v = judge(res, Scenario.load(facts["scenario"]), **facts_for_judge(facts))
        except HarnessError as e:
            say(f"[recheck] {res}: {e}")
            rows.append((res.name, "?", old, "unusable", "-", str(e)))
            worst = 2
            continue
        print_verdict(v)
        ana = v.get("analysis") or {}
        first = (v["problems"] or [""])[0]
        rows.append((res.name, v["scenario"], old, v["verdict"],
                     ana.get("verdict", "-"), first))
        if v["verdict"] != "pass":
            worst = max(worst, 1)
    say(format_table(("results", "scenario", "was", "now", "analysis", "first problem"), rows))
    return worst


def format_table(head, rows):
    """A plain text table, one column per field, the last one free."""
    rows = [tuple(str(c) for c in r) for r in rows]
    widths = [max(len(r[i]) for r in rows + [head]) for i in range(len(head) - 1)]
    fmt = "  ".join(f"{{:{w}}}" for w in widths) + "  {}"
    return "\n".join(fmt.format(*r).rstrip() for r in [head] + rows)


def boot_guest(bdir, cpio, cmdline, res, timeout, boot_timeout):
    """Run the guest once. It is killed when it has not reached /init
    after boot_timeout seconds, or not finished after timeout seconds;
    before that, the monitor reports where its CPUs are (guest-state.txt).
    Returns (qemu exit code, hung, reached /init)."""
    mon_dir = Path(tempfile.mkdtemp(prefix="pns-qemu-"))
    monitor_path = mon_dir / "monitor"
    cmd = qemu_command(bdir, cpio, cmdline, res, f"file:{res / 'console.log'}",
                       monitor=monitor_path)
    (res / "qemu.cmd").write_text(shlex.join(cmd) + "\n")
    watch = InitWatch(res / "console.log")
    t0 = time.monotonic()
    try:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL,
                                stdout=open(res / "qemu.log", "w"),
                                stderr=subprocess.STDOUT)
        while proc.poll() is None:
            waited = time.monotonic() - t0
            booted = watch.reached()
            if waited > timeout or (not booted and waited > boot_timeout):
                (res / "guest-state.txt").write_text(guest_state(monitor_path, bdir))
                proc.kill()
                return proc.wait(), True, booted
            time.sleep(1)
        return proc.returncode, False, watch.reached()
    finally:
        shutil.rmtree(mon_dir, ignore_errors=True)


class InitWatch:
    """Notices the guest init's first marker in a growing console.log
    without reading the whole file each time."""

    MARK = b"pns: init ok"

    def __init__(self, path):
        self.path = path
        self.offset = 0
        self.tail = b""
        self.seen = False

    def reached(self):
        if self.seen:
            return True
        try:
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                data = f.read()
        except OSError:
            return False
        self.offset += len(data)
        self.seen = self.MARK in self.tail + data
        self.tail = data[-len(self.MARK):] if data else self.tail
        return self.seen


def guest_state(monitor_path, bdir):
    from .monitor import guest_state as state
    word = 8 if setting("ARCH", "x86_64") == "x86_64" else 4
    return state(monitor_path, bdir / "System.map", word)


def keep_boot_hang(res, attempt, boot_timeout):
    """Move a boot that hung before /init aside (boot-hang-N/) for the
    next attempt; return what the verdict says about it."""
    keep = res / f"boot-hang-{attempt}"
    keep.mkdir()
    for name in ("console.log", "qemu.log", "guest-state.txt"):
        if (res / name).exists():
            shutil.move(str(res / name), str(keep / name))
    lines = (keep / "console.log").read_text(errors="replace").splitlines() \
        if (keep / "console.log").exists() else []
    return {"attempt": attempt, "after_s": boot_timeout,
            "last_console_line": lines[-1] if lines else "",
            "dir": keep.name}


def judge(res, sc, hung, qemu_rc, elapsed, boot_hangs=()):
    """Write verdict.json for a finished (or killed) run."""
    res = Path(res)
    log = res / "console.log"
    lines = log.read_text(errors="replace").splitlines() if log.exists() else []
    splats, examples = consolelog.scan(lines)
    booted = any("pns: init ok" in ln for ln in lines)
    end = [ln for ln in lines if f"pns: scenario {sc.name} end rc=" in ln]
    rc_file = res / "scenario.rc"
    if rc_file.exists():
        scenario_rc = int(rc_file.read_text().strip() or -1)
    elif end:
        scenario_rc = int(re.search(r"rc=(-?\d+)", end[-1]).group(1))
    else:
        scenario_rc = None
    finished = scenario_rc is not None
    problems = []
    if not booted:
        problems.append("the guest never reached /init")
    if hung:
        where = " (CPU state: guest-state.txt)" if (res / "guest-state.txt").exists() else ""
        problems.append(f"hung: killed after {elapsed:.0f}s{where}")
    if sc.expect_end == "finish":
        if booted and not finished and not hung:
            problems.append("the scenario did not finish")
        if finished and scenario_rc != 0:
            problems.append(f"the scenario exited with {scenario_rc}")
    for cls in sc.expect_splat:
        if splats.get(cls, 0) == 0:
            problems.append(f"expected a {cls} splat, saw none")
    for cls, n in sorted(splats.items()):
        if cls not in sc.expect_splat:
            problems.append(f"{n} {cls} splat(s), first: {examples[cls]}")
    analysis = analyse(res)
    bootlog = check_bootlog(res, traced_span(analysis))
    if bootlog and not bootlog["ok"]:
        for what in ("missing", "out_of_order"):
            if bootlog[what]:
                problems.append(f"boot log: {len(bootlog[what])} dmesg record(s) "
                                f"{what.replace('_', ' ')} on the console, first: "
                                f"{bootlog[what][0]}")
    notes = [f"boot attempt {h['attempt']} hung before /init (killed after "
             f"{h['after_s']}s, last console line: {h['last_console_line'][:100]!r}; "
             f"kept in {h['dir']}/); booted again" for h in boot_hangs]
    if sc.expect_rule:
        # A deliberately broken kernel: the analysis must catch that rule.
        found = (analysis or {}).get("violations_by_rule", {}).get(sc.expect_rule, 0)
        if found:
            notes.append(f"the analysis caught the expected rule {sc.expect_rule} "
                         f"({found} violation(s))")
        else:
            problems.append(f"the analysis did not report the expected rule "
                            f"{sc.expect_rule} (verdict: {(analysis or {}).get('verdict')})")
    elif analysis and analysis.get("verdict") != "pass":
        why = "; ".join(analysis.get("reasons") or [str(analysis.get("error", ""))])
        if series_applied(res):
            problems.append(f"analysis verdict: {analysis.get('verdict')} ({why})")
        else:
            # A plain 6.1 kernel has no nobkl tracepoints to analyse.
            notes.append(f"analysis not applicable without the patch series: {why}")
    verdict = {
        "scenario": sc.name,
        "verdict": "fail" if problems else "pass",
        "problems": problems,
        "notes": notes,
        "booted": booted,
        "finished": finished,
        "scenario_rc": scenario_rc,
        "hung": hung,
        "boot_hangs": list(boot_hangs),
        "qemu_rc": qemu_rc,
        "elapsed_s": round(elapsed, 1),
        "splats": splats,
        "splat_examples": examples,
        "expected_splats": sc.expect_splat,
        "bootlog": bootlog,
        "analysis": analysis,
        "results": str(res),
    }
    (res / "verdict.json").write_text(json.dumps(verdict, indent=1) + "\n")
    return verdict


def check_bootlog(res, traced=None):
    """Compare the guest's dmesg.txt (when a scenario saved one) with the
    console: every record the kernel logged must have reached the console.
    Records corrupted by a byte within `traced` are left to the analysis."""
    if not (res / "dmesg.txt").exists() or not (res / "console.log").exists():
        return None
    try:
        from analysis.bootlog import check_files
    except ImportError:
        return None
    return check_files(res / "dmesg.txt", res / "console.log", res / "printk.txt", traced)


def traced_span(analysis):
    """(first, last) timestamp of a trace that the analysis checked against
    the serial log, or None: only there can it judge a corrupted line."""
    if not analysis or analysis.get("verdict") not in ("pass", "fail"):
        return None
    trace = analysis.get("trace") or {}
    if not (analysis.get("serial") or {}).get("synced"):
        return None
    if trace.get("first_ts") is None or trace.get("last_ts") is None:
        return None
    return (trace["first_ts"], trace["last_ts"])


def series_applied(res):
    """True when the run's kernel had patches applied (see source.json)."""
    try:
        return bool(json.loads((Path(res) / "source.json").read_text())["series"])
    except (OSError, ValueError, KeyError):
        return True   # unknown: do not excuse a missing analysis


def analyse(res):
    """Run the timeline analysis on a results directory when it can.

    It runs as its own process (`python3 -m analysis check --json`): the
    analysis reads trace.dat through libtracecmd, and a crash in the
    library must not take the harness and the verdict down with it."""
    if not (res / "trace.dat").exists() or not (REPO / "analysis").is_dir():
        return None
    proc = subprocess.run([sys.executable, "-m", "analysis", "check", "--json", str(res)],
                          cwd=REPO, capture_output=True, text=True)
    try:
        return json.loads(proc.stdout)
    except ValueError:
        why = (f"killed by signal {-proc.returncode}" if proc.returncode < 0
               else f"exit {proc.returncode}")
        last = (proc.stderr.strip().splitlines() or [""])[-1]
        return {"verdict": "error", "error": f"the analysis crashed ({why}): {last}"}


def analysis_headline(analysis):
    """The analysis' own headline lines for a run that has one."""
    if not analysis or "counts" not in analysis and not analysis.get("error"):
        return []
    from analysis.report import headline
    try:
        return headline(analysis)
    except (KeyError, TypeError):
        # A verdict.json of an older analysis: its problems say enough.
        return []


def print_verdict(v):
    say(f"[verdict] {v['scenario']}: {v['verdict'].upper()}  "
        f"(booted={v['booted']} finished={v['finished']} hung={v['hung']} "
        f"splats={v['splats'] or 'none'})")
    for p in v["problems"]:
        say(f"[verdict]   - {p}")
    for line in analysis_headline(v.get("analysis")):
        say(f"[verdict] {line}")
    for n in v.get("notes", []):
        say(f"[verdict]   note: {n}")
    say(f"[verdict] results: {v['results']}")


def shell():
    """Boot the guest with an interactive shell on the serial port."""
    bdir, cpio = build_all()
    res = new_results_dir("shell")
    # The serial port and the monitor share the terminal (Ctrl-A C
    # switches), and QEMU logs what the port sends to console.log too, so
    # a run by hand can be checked like a scenario run.
    cmd = qemu_command(bdir, cpio, kernel_cmdline(mode="shell"), res, "chardev:con0") + [
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
