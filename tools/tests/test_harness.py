"""Host-side pieces of the harness that need no kernel: scenario metadata,
config fragment checks, the verdict logic on hand-made results."""

import json
import os
import subprocess
import zlib

import pytest

from tools.pns import kernel, runner, scenario, tree, verdict
from tools.pns.common import HarnessError


def test_every_scenario_has_metadata():
    names = [s.name for s in scenario.scenarios()]
    assert "default" in names
    for sc in scenario.scenarios():
        assert sc.description, f"{sc.name} has no pns-description"
        assert sc.duration > 0


def test_unknown_scenario_is_a_clear_error():
    with pytest.raises(HarnessError, match="no scenario 'nope'"):
        scenario.Scenario.load("nope")


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
    monkeypatch.setattr(tree, "patches_dir", lambda: tmp_path)
    with pytest.raises(HarnessError, match="0002-missing.patch"):
        tree.series()


def test_series_never_applies_the_cover_letter(tmp_path, monkeypatch):
    (tmp_path / "series").write_text("0000-cover-letter.patch\n0001-a.patch\n")
    (tmp_path / "0000-cover-letter.patch").write_text("")
    (tmp_path / "0001-a.patch").write_text("")
    monkeypatch.setattr(tree, "patches_dir", lambda: tmp_path)
    assert [p.name for p in tree.series()] == ["0001-a.patch"]


def test_cover_letter_is_filled_from_its_source(tmp_path):
    cover = tmp_path / "0000-cover-letter.patch"
    cover.write_text("From 0 Mon Sep 17 00:00:00 2001\nFrom: harness <h@x>\n"
                     "Date: Fri, 4 Dec 2026 18:00:00 +0000\n"
                     "Subject: [PATCH 0/1] *** SUBJECT HERE ***\n\n*** BLURB HERE ***\n\n"
                     "dev (1):\n  a\n")
    (tmp_path / "0001-a.patch").write_text(
        "From 0 Mon Sep 17 00:00:00 2001\nFrom: dev <d@x>\n"
        "Date: Thu, 3 Dec 2026 09:00:00 +0000\nSubject: [PATCH 1/1] a\n\nbody\n")
    src = tmp_path / "cover-letter.txt"
    src.write_text("printk: the port\n\nWhat it is.\n")
    tree.fill_cover_letter(cover, src)
    text = cover.read_text()
    assert "Subject: [PATCH 0/1] printk: the port\n" in text
    assert "\nWhat it is.\n\ndev (1):" in text
    assert "From: dev <d@x>\nDate: Thu, 3 Dec 2026 09:00:00 +0000\n" in text
    assert "***" not in text


def test_check_series_links_vmlinux_only_when_asked():
    from tools.pns import series
    assert series.build_targets(["kernel/printk/"], False) == ["kernel/printk/"]
    assert series.build_targets(["kernel/printk/"], True) == ["kernel/printk/", "vmlinux"]
    assert series.build_targets([], True) == ["vmlinux"]


