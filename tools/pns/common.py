"""Shared helpers: paths, settings, progress lines, logged commands, stamps."""

import hashlib
import json
import os
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


class HarnessError(Exception):
    """A failure with a message meant for the user (no traceback)."""


class Setting:
    """One harness setting: its environment variable (make passes them
    through), its default, what it means, and how the README shows the
    default when it is not a literal (`value` computes that default)."""

    def __init__(self, name, default, meaning, shown=None, value=None):
        self.name, self.default, self.meaning = name, default, meaning
        self.shown = shown if shown is not None else (f"`{default}`" if default else "")
        self.value = value

    def default_value(self):
        return self.value() if self.value else self.default


# Every setting of the harness, in the order the README's table shows
# them; `make help`, the README table and the CLI help come from here.
SETTINGS = (
    Setting("SCENARIO", "storm", "the scenarios to run: `workloads/scenarios/<name>.sh`, "
            "several as a list with repeat counts (`\"3*storm backlog\"`); "
            "`make scenarios` lists them"),
    Setting("DURATION", "", "seconds each scenario runs", shown="the scenario's"),
    Setting("VARIANT", "debug", "kernel config variant, `tools/configs/<variant>.config`; "
            "`make variants`"),
    Setting("KERNEL", "6.1", "the kernel target: `6.1` (the RFC's NOBKL consoles, "
            "ported) or `6.12` (mainline nbcon); each its Debian linux-source package, "
            "`patches/<target>/` and its own tree and builds in the cache"),
    Setting("ARCH", "x86_64", "`x86_64` or `i386` (the i386 guest has Debian's i386 busybox "
            "and trace-cmd, no stress-ng)"),
    Setting("CONSOLE", "nobkl", "how the kernel drives ttyS0: `nobkl` (the series' NOBKL "
            "earlycon; on KERNEL=6.12 the ttyS0 console, which the series makes nbcon) or "
            "`legacy` (6.1 only: `console=ttyS0`, the same UART as a legacy console); a "
            "scenario with `pns-console-cmdline` brings its own line instead"),
    Setting("CPUS", "", "guest CPUs", shown="the scenario's, else `4`"),
    Setting("MEM", "1024", "guest memory in MiB"),
    Setting("TTY_USERS", "", "other users of the console's port while the scenario runs: "
            "baud rates (`115200,9600`) through which `stty` cycles `/dev/ttyS0` (a change "
            "every 200 ms) while user space writes a line to it every 20 ms; the scenario's "
            "`pns.tty_users=` when unset; `off`: nobody", shown="the scenario's, else off"),
    Setting("BAUD", "", "the console line's speed: a baud rate (`115200`, `9600`) or "
            "`instant`; a byte of a 10-bit frame takes its time where the UART drivers wait "
            "for the transmitter, whichever console path prints (the debug interface's "
            "`byte_delay_ns`, so it needs `CONFIG_PRINTK_NOBKL_DEBUG`)",
            shown="the scenario's `pns-baud`, else instant"),
    Setting("EXTRA_FRAGMENTS", "", "more Kconfig fragments to merge (space-separated paths)"),
    Setting("EXTRA_CMDLINE", "", "more kernel command-line arguments"),
    Setting("PNS_CACHE", "~/.cache/printk-nobkl-stress", "kernel tree, builds, initramfs, logs",
            value=lambda: str(Path.home() / ".cache" / "printk-nobkl-stress")),
    Setting("RESULTS", "results", "where run directories go (`make recheck`: the "
            "directories to judge, default `results/latest`)",
            value=lambda: str(REPO / "results")),
    Setting("JOBS", "", "parallel kernel build jobs", shown="number of CPUs",
            value=lambda: str(os.cpu_count() or 2)),
    Setting("ACCEL", "auto", "`auto` (TCG unless KVM works), `tcg,thread=multi`, `kvm`"),
    Setting("QEMU_CPU", "", "QEMU's `-cpu` model",
            shown="the architecture's (`max`; i386: `max,vendor=GenuineIntel`)"),
    Setting("BOOT_TIMEOUT", "90", "seconds allowed to reach `/init` before a run counts as "
            "hung (`guest-state.txt` shows where the CPUs were)"),
    Setting("GRACE", "60", "seconds allowed after the scenario's run time (trace copy, "
            "poweroff) before a run counts as hung"),
    Setting("BENCH", "all", "what `make bench` runs: `console` (NOBKL against legacy "
            "and no console), `analysis` (analysis speed), `all`"),
    Setting("ROUNDS", "3", "`make bench`: rounds of the console benchmark, its three "
            "modes interleaved in each; the report gives each figure's median and range "
            "over the rounds"),
    Setting("BOOT_RETRIES", "1", "boots again after a boot that never reached `/init`, kept "
            "in `boot-hang-N/` and noted in the verdict"),
    Setting("N", "50", "`make verdict-soak`: stress runs per architecture; `make "
            "test-repeat`: rounds of `make test`'s tests with the host idle, and as many "
            "under `stress-ng --cpu 2` (there `3` unless set)"),
    Setting("CHECKERS", "kasan+kmemleak kcsan", "`make checkers`: the checker kernels, "
            "each the variant plus its fragments from `tools/configs/checkers/`"),
    Setting("SOAK", "3600", "`make soak`: seconds of soak runs (fresh guests one after "
            "another; the last one starts before the time is up)"),
    Setting("COMPARE", "storm backlog seed-demo panic-end warn-thread", "`make compare`: "
            "the scenarios each kernel target runs, one guest at a time (a list as "
            "`SCENARIO` takes); `BAUD` and the other settings apply to every run, `KERNEL` "
            "is each target in turn"),
    Setting("LINK", "1", "`make check-series`: `1` links vmlinux after every patch, `0` "
            "builds only the directories each patch touches"),
    Setting("FORCE", "", "`make tree FORCE=1`: discard local commits and edits in the "
            "kernel tree"),
)
SETTING = {s.name: s for s in SETTINGS}


