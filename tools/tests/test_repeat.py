"""make test and make test-repeat without running a test suite: the pytest
command they share, the JUnit counts, the rounds' table, JSON and exit
code, with pytest and stress-ng faked."""

import json
import re

import pytest

from tools.pns import testsuite
from tools.pns.common import REPO, HarnessError

# A pytest-style report (junit_family xunit2) with one of each outcome;
# test_d both failed and errored in its teardown, and counts once.
JUNIT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" errors="1" failures="2" skipped="2" tests="7" time="61.5">
<testcase classname="tools.tests.test_boot" name="test_default_scenario_passes" time="20.1"/>
<testcase classname="tools.tests.test_boot" name="test_warn_is_reported" time="21.0">
  <failure message="assert 'fail' == 'pass'">...</failure></testcase>
<testcase classname="tools.tests.test_nobkl" name="test_scenario[handover]" time="19.0">
  <skipped type="pytest.skip" message="PNS_SKIP_BOOT=1">...</skipped></testcase>
<testcase classname="tools.tests.test_nobkl" name="test_xfail" time="0.1">
  <skipped type="pytest.xfail" message="known">...</skipped></testcase>
<testcase classname="tools.tests.test_nobkl" name="test_d" time="1.0">
  <failure message="x">...</failure><error message="teardown">...</error></testcase>
<testcase classname="" name="tools.tests.test_broken" time="0.0">
  <error message="collection failure">...</error></testcase>