def _judge(tmp_path, log, name="default", hung=False, rc=0):
    (tmp_path / "console.log").write_text(log)
    if rc is not None:
        (tmp_path / "scenario.rc").write_text(f"{rc}\n")
    return verdict.judge(tmp_path, scenario.Scenario.load(name), hung=hung,
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


def failed_rows(v):
    """The run's judgements that did not pass, as verdict.json lists them."""
    assert [r["judgement"] for r in v["judgements"]] == [j.name for j in verdict.JUDGEMENTS]
    return [(r["judgement"], r["outcome"], r["reasons"]) for r in v["judgements"]
            if r["outcome"] != "pass"]


def test_verdict_json_is_the_fold_of_the_runs_table(tmp_path, monkeypatch):
    warn = "[    2.0] WARNING: CPU: 0 PID: 1 at lib/foo.c:1 foo+0x1/0x2\n"
    v = _judge(tmp_path, BOOT)
    assert (v["verdict"], v["exit_code"], v["problems"], failed_rows(v)) == ("pass", 0, [], [])
    assert json.loads((tmp_path / "verdict.json").read_text())["judgements"] == v["judgements"]
    unexpected = f"1 warning splat(s), first: {warn.strip()}"
    v = _judge(tmp_path, BOOT + warn)
    assert (v["verdict"], v["exit_code"], v["problems"]) == ("fail", 1, [unexpected])
    assert failed_rows(v) == [("splats", "fail", [unexpected])]
    v = _judge(tmp_path, BOOT, name="warn")
    assert failed_rows(v) == [("splats", "fail", ["expected a warning splat, saw none"])]
    assert (v["verdict"], v["exit_code"]) == ("fail", 1)
    # a run proves its case or fails: an incomplete analysis fails it, and
    # the problems are every row's in the table's order
    incomplete = {"verdict": "incomplete", "reasons": ["trace lost events"]}
    monkeypatch.setattr(verdict, "analyse", lambda res: incomplete)
    v = _judge(tmp_path, BOOT + warn)
    lost = "analysis verdict: incomplete (trace lost events)"
    assert failed_rows(v) == [("splats", "fail", [unexpected]), ("analysis", "fail", [lost])]
    assert (v["verdict"], v["exit_code"], v["problems"]) == ("fail", 1, [unexpected, lost])


def test_a_guest_that_ends_before_its_panic_is_named(tmp_path):
    # panic-end in a fresh-clone make test: QEMU exited with 0 during the
    # stressor run, the console stopped mid-run, no panic on it
    rec = "[    5.8] pstress v=2 r=1 c=1 x=task w=task0 n=8 l=4 abcd k=00000000\n"
    v = _judge(tmp_path, BOOT + rec, name="panic-end", rc=None)
    assert v["verdict"] == "fail"
    assert any(p.startswith("the guest ended after 1s (QEMU exit status 0) before the "
                            "scenario's panic") for p in v["problems"]), v["problems"]
    panic = "[    9.0] Kernel panic - not syncing: sysrq triggered crash\n"
    v = _judge(tmp_path, BOOT + panic, name="panic-end", rc=None)
    assert not any("ended" in p for p in v["problems"]), v["problems"]


def test_expected_rule_decides_the_verdict(tmp_path, monkeypatch):
    found = {"verdict": "fail", "violations_by_rule": {"duplicate": 1, "no-loss": 0}}
    monkeypatch.setattr(verdict, "analyse", lambda res: found)
    v = _judge(tmp_path, BOOT, name="break-skip-commit")
    assert v["verdict"] == "pass", v["problems"]
    found["violations_by_rule"]["duplicate"] = 0
    v = _judge(tmp_path, BOOT, name="break-skip-commit")
    assert v["verdict"] == "fail"
    assert "expected rule duplicate" in " ".join(v["problems"])


def _crc32_lines(*texts):
    """trace.stored_lines_crc32 of records stored with these texts: the
    CRC-32 of each, 8 hex digits, sorted, blank separated."""
    return " ".join(sorted("%08x" % zlib.crc32(t.encode()) for t in texts))


def test_a_corrupted_dmesg_record_is_the_traces_when_the_trace_stored_it(tmp_path, monkeypatch):
    """The boot log leaves a record shown one byte off to the trace
    analysis when the trace holds its nobkl_store, not when its printk
    stamp lies within the trace's first and last timestamps (other CPUs'
    clocks, up to 0.4 s apart under TCG)."""
    early = "pns: stored just before the trace's first event"
    inside = "pns: stored within the span, its store not traced"
    dmesg = [f"[    5.400000] {early}", f"[    7.000000] {inside}"]
    (tmp_path / "dmesg.txt").write_text("".join(f"<6>{d}\n" for d in dmesg))
    log = (BOOT + f"A[    5.400000] {early.replace('first', 'firUt')}\n"
           f"A[    7.000000] {inside.replace('span', 'spUn')}\n")
    analysis = {"verdict": "pass", "serial": {"synced": True},
                "trace": {"first_ts": 5.5, "last_ts": 9.0}}
    monkeypatch.setattr(verdict, "analyse", lambda res: analysis)
    # stamped 0.1 s before the trace's first event, stored in the trace;
    # the other, within the span, never stored in it
    analysis["trace"]["stored_lines_crc32"] = _crc32_lines(early)
    v = _judge(tmp_path, log)
    assert v["bootlog"]["corrupted_in_trace"] == [dmesg[0]], v["bootlog"]
    assert v["bootlog"]["missing"] == [dmesg[1]], v["bootlog"]
    assert v["verdict"] == "fail" and v["problems"] == [
        f"boot log: 1 dmesg record(s) missing on the console, first: {dmesg[1]}"]
    # both stored: both the analysis'
    analysis["trace"]["stored_lines_crc32"] = _crc32_lines(early, inside)
    v = _judge(tmp_path, log)
    assert v["verdict"] == "pass", v["problems"]
    assert v["bootlog"]["corrupted_in_trace"] == dmesg
    # an analysis without the export (older than it) takes none
    del analysis["trace"]["stored_lines_crc32"]
    v = _judge(tmp_path, log)
    assert v["bootlog"]["missing"] == dmesg and v["bootlog"]["corrupted_in_trace"] == []


def test_a_crashing_analysis_still_gives_a_verdict(tmp_path, monkeypatch):
    """libtracecmd crashed the analysis once (an empty CPU): the harness
    runs it as a process of its own and reports the crash."""
    fake = tmp_path / "python3"
    fake.write_text("#!/bin/sh\nkill -SEGV $$\n")
    fake.chmod(0o755)
    (tmp_path / "trace.dat").write_bytes(b"")
    monkeypatch.setattr(verdict.sys, "executable", str(fake))
    a = verdict.analyse(tmp_path)
    assert a["verdict"] == "error" and "signal 11" in a["error"], a


def _run_dir(tmp_path, name, log, hung=False, rc=0):
    """A results directory as run_scenario leaves it: the guest's files,
    run.json, then the verdict judged from them."""
    res = tmp_path / name
    res.mkdir()
    (res / "console.log").write_text(log)
    if rc is not None:
        (res / "scenario.rc").write_text(f"{rc}\n")
    sc = scenario.Scenario.load("default")
    facts = verdict.write_run_facts(res, sc, hung=hung, qemu_rc=0, elapsed=3.0,
                                   boot_hangs=[], duration=10)
    return res, verdict.judge(res, sc, **verdict.facts_for_judge(facts))


def test_recheck_judges_again_from_what_the_run_left(tmp_path, capsys):
    ok, v = _run_dir(tmp_path, "ok", BOOT)
    assert v["verdict"] == "pass"
    # The log gains a WARN (as if the old analysis had missed it): the
    # recheck sees it, rewrites verdict.json and says what it was before.
    with open(ok / "console.log", "a") as f:
        f.write("[    2.0] WARNING: CPU: 0 PID: 1 at lib/foo.c:1 foo+0x1/0x2\n")
    hung, v = _run_dir(tmp_path, "hung", BOOT, hung=True, rc=None)
    assert v["verdict"] == "fail"
    assert verdict.recheck([tmp_path]) == 1
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
    assert verdict.recheck([res]) == 0
    assert json.loads((res / "verdict.json").read_text())["verdict"] == "pass"


def test_recheck_refuses_what_is_not_a_results_directory(tmp_path):
    with pytest.raises(HarnessError, match="no such directory"):
        verdict.recheck([tmp_path / "nope"])
    with pytest.raises(HarnessError, match="holds none"):
        verdict.recheck([tmp_path])
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "verdict.json").write_text('{"scenario": "default"}')
    assert verdict.recheck([bad]) == 2


