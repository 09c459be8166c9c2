"""CLI, exit codes, unusable and incomplete input, trace.dat handling."""

import json
import os
import shutil
import stat
import subprocess
import sys

import pytest

from analysis.tests.verdicts import BY_CLOCKS, check_results
from analysis.tests.tracebuilder import Trace, pstress, clean_trace

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PY = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable


def cli(*args, cwd=REPO, env=None, order=BY_CLOCKS):
    """`python3 -m analysis ARGS`; `check` judges a trace without state
    words by the clocks (verdicts.py) unless order is None (the default)."""
    e = dict(os.environ)
    if env:
        e.update(env)
    if order and args and args[0] == "check":
        args += ("--order", order)
    p = subprocess.run([PY, "-m", "analysis"] + [str(a) for a in args], cwd=cwd,
                       capture_output=True, text=True, env=e, timeout=300)
    return p.returncode, p.stdout, p.stderr


def good_dir(tmp_path, name="res"):
    t, _ = clean_trace()
    return t.write(tmp_path / name)


def bad_dir(tmp_path):
    t, _ = clean_trace()
    # break no-loss: drop one emission+commit pair from the report
    lines = t.lines
    idx = [i for i, l in enumerate(lines) if "nobkl_emit" in l][1]
    del lines[idx:idx + 2]
    return t.write(tmp_path / "bad")


def assert_clean_error(rc, out, err):
    assert rc == 2
    assert "Traceback" not in err and "Traceback" not in out
    assert err.startswith("analysis: unusable input:")
    assert len(err.strip().splitlines()) == 1


def test_help():
    rc, out, err = cli("--help")
    assert rc == 0 and "check" in out and "timeline" in out and "exit codes" in out
    rc, out, err = cli("check", "--help")
    assert rc == 0 and "--json" in out and "--report" in out


def test_check_pass_text_and_json(tmp_path):
    d = good_dir(tmp_path)
    rc, out, err = cli("check", d)
    assert rc == 0, out + err
    assert out.startswith("VERDICT: PASS")
    rc, out, err = cli("check", d, "--json")
    assert rc == 0
    v = json.loads(out)
    assert v["verdict"] == "pass" and v["exit_code"] == 0
    for k in ("counts", "latency", "trace", "violations_by_rule", "serial", "consoles"):
        assert k in v
    assert v["counts"]["takeovers"]["hostile"] == 2


def test_check_fail_exit_1_and_json_out(tmp_path):
    d = bad_dir(tmp_path)
    out_json = tmp_path / "verdict.json"
    rc, out, err = cli("check", d, "-o", out_json)
    assert rc == 1, out + err
    assert "VERDICT: FAIL" in out and "[no-loss]" in out
    v = json.loads(out_json.read_text())
    assert v["verdict"] == "fail" and v["violations_by_rule"]["no-loss"] >= 1
    viol = [x for x in v["violations"] if x["rule"] == "no-loss"][0]
    for k in ("seq", "cpus", "contexts", "ts", "events_before", "events_after", "message"):
        assert k in viol


def test_report_option(tmp_path):
    d = good_dir(tmp_path)
    rc, out, err = cli("check", "--report", os.path.join(d, "trace.txt"),
                       "--serial", os.path.join(d, "console.log"))
    assert rc == 0, out + err


def test_check_results_api(tmp_path):
    v = check_results(good_dir(tmp_path))
    assert v["verdict"] == "pass"
    v = check_results(str(tmp_path / "nope"))
    assert v["verdict"] == "incomplete" and v["exit_code"] == 2 and "error" in v


UNORDERED = ("cannot order the events of different CPUs: the trace has no "
             "old_state/new_state fields")


def test_a_trace_without_state_words_is_incomplete_unless_clocks_are_asked_for(tmp_path):
    """Nothing in a trace without old_state/new_state orders the events
    of different CPUs: by default its verdict is incomplete (exit 2) with
    a reason naming the missing fields, its violations listed but none
    proven; `--order timestamps` (order= of the API) judges it by the
    CPUs' clocks and says so in the verdict and the text.  Before, every
    such trace was judged by the clocks unasked: pass and fail."""
    from analysis import api
    good, bad = good_dir(tmp_path), bad_dir(tmp_path)
    v = api.check_results(good)
    assert (v["verdict"], v["exit_code"], v["ordering"]["mode"]) == ("incomplete", 2, "none")
    assert v["reasons"][0].startswith(UNORDERED), v["reasons"]
    assert v["inputs"]["ordering"].startswith("none: ")
    v = api.check_results(bad)
    assert (v["verdict"], v["exit_code"]) == ("incomplete", 2)
    assert v["reasons"][0].startswith(UNORDERED) and v["violations_by_rule"]["no-loss"] >= 1
    rc, out, err = cli("check", good, order=None)
    assert rc == 2 and out.startswith("VERDICT: INCOMPLETE") and UNORDERED in out, out + err
    rc, out, err = cli("check", good, order="timestamps")
    assert rc == 0 and out.startswith("VERDICT: PASS"), out + err
    assert "  order: timestamps, as asked (order=timestamps)" in out
    v = api.check_results(good, order="timestamps")
    assert (v["verdict"], v["ordering"]["mode"]) == ("pass", "timestamps")
    v = api.check_results(bad, order="timestamps")
    assert (v["verdict"], v["exit_code"]) == ("fail", 1)