</testsuite></testsuites>
"""


def test_make_test_and_test_unit_run_the_one_pytest_command():
    cmd = testsuite.pytest_command()
    assert cmd[1:] == ["-m", "pytest", "-q", "-p", "no:cacheprovider", "--durations=20",
                       "tools/tests", "analysis/tests"]
    assert testsuite.pytest_command("/r/x.xml")[-1] == "--junitxml=/r/x.xml"
    make = (REPO / "Makefile").read_text()
    assert re.search(r"\ntest: deps\n\t\$\(PNS\) test\n", make)
    assert re.search(r"\ntest-unit: deps\n\t\$\(PNS\) test --unit\n", make)
    assert re.search(r"\ntest-repeat: deps\n\t\$\(PNS\) test-repeat\n", make)
    assert "\n## make test-repeat " in make


def test_make_test_builds_both_targets_then_runs_pytest(monkeypatch, tmp_path):
    # a fresh clone has no results/: pytest makes its base directory only
    monkeypatch.setenv("RESULTS", str(tmp_path / "results"))
    calls = []
    monkeypatch.setattr(testsuite, "run", lambda cmd, **kw: calls.append(
        (kw["env"]["KERNEL"], kw["env"]["ARCH"])))
    monkeypatch.setattr(testsuite.subprocess, "call",
                        lambda cmd, cwd, env: calls.append((cmd, env.get("PNS_SKIP_BOOT"))) or 1)
    monkeypatch.delenv("ARCH", raising=False)
    monkeypatch.delenv("PNS_SKIP_BOOT", raising=False)
    assert testsuite.run_tests() == 1
    tmp = testsuite.tests_dir()
    assert calls == [("6.1", "x86_64"), ("6.1", "i386"), ("6.12", "x86_64"),
                     (testsuite.pytest_command(basetemp=tmp), None)]
    assert tmp.parent.is_dir()
    calls.clear()
    assert testsuite.run_tests(unit=True) == 1
    assert calls == [(testsuite.pytest_command(basetemp=tmp), "1")]


def test_junit_counts_each_testcase_once(tmp_path):
    f = tmp_path / "r.xml"
    f.write_text(JUNIT)
    assert testsuite.parse_junit(f) == {
        "tests": 6, "passed": 1, "failed": 3, "skipped": 2,
        "failed_tests": ["tools.tests.test_boot::test_warn_is_reported",
                         "tools.tests.test_nobkl::test_d", "tools.tests.test_broken"]}
    # an older pytest writes <testsuite> as the root
    f.write_text('<testsuite tests="1"><testcase classname="a" name="b"/></testsuite>')
    assert testsuite.parse_junit(f)["passed"] == 1
    for bad in ("", "<html/>", "<testsuites><testcase"):
        f.write_text(bad)
        with pytest.raises(ValueError, match="r.xml"):
            testsuite.parse_junit(f)
    with pytest.raises(ValueError, match="no JUnit report"):
        testsuite.parse_junit(tmp_path / "missing.xml")


class FakeLoad:
    """stress-ng as the rounds see it: who was loaded, and that every
    load was stopped."""
    started = stopped = 0
    die = False

    def __init__(self, log):
        pass

    def __enter__(self):
        FakeLoad.started += 1
        return self

    def ended_early(self):
        return 1 if FakeLoad.die else None

    def __exit__(self, *exc):
        FakeLoad.stopped += 1
        return False


def _fake(monkeypatch, outcomes):
    """pytest faked: each call takes the next outcome, "pass", "fail",
    "crash" (exit 3, no report) or "interrupt" (Ctrl-C), and writes its
    JUnit report; returns the list of (round log, loaded) calls."""
    calls = []
    monkeypatch.setattr(testsuite.shutil, "which", lambda name: "/usr/bin/" + name)
    monkeypatch.setattr(testsuite, "build_for_tests", lambda: None)
    monkeypatch.setattr(testsuite, "Load", FakeLoad)
    FakeLoad.started = FakeLoad.stopped = 0
    FakeLoad.die = False
    outcomes = list(outcomes)

    def run_pytest(cmd, log):
        assert cmd[:-2] == testsuite.pytest_command()
        assert cmd[-2] == "--basetemp=%s" % (log.parent / log.stem)
        junit = cmd[-1].split("=", 1)[1]
        calls.append((log.name, FakeLoad.started > FakeLoad.stopped))
        what = outcomes.pop(0)
        if what == "interrupt":
            raise KeyboardInterrupt
        if what == "crash":
            return 3
        fail = '<failure message="x"/>' if what == "fail" else ""
        with open(junit, "w") as f:
            f.write('<testsuites><testsuite><testcase classname="t" name="ok"/>'
                    '<testcase classname="t" name="skip"><skipped/></testcase>'
                    f'<testcase classname="t" name="boot">{fail}</testcase>'
                    "</testsuite></testsuites>")
        return 1 if fail else 0
    monkeypatch.setattr(testsuite, "run_pytest", run_pytest)
    return calls


def test_rounds_idle_then_loaded_with_a_table_and_json(tmp_path, monkeypatch, capsys):
    calls = _fake(monkeypatch, ["pass", "pass", "pass", "fail"])
    assert testsuite.repeat(2, tmp_path) == 1
    assert calls == [("round-idle-1.log", False), ("round-idle-2.log", False),
                     ("round-stress-1.log", True), ("round-stress-2.log", True)]
    assert FakeLoad.started == FakeLoad.stopped == 2
    out = capsys.readouterr().out
    assert out.count("[test-repeat] round ") == 8  # a start and an end line each
    assert "round 4/4 (stress-ng --cpu 2) ends after 0.0 min: failed, 1 passed, 1 failed" in out
    table = out[out.index("round  load"):].splitlines()
    assert re.split(r"\s{2,}", table[0]) == list(testsuite.HEAD)
    assert re.split(r"\s{2,}", table[1]) == ["1", "idle", "3", "2", "0", "1", "0.0", "-"]
    assert re.split(r"\s{2,}", table[4]) == ["4", "stress-ng --cpu 2", "3", "1", "1", "1",
                                             "0.0", "t::boot"]
    assert "3 of 4 rounds passed" in out
    summary = json.loads((tmp_path / testsuite.SUMMARY_NAME).read_text())
    assert summary["exit"] == 1 and summary["rounds_passed"] == 3 and summary["n"] == 2
    assert [(r["load"], r["status"], r["failed_tests"]) for r in summary["rounds"]] == [
        ("idle", "passed", []), ("idle", "passed", []),
        ("stress-ng --cpu 2", "passed", []), ("stress-ng --cpu 2", "failed", ["t::boot"])]
    assert summary["rounds"][0]["log"] == str(tmp_path / "round-idle-1.log")


def test_a_round_that_could_not_run_exits_2(tmp_path, monkeypatch, capsys):
    _fake(monkeypatch, ["fail", "crash"])
    assert testsuite.repeat(1, tmp_path) == 2
    out = capsys.readouterr().out
    assert "could not run: pytest exit 3" in out
    rounds = json.loads((tmp_path / testsuite.SUMMARY_NAME).read_text())["rounds"]
    assert [r["status"] for r in rounds] == ["failed", "error"]
    assert rounds[1]["tests"] is None and "no JUnit report" in rounds[1]["problem"]
    # a load that ended during its round leaves the round without an answer
    _fake(monkeypatch, ["pass", "pass"])
    FakeLoad.die = True
    assert testsuite.repeat(1, tmp_path / "2") == 2
    assert "stress-ng --cpu 2 ended during the round (exit 1)" in capsys.readouterr().out


def test_ctrl_c_stops_the_load_and_keeps_the_rounds_so_far(tmp_path, monkeypatch, capsys):
    _fake(monkeypatch, ["pass", "interrupt"])
    with pytest.raises(KeyboardInterrupt):
        testsuite.repeat(1, tmp_path)
    assert FakeLoad.started == FakeLoad.stopped == 1
    summary = json.loads((tmp_path / testsuite.SUMMARY_NAME).read_text())
    assert summary["interrupted"] and summary["exit"] == 130
    assert [r["status"] for r in summary["rounds"]] == ["passed"]
    assert "1 of 2 rounds passed (interrupted)" in capsys.readouterr().out


def test_without_stress_ng_it_stops_before_building(tmp_path, monkeypatch):
    monkeypatch.setattr(testsuite.shutil, "which", lambda name: None)
    monkeypatch.setattr(testsuite, "build_for_tests", lambda: pytest.fail("built"))
    with pytest.raises(HarnessError, match="stress-ng is not installed"):
        testsuite.repeat(1, tmp_path)


def test_the_load_is_stopped_when_the_round_fails(tmp_path, monkeypatch):
    """The real Load around a fake stress-ng: terminated after the round,
    also when the round raised."""
    events = []

    class Proc:
        returncode = None

        def __init__(self, cmd, stdout, stderr):
            events.append(("start", tuple(cmd)))

        def poll(self):
            return self.returncode

        def terminate(self):
            events.append("terminate")
            self.returncode = -15

        def wait(self, timeout=None):
            return self.returncode
    monkeypatch.setattr(testsuite.shutil, "which", lambda name: "/usr/bin/stress-ng")
    monkeypatch.setattr(testsuite.subprocess, "Popen", Proc)
    monkeypatch.setattr(testsuite.time, "sleep", lambda s: None)
    with pytest.raises(RuntimeError):
        with testsuite.Load(tmp_path / "stress-ng.log"):
            raise RuntimeError
    assert events == [("start", ("stress-ng", "--cpu", "2")), "terminate"]
