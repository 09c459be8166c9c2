"""make compare and compare --from on results directories made here
(verdict.json, analysis.json and the intervals file, as the harness and
the analysis write them) and on two real ones kept in data/compare/
(a 6.12 smoke run whose analysis found no events, a 6.1 run without a
trace): the exact cells of the table, n/a for every figure a run's
files do not hold, refused scenarios, pairing by scenario and target."""

import json
import os
import shutil
from pathlib import Path

import pytest

from analysis.intervals import Recorder
from tools.pns import compare, runner, scenario
from tools.pns.common import REPO, HarnessError

DATA = Path(__file__).resolve().parent / "data" / "compare"
HEAD = [h for h, _c in compare.COLUMNS]

# what a passing 6.1 run's analysis counts (figures of a real smoke run)
COUNTS_61 = {
    "records": 11730, "emits": 5767, "commits": 5765, "reprints": 1,
    "dropped_records": 5965,
    "takeovers": {"direct": 61, "handover": 2, "hostile": 3, "hostile_by_prio": {},
                  "hostile_same_cpu": 0, "hostile_from_nmi": 0, "hostile_while_unsafe": 1},
    "handovers": {"requests": 3, "grants": 2, "completed": 2, "timeouts": 1},
}
EMERGENCY = {"count": 333, "unit": "us", "min": 276496.0, "p50": 387141.113,
             "p90": 460390.966, "p99": 625433.0, "max": 625433.0, "not_committed": 319}
# [con, cpu, ctx, thread, prio, how, t0, t1, end]
INTERVALS = [
    ["ttyS0", 1, "task", 1, "normal", "direct", 6.0, 9.5, "released"],
    ["ttyS0", 2, "hardirq", 0, "emergency", "direct", 6.318750, 6.321352, "released"],
    ["ttyS0", 0, "nmi", 0, "emergency", "hostile", 7.0, 7.0005, "handed over to cpu2"],
]


def analysis(counts=COUNTS_61, violations=None, emergency=EMERGENCY, replay=1,
             verdict="pass"):
    return {"verdict": verdict, "reasons": [], "counts": counts,
            "latency": {"emergency_store_to_console": emergency},
            "serial": {"replay_markers": replay},
            "violations_by_rule": {"no-loss": 0, "duplicate": 0, **(violations or {})}}


def make_run(root, name, scenario, target, verdict="pass", splats=None, ana=None,
             intervals=None, problems=()):
    """A results directory as a run leaves it: source.json, run.json,
    verdict.json (with the analysis' dict), analysis.json and, with
    `intervals`, the intervals file analysis.json names."""
    d = root / name
    d.mkdir(parents=True)
    (d / "source.json").write_text(json.dumps({"target": target} if target else {}))
    (d / "run.json").write_text(json.dumps({"scenario": scenario, "hung": False,
                                            "qemu_rc": 0, "elapsed_s": 1.0,
                                            "boot_hangs": []}))
    if ana is not None and intervals is not None:
        rec = Recorder(str(d / "intervals.jsonl.gz"))
        for iv in intervals:
            rec.interval(*iv)
        ana = {**ana, "model_file": rec.close()}
    if ana is not None:
        (d / "analysis.json").write_text(json.dumps(ana))
    (d / "verdict.json").write_text(json.dumps(
        {"scenario": scenario, "verdict": verdict, "problems": list(problems),
         "splats": splats or {}, "analysis": ana, "results": str(d)}))
    return d


def table(rows):
    return {(r["scenario"], r["target"]): dict(zip(HEAD, compare.cells(r)))
            for r in compare.pair(rows)}


def test_a_passing_run_gives_every_figure_from_its_files(tmp_path):
    d = make_run(tmp_path, "smoke-a", "smoke", "6.1", ana=analysis(), intervals=INTERVALS)
    row = table([compare.read_run(d)])[("smoke", "6.1")]
    assert list(row.values()) == [
        "smoke", "6.1", "pass", "11730 / 5765", "2 / 1 / 2 / 61", "3 / 1", "1 / 1", "5965",
        "387.141 / 625.433 / 625.433 ms (n=333, 319 not printed)",
        "2.602 ms (hardirq, cpu 2)", "none", "none"]