def test_scenario_lists_with_repeat_counts():
    assert scenario.parse_list("2*smoke  warn") == ["smoke", "smoke", "warn"]
    batch = scenario.default_batch()
    assert scenario.parse_list("CFLIST") == batch
    assert scenario.parse_list("2*CFLIST") == batch * 2
    for bad, why in (("0*smoke", "count must be"), ("smoke*2", "use NAME or N"),
                     ("nope", "no scenario 'nope'"), ("", "empty")):
        with pytest.raises(HarnessError, match=why):
            scenario.parse_list(bad)


def test_the_default_batch_holds_only_workloads():
    batch = scenario.default_batch()
    assert batch and len(set(batch)) == len(batch)
    assert {scenario.Scenario.load(n).kind for n in batch} == {"workload"}


def test_every_breaker_names_its_rule_and_headers_are_checked(tmp_path, monkeypatch):
    from analysis.rules import RULES
    kinds = {sc.name: sc.kind for sc in scenario.scenarios()}
    assert set(kinds.values()) == set(scenario.KINDS)
    for sc in scenario.scenarios():
        assert (sc.kind == "breaker") == bool(sc.expect_rule), sc.name
        assert not sc.expect_rule or sc.expect_rule in RULES, sc.name
    monkeypatch.setattr(scenario, "SCENARIOS", tmp_path)
    for text, why in (("# pns-durration: 5\n", "unknown header pns-durration"),
                      ("# pns-cpus: two\n", "not a number"),
                      ("# pns-kind: soak\n", "not one of"),
                      ("# pns-kind: breaker\n", "names the rule")):
        (tmp_path / "x.sh").write_text("# pns-description: x\n" + text)
        with pytest.raises(HarnessError, match=why):
            scenario.Scenario.load("x")


def test_a_scenario_declares_cpus_fragments_and_needs(tmp_path, monkeypatch):
    monkeypatch.setattr(scenario, "SCENARIOS", tmp_path)
    (tmp_path / "x.sh").write_text(
        "# pns-description: x\n# pns-cpus: 2\n# pns-fragments: tools/configs/lean.config\n"
        "# pns-needs: CONFIG_A, CONFIG_B\n")
    sc = scenario.Scenario.load("x")
    monkeypatch.delenv("CPUS", raising=False)
    assert runner.guest_cpus(sc) == 2 and runner.guest_cpus() == 4
    monkeypatch.setenv("CPUS", "3")
    assert runner.guest_cpus(sc) == 3
    monkeypatch.delenv("EXTRA_FRAGMENTS", raising=False)
    variant, arch, extra = runner.kernel_settings(sc)
    assert extra == ["tools/configs/lean.config"]
    # Another set of options builds in a directory of its own.
    assert kernel.build_dir(variant, arch, extra).name == f"{variant}-{arch}+lean"
    assert sc.missing_needs({"CONFIG_A": "y", "CONFIG_B": "m"}) == ["CONFIG_B"]