def test_the_verdict_lists_the_table_it_folded(tmp_path):
    """analysis.json lists every judgement of the table (verdict.TABLE),
    in its order, with what it said: the verdict is their fold."""
    from analysis import api
    from analysis.verdict import TABLE
    good, bad = good_dir(tmp_path), bad_dir(tmp_path)

    def said(v):
        assert [r["judgement"] for r in v["judgements"]] == [j.name for j in TABLE]
        return {r["judgement"]: (r["outcome"], r["firm"]) for r in v["judgements"]
                if r["outcome"] != "pass"}
    v = api.check_results(good)
    assert said(v) == {"order": ("incomplete", True)}
    assert v["judgements"][0]["reasons"] == v["reasons"]
    v = api.check_results(bad, order="timestamps")
    assert said(v) == {"rules": ("fail", True)}
    assert v["judgements"][2]["reasons"] == v["reasons"]
    assert api.check_results(good, order="timestamps")["judgements"] == [
        {"judgement": j.name, "outcome": "pass", "firm": False, "reasons": []} for j in TABLE]


def test_a_trace_with_the_chain_is_ordered_by_it_whatever_the_order_option(tmp_path):
    """The default judges a trace with the state words by its chain;
    asking for the clocks changes nothing there."""
    from analysis import api
    t, _ = clean_trace(chain=True)
    d = t.write(tmp_path / "res")
    for order in (None, "chain", "timestamps"):
        v = api.check_results(d, order=order)
        assert (v["verdict"], v["ordering"]["mode"]) == ("pass", "chain"), (order, v["reasons"])
    v = api.check_results(d, order="clocks")
    assert v["verdict"] == "incomplete" and "unknown order 'clocks'" in v["error"]


# ------------------------------------------------------------- bad inputs
def test_missing_dir(tmp_path):
    assert_clean_error(*cli("check", tmp_path / "nope"))


def test_missing_trace(tmp_path):
    d = good_dir(tmp_path)
    os.unlink(os.path.join(d, "trace.txt"))
    assert_clean_error(*cli("check", d))


def test_missing_console_log(tmp_path):
    d = good_dir(tmp_path)
    os.unlink(os.path.join(d, "console.log"))
    rc, out, err = cli("check", d)
    assert_clean_error(rc, out, err)
    assert "console.log" in err
    rc, out, err = cli("check", d, "--no-serial")
    assert rc == 0, out + err


def test_empty_files(tmp_path):
    d = good_dir(tmp_path)
    open(os.path.join(d, "trace.txt"), "w").close()
    assert_clean_error(*cli("check", d))
    d = good_dir(tmp_path, "res2")
    open(os.path.join(d, "console.log"), "w").close()
    assert_clean_error(*cli("check", d))


def test_garbage_files(tmp_path):
    d = good_dir(tmp_path)
    with open(os.path.join(d, "trace.txt"), "wb") as f:
        f.write(os.urandom(5000))
    assert_clean_error(*cli("check", d))
    d = good_dir(tmp_path, "res2")
    with open(os.path.join(d, "trace.txt"), "w") as f:
        f.write("this is not\na trace-cmd report\n")
    assert_clean_error(*cli("check", d))
    d = good_dir(tmp_path, "res3")
    with open(os.path.join(d, "console.log"), "w") as f:
        f.write("hello\nworld\n")
    rc, out, err = cli("check", d)
    assert_clean_error(rc, out, err)
    assert "foreign" in err


def test_trace_without_nobkl_events(tmp_path):
    d = good_dir(tmp_path)
    with open(os.path.join(d, "trace.txt"), "w") as f:
        f.write("cpus=2\n            bash-7830  [001]   736.290889: console:              "
                "hello world - test 1\n")
    rc, out, err = cli("check", d)
    assert_clean_error(rc, out, err)
    assert "no nobkl" in err