def test_6_12_counts_its_safe_hostile_takeovers_itself(tmp_path):
    """The nbcon model counts hostile takeovers of a safe owner; on 6.1
    they are the hostile ones less those while unsafe."""
    counts = dict(COUNTS_61, hostile_safe=5)
    d = make_run(tmp_path, "w", "warn-thread", "6.12", ana=analysis(counts=counts),
                 splats={"warning": 1})
    row = table([compare.read_run(d)])[("warn-thread", "6.12")]
    assert row[HEAD[4]] == "5 / 1 / 2 / 61"
    assert row["splats"] == "warning=1"


def test_missing_figures_are_na_never_zero(tmp_path):
    """An analysis of an older format without some figures: those are
    n/a, the others are shown; no intervals file: n/a; no emergency
    record: the delay's n alone."""
    counts = {"records": 10, "commits": 9,
              "takeovers": {"direct": 1, "handover": 0, "hostile": 2}}
    ana = analysis(counts=counts, emergency={"count": 0, "unit": "us", "not_committed": 0},
                   violations={"duplicate": 2, "serial-missing": 1})
    del ana["serial"]
    d = make_run(tmp_path, "s", "storm", "6.1", verdict="fail", ana=ana)
    row = table([compare.read_run(d)])[("storm", "6.1")]
    assert row["records stored / printed"] == "10 / 9"
    assert row[HEAD[4]] == "n/a / n/a / 0 / 1"
    assert row["handover requests / timeouts"] == "n/a / n/a"
    assert row["reprints / replay markers"] == "n/a / n/a"
    assert row["dropped"] == "n/a"
    assert row[HEAD[8]] == "n/a (n=0)"
    assert row["longest irq/NMI owner"] == "n/a"
    assert row["violations"] == "duplicate=2, serial-missing=1"


def test_no_interval_in_interrupt_context_is_none_and_a_cut_one_a_lower_bound(tmp_path):
    task_only = make_run(tmp_path, "a", "backlog", "6.1", ana=analysis(),
                         intervals=INTERVALS[:1])
    cut = make_run(tmp_path, "b", "backlog", "6.12", ana=analysis(), intervals=[
        ["ttyS0", 0, "hardirq", 0, "emergency", "hostile", 14.439923, 32.638456,
         "trace end"],
        ["ttyS0", 3, "softirq", 0, "emergency", "direct", 1.0, 1.25, "released"]])
    rows = table([compare.read_run(task_only), compare.read_run(cut)])
    assert rows[("backlog", "6.1")]["longest irq/NMI owner"] == "none"
    assert rows[("backlog", "6.12")]["longest irq/NMI owner"] == \
        ">= 18198.533 ms (hardirq, cpu 0)"


def test_an_intervals_file_of_another_analysis_run_is_not_read(tmp_path):
    d = make_run(tmp_path, "a", "storm", "6.1", ana=analysis(), intervals=INTERVALS)
    ana = json.loads((d / "analysis.json").read_text())
    ana["model_file"]["id"] = "other"
    (d / "analysis.json").write_text(json.dumps(ana))
    r = compare.read_run(d)
    assert compare.irq_cell(r) == "n/a" and "different runs" in r["irq_owner_na"]


def test_a_crashed_analysis_shows_its_verdict_and_no_figures(tmp_path):
    crashed = {"verdict": "error", "error": "the analysis crashed (exit 1): KeyError: 'x'"}
    d = make_run(tmp_path, "c", "storm", "6.12", verdict="fail", ana=crashed,
                 problems=["analysis verdict: error (the analysis crashed (exit 1): "
                           "KeyError: 'x')"])
    row = table([compare.read_run(d)])[("storm", "6.12")]
    assert row["verdict"] == "fail (analysis: error)"
    assert set(list(row.values())[3:11]) == {"n/a / n/a", "n/a / n/a / n/a / n/a", "n/a"}
    assert row["splats"] == "none"