def test_a_scenario_declares_its_line_and_baud_overrides_it(tmp_path, monkeypatch):
    """pns-baud is the line a scenario is written for; BAUD overrides
    it; the guest gets the rate (pns.baud=), and a line slower than
    instant needs the debug interface that emulates it."""
    monkeypatch.setattr(scenario, "SCENARIOS", tmp_path)
    monkeypatch.delenv("EXTRA_CMDLINE", raising=False)
    monkeypatch.delenv("TTY_USERS", raising=False)
    monkeypatch.delenv("BAUD", raising=False)
    (tmp_path / "x.sh").write_text("# pns-description: x\n# pns-baud: 115200\n")
    (tmp_path / "y.sh").write_text("# pns-description: y\n")
    sc, plain = scenario.Scenario.load("x"), scenario.Scenario.load("y")
    assert (sc.baud, plain.baud) == (115200, 0)
    assert runner.kernel_cmdline(sc, duration=3).split()[-1] == "pns.baud=115200"
    assert "pns.baud" not in runner.kernel_cmdline(plain, duration=3)
    debug = scenario.DEBUG_INTERFACE
    assert sc.missing_needs({}, runner.line_baud(sc)) == [debug]
    assert plain.missing_needs({}, runner.line_baud(plain)) == []
    assert sc.missing_needs({debug: "y"}, runner.line_baud(sc), "CONFIG_NBCON_DEBUG") == [
        "CONFIG_NBCON_DEBUG"]
    monkeypatch.setenv("BAUD", "9600")
    assert runner.line_baud(sc) == runner.line_baud(plain) == 9600
    assert runner.kernel_cmdline(plain, duration=3).split()[-1] == "pns.baud=9600"
    monkeypatch.setenv("BAUD", "instant")
    assert runner.line_baud(sc) == 0 and "pns.baud" not in runner.kernel_cmdline(sc, duration=3)
    for bad in ("fast", "0", "115200.5", "200000000"):
        monkeypatch.setenv("BAUD", bad)
        with pytest.raises(HarnessError, match=f"BAUD={bad}: .* no baud rate"):
            runner.line_baud(sc)
        (tmp_path / "z.sh").write_text(f"# pns-description: z\n# pns-baud: {bad}\n")
        with pytest.raises(HarnessError, match="z.sh:2: pns-baud: .* no baud rate"):
            scenario.Scenario.load("z")
    # the guest's byte time, in the guest's own 32-bit arithmetic
    assert [scenario.byte_time_ns(b) for b in (115200, 9600, 500000, 0)] == \
        [86800, 1041660, 20000, 0]
    common = (runner.REPO / "workloads" / "lib" / "common.sh").read_text()
    assert "ns=$((1000000000 / $1 * 10))" in common
    init = (runner.REPO / "workloads" / "init").read_text()
    assert "pns.baud=*) baud=${arg#pns.baud=} ;;" in init


def test_readme_and_makefile_follow_the_settings_table():
    from tools.pns.common import REPO, SETTINGS, settings_table
    assert settings_table() in (REPO / "README.md").read_text()
    make = (REPO / "Makefile").read_text()
    export = make[make.index("\nexport ") + 8:make.index("\n\n", make.index("\nexport "))]
    assert export.replace("\\\n\t", "").split() == [s.name for s in SETTINGS]


def test_batch_summary_row_comes_from_the_verdict():
    v = {"scenario": "storm", "verdict": "pass", "splats": {"warning": 1},
         "results": "/r/storm-1", "analysis": {
             "counts": {"records": 10, "reprints": 2, "takeovers": {"hostile": 3, "handover": 4}},
             "latency": {"store_to_commit": {"p99": 9000.0},
                         "emergency_store_to_console": {"count": 7, "p99": 2500.0}}}}
    # the emergency records' delay, not the store-to-commit delay of all
    assert runner.summary_row(v) == ("storm", "pass", 10, 3, 4, 2, "2.5 ms (n=7)",
                                     "warning=1", "storm-1")
    del v["analysis"]["latency"]["emergency_store_to_console"]
    assert runner.summary_row(v)[6] == "-"


def test_a_legacy_console_run_is_not_judged_by_the_nobkl_analysis(tmp_path, monkeypatch):
    incomplete = {"verdict": "incomplete", "reasons": ["no console events"]}
    monkeypatch.setattr(verdict, "analyse", lambda res: incomplete)
    src = {"series": ["0001-x.patch"], "console": "nobkl"}
    (tmp_path / "source.json").write_text(json.dumps(src))
    v = _judge(tmp_path, BOOT)
    assert v["verdict"] == "fail" and "analysis verdict: incomplete" in v["problems"][0]
    src["console"] = "legacy"
    (tmp_path / "source.json").write_text(json.dumps(src))
    v = _judge(tmp_path, BOOT)
    assert v["verdict"] == "pass", v["problems"]
    assert any("without a NOBKL console (CONSOLE=legacy)" in n for n in v["notes"])


