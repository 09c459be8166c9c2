"""`make test` and `make test-repeat`: the one pytest command of the
project's tests, and that command repeated with the host idle and loaded.

`make test` builds the initramfs for the ARCH setting and for i386 on
the 6.1 target, and for x86_64 on 6.12 (the boot tests use all three), then runs pytest on tools/tests and analysis/tests
with the slowest tests listed at the end.  `make test-repeat` does the same
builds once, then runs the same pytest command N times with the host idle
and N times while `stress-ng --cpu 2` loads it, each round with its output
in a log and a JUnit XML file, and ends with a table of the rounds
(RESULTS/test-repeat-TIME/, test-repeat-summary.json).  A loaded host
deschedules the guests' vCPUs, which is where a test that only passes on
a quiet machine shows itself.
"""

import datetime
import json
import os
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

from .common import REPO, HarnessError, run, say, setting
from .verdict import format_table

# what pytest collects, relative to the repository
TEST_PATHS = ("tools/tests", "analysis/tests")
# how many of the slowest tests pytest lists at the end of a run
DURATIONS = 20

# the host load of the loaded rounds: two CPU hogs, as many as the shared
# host has cores, so the guests' vCPU threads compete for every core
LOAD_CMD = ("stress-ng", "--cpu", "2")
LOAD_NAME = " ".join(LOAD_CMD)
IDLE_NAME = "idle"

SUMMARY_NAME = "test-repeat-summary.json"
HEAD = ("round", "load", "tests", "passed", "failed", "skipped", "minutes",
        "failed tests")


def pytest_command(junitxml=None, basetemp=None):
    """The pytest command of `make test`, `make test-unit` and every round
    of `make test-repeat`; run it in the repository.  basetemp: where the
    tests' run directories go, emptied at the start and kept after, away
    from pytest's shared /tmp/pytest-of-USER, whose three newest
    directories any other pytest run on the machine rotates."""
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
           f"--durations={DURATIONS}"]
    cmd += [p for p in TEST_PATHS if (REPO / p).is_dir()]
    if basetemp:
        cmd.append(f"--basetemp={basetemp}")
    if junitxml:
        cmd.append(f"--junitxml={junitxml}")
    return cmd


# the mainline nbcon target's boot tests (test_nbcon.py) run on x86_64
NBCON_BUILD = {"KERNEL": "6.12", "ARCH": "x86_64"}


def build_for_tests():
    """The initramfs (with its kernel and module) for ARCH and for i386 on
    the 6.1 target, and for x86_64 on the 6.12 target, which the boot
    tests use.  Each is its own `tools.pns initramfs` process, as `make
    test` always ran them, so a build sees nothing the previous one left
    in this process."""
    arches = [setting("ARCH")]
    if "i386" not in arches:
        arches.append("i386")
    builds = [{"KERNEL": "6.1", "ARCH": arch} for arch in arches] + [NBCON_BUILD]
    for env in builds:
        run([sys.executable, "-m", "tools.pns", "initramfs"], cwd=REPO,
            env=env, what="initramfs (%s)" % ", ".join(f"{k}={v}" for k, v in env.items()))


def run_tests(unit=False):
    """`make test` (the builds, then pytest) or, with unit, `make
    test-unit` (pytest without the boot tests).  Returns pytest's exit
    code."""
    env = dict(os.environ)
    if unit:
        env["PNS_SKIP_BOOT"] = "1"
    else:
        build_for_tests()
    tmp = tests_dir()
    # pytest makes the base directory, not its parents (a fresh clone
    # has no results/ yet)
    tmp.parent.mkdir(parents=True, exist_ok=True)
    return subprocess.call(pytest_command(basetemp=tmp), cwd=REPO, env=env)


def tests_dir():
    """RESULTS/pytest: the run directories of the last `make test`."""
    return REPO / setting("RESULTS") / "pytest"