def test_a_real_incomplete_6_12_run_and_a_run_without_a_trace():
    """Two real runs: the 6.12 smoke run whose analysis read no console
    event (incomplete: its empty violations are no finding), the 6.1
    reregister run without a trace; neither has a partner, whose row
    says so."""
    rows = table([compare.read_run(DATA / "smoke-6.12-incomplete"),
                  compare.read_run(DATA / "reregister-6.1-untraced")])
    assert list(rows) == [("smoke", "6.1"), ("smoke", "6.12"), ("reregister", "6.1"),
                          ("reregister", "6.12")]
    smoke = rows[("smoke", "6.12")]
    assert smoke["verdict"] == "fail (analysis: incomplete)"
    assert list(smoke.values())[3:] == ["n/a / n/a", "n/a / n/a / n/a / n/a", "n/a / n/a",
                                        "n/a / n/a", "n/a", "n/a", "n/a", "n/a", "none"]
    assert rows[("reregister", "6.1")]["verdict"] == "pass (no trace analysis)"
    assert rows[("reregister", "6.1")]["violations"] == "n/a"
    for absent in (("smoke", "6.1"), ("reregister", "6.12")):
        assert rows[absent]["verdict"] == "n/a: no run"
        assert rows[absent]["splats"] == "n/a"


def test_from_pairs_by_scenario_and_target_and_writes_both_files(tmp_path, capsys):
    """--from: a directory of results directories stands for all of
    them; the rows go by scenario (first seen first), 6.1 before 6.12;
    a source.json without a target is an older 6.1 run's."""
    runs = tmp_path / "runs"
    make_run(runs, "backlog-x", "backlog", "6.12", ana=analysis())
    make_run(runs, "backlog-y", "backlog", None, ana=analysis(), verdict="fail")
    make_run(runs, "storm-z", "storm", "6.12", ana=analysis())
    out = tmp_path / "out"
    assert compare.from_dirs([str(runs)], out) == 1     # one run failed
    text = capsys.readouterr().out
    data = json.loads((out / "compare.json").read_text())
    assert data["columns"] == HEAD
    assert [row[:3] for row in data["table"]] == [
        ["backlog", "6.1", "fail"], ["backlog", "6.12", "pass"],
        ["storm", "6.1", "n/a: no run"], ["storm", "6.12", "pass"]]
    md = (out / "compare.md").read_text()
    assert compare.markdown(compare.pair(data["runs"])) in md
    assert compare.markdown(compare.pair(data["runs"])) in text
    assert f"- backlog on 6.1: {runs / 'backlog-y'}" in md
    with pytest.raises(HarnessError, match="not a results directory"):
        compare.from_dirs([str(out)])


def test_the_cli_reads_existing_dirs(tmp_path, capsys):
    from tools.pns.__main__ import main
    d = make_run(tmp_path, "s", "storm", "6.1", ana=analysis())
    assert main(["compare", "--from", str(d)]) == 0
    assert "| storm | 6.1 | pass | 11730 / 5765 |" in capsys.readouterr().out


def test_check_needs_refuses_with_the_missing_options(tmp_path, monkeypatch):
    monkeypatch.setattr(scenario, "SCENARIOS", tmp_path)
    (tmp_path / "n.sh").write_text("# pns-description: n\n# pns-needs: CONFIG_PRINTK_NOBKL_DEBUG\n")
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / ".config").write_text("CONFIG_NBCON_DEBUG=y\n")
    monkeypatch.setenv("KERNEL", "6.12")
    monkeypatch.delenv("BAUD", raising=False)
    with pytest.raises(runner.ScenarioRefused, match="needs CONFIG_PRINTK_NOBKL_DEBUG") as e:
        runner.check_needs(scenario.Scenario.load("n"), tmp_path / "b")
    assert e.value.missing == ["CONFIG_PRINTK_NOBKL_DEBUG"]
    assert isinstance(e.value, HarnessError)     # make run: exit 2, as before