def test_truncated_report_is_not_a_pass(tmp_path):
    d = good_dir(tmp_path)
    p = os.path.join(d, "trace.txt")
    data = open(p).read()
    open(p, "w").write(data[:len(data) * 2 // 3].rstrip("\n")[:-7])
    rc, out, err = cli("check", d, "--json")
    assert rc == 2
    v = json.loads(out)
    assert v["verdict"] != "pass"


def test_json_written_for_unusable_input(tmp_path):
    out_json = tmp_path / "v.json"
    rc, out, err = cli("check", tmp_path / "nope", "--json-out", out_json)
    assert rc == 2
    v = json.loads(out_json.read_text())
    assert v["verdict"] == "incomplete" and v["exit_code"] == 2 and v["error"]


def test_dropped_trace_events_incomplete(tmp_path):
    t, _ = clean_trace()
    t.lines.insert(len(t.lines) // 2, "CPU:1 [1234 EVENTS DROPPED]")
    d = t.write(tmp_path / "res")
    rc, out, err = cli("check", d, "--json")
    v = json.loads(out)
    assert rc == 2 and v["verdict"] == "incomplete", v["violations"]
    assert v["trace"]["complete"] is False and v["trace"]["drop_markers"] == 1
    for marker in ("CPU:0 [EVENTS DROPPED]", "CPU:3 [LOST 7 EVENTS]"):
        t, _ = clean_trace()
        t.lines.insert(5, marker)
        assert check_results(t.write(tmp_path / marker[:5].replace(":", "")))["verdict"] == \
            "incomplete"


def test_violation_before_trace_loss_is_fail(tmp_path):
    t = Trace()
    T = t.ctx(0, thread=1)
    s = [t.store(pstress(1, "task", n, "p%d" % n)) for n in range(4)]
    t.acquire(T)
    t.print_rec(T, s[0])
    t.print_rec(T, s[2])          # loss of s[1], before any trace loss
    t.print_rec(T, s[3])
    t.lines.append("CPU:0 [10 EVENTS DROPPED]")
    t.release(T)
    v = check_results(t.write(tmp_path / "r"))
    assert v["verdict"] == "fail"
    # a drop on a CPU with no earlier events may hide anything: incomplete
    t.lines[-2] = "CPU:2 [10 EVENTS DROPPED]"
    v = check_results(t.write(tmp_path / "r2"))
    assert v["verdict"] == "incomplete"


# ------------------------------------------------------------- trace.dat
def fake_trace_cmd(tmp_path, report_text, rc=0):
    rep = tmp_path / "fake_report.txt"
    rep.write_text(report_text)
    exe = tmp_path / "trace-cmd"
    exe.write_text("#!/bin/sh\n[ \"$1\" = report ] || exit 9\ncat '%s'\nexit %d\n" % (rep, rc))
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    return str(exe)


def test_trace_dat_through_trace_cmd_pipe(tmp_path):
    t, _ = clean_trace()
    d = t.write(tmp_path / "res")
    os.rename(os.path.join(d, "trace.txt"), os.path.join(d, "unused.txt"))
    open(os.path.join(d, "trace.dat"), "wb").write(b"\x17\x08Dtracing6" + b"\0" * 100)
    exe = fake_trace_cmd(tmp_path, t.report())
    rc, out, err = cli("check", d, "--trace-cmd", exe)
    assert rc == 0, out + err
    assert "report -i" in out
    rc, out, err = cli("check", d, env={"ANALYSIS_TRACE_CMD": exe})
    assert rc == 0, out + err
    bad = fake_trace_cmd(tmp_path, "", rc=255)
    assert_clean_error(*cli("check", d, "--trace-cmd", bad))


@pytest.mark.skipif(shutil.which("trace-cmd") is None, reason="trace-cmd not installed")
def test_real_trace_cmd_on_broken_trace_dat(tmp_path):
    d = good_dir(tmp_path)
    os.unlink(os.path.join(d, "trace.txt"))
    dat = os.path.join(d, "trace.dat")
    for content in (os.urandom(4096), b"\x17\x08Dtracing6\0\0\0", b""):
        with open(dat, "wb") as f:
            f.write(content)
        assert_clean_error(*cli("check", d))


# ------------------------------------------------------------- timeline / plot
def checked(d):
    """d with the analysis.json and intervals.jsonl plot and timeline read."""
    rc, out, err = cli("check", d, "-q", "-o", os.path.join(d, "analysis.json"))
    assert rc in (0, 1), err
    with open(os.path.join(d, "analysis.json")) as f:
        return json.load(f)


def test_timeline_subcommand(tmp_path):
    d = bad_dir(tmp_path)
    v = checked(d)
    seq = [x for x in v["violations"] if x["rule"] == "no-loss"][0]["seq"]
    rc, out, err = cli("timeline", d, "--seq", seq)
    assert rc == 0, err
    assert "timeline around seq %d" % seq in out
    rc, out, err = cli("timeline", d, "--seq", seq + 1)
    assert rc == 0 and "VIOLATION no-loss" in out
    rc, out, err = cli("timeline", d, "--seq", 999999)
    assert rc == 1


def test_plot_subcommand(tmp_path):
    d = good_dir(tmp_path)
    checked(d)
    png = tmp_path / "t.png"
    rc, out, err = cli("plot", d, "-o", png)
    assert rc == 0, err
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    rc, out, err = cli("plot", d)
    assert rc == 0 and os.path.exists(os.path.join(d, "timeline.png"))


def test_rules_subcommand():
    from analysis.rules import RULE_TABLE
    from analysis.tolerances import TOLERANCES
    rc, out, err = cli("rules")
    lines = out.splitlines()
    assert rc == 0 and lines[0].split() == ["rule", "scope", "invariant"]
    assert [ln.split()[0] for ln in lines[1:]] == [r.id for r in RULE_TABLE]
    assert lines[1].startswith("no-loss") and "console (trace)" in lines[1]
    assert "serial log" in lines[[r.id for r in RULE_TABLE].index("serial-order") + 1]
    rc, out, err = cli("rules", "--tolerances")
    lines = out.splitlines()
    assert rc == 0 and [ln.split()[0] for ln in lines[1:]] == [t.name for t in TOLERANCES]
    assert "counts.grants_traced_after_pickup" in out and "GRANT_WAIT" in out
    rc, out, err = cli("rules", "--json")
    rows = json.loads(out)
    assert rc == 0 and rows[0]["id"] == "no-loss" and rows[0]["checked_by"]


def test_mutated_inputs_never_crash(tmp_path):
    """Random damage to a good report and serial log: a verdict or an
    InputError, never another exception."""
    import random
    from analysis.tests.verdicts import analyse
    from analysis.traceparse import InputError
    rnd = random.Random(7)
    t, _ = clean_trace()
    rep = t.report().splitlines(True)
    ser = ("\n".join(t.serial) + "\n").splitlines(True)
    junk = ["", "x", "-1", "99999999999999999999", "=", "panic", " "]
    for k in range(40):
        r, s = list(rep), list(ser)
        for lines in (r, s):
            for _ in range(rnd.randint(1, 8)):
                i = rnd.randrange(len(lines))
                op = rnd.randrange(5)
                if op == 0:
                    del lines[i]
                elif op == 1:
                    lines.insert(i, lines[rnd.randrange(len(lines))])
                elif op == 2:
                    j = lines[i].find("=")
                    if j > 0:
                        lines[i] = lines[i][:j + 1] + rnd.choice(junk) + lines[i][j + 2:]
                elif op == 3:
                    lines[i] = lines[i][:rnd.randrange(len(lines[i]) + 1)]
                else:
                    lines[i] = "".join(rnd.choice("[]:=- 01ab\t") for _ in range(30)) + "\n"
        d = tmp_path / ("m%d" % k)
        d.mkdir()
        (d / "trace.txt").write_text("".join(r))
        (d / "console.log").write_text("".join(s))
        try:
            v, _ = analyse(str(d))
            assert v["verdict"] in ("pass", "fail", "incomplete")
        except InputError:
            pass


def test_plot_around_a_seq_never_runs_the_analysis(tmp_path, monkeypatch):
    """The picture around a seq comes from the model's intervals and marks
    that `check -o` wrote; plot does not run the analysis again."""
    from analysis import api, plot
    t, s = clean_trace()
    d = t.write(tmp_path / "res")
    checked(d)

    def refused(*a, **kw):
        raise AssertionError("plot ran the analysis")
    monkeypatch.setattr(api, "analyse", refused)
    data, verdict = plot.collect(d, seq=s[2])
    assert verdict["verdict"] == "pass"
    w0, w1 = data["window"]
    assert data["seq_ts"] is not None and (w0, w1) == (data["seq_ts"] - 0.0005,
                                                       data["seq_ts"] + 0.002)
    # the takeover in the middle of s[2]: the thread's interval ends there
    assert any(iv[1] == 0 and iv[8].startswith("taken over") for iv in data["intervals"])
    # the same picture as one with that window given
    same, _ = plot.collect(d, start=w0, end=w1)
    assert (data["intervals"], data["marks"]) == (same["intervals"], same["marks"])
    assert [m[0] for m in data["marks"]] == ["hostile", "handover", "timeout", "hostile"]
    assert plot.collect(d, seq=99999) == (None, None)