def parse_junit(path):
    """Counts and failed test names from a pytest JUnit XML file.  Each
    testcase counts once: a test that failed and then errored in its
    teardown has both a <failure> and an <error>, and pytest reports a
    collection error as a testcase with an <error>.  An xfail is a
    <skipped>.  Raises ValueError when the file is not a JUnit report."""
    name = Path(path).name
    try:
        root = ET.parse(path).getroot()
    except OSError as e:
        raise ValueError(f"no JUnit report in {name} ({e.strerror or e})") from None
    except ET.ParseError as e:
        raise ValueError(f"no JUnit report in {name} ({e})") from None
    if root.tag not in ("testsuites", "testsuite"):
        raise ValueError(f"no JUnit report in {name} (<{root.tag}>)")
    out = {"tests": 0, "passed": 0, "failed": 0, "skipped": 0, "failed_tests": []}
    for case in root.iter("testcase"):
        out["tests"] += 1
        if case.find("failure") is not None or case.find("error") is not None:
            out["failed"] += 1
            cls, name = case.get("classname", ""), case.get("name", "")
            out["failed_tests"].append(f"{cls}::{name}" if cls else name)
        elif case.find("skipped") is not None:
            out["skipped"] += 1
        else:
            out["passed"] += 1
    return out


class Load:
    """stress-ng loading the host for one round: started before it,
    stopped after it, also when the round ends in an exception."""

    def __init__(self, log):
        self.log = log
        self.proc = None

    def __enter__(self):
        if not shutil.which(LOAD_CMD[0]):
            raise HarnessError(f"{LOAD_CMD[0]} is not installed on the host")
        with open(self.log, "a") as f:
            self.proc = subprocess.Popen(list(LOAD_CMD), stdout=f, stderr=subprocess.STDOUT)
        # A bad option or a missing library ends stress-ng at once: better
        # a round that could not run than one that ran without its load.
        time.sleep(1)
        if self.proc.poll() is not None:
            raise HarnessError(f"{LOAD_NAME} ended at once (exit {self.proc.returncode}); "
                               f"see {self.log}")
        return self

    def ended_early(self):
        """stress-ng's exit code if it ended by itself, else None."""
        return self.proc.poll() if self.proc else None

    def __exit__(self, *exc):
        if self.proc and self.proc.poll() is None:
            # SIGTERM: stress-ng stops and reaps its workers itself
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return False


def run_pytest(cmd, log):
    """One round's pytest, its output (after the command) in log; its exit
    code.  The one place a round starts a process, so the tests can fake it."""
    with open(log, "w") as f:
        f.write(f"$ {' '.join(map(str, cmd))}\n")
        f.flush()
        return subprocess.call(cmd, cwd=REPO, stdout=f, stderr=subprocess.STDOUT)


def run_round(number, total, loaded, i, out):
    """Round `number` of `total` (the i-th with its load), logged to
    out/round-LOAD-I.log with its JUnit report next to it.  Returns its
    row for the summary; status "error" when it could not run (no
    report, pytest crashed or could not start, the load failed)."""
    label = f"round-{'stress' if loaded else 'idle'}-{i}"
    load = LOAD_NAME if loaded else IDLE_NAME
    log, junit = out / f"{label}.log", out / f"{label}.xml"
    r = {"round": number, "load": load, "log": str(log), "junit": str(junit), "rc": None,
         "status": "error", "problem": None, "tests": None, "passed": None,
         "failed": None, "skipped": None, "failed_tests": [], "minutes": 0.0}
    say(f"[test-repeat] round {number}/{total} ({load}) starts; log: {log}")
    t0 = time.monotonic()
    try:
        if loaded:
            with Load(out / "stress-ng.log") as hog:
                r["rc"] = run_pytest(pytest_command(junit, out / label), log)
                early = hog.ended_early()
            if early is not None:
                r["problem"] = f"{LOAD_NAME} ended during the round (exit {early})"
        else:
            r["rc"] = run_pytest(pytest_command(junit, out / label), log)
    except (HarnessError, OSError) as e:
        r["problem"] = str(e)
    r["minutes"] = round((time.monotonic() - t0) / 60, 2)
    no_report = None
    if r["rc"] is not None:
        try:
            r.update(parse_junit(junit))
        except ValueError as e:
            no_report = str(e)
    # pytest: 0 all passed, 1 some failed; anything else (interrupted,
    # internal or usage error, nothing collected) means the round did not
    # give an answer, and so does a report that is missing or contradicts
    # the exit code.
    if r["problem"] is None:
        if no_report is None and r["rc"] == 0 and r["failed"] == 0:
            r["status"] = "passed"
        elif no_report is None and r["rc"] == 1 and r["failed"]:
            r["status"] = "failed"
        else:
            r["problem"] = f"pytest exit {r['rc']}: " + (
                no_report or f"{r['failed']} failed in {junit.name}")
    say(f"[test-repeat] round {number}/{total} ({load}) ends after {r['minutes']:.1f} min: "
        + (f"{r['status']}, {r['passed']} passed, {r['failed']} failed, "
           f"{r['skipped']} skipped" if r["status"] != "error"
           else f"could not run: {r['problem']}"))
    return r