def test_a_staged_handoff_must_be_in_the_trace_with_its_reprint(tmp_path, monkeypatch):
    """pns-expect-handoff: each hand-off the scenario stages must be in the
    analysis' counts with the interrupted record reprinted; the guest's
    word for it does not count."""
    monkeypatch.setattr(scenario, "SCENARIOS", tmp_path)
    (tmp_path / "x.sh").write_text(
        "# pns-description: x\n# pns-expect-handoff: hostile emergency<-thread same-cpu;"
        " handover panic<-thread other-cpu reprinted\n")
    sc = scenario.Scenario.load("x")
    assert sc.expect_handoffs == ["hostile emergency<-thread same-cpu",
                                  "handover panic<-thread other-cpu reprinted"]
    # taken, not in the middle of a record: enough without "reprinted"
    seen = {"hostile emergency<-thread same-cpu": {"taken": 2, "interrupted": 0,
                                                    "reprinted": 0},
            "handover panic<-thread other-cpu": {"taken": 1, "interrupted": 1,
                                                  "reprinted": 0}}
    analysis = {"verdict": "pass", "handoffs": seen}
    monkeypatch.setattr(verdict, "analyse", lambda res: analysis)
    (tmp_path / "console.log").write_text(BOOT)
    (tmp_path / "scenario.rc").write_text("0\n")
    v = verdict.judge(tmp_path, sc, hung=False, qemu_rc=0, elapsed=1.0)
    assert v["verdict"] == "fail"
    assert v["problems"] == ["the trace shows no handover panic<-thread other-cpu hand-off whose "
                             "new owner reprinted the interrupted record (handover "
                             "panic<-thread other-cpu: {'taken': 1, 'interrupted': 1, "
                             "'reprinted': 0}; seen: handover panic<-thread other-cpu, "
                             "hostile emergency<-thread same-cpu)"]
    assert any("hostile emergency<-thread same-cpu: taken 2" in n for n in v["notes"])
    seen["handover panic<-thread other-cpu"]["reprinted"] = 1
    assert verdict.judge(tmp_path, sc, hung=False, qemu_rc=0, elapsed=1.0)["verdict"] == "pass"
    seen["hostile emergency<-thread same-cpu"]["taken"] = 0
    v = verdict.judge(tmp_path, sc, hung=False, qemu_rc=0, elapsed=1.0)
    assert v["problems"][0].startswith("the trace shows no hostile emergency<-thread same-cpu "
                                       "hand-off (")
    analysis.pop("handoffs")
    v = verdict.judge(tmp_path, sc, hung=False, qemu_rc=0, elapsed=1.0)
    assert v["verdict"] == "fail" and "no trace analysis" in v["problems"][0]


def test_make_variables_are_settings_with_clear_errors(monkeypatch):
    from tools.pns.common import HarnessError, setting_flag, setting_int
    monkeypatch.setenv("LINK", "0")
    assert setting_flag("LINK") is False
    monkeypatch.delenv("LINK")
    assert setting_flag("LINK") is True
    monkeypatch.setenv("N", "3")
    assert setting_int("N", lo=1) == 3
    for bad in ("0", "x", "-2"):
        monkeypatch.setenv("N", bad)
        with pytest.raises(HarnessError, match="N="):
            setting_int("N", lo=1)
    monkeypatch.setenv("FORCE", "yes")
    with pytest.raises(HarnessError, match="expected 0 or 1"):
        setting_flag("FORCE")


def test_tty_users_reach_the_guest_after_the_scenarios_own(tmp_path, monkeypatch):
    """TTY_USERS is appended after the scenario's pns-cmdline, and the
    guest's /init keeps the last pns.tty_users=, so the setting wins."""
    monkeypatch.setattr(scenario, "SCENARIOS", tmp_path)
    (tmp_path / "x.sh").write_text("# pns-description: x\n"
                                   "# pns-cmdline: pns.tty_users=115200,9600\n")
    sc = scenario.Scenario.load("x")
    monkeypatch.delenv("TTY_USERS", raising=False)
    monkeypatch.delenv("EXTRA_CMDLINE", raising=False)
    assert runner.kernel_cmdline(sc, duration=3).split()[-1] == "pns.tty_users=115200,9600"
    monkeypatch.setenv("TTY_USERS", "off")
    assert runner.kernel_cmdline(sc, duration=3).split()[-2:] == [
        "pns.tty_users=115200,9600", "pns.tty_users=off"]
    monkeypatch.setenv("TTY_USERS", "57600")
    assert runner.kernel_cmdline().split()[-1] == "pns.tty_users=57600"
    monkeypatch.setenv("TTY_USERS", "fast")
    with pytest.raises(HarnessError, match="TTY_USERS=fast"):
        runner.kernel_cmdline()
    init = (runner.REPO / "workloads" / "init").read_text()
    assert "pns.tty_users=*) tty_users=${arg#pns.tty_users=} ;;" in init