def setting(name, default=None):
    """A harness setting from the environment (make passes them), else
    `default`, else its default from SETTINGS."""
    value = os.environ.get(name, "")
    if value != "":
        return value
    return default if default is not None else SETTING[name].default_value()


def settings_table():
    """The README's table of settings, as markdown."""
    rows = ["| variable | default | meaning |", "|---|---|---|"]
    rows += [f"| `{s.name}` | {s.shown} | {s.meaning} |" for s in SETTINGS]
    return "\n".join(rows) + "\n"


def settings_help():
    """The settings for `make help` and the CLI's help: one line each."""
    width = max(len(s.name) for s in SETTINGS)
    plain = lambda t: t.replace("`", "")  # noqa: E731
    return "\n".join(f"  {s.name:{width}}  {plain(s.meaning)}"
                     + (f" (default: {plain(s.shown)})" if s.shown else "")
                     for s in SETTINGS)


def setting_int(name, lo=0, default=None):
    """An integer setting, at least lo (unset: `default`, else its default
    from SETTINGS); a clear error otherwise."""
    value = setting(name, default)
    try:
        n = int(value)
    except ValueError:
        n = None
    if n is None or n < lo:
        raise HarnessError(f"{name}={value!r}: expected an integer >= {lo}")
    return n


def setting_flag(name):
    """A 0/1 setting (empty: its default)."""
    value = setting(name) or "0"
    if value not in ("0", "1"):
        raise HarnessError(f"{name}={value!r}: expected 0 or 1")
    return value == "1"


@contextmanager
def settings_env(values):
    """Run with these settings in the environment, then restore them."""
    old = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def cache_dir():
    return Path(setting("PNS_CACHE"))


def logs_dir():
    d = cache_dir() / "logs"
    d.mkdir(parents=True, exist_ok=True)
    return d


def say(msg):
    print(msg, flush=True)


@contextmanager
def step(what):
    """Print one progress line per long step with its duration."""
    start = time.monotonic()
    say(f"[{what}] ...")
    try:
        yield
    except BaseException:
        say(f"[{what}] FAILED after {time.monotonic() - start:.1f}s")
        raise
    say(f"[{what}] done in {time.monotonic() - start:.1f}s")


def run(cmd, log=None, cwd=None, env=None, check=True, what=None):
    """Run cmd; with log, append its output there and name the log on failure."""
    full_env = dict(os.environ)
    if env:
        full_env.update(env)
    if log is None:
        proc = subprocess.run(cmd, cwd=cwd, env=full_env)
    else:
        with open(log, "a") as f:
            f.write(f"\n$ {' '.join(map(str, cmd))}\n")
            f.flush()
            proc = subprocess.run(cmd, cwd=cwd, env=full_env, stdout=f,
                                  stderr=subprocess.STDOUT)
    if check and proc.returncode != 0:
        where = f"; full log: {log}" if log else ""
        if log:
            tail = Path(log).read_text(errors="replace").splitlines()[-15:]
            sys.stderr.write("\n".join("    " + line for line in tail) + "\n")
        raise HarnessError(f"{what or cmd[0]} failed (exit {proc.returncode}){where}")
    return proc


def output(cmd, cwd=None):
    return subprocess.run(cmd, cwd=cwd, check=True, capture_output=True,
                          text=True).stdout


def hash_paths(paths, extra=""):
    """A content hash of files (and directories, recursively) plus a string."""
    h = hashlib.sha256(extra.encode())
    for p in sorted(Path(x) for x in paths):
        if p.is_dir():
            files = sorted(q for q in p.rglob("*") if q.is_file()
                           and "__pycache__" not in q.parts)
        elif p.exists():
            files = [p]
        else:
            files = []
        for q in files:
            # Name files relative to the repository, so that two clones of
            # the same commit share the cache without rebuilding.
            try:
                name = str(q.resolve().relative_to(REPO))
            except ValueError:
                name = str(q)
            h.update(name.encode())
            h.update(q.read_bytes())
    return h.hexdigest()


class Stamp:
    """A JSON file that remembers the inputs of the last successful step."""

    def __init__(self, path):
        self.path = Path(path)

    def read(self):
        try:
            return json.loads(self.path.read_text())
        except (OSError, ValueError):
            return {}

    def matches(self, **inputs):
        return self.read() == inputs

    def write(self, **inputs):
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text(json.dumps(inputs, indent=1, sort_keys=True))