def format_summary(rounds):
    """The table of the rounds; a round that could not run shows why in
    the last column."""
    def cell(v):
        return "-" if v is None else v
    rows = [(r["round"], r["load"], cell(r["tests"]), cell(r["passed"]), cell(r["failed"]),
             cell(r["skipped"]), f"{r['minutes']:.1f}",
             (f"could not run: {r['problem']}" if r["status"] == "error"
              else ", ".join(r["failed_tests"]) or "-"))
            for r in rounds]
    return format_table(HEAD, rows)


def exit_code(rounds):
    """0 when every round passed, 2 when one could not run (its tests are
    unknown, which outweighs a known failure), else 1."""
    if any(r["status"] == "error" for r in rounds):
        return 2
    return 1 if any(r["status"] == "failed" for r in rounds) else 0


def write_summary(out, n, rounds, interrupted=False):
    """out/test-repeat-summary.json: the rounds as in the table, plus the
    command and the exit code."""
    summary = {"n": n, "pytest": pytest_command(), "load": LOAD_NAME,
               "rounds": rounds, "rounds_passed": sum(r["status"] == "passed" for r in rounds),
               "interrupted": interrupted,
               "exit": 130 if interrupted else exit_code(rounds)}
    path = out / SUMMARY_NAME
    path.write_text(json.dumps(summary, indent=1) + "\n")
    return path


def new_out_dir():
    root = Path(setting("RESULTS"))
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    out, k = root / f"test-repeat-{stamp}", 1
    while out.exists():
        k += 1
        out = root / f"test-repeat-{stamp}-{k}"
    out.mkdir(parents=True)
    return out


def repeat(n, out=None):
    """`make test-repeat`: the builds of `make test`, then its pytest n
    times idle and n times under LOAD_CMD, and the table.  Returns
    exit_code() of the rounds."""
    # Before the builds, which take long: a missing stress-ng would
    # otherwise only show in the first loaded round.
    if not shutil.which(LOAD_CMD[0]):
        raise HarnessError(f"{LOAD_CMD[0]} is not installed on the host; `make deps` "
                           f"(tools/deps.sh) or `apt-get install stress-ng` installs it")
    build_for_tests()
    out = Path(out) if out else new_out_dir()
    out.mkdir(parents=True, exist_ok=True)
    plan = [(loaded, i) for loaded in (False, True) for i in range(1, n + 1)]
    rounds, interrupted = [], False
    try:
        for number, (loaded, i) in enumerate(plan, 1):
            rounds.append(run_round(number, len(plan), loaded, i, out))
    except KeyboardInterrupt:
        # the rounds so far are still worth their table
        interrupted = True
        raise
    finally:
        path = write_summary(out, n, rounds, interrupted)
        if rounds:
            say(format_summary(rounds))
        say(f"[test-repeat] {sum(r['status'] == 'passed' for r in rounds)} of {len(plan)} "
            f"rounds passed{' (interrupted)' if interrupted else ''}; summary: {path}")
    return exit_code(rounds)