def test_a_kmemleak_kernel_must_end_the_run_with_a_scan(tmp_path):
    done = "T[   44.0] pns: kmemleak scan done: 0 object(s) reported, 14s\n"
    # no kmemleak in the kernel: no scan wanted
    (tmp_path / "kernel.config").write_text("CONFIG_PRINTK=y\n")
    assert _judge(tmp_path, BOOT)["verdict"] == "pass"
    (tmp_path / "kernel.config").write_text("CONFIG_DEBUG_KMEMLEAK=y\n")
    boot = ("[    0.9] kmemleak: Kernel memory leak detector initialized "
            "(mem pool available: 14791)\n" + BOOT)
    v = _judge(tmp_path, boot)
    assert v["problems"] == ["kmemleak kernel, but no scan at the end of the run "
                             "(no 'pns: kmemleak scan done' on the console)"]
    v = _judge(tmp_path, boot + done)
    assert v["verdict"] == "pass", v["problems"]
    assert v["notes"] == ["kmemleak scan done: 0 object(s) reported, 14s"]
    # a hung run is reported as hung, not also as unscanned
    v = _judge(tmp_path, boot, hung=True, rc=None)
    assert not any("kmemleak" in p for p in v["problems"])
    # a leak fails the run through the splat scan
    leak = "T[   44.0] pns: kmemleak report: unreferenced object 0xffff888004a1c380 (size 64):\n"
    v = _judge(tmp_path, boot + leak + done)
    assert v["verdict"] == "fail" and v["splats"] == {"kmemleak": 1}


def test_a_checker_built_in_must_be_seen_switched_on(tmp_path):
    (tmp_path / "kernel.config").write_text(
        "CONFIG_KCSAN=y\n# CONFIG_KASAN is not set\nCONFIG_PRINTK=y\n")
    # the KCSAN kernel of allnoconfig without KCSAN_EARLY_ENABLE: never on
    v = _judge(tmp_path, "[    0.1] kcsan: strict mode configured\n" + BOOT)
    assert v["problems"] == ["CONFIG_KCSAN kernel, but the console never shows "
                             "'kcsan: enabled early': the checker was off"]
    v = _judge(tmp_path, "[    0.1] kcsan: enabled early\n" + BOOT)
    assert v["verdict"] == "pass", v["problems"]
    (tmp_path / "kernel.config").write_text("CONFIG_KASAN=y\nCONFIG_DEBUG_KMEMLEAK=y\n")
    v = _judge(tmp_path, "[    0.0] kasan: KernelAddressSanitizer initialized\n" + BOOT
               + "T[   44.0] pns: kmemleak scan done: 0 object(s) reported, 14s\n")
    assert v["problems"] == ["CONFIG_DEBUG_KMEMLEAK kernel, but the console never shows "
                             "'kmemleak: Kernel memory leak detector initialized': "
                             "the checker was off"]
    # a guest that never booted is reported as such, not also as this
    v = _judge(tmp_path, "[    0.5] Kernel panic - not syncing: No working init found.\n",
               rc=None)
    assert not any("checker was off" in p for p in v["problems"])


# ------------------------------------- the analysis' files next to verdict.json
SHIPPED = "stress-20261203-095925"      # analysis/tests/data: a real run with trace.dat


def _shipped_results(tmp_path, run=SHIPPED):
    """A results directory as run_scenario leaves it, from a run shipped in
    analysis/tests/data (its files decompressed, run.json written): no
    guest boots."""
    import lzma
    import shutil
    from tools.pns.common import REPO
    res = tmp_path / run
    res.mkdir()
    for p in (REPO / "analysis" / "tests" / "data" / run).iterdir():
        if p.suffix == ".xz":
            (res / p.stem).write_bytes(lzma.decompress(p.read_bytes()))
        else:
            shutil.copy(p, res / p.name)
    sc = scenario.Scenario.load("stress")
    facts = verdict.write_run_facts(res, sc, hung=False, qemu_rc=0, elapsed=30.0,
                                   boot_hangs=[], duration=10)
    return res, sc, verdict.facts_for_judge(facts)


def _written(res):
    """analysis.json, as it is embedded in verdict.json, and the
    intervals file's id, checked as plot and timeline check them."""
    from analysis.intervals import read_results
    written = json.loads((res / "analysis.json").read_text())
    assert json.loads((res / "verdict.json").read_text())["analysis"] == written
    assert written["model_file"]["name"] == "intervals.jsonl.gz"
    assert (res / "intervals.jsonl.gz").read_bytes()[:2] == b"\x1f\x8b"
    assert not (res / "intervals.jsonl").exists()
    assert not [p for p in res.iterdir() if p.name.endswith(".tmp")]
    _, model = read_results(str(res))
    assert model.id == written["model_file"]["id"] and model.counts["events"]
    return written, model


