"""The stressor's end-of-run line (`printk_stress: run=N SUCCESS|FAILURE
checks=... [failed: ...]`) in the verdict: a FAILURE line is the rule
stressor-selfcheck, a run that ended without one is incomplete input
(analysis/selfcheck.py)."""

from analysis.tests.verdicts import check_results
from analysis.report import headline, render_text
from analysis.selfcheck import collect, pair
from analysis.tests.tracebuilder import printed, pstress

END = ("printk_stress: end run=%d nobkl_debug=1 nmi=1 reason=duration elapsed_ms=10003 "
       "attempted=3 stored=3 sections=0 nmi_sent=0 nmi_handled=0 takeovers_injected=0 "
       "takeovers_taken=0%s takeovers_refused_policy=0 takeovers_refused_nested=0")
OK = "printk_stress: run=%d SUCCESS checks=stored,nmi,takeovers,records"
BAD = ("printk_stress: run=%d FAILURE checks=stored,nmi,takeovers,records failed: "
       "nmi 1 CPUs, first cpu=2 sent=410 handled=409; records cpu=3 ctx=hardirq none")


def end_banner(run=1, self_checking=True):
    """The end banner of a stressor that prints the result line (its
    totals have takeovers_direct=), or of one from before it."""
    return END % (run, " takeovers_direct=0" if self_checking else "")


def results(tmp_path, *lines, dmesg=False):
    """A results directory: the printer thread prints three stressor
    records, then the lines about the run; with `dmesg` the
    scenario's dmesg.txt (`dmesg -r`) holds the same lines."""
    t, _ = printed([pstress(1, "task", n) for n in range(3)] + list(lines))
    d = t.write(tmp_path)
    if dmesg:
        (tmp_path / "dmesg.txt").write_text(
            "".join("<1>%s\n" % ln[1:] for ln in t.serial if "printk_stress" in ln))
    return d


def where(tmp_path, text, name="console.log"):
    """`name:line` of the (last) line of the log that ends with text."""
    lines = (tmp_path / name).read_text().splitlines()
    return "%s:%d" % (name, max(i for i, ln in enumerate(lines, 1) if ln.endswith(text)))


def test_success_line_in_verdict_and_headline(tmp_path):
    v = check_results(results(tmp_path, end_banner(), OK % 1))
    assert v["verdict"] == "pass", v["reasons"]
    assert v["stressor"] == {
        "result": "SUCCESS", "run": 1, "checks": ["stored", "nmi", "takeovers", "records"],
        "failed": None, "missing_result": [],
        "runs": [{"run": 1, "result": "SUCCESS", "checks": ["stored", "nmi", "takeovers",
                                                            "records"],
                  "failed": None, "where": where(tmp_path, OK % 1)}]}
    assert "  stressor: run=1 SUCCESS checks=stored,nmi,takeovers,records" in headline(v)
    assert "stressor: run=1 SUCCESS checks=stored,nmi,takeovers,records\n" in render_text(v)


def test_failure_line_is_a_violation(tmp_path):
    v = check_results(results(tmp_path, end_banner(), BAD % 1))
    assert v["verdict"] == "fail"
    assert {k: n for k, n in v["violations_by_rule"].items() if n} == {"stressor-selfcheck": 1}
    s = v["stressor"]
    assert (s["result"], s["run"], s["failed"]) == (
        "FAILURE", 1, BAD.split(" failed: ")[1])
    assert v["violations"][0]["message"] == (
        "printk_stress run 1: its own checks failed (%s): %s" % (where(tmp_path, BAD % 1),
                                                                   s["failed"]))
    assert "  stressor: run=1 FAILURE checks=stored,nmi,takeovers,records failed: %s" % (
        s["failed"]) in headline(v)


def test_end_banner_without_result_line_is_incomplete(tmp_path):
    v = check_results(results(tmp_path, end_banner()))
    assert v["verdict"] == "incomplete"
    at = where(tmp_path, end_banner())
    assert v["reasons"] == ["stressor run 1 ended (%s) but its SUCCESS/FAILURE line is on no "
                            "log: its own checks are unknown" % at]
    assert v["stressor"]["missing_result"] == [{"run": 1, "where": at}]
    assert v["stressor"]["result"] is None


def test_stressor_from_before_the_result_line_needs_none(tmp_path):
    # results recorded before the line existed: the end banner had no
    # takeovers_direct= total (analysis/tests/data/stress-20261203-095925)
    v = check_results(results(tmp_path, end_banner(self_checking=False)))
    assert v["verdict"] == "pass", v["reasons"]
    assert v["stressor"] is None


