"""Host-side pieces of the harness that need no kernel: scenario metadata,
config fragment checks, the verdict logic on hand-made results."""

import json

import pytest

from tools.pns import kernel, runner, tree
from tools.pns.common import HarnessError


def test_every_scenario_has_metadata():
    names = [s.name for s in runner.scenarios()]
    assert "default" in names
    for sc in runner.scenarios():
        assert sc.description, f"{sc.name} has no pns-description"
        assert sc.duration > 0


def test_unknown_scenario_is_a_clear_error():
    with pytest.raises(HarnessError, match="no scenario 'nope'"):
        runner.Scenario.load("nope")


def test_parse_config_and_missing_options():
    frag = kernel.parse_config("CONFIG_A=y\n# CONFIG_B is not set\nCONFIG_C=\"x\"\n")
    assert frag == {"CONFIG_A": "y", "CONFIG_B": "n", "CONFIG_C": '"x"'}
    final = kernel.parse_config("CONFIG_A=y\nCONFIG_C=\"y\"\n")
    assert kernel.missing_options(frag, final) == ['CONFIG_C="x" (got "y")']
    assert kernel.missing_options({"CONFIG_D": "y"}, final) == ["CONFIG_D=y (got n)"]


def test_unknown_variant_and_arch_are_clear_errors():
    with pytest.raises(HarnessError, match="unknown config variant"):
        kernel.fragments("nope", "x86_64")
    with pytest.raises(HarnessError, match="unknown ARCH"):
        kernel.fragments("debug", "sparc")


def test_series_names_missing_patch(tmp_path, monkeypatch):
    (tmp_path / "series").write_text("0001-exists.patch\n0002-missing.patch\n")
    (tmp_path / "0001-exists.patch").write_text("")
    monkeypatch.setattr(tree, "PATCHES", tmp_path)
    with pytest.raises(HarnessError, match="0002-missing.patch"):
        tree.series()


def _judge(tmp_path, log, name="default", hung=False, rc=0):
    (tmp_path / "console.log").write_text(log)
    if rc is not None:
        (tmp_path / "scenario.rc").write_text(f"{rc}\n")
    return runner.judge(tmp_path, runner.Scenario.load(name), hung=hung,
                        qemu_rc=0, elapsed=1.0)


BOOT = "[    1.0] pns: init ok mode=scenario scenario=default cpus=4 kernel=6.1\n"


def test_verdict_pass(tmp_path):
    v = _judge(tmp_path, BOOT)
    assert v["verdict"] == "pass", v["problems"]
    assert json.loads((tmp_path / "verdict.json").read_text())["verdict"] == "pass"


def test_verdict_not_booted(tmp_path):
    v = _judge(tmp_path, "[    0.5] Kernel panic - not syncing: No working init found.\n", rc=None)
    assert v["verdict"] == "fail"
    assert not v["booted"] and v["splats"] == {"panic": 1}


def test_verdict_hung(tmp_path):
    v = _judge(tmp_path, BOOT, hung=True, rc=None)
    assert v["verdict"] == "fail" and v["hung"]


def test_verdict_scenario_failed(tmp_path):
    v = _judge(tmp_path, BOOT, rc=3)
    assert v["verdict"] == "fail"
    assert "exited with 3" in " ".join(v["problems"])


def test_verdict_unexpected_and_expected_splat(tmp_path):
    warn = "[    2.0] WARNING: CPU: 0 PID: 1 at lib/foo.c:1 foo+0x1/0x2\n"
    assert _judge(tmp_path, BOOT + warn)["verdict"] == "fail"
    assert _judge(tmp_path, BOOT + warn, name="warn")["verdict"] == "pass"
    # A scenario that expects a WARN fails when there is none.
    assert _judge(tmp_path, BOOT, name="warn")["verdict"] == "fail"


def test_expected_rule_decides_the_verdict(tmp_path, monkeypatch):
    found = {"verdict": "fail", "violations_by_rule": {"duplicate": 1, "no-loss": 0}}
    monkeypatch.setattr(runner, "analyse", lambda res: found)
    v = _judge(tmp_path, BOOT, name="break-skip-commit")
    assert v["verdict"] == "pass", v["problems"]
    found["violations_by_rule"]["duplicate"] = 0
    v = _judge(tmp_path, BOOT, name="break-skip-commit")
    assert v["verdict"] == "fail"
    assert "expected rule duplicate" in " ".join(v["problems"])


def test_a_crashing_analysis_still_gives_a_verdict(tmp_path, monkeypatch):
    """libtracecmd crashed the analysis once (an empty CPU): the harness
    runs it as a process of its own and reports the crash."""
    fake = tmp_path / "python3"
    fake.write_text("#!/bin/sh\nkill -SEGV $$\n")
    fake.chmod(0o755)
    (tmp_path / "trace.dat").write_bytes(b"")
    monkeypatch.setattr(runner.sys, "executable", str(fake))
    a = runner.analyse(tmp_path)
    assert a["verdict"] == "error" and "signal 11" in a["error"], a


def _run_dir(tmp_path, name, log, hung=False, rc=0):
    """A results directory as run_scenario leaves it: the guest's files,
    run.json, then the verdict judged from them."""
    res = tmp_path / name
    res.mkdir()
    (res / "console.log").write_text(log)
    if rc is not None:
        (res / "scenario.rc").write_text(f"{rc}\n")
    sc = runner.Scenario.load("default")
    facts = runner.write_run_facts(res, sc, hung=hung, qemu_rc=0, elapsed=3.0,
                                   boot_hangs=[], duration=10)
    return res, runner.judge(res, sc, **runner.facts_for_judge(facts))


def test_recheck_judges_again_from_what_the_run_left(tmp_path, capsys):
    ok, v = _run_dir(tmp_path, "ok", BOOT)
    assert v["verdict"] == "pass"
    # The log gains a WARN (as if the old analysis had missed it): the
    # recheck sees it, rewrites verdict.json and says what it was before.
    with open(ok / "console.log", "a") as f:
        f.write("[    2.0] WARNING: CPU: 0 PID: 1 at lib/foo.c:1 foo+0x1/0x2\n")
    hung, v = _run_dir(tmp_path, "hung", BOOT, hung=True, rc=None)
    assert v["verdict"] == "fail"
    assert runner.recheck([tmp_path]) == 1
    out = capsys.readouterr().out
    assert json.loads((ok / "verdict.json").read_text())["splats"] == {"warning": 1}
    row = [ln for ln in out.splitlines() if ln.startswith("ok ")]
    assert row and row[0].split()[:4] == ["ok", "default", "pass", "fail"], out
    # What only the run could measure comes from run.json, not from guessing.
    again = json.loads((hung / "verdict.json").read_text())
    assert again["hung"] is True and again["elapsed_s"] == 3.0
    assert any(p.startswith("hung: killed after 3s") for p in again["problems"])


def test_recheck_of_a_run_before_run_json_uses_its_verdict(tmp_path):
    res, v = _run_dir(tmp_path, "old", BOOT)
    (res / "run.json").unlink()
    assert runner.recheck([res]) == 0
    assert json.loads((res / "verdict.json").read_text())["verdict"] == "pass"


def test_recheck_refuses_what_is_not_a_results_directory(tmp_path):
    with pytest.raises(HarnessError, match="no such directory"):
        runner.recheck([tmp_path / "nope"])
    with pytest.raises(HarnessError, match="holds none"):
        runner.recheck([tmp_path])
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "verdict.json").write_text('{"scenario": "default"}')
    assert runner.recheck([bad]) == 2