def test_make_compare_runs_each_scenario_on_each_target_and_keeps_refusals(
        tmp_path, monkeypatch, capsys):
    """Each scenario on 6.1 then 6.12, one run at a time, with KERNEL set
    for the run and restored after; a refused run is in the table with
    what its kernel lacks; the exit code is the runs' (refusals
    excepted)."""
    monkeypatch.setenv("KERNEL", "6.1")
    monkeypatch.setenv("BAUD", "115200")
    calls = []

    def run_scenario(name, results=None):
        tgt = os.environ["KERNEL"]
        calls.append((name, tgt, os.environ["BAUD"]))
        if name == "warn-takeover-safe" and tgt == "6.1":
            raise runner.ScenarioRefused("refused", ["CONFIG_NBCON_DEBUG"])
        d = make_run(results.parent, results.name, name, tgt, ana=analysis())
        return {"results": str(d), "verdict": "pass"}
    monkeypatch.setattr(runner, "run_scenario", run_scenario)
    out = tmp_path / "cmp"
    assert compare.run_all("storm warn-takeover-safe", out) == 0
    assert calls == [("storm", "6.1", "115200"), ("storm", "6.12", "115200"),
                     ("warn-takeover-safe", "6.1", "115200"),
                     ("warn-takeover-safe", "6.12", "115200")]
    assert os.environ["KERNEL"] == "6.1"
    printed = capsys.readouterr().out
    assert "[compare] 3/4: warn-takeover-safe on KERNEL=6.1" in printed
    data = json.loads((out / "compare.json").read_text())
    assert data["scenarios"] == ["storm", "warn-takeover-safe"]
    refused = data["table"][2]
    assert refused[:3] == ["warn-takeover-safe", "6.1", "n/a: needs CONFIG_NBCON_DEBUG"]
    assert set(refused[3:]) <= {"n/a", "n/a / n/a", "n/a / n/a / n/a / n/a"}
    assert sorted(p.name for p in out.iterdir()) == [
        "compare.json", "compare.md", "storm-6.1", "storm-6.12", "warn-takeover-safe-6.12"]
    # the runs left there make the same table again
    assert compare.from_dirs([str(out)]) == 0
    again = capsys.readouterr().out
    assert "| storm | 6.12 | pass |" in again


def test_a_harness_error_mid_comparison_keeps_the_table_of_the_runs_so_far(
        tmp_path, monkeypatch):
    def run_scenario(name, results=None):
        if os.environ["KERNEL"] == "6.12":
            raise HarnessError("make kernel failed")
        d = make_run(results.parent, results.name, name, "6.1", ana=analysis())
        return {"results": str(d), "verdict": "pass"}
    monkeypatch.setattr(runner, "run_scenario", run_scenario)
    with pytest.raises(HarnessError, match="make kernel failed"):
        compare.run_all("storm", tmp_path / "cmp")
    data = json.loads((tmp_path / "cmp" / "compare.json").read_text())
    assert data["stopped_after"] == 1
    assert [r[:3] for r in data["table"]] == [["storm", "6.1", "pass"],
                                             ["storm", "6.12", "n/a: no run"]]


def test_the_columns_are_documented():
    text = (REPO / "docs" / "nbcon.md").read_text()
    section = text[text.index("## Comparing the targets"):]
    for head in HEAD:
        assert f"`{head}`" in section, head


def test_copies_of_kept_runs_read_the_same(tmp_path):
    """A results directory moved elsewhere reads the same: nothing in it
    is read by its recorded path."""
    shutil.copytree(DATA / "smoke-6.12-incomplete", tmp_path / "x")
    assert compare.cells(compare.read_run(tmp_path / "x")) == \
        compare.cells(compare.read_run(DATA / "smoke-6.12-incomplete"))


def test_the_default_scenarios_declare_the_6_1_interface_they_cannot_run_without():
    """A scenario of COMPARE that stops without the 6.1 series' debug
    interface (console_ctl, a fault on the printer thread) says so, so
    that 6.12 refuses it (n/a: needs ...) rather than running it into a
    failure."""
    from tools.pns.common import SETTING
    for name in SETTING["COMPARE"].default.split():
        sc = scenario.Scenario.load(name)
        if any(f"{call} " in sc.path.read_text() for call in ("nobkl_ctl", "thread_fault")):
            assert "CONFIG_PRINTK_NOBKL_DEBUG" in sc.needs, name