def test_plot_and_timeline_work_on_what_the_harness_left(tmp_path, monkeypatch, capsys):
    """The harness's judgement leaves analysis.json and intervals.jsonl.gz
    next to verdict.json (check -o --gzip); plot and timeline read them
    and never run the analysis again."""
    from analysis import api, checker, cli
    res, sc, facts = _shipped_results(tmp_path)
    v = verdict.judge(res, sc, **facts)
    assert v["analysis"]["counts"]["records"] > 1000
    written, model = _written(res)
    assert written == v["analysis"]
    seq = next(e.seq for e in model.events() if e.seq is not None and e.name == "commit")

    def again(*args, **kw):
        raise AssertionError("the analysis ran again")
    for mod, name in ((api, "analyse"), (api, "check_results"), (cli, "analyse")):
        monkeypatch.setattr(mod, name, again)
    monkeypatch.setattr(checker.Analyzer, "__init__", again)
    capsys.readouterr()
    assert cli.main(["timeline", str(res), "--seq", str(seq)]) == 0
    out = capsys.readouterr().out
    assert f"timeline around seq {seq}" in out and " commit " in out, out
    assert cli.main(["plot", str(res), "--seq", str(seq)]) == 0
    assert (res / "timeline.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert cli.main(["plot", str(res / "analysis.json"), "-o", str(tmp_path / "all.png")]) == 0
    assert (tmp_path / "all.png").exists()
    # the printed verdict's commands are these
    verdict.print_verdict(v)
    out = capsys.readouterr().out
    assert f"-m analysis plot {res}" in out and f"-m analysis timeline {res} --seq N" in out


def test_recheck_writes_the_analysis_files_again(tmp_path):
    """recheck judges with today's analysis and writes its files again:
    a results directory of before the harness wrote them gets them, and
    a plain intervals.jsonl of an earlier `check -o` by hand goes."""
    res, sc, facts = _shipped_results(tmp_path)
    verdict.judge(res, sc, **facts)
    first = json.loads((res / "analysis.json").read_text())["model_file"]["id"]
    for name in ("analysis.json", "intervals.jsonl.gz"):
        (res / name).unlink()
    assert verdict.recheck([tmp_path]) in (0, 1)
    written, _ = _written(res)
    assert written["model_file"]["id"] != first
    (res / "intervals.jsonl").write_text("of an earlier check -o\n")
    assert verdict.recheck([res]) in (0, 1)
    assert _written(res)[0]["model_file"]["id"] != written["model_file"]["id"]


def test_a_crashed_analysis_leaves_no_intervals_file_and_says_so(tmp_path, monkeypatch):
    """After a crash analysis.json holds the verdict's error and no
    intervals file nor late file is left, of this judgement or an
    earlier one: plot and timeline name the crash instead of drawing an
    old analysis."""
    from analysis.intervals import ModelFileError, read_results
    res, sc, facts = _shipped_results(tmp_path)
    verdict.judge(res, sc, **facts)
    assert (res / "emergency-late.jsonl").exists()
    (res / "intervals.jsonl.gz.123.tmp").write_text("half")
    fake = tmp_path / "python3"
    fake.write_text("#!/bin/sh\nkill -SEGV $$\n")
    fake.chmod(0o755)
    monkeypatch.setattr(verdict.sys, "executable", str(fake))
    v = verdict.judge(res, sc, **facts)
    assert "signal 11" in v["analysis"]["error"]
    assert json.loads((res / "analysis.json").read_text()) == v["analysis"]
    assert not [p for p in res.iterdir()
                if p.name.startswith(("intervals.jsonl", "emergency-late.jsonl"))]
    with pytest.raises(ModelFileError, match=r"no intervals.jsonl in .* \(analysis.json holds "
                       r"no analysis: the analysis crashed \(killed by signal 11\)"):
        read_results(str(res))


def test_a_scenario_brings_its_console_line_and_a_second_uart(tmp_path, monkeypatch):
    """pns-console-cmdline replaces the CONSOLE setting's console line;
    pns-serial-logs gives QEMU one -serial per file, in UART order."""
    from tools.pns import qemu
    monkeypatch.setattr(scenario, "SCENARIOS", tmp_path)
    (tmp_path / "x.sh").write_text(
        "# pns-description: x\n"
        "# pns-console-cmdline: earlycon=uart8250,io,0x2f8,115200 console=ttyS0\n"
        "# pns-serial-logs: console-ttyS0.log console.log\n")
    sc = scenario.Scenario.load("x")
    assert sc.serial_logs == ["console-ttyS0.log", "console.log"]
    monkeypatch.delenv("EXTRA_CMDLINE", raising=False)
    monkeypatch.delenv("TTY_USERS", raising=False)
    for console in ("nobkl", "legacy"):
        monkeypatch.setenv("CONSOLE", console)
        words = runner.kernel_cmdline(sc, duration=1).split()
        assert [w for w in words if w.startswith(("earlycon=", "console="))] == [
            "earlycon=uart8250,io,0x2f8,115200", "console=ttyS0"], words
    # without the header: the setting's line, one UART into console.log
    (tmp_path / "y.sh").write_text("# pns-description: y\n")
    plain = scenario.Scenario.load("y")
    assert plain.serial_logs == ["console.log"]
    monkeypatch.setenv("CONSOLE", "nobkl")
    assert "earlycon=uart8250,io,0x3f8,115200" in runner.kernel_cmdline(plain).split()
    monkeypatch.setenv("ACCEL", "tcg")
    cmd = qemu.command(tmp_path, tmp_path / "i.cpio", "c", tmp_path,
                       [f"file:{tmp_path / n}" for n in sc.serial_logs], 2)
    serials = [cmd[i + 1] for i, a in enumerate(cmd) if a == "-serial"]
    assert serials == [f"file:{tmp_path / 'console-ttyS0.log'}",
                       f"file:{tmp_path / 'console.log'}"]
    one = qemu.command(tmp_path, tmp_path / "i.cpio", "c", tmp_path, "chardev:con0", 2)
    assert [one[i + 1] for i, a in enumerate(one) if a == "-serial"] == ["chardev:con0"]
    for bad in ("console-ttyS0.log", "console.log console.log",
                "a.log b.log c.log d.log console.log", "../x.log console.log"):
        (tmp_path / "z.sh").write_text(f"# pns-description: z\n# pns-serial-logs: {bad}\n")
        with pytest.raises(HarnessError, match="pns-serial-logs"):
            scenario.Scenario.load("z")
    # a boot that hung before /init keeps every UART's log for the retry
    res = tmp_path / "res"
    res.mkdir()
    for n in sc.serial_logs:
        (res / n).write_text(f"[    0.1] {n}\n")
    kept = qemu.keep_boot_hang(res, 1, 90, serial_logs=sc.serial_logs)
    assert sorted(p.name for p in (res / "boot-hang-1").iterdir()) == sc.serial_logs
    assert not any((res / n).exists() for n in sc.serial_logs)
    assert kept["last_console_line"] == "[    0.1] console.log"
    # source.json says which console line the run had
    monkeypatch.setattr(runner, "kernel_settings", lambda sc=None: ("debug", "x86_64", []))
    monkeypatch.setattr(runner.tree, "state", lambda: {"series": []})
    (tmp_path / ".config").write_text("CONFIG_X=y\n")
    runner.describe_build(res, tmp_path, sc)
    src = json.loads((res / "source.json").read_text())
    assert (src["console"], src["console_cmdline"]) == (
        "scenario", "earlycon=uart8250,io,0x2f8,115200 console=ttyS0")
    runner.describe_build(res, tmp_path, plain)
    src = json.loads((res / "source.json").read_text())
    assert src["console"] == "nobkl" and "console_cmdline" not in src


BUSYBOX = pytest.mark.skipif(not os.path.exists("/bin/busybox"), reason="no /bin/busybox")


def run_common_sh(script):
    """A script under busybox sh with workloads/lib/common.sh sourced:
    (exit status, stdout lines, stderr lines)."""
    common = runner.REPO / "workloads" / "lib" / "common.sh"
    out = subprocess.run(["/bin/busybox", "sh", "-c", f". {common}\n{script}"],
                         capture_output=True, text=True, check=False, timeout=60)
    return out.returncode, out.stdout.splitlines(), out.stderr.splitlines()


BUSY_TWICE = """n=$(cat "$T"); echo $((n + 1)) > "$T"
[ "$n" -ge 2 ] || { echo "sh: write error: $1" >&2; exit 1; }
echo "done at $n"
"""


@BUSYBOX
def test_until_staged_asks_again_only_while_the_situation_was_not_staged(tmp_path):
    counter, cmd = tmp_path / "n", tmp_path / "cmd.sh"
    cmd.write_text(BUSY_TWICE)

    def staged(errnos, answer, limit=10):
        counter.write_text("0")
        return run_common_sh(f'T={counter} until_staged {limit} "{errnos}" replay '
                             f'sh {cmd} "{answer}"')

    # asked again while the kernel says it could not stage the situation
    assert staged("EBUSY ETIMEDOUT", "Connection timed out") == \
        (0, ["done at 2", "replay: staged at attempt 3"], [])
    assert staged("EBUSY", "Resource busy")[:2] == (0, ["done at 2", "replay: staged at attempt 3"])
    # another answer ends it at once, with the kernel's message
    assert staged("ETIMEDOUT", "Device or resource busy") == \
        (1, [], ["replay: sh: write error: Device or resource busy"])
    # the limit reached: a FAIL line names what did not happen
    rc, out, _ = staged("EBUSY", "Resource busy", limit=0)
    assert (rc, out) == (1, ["FAIL replay: staged: not within 0 s",
                             "replay: the last answer: sh: write error: Resource busy"])


@BUSYBOX
def test_wait_until_polls_its_condition_and_fails_loudly_at_its_limit():
    assert run_common_sh("n=0; third() { n=$((n + 1)); [ $n -ge 3 ]; }\n"
                         "wait_until 10 third third && echo polled $n") == (0, ["polled 3"], [])
    assert run_common_sh("wait_until 0 'the hold' false") == \
        (1, ["FAIL the hold: not within 0 s"], [])


def test_the_verdict_tables_in_the_docs_are_the_codes():
    """docs/analysis.md lists the rows of both tables a verdict folds, in
    the tables' order."""
    from analysis.verdict import TABLE
    from tools.pns.common import REPO
    doc = (REPO / "docs" / "analysis.md").read_text()
    doc = doc[doc.index("### How the verdict is decided"):doc.index("### How the harness calls it")]
    tables = [[ln.split("`")[1] for ln in block.splitlines()[2:]]
              for block in doc.split("\n\n") if block.startswith("| judgement |")]
    assert tables == [[j.name for j in TABLE], [j.name for j in verdict.JUDGEMENTS]]