def test_failure_line_only_in_dmesg(tmp_path):
    # the console at a loglevel below 1 shows no line about the run;
    # dmesg.txt has it
    d = results(tmp_path, end_banner(), BAD % 1, dmesg=True)
    log = tmp_path / "console.log"
    log.write_text("".join(ln + "\n" for ln in log.read_text().splitlines()
                           if "printk_stress" not in ln))
    t = tmp_path / "trace.txt"
    t.write_text("".join(ln + "\n" for ln in t.read_text().splitlines()
                         if "seq=13" not in ln and "seq=14" not in ln))
    v = check_results(d)
    assert v["verdict"] == "fail", v["reasons"]
    assert v["stressor"]["runs"] == [{"run": 1, "result": "FAILURE",
                                      "checks": ["stored", "nmi", "takeovers", "records"],
                                      "failed": BAD.split(" failed: ")[1],
                                      "where": where(tmp_path, BAD % 1, "dmesg.txt")}]


def test_copies_of_one_line_are_one_run(tmp_path):
    """The serial log's cut copy, its reprint and dmesg.txt's copy are one
    line (one stamp); two loads with a run 1 each are two runs."""
    log = tmp_path / "console.log"
    log.write_text("T[    5.000000] " + end_banner() + "\n"
                   "T[    5.000100] " + (BAD % 1)[:50] + "\n"
                   "A[    5.000100] " + BAD % 1 + "\n"
                   "T[    9.000000] " + end_banner() + "\n"
                   "T[    9.000100] " + OK % 1 + "\n")
    dm = tmp_path / "dmesg.txt"
    dm.write_text("<1>[    9.000000] " + end_banner() + "\n"
                  "<1>[    9.000100] " + OK % 1 + "\n")
    runs, missing = pair(collect([str(log), str(dm)]))
    assert [(r["run"], r["result"], r["where"]) for r in runs] == [
        (1, "FAILURE", "console.log:3"), (1, "SUCCESS", "console.log:5")]
    assert runs[0]["failed"] == BAD.split(" failed: ")[1]
    assert missing == []


def test_a_load_whose_run_ended_without_line_among_others(tmp_path):
    log = tmp_path / "console.log"
    log.write_text("[    5.000000] " + end_banner() + "\n"
                   "[    9.000000] " + end_banner() + "\n"
                   "[    9.000100] " + OK % 1 + "\n"
                   "[   12.000000] " + end_banner(2) + "\n")
    runs, missing = pair(collect([str(log)]))
    assert [(r["run"], r["result"]) for r in runs] == [(1, "SUCCESS")]
    assert [(e["run"], e["where"]) for e in missing] == [(1, "console.log:1"),
                                                         (2, "console.log:4")]


def test_result_line_stamped_before_its_end_banner(tmp_path):
    """The task that prints the end banner and then the result line
    (ps_stop()) moved between them to a CPU whose clock is behind: the
    result line has the lower stamp.  The log's line order is the order
    the console printed them (a log lists records in seq order), not
    the stamps': the result line is the end banner's, in either log."""
    log = tmp_path / "console.log"
    log.write_text("[    5.000000] unrelated line\n"
                   "[    9.000100] " + end_banner() + "\n"
                   "[    9.000050] " + OK % 1 + "\n")
    dm = tmp_path / "dmesg.txt"
    dm.write_text("<1>[    9.000100] " + end_banner() + "\n"
                  "<1>[    9.000050] " + OK % 1 + "\n")
    for paths in ([str(log)], [str(dm)], [str(log), str(dm)], [str(dm), str(log)]):
        runs, missing = pair(collect(paths))
        assert [(r["run"], r["result"]) for r in runs] == [(1, "SUCCESS")], paths
        assert missing == [], paths


def test_logs_merged_in_their_own_orders(tmp_path):
    """The serial log misses run 1's result line (a console at a lower
    loglevel dropped it), dmesg.txt has every line: each log's order
    places it, between the lines both logs show."""
    log = tmp_path / "console.log"
    log.write_text("[    5.000000] " + end_banner() + "\n"
                   "[    9.000000] " + end_banner(2) + "\n"
                   "[    8.999000] " + BAD % 2 + "\n")
    dm = tmp_path / "dmesg.txt"
    dm.write_text("<1>[    5.000000] " + end_banner() + "\n"
                  "<1>[    5.000100] " + OK % 1 + "\n"
                  "<1>[    9.000000] " + end_banner(2) + "\n"
                  "<1>[    8.999000] " + BAD % 2 + "\n")
    runs, missing = pair(collect([str(log), str(dm)]))
    assert [(r["run"], r["result"], r["where"]) for r in runs] == [
        (1, "SUCCESS", "dmesg.txt:2"), (2, "FAILURE", "console.log:3")]
    assert missing == []
