"""The console benchmark's figures come from what the runs left: the
stressor's latency histograms, the serial log and the files the trace
analysis wrote (analysis.json, the intervals file)."""

import gzip
import json
import math
import os
import random
import re
import shutil
import subprocess

import pytest

from analysis import (cli, consolebench as cb, consolebench_runs, emergency_bound,
                      emergency_report, intervals, synth)
from analysis.pstress import crc32_le_kernel
from analysis.tests.recorded import copy_recorded


def test_old_log2_lines_are_read_as_before_upper_bounds(tmp_path):
    # stats of the stressor before the log-linear histograms: a figure is
    # its log2 bucket's upper bound, bucket 0 holding 0 and 1 ns
    stats = tmp_path / "stats.txt"
    stats.write_text("run=1 state=idle\n"
                     "latency ctx=task count=100 log2_ns: 10:50 12:49 20:1\n"
                     "latency ctx=nmi count=3 log2_ns: 0:3\n")
    hists = cb.read_latency(stats)
    assert hists["task"].buckets == [(2 ** 10, 2 ** 11, 50), (2 ** 12, 2 ** 13, 49),
                                     (2 ** 20, 2 ** 21, 1)]
    assert hists["nmi"].buckets == [(0, 2, 3)]
    f = cb.latency_figures(hists)
    assert f["task"] == {"samples": 100, "bound": "x2", "p50_ns": 2 ** 11, "p99_ns": 2 ** 13,
                         "p99_9_ns": 2 ** 21, "max_ns": 2 ** 21}
    assert f["nmi"]["p99_ns"] == 2          # below the clock's resolution


def test_old_lines_with_their_maximum_and_per_cpu_lines(tmp_path):
    # the stats of the stressor of 2026-12: max_ns in each line (the max
    # figure now), and per CPU lines that must not count twice
    stats = tmp_path / "stats.txt"
    stats.write_text("run=1 state=idle last_stop=duration result=SUCCESS elapsed_ms=1\n"
                     "latency ctx=task count=3 max_ns=5000 log2_ns: 10:2 12:1\n"
                     "latency_cpu cpu=0 ctx=task count=3 max_ns=5000 log2_ns: 10:2 12:1\n"
                     "nmi_time cpu=0 count=1 max_ns=9 log2_ns: 3:1\n")
    hists = cb.read_latency(stats)
    assert list(hists) == ["task"] and hists["task"].count == 3
    assert cb.latency_figures(hists)["task"]["max_ns"] == 5000


# The stressor's buckets (ps_hist_bucket() and ps_hist_lower() in
# lib-printk-stress/ps_record.c), to make the stats lines of the tests.
SUB, TOP = 32, 36


def bucket(ns):
    if ns < 2 * SUB:
        return ns
    if ns >= 2 ** TOP:
        return (TOP - 5 + 1) * SUB
    s = ns.bit_length() - 1 - 5
    return s * SUB + (ns >> s)


def lower(b):
    if b < 2 * SUB:
        return b
    s = b // SUB - 1
    return (b - s * SUB) << s


def stats_line(head, samples):
    counts = {}
    for v in samples:
        counts[bucket(v)] = counts.get(bucket(v), 0) + 1
    return "%s count=%d max_ns=%d sub=32 overflow_ns=%d buckets:%s\n" % (
        head, len(samples), max(samples, default=0), 2 ** TOP,
        "".join(" %d:%d" % (lower(b), counts[b]) for b in sorted(counts)))


def test_the_bucket_layout_of_the_stressor():
    # every bucket at most 1/32 of its lower bound wide (1 ns below 64 ns)
    for b in range(2 * SUB, (TOP - 4) * SUB):
        lo, hi = lower(b), lower(b + 1)
        assert bucket(lo) == b == bucket(hi - 1) and (hi - lo) * SUB <= lo
    assert lower((TOP - 4) * SUB) == 2 ** TOP and bucket(2 ** TOP - 1) == 1023


def test_new_lines_and_their_bucket_bounds(tmp_path):
    stats = tmp_path / "stats.txt"
    stats.write_text("run=1 state=idle\n"
                     + stats_line("latency ctx=task", [40, 4096, 4100, 5000, 2 ** 36 + 5])
                     + stats_line("latency_cpu cpu=0 ctx=task", [40])
                     + "latency ctx=panic count=0 max_ns=0 sub=32 overflow_ns=68719476736 "
                       "buckets:\n")
    hists = cb.read_latency(stats)
    assert hists["task"].buckets == [(40, 41, 1), (4096, 4224, 2), (4992, 5120, 1),
                                     (2 ** 36, 2 ** 36 + 6, 1)]
    assert hists["task"].fmt == "loglin" and hists["panic"].count == 0
    f = cb.latency_figures(hists)
    assert f["task"]["p50_ns"] == 4096 + 127 / 2 and f["task"]["max_ns"] == 2 ** 36 + 5
    assert "panic" not in f
    # the other histogram lines parse the same way
    name, labels, h = cb.parse_hist_line(stats_line("takeover_time kind=emerg_nmi", [1056, 9]))
    assert (name, labels, h.buckets) == ("takeover_time", {"kind": "emerg_nmi"},
                                         [(9, 10, 1), (1056, 1088, 1)])


def test_percentiles_within_1_6_percent_of_the_true_ones(tmp_path):
    # a known distribution: 5000 calls, log-normal around 50 us with a
    # long tail, and a few below the resolution of the buckets
    rnd = random.Random(7)
    samples = [int(rnd.lognormvariate(math.log(50000), 1.5)) for _ in range(5000)] + [0, 1, 63]
    stats = tmp_path / "stats.txt"
    stats.write_text(stats_line("latency ctx=hardirq", samples))
    f = cb.latency_figures(cb.read_latency(stats))["hardirq"]
    ordered = sorted(samples)
    for key, q in (("p50_ns", 0.5), ("p99_ns", 0.99), ("p99_9_ns", 0.999)):
        true = ordered[math.ceil(q * len(samples)) - 1]      # nearest rank
        assert abs(f[key] - true) <= true / 64, key
    assert f["max_ns"] == ordered[-1] and f["samples"] == len(samples)


def test_a_histogram_that_does_not_add_up_is_refused(tmp_path):
    stats = tmp_path / "stats.txt"
    stats.write_text("latency ctx=task count=5 log2_ns: 10:4\n")
    with pytest.raises(ValueError, match="add up to 4, count says 5"):
        cb.read_latency(stats)
    stats.write_text(stats_line("latency ctx=emerg", [5000, 7000]).replace("count=2", "count=3"))
    with pytest.raises(ValueError, match="stats.txt: latency ctx=emerg: buckets add up to 2, "
                                         "count says 3"):
        cb.read_latency(stats)


def test_a_bucket_that_is_none_is_refused(tmp_path):
    stats = tmp_path / "stats.txt"
    stats.write_text("latency ctx=task count=1 max_ns=4100 sub=32 overflow_ns=68719476736 "
                     "buckets: 4100:1\n")
    with pytest.raises(ValueError, match="4100 is no bucket's lower bound"):
        cb.read_latency(stats)


def _lat(**figs):
    return {"latency": {"task": dict({"samples": 2500}, **figs)}}


def test_ratios_within_one_round():
    r = cb.compare({"nobkl": _lat(p99_ns=2 ** 12, p50_ns=100), "legacy": _lat(p99_ns=2 ** 22),
                    "floor": _lat(p99_ns=2 ** 11, p50_ns=50)})
    assert r == {"task": {"legacy_over_nobkl_p99": 1024.0, "nobkl_over_floor_p99": 2.0,
                          "nobkl_over_floor_p50": 2.0}}


def _rounds(*per_round):
    return [{"round": i + 1, "modes": modes, "verdicts": {}}
            for i, modes in enumerate(per_round)]


def test_summary_over_rounds_median_range_and_few_samples():
    rounds = _rounds(
        {"nobkl": _lat(p99_ns=1000), "legacy": _lat(p99_ns=100000), "floor": _lat(p99_ns=500)},
        {"nobkl": _lat(p99_ns=3000), "legacy": _lat(p99_ns=150000),
         "floor": {"latency": {"task": {"samples": 1500, "p99_ns": 600}}}},
        {"nobkl": _lat(p99_ns=2000), "legacy": _lat(p99_ns=400000), "floor": {"latency": {}}})
    s = cb.summarize(rounds)
    assert s["latency"]["task"]["nobkl"]["p99_ns"] == {"median": 2000, "min": 1000,
                                                       "max": 3000, "rounds": 3}
    # ratios within each round (100, 50, 200), then their spread
    assert s["ratios"]["task"]["legacy_over_nobkl_p99"] == {
        "median": 100.0, "min": 50.0, "max": 200.0, "rounds": 3}
    assert s["ratios"]["task"]["nobkl_over_floor_p99"]["rounds"] == 2
    assert s["low_samples"] == [("task", "floor", 2, 1500), ("task", "floor", 3, 0)]
    md = cb.markdown(rounds, s, {"command": "make bench"}).splitlines()
    assert "| task | nobkl | 2500 | - | 2 us (1-3 us) | - | - |" in md
    assert "| task | floor | 2000 (1500-2500) **< 2000** | - | 550 ns (500-600 ns) | - | - |" \
        in md
    assert "Fewer than 2000 calls: task floor-2 (1500), task floor-3 (0)." in md
    assert "| task | p99 | 100 (50-200) | 3.5 (2-5) |" in md


# How the benchmark read the trace before it read the analysis' files:
# the `trace-cmd report` lines of nobkl_store and nobkl_commit, each
# record's store and the first commit of its seq in the report.  The
# reference the reading of the model file is held to.
_EV = re.compile(r"\[(\d+)\]\s+(\d+\.\d+): nobkl_(store|commit):\s+(?:con=\S+ )?seq=(\d+)"
                 r"(?:.*? text=(.*))?")


def report_trace(lines):
    """The ConsoleTrace of `trace-cmd report` lines, read as the benchmark
    read them."""
    t = cb.ConsoleTrace()
    for line in lines:
        m = _EV.search(line)
        if not m:
            continue
        ts, kind, seq = float(m.group(2)), m.group(3), int(m.group(4))
        if kind == "store":
            text = m.group(5) or ""
            t.store(seq, ts, len(text), emergency_bound.is_emergency(text))
        elif seq not in t.committed:
            t.committed[seq] = ts
    return t


def _ev(cpu, ts, what, seq, text=None):
    tail = (" text=" + text) if text else " prio=normal thread=1 ctx=task"
    con = "" if what == "store" else "con=ttyS0 "
    return "  x-1 [%03d] %10.6f: nobkl_%s: %sseq=%d%s" % (cpu, ts, what, con, seq, tail)


def _rec(n, ts):
    payload = "abc%d" % n
    crc = crc32_le_kernel(payload.encode())
    return "A[%12.6f] pstress r=1 c=0 x=task n=%d l=%d k=%08x %s\n" % (
        ts, n, len(payload), crc, payload)


def test_console_output_counts_complete_records_and_dropped(tmp_path):
    log = tmp_path / "console.log"
    lines = [_rec(0, 10.0), "A** 7 printk messages dropped **\n", _rec(8, 11.0),
             "A[   11.500000] pstress r=1 c=0 x=task n=9 l=4 k=00000000 abc9\n",  # bad crc
             "some user space noise\n", _rec(10, 12.0)]
    log.write_text("".join(lines))
    c = cb.console_output(log)
    assert (c["records"], c["dropped"], c["span_s"]) == (3, 7, 2.0)
    assert c["bytes"] == sum(len(x) for x in (lines[0], lines[2], lines[5]))


def test_emergency_delay_against_the_backlog_before_it():
    rec = lambda x, n: "pstress r=1 c=0 x=%s n=%d l=3 k=0 abc" % (x, n)  # noqa: E731
    lines = [_ev(0, 1.000, "store", 1, rec("task", 0)),
             _ev(0, 1.001, "store", 2, rec("task", 1)),
             _ev(1, 1.002, "store", 3, rec("emerg", 0)),      # two pending before it
             _ev(0, 1.010, "commit", 1), _ev(0, 1.020, "commit", 2),
             _ev(0, 1.030, "commit", 3),
             _ev(0, 1.100, "store", 4, rec("emerg", 1)),      # nothing pending
             _ev(0, 1.150, "commit", 4)]
    t = report_trace(lines)
    # busy intervals: 1->2 and 2->3 (10 ms each); 3->4 was idle
    assert t.record_time() == pytest.approx(0.010)
    d = t.emergency_delays()
    assert d["records"] == 2
    # seq 3: 28 ms <= (2 + 1) * 10 ms; seq 4: 50 ms > 10 ms
    assert d["within_bound"] == 1
    assert d["max_s"] == pytest.approx(0.050)
    # the rows behind these figures, for the picture: (seq, delay, bound, pending)
    rows, per = t.emergency_rows()
    assert per == pytest.approx(0.010)
    assert [(s, round(dl, 6), round(b, 6), p) for s, dl, b, p in rows] == [
        (3, 0.028, 0.030, 2), (4, 0.050, 0.010, 0)]
    tp = t.throughput()
    assert tp["records_per_s"] == pytest.approx(100.0) and tp["samples"] == 4


def test_legacy_console_events_are_store_times_not_output():
    # 6.1 fires printk:console when a record is stored: no output time.
    rec = lambda n: "pstress r=1 c=0 x=emerg n=%d l=3 k=0 abc" % n  # noqa: E731
    lines = [_ev(0, 1.0 + 0.001 * i, "store", i, rec(i)) for i in range(5)]
    lines += ["  x-1 [000] %10.6f: console:              %s" % (1.0 + 0.001 * i, rec(i))
              for i in range(5)]
    t = report_trace(lines)
    assert t.committed == {}
    assert t.throughput() is None and t.emergency_delays() is None


def test_markdown_report_tables():
    figs = {
        "nobkl": {"latency": {"task": {"samples": 9, "p50_ns": 2 ** 10, "p99_ns": 2 ** 12,
                                       "p99_9_ns": 2 ** 12, "max_ns": 2 ** 13, "bound": "x2"}},
                  "console": {"records": 5, "dropped": 1},
                  "throughput": {"record_s": 0.01, "records_per_s": 100.0, "bytes_per_s": 12000.0},
                  "emergency_delay": {"records": 2, "per_record_s": 0.01, "p50_s": 0.02,
                                      "p99_s": 0.03, "max_s": 0.03, "within_bound": 1}},
        "legacy": {"latency": {"task": {"samples": 8, "p50_ns": 2 ** 20, "p99_ns": 2 ** 22,
                                        "p99_9_ns": 2 ** 22, "max_ns": 2 ** 23, "bound": "x2"}},
                   "console": {"records": 4, "dropped": 0}},
    }
    rounds = [{"round": 1, "modes": figs, "verdicts": {
        "legacy": {"verdict": "fail", "problems": ["1 warning splat(s)"]}}}]
    md = cb.markdown(rounds, cb.summarize(rounds), {"command": "make bench"})
    lines = md.splitlines()
    assert "- command: make bench" in lines
    assert "- run legacy-1 not clean: 1 warning splat(s)" in lines
    assert any("upper bounds of log2 buckets" in x for x in lines)
    assert "| task | nobkl | 9 **< 2000** | 1.02 us | 4.1 us | 4.1 us | 8.19 us |" in lines
    assert "| task | legacy | 8 **< 2000** | 1.05 ms | 4.19 ms | 4.19 ms | 8.39 ms |" in lines
    assert "| task | p99 | 1.02e+03 | - |" in lines
    assert "| nobkl | 1 | 5 | 1 | 10 ms | 100 | 12000 |" in lines
    assert "| legacy | 1 | 4 | 0 | - | - | - |" in lines
    assert "| nobkl | 1 | 2 | 10 ms | 20 ms | 30 ms | 30 ms | 1 of 2 |" in lines


def _run_dir(d, stats, verdict="pass"):
    d.mkdir()
    (d / "stats.txt").write_text("run=1 state=idle\n" + stats)
    (d / "verdict.json").write_text(json.dumps({"verdict": verdict, "problems": []}))


def test_a_benchmark_directory_of_rounds_and_an_old_one(tmp_path):
    new = tmp_path / "bench-console-new"
    new.mkdir()
    for r in (1, 2):
        for i, m in enumerate(cb.MODES):
            _run_dir(new / ("%s-%d" % (m, r)),
                     stats_line("latency ctx=task", [10 * (i + r)] * 2500))
    (new / "nobkl-3").mkdir()          # a guest that hung before the stats
    md, rounds, plotted = cb.report(str(new), {"title": "t"})
    assert [r["round"] for r in rounds] == [1, 2, 3] and rounds[2]["modes"] == {}
    assert any("no figures" in p for p in rounds[2]["verdicts"]["nobkl"]["problems"])
    # below 64 ns a bucket holds one value: the figures are exact
    assert "| task | nobkl | 2500 | 15 ns (10-20 ns) | 15 ns (10-20 ns) | 15 ns (10-20 ns) " \
           "| 15 ns (10-20 ns) |" in md.splitlines()
    assert "| task | p99 | 1.75 (1.5-2) | 0.417 (0.333-0.5) |" in md.splitlines()
    data = json.loads((new / "bench.json").read_text())
    assert data["rounds"][0]["modes"]["legacy"]["latency"]["task"]["p99_ns"] == 20
    assert data["rounds"][1]["ratios"]["task"]["legacy_over_nobkl_p99"] == 1.5
    assert data["summary"]["low_samples"] == []
    # no emergency records in these runs: no emergency-bound.png
    assert plotted == (["latency-cdf.png"] if (new / "latency-cdf.png").exists() else [])
    assert not (new / "emergency-bound.png").exists()
    # a directory of the benchmark before rounds: <mode>/, log2 buckets
    old = tmp_path / "bench-console-old"
    old.mkdir()
    for m in cb.MODES:
        _run_dir(old / m, "latency ctx=nmi count=200 max_ns=3000 log2_ns: 11:200\n")
    md, rounds, _ = cb.report(str(old), {})
    assert len(rounds) == 1 and sorted(rounds[0]["modes"]) == sorted(cb.MODES)
    assert "| nmi | floor | 200 **< 2000** | 4.1 us | 4.1 us | 4.1 us | 3 us |" in md.splitlines()


def _late(seq, delay, bound, **kw):
    row = {"seq": seq, "cpu": 1, "context": "task", "caller": "T7", "text": "pstress x=emerg",
           "delay_s": delay, "bound_s": bound, "pending": 1, "printed_before": 1, "backlog": 1,
           "overtaken": 0, "by_thread": 0, "by_own_cpu": 1, "by_other_cpus": 0,
           "to_emission_s": 0.01, "own_emission_s": 0.02, "owner_at_store": None,
           "owner_prio": None, "handover_requests": 0, "handover_timeouts": 0,
           "handovers": 0, "takeovers": 0}
    row.update(kw)
    return row


def test_markdown_names_every_record_past_its_bound():
    totals = {"less_than_a_record_time_late": 1, "behind_owner": 2, "behind_thread": 1,
              "overtaken": 0, "printed_more_than_pending": 0,
              "own_emission_over_2_record_times": 0, "with_handover_request": 1,
              "with_handover_timeout": 0, "with_takeover": 0, "printed_record_time_s": 0.0095}
    # 25 late records, more than the JSON verdict names: 43..64 5 ms late
    late = [_late(40, 0.05, 0.02, owner_at_store="cpu3/task/thread/normal", handovers=1,
                  handover_requests=1),
            _late(41, 0.03, 0.02), _late(42, 0.045, 0.02)]
    late += [_late(s, 0.025, 0.02) for s in range(43, 65)]
    rounds = [{"round": 1, "verdicts": {}, "modes": {"nobkl": {"emergency_past_bound": {
        "records": 30, "past_bound": 25, "totals": totals, "late": late}}}}]
    md = cb.markdown(rounds, cb.summarize(rounds), {}).splitlines()
    assert "## Emergency records past their bound" in md
    assert "| nobkl | 1 | 25 of 30 | 1 | 1 / 1 | 1 / 0 / 0 | 0 | 9.5 ms |" in md
    assert "All 25, the furthest past their bound first:" in md
    named = [x for x in md if x.startswith("- nobkl-1 seq")]
    assert [int(x.split()[3]) for x in named] == [40, 42, 41] + list(range(43, 65))
    assert named[:2] == [
        "- nobkl-1 seq 40 cpu1 task (T7) `pstress x=emerg`: 50 ms, bound 20 ms (1 pending); "
        "before its emission (10 ms) 1 printed (backlog 1, overtaken 0; by the thread 0, its "
        "CPU 1, other CPUs 0), its own emission 20 ms; owner at the store "
        "cpu3/task/thread/normal; handover requests 1, timeouts 0, handovers 1, takeovers 0",
        "- nobkl-1 seq 42 cpu1 task (T7) `pstress x=emerg`: 45 ms, bound 20 ms (1 pending); "
        "before its emission (10 ms) 1 printed (backlog 1, overtaken 0; by the thread 0, its "
        "CPU 1, other CPUs 0), its own emission 20 ms; owner at the store none (free); "
        "handover requests 0, timeouts 0, handovers 0, takeovers 0"]
    assert named[-1] == (
        "- nobkl-1 seq 64 cpu1 task (T7) `pstress x=emerg`: 25 ms, bound 20 ms (1 pending); "
        "before its emission (10 ms) 1 printed (backlog 1, overtaken 0; by the thread 0, its "
        "CPU 1, other CPUs 0), its own emission 20 ms; owner at the store none (free); "
        "handover requests 0, timeouts 0, handovers 0, takeovers 0")
    assert not any("more" in x for x in md)


def _emerg_rounds():
    """Two nobkl rounds of emergency rows (seq, delay, bound, pending) with
    records within, on and beyond their bound; a legacy run without
    output times."""
    r1 = [(1, 0.008, 0.010, 0), (2, 0.025, 0.020, 1), (3, 0.030, 0.030, 2),   # on it: within
          (4, 0.031, 0.030, 2)]
    r2 = [(7, 0.009, 0.009, 0), (8, 0.100, 0.018, 1), (9, 0.015, 0.018, 1)]

    def fig(rows, per):
        return {"emergency_rows": rows,
                "emergency_delay": emergency_report.delay_summary(rows, per)}
    return _rounds({"nobkl": fig(r1, 0.010), "legacy": {"console": {"records": 3, "dropped": 0}}},
                   {"nobkl": fig(r2, 0.009)})


def test_emergency_points_pool_the_rounds_within_and_beyond():
    rounds = _emerg_rounds()
    p = cb.emergency_points(rounds)
    assert list(p) == ["nobkl"]               # legacy: no output times, no points
    n = p["nobkl"]
    assert sorted(n["within"]) == [(0.009, 0.009), (0.010, 0.008), (0.018, 0.015),
                                   (0.030, 0.030)]
    assert sorted(n["beyond"]) == [(0.018, 0.100), (0.020, 0.025), (0.030, 0.031)]
    assert n["rounds"] == [1, 2] and n["per_record_s"] == (0.009, 0.010)
    # the same records the table counts within the bound
    assert len(n["within"]) == sum(r["modes"]["nobkl"]["emergency_delay"]["within_bound"]
                                   for r in rounds)
    assert cb.emergency_points(_rounds({"nobkl": {"latency": {}}})) == {}


def test_the_emergency_bound_picture_is_written_and_the_rows_stay_out_of_json(tmp_path):
    pytest.importorskip("matplotlib")
    rounds = _emerg_rounds()
    assert cb.plot_emergency_bound(rounds, str(tmp_path / "e.png"))
    assert (tmp_path / "e.png").stat().st_size > 1000
    assert not cb.plot_emergency_bound(_rounds({"floor": {}}), str(tmp_path / "none.png"))
    assert not (tmp_path / "none.png").exists()
    # report() draws it and names it (no latency histograms here: no CDF);
    # bench.json keeps the figures, not the rows
    _, _, pictures = cb.report(str(tmp_path), {}, rounds)
    assert pictures == ["emergency-bound.png"]
    assert (tmp_path / "emergency-bound.png").exists()
    run = json.loads((tmp_path / "bench.json").read_text())["rounds"][0]["modes"]["nobkl"]
    assert "emergency_rows" not in run and run["emergency_delay"]["within_bound"] == 2


# The console's figures come from the files the run's analysis wrote
# (analysis.json and intervals.jsonl.gz), never from the trace again;
# for the same trace they are what the benchmark read from `trace-cmd
# report` (report_trace()).

def _analysed(d, *opts):
    """The run's trace analysis as the harness runs it (`check -o
    analysis.json --gzip`) and its verdict.json around it."""
    rc = cli.main(["check", str(d), "-o", str(d / "analysis.json"), "--gzip", "-q"]
                  + list(opts))
    analysis = json.loads((d / "analysis.json").read_text())
    (d / "verdict.json").write_text(json.dumps({"verdict": "pass", "problems": [],
                                                "analysis": analysis}))
    return rc, analysis


@pytest.fixture(scope="module")
def synth_run(tmp_path_factory):
    """A synthetic run of a busy NOBKL console with emergency records,
    analysed, with latency histograms in its stats."""
    d = tmp_path_factory.mktemp("synth") / "run"
    synth.generate(str(d), events=6000, seed=5)
    with open(d / "stats.txt", "a") as f:
        for i, ctx in enumerate(("task", "hardirq", "nmi", "emerg")):
            f.write(stats_line("latency ctx=%s" % ctx,
                               [1000 * (i + 1) + 37 * n for n in range(2500)]))
    _analysed(d, "--order", "timestamps")
    return d


def _report_lines_of(d):
    """The report text the benchmark read of a run: trace.txt, or
    `trace-cmd report` of its trace.dat."""
    if (d / "trace.txt").exists():
        return (d / "trace.txt").read_text().splitlines()
    return subprocess.run(["trace-cmd", "report", "-i", str(d / "trace.dat")],
                          capture_output=True, text=True, errors="replace").stdout.splitlines()


def _same_trace(old, new):
    assert new.stored == old.stored and new.committed == old.committed
    assert new.throughput() == old.throughput()
    assert new.emergency_rows() == old.emergency_rows()


def test_the_model_file_gives_the_trace_the_report_gave(synth_run):
    _, model = intervals.read_results(str(synth_run))
    old, new = report_trace(_report_lines_of(synth_run)), cb.ConsoleTrace.of_model(model)
    _same_trace(old, new)
    rows, per = new.emergency_rows()
    assert len(rows) > 50 and new.throughput()["samples"] > 1000
    assert 0 < sum(1 for _, d, b, _ in rows if d <= b) < len(rows)


@pytest.mark.skipif(shutil.which("trace-cmd") is None, reason="no trace-cmd")
def test_the_model_file_gives_the_trace_the_report_gave_of_a_recorded_run(tmp_path):
    d = copy_recorded(tmp_path)
    _analysed(d)
    _, model = intervals.read_results(str(d))
    old = report_trace(_report_lines_of(d))
    assert len(old.stored) > 3000 and len(old.committed) > 3000
    _same_trace(old, cb.ConsoleTrace.of_model(model))


def _bench_dir(root, synth_run):
    """A benchmark of one round: the synthetic run as nobkl-1; legacy-1
    with its serial log and a trace of stores only (what the legacy
    console's run traces), whose analysis says it has no console events;
    floor-1 without output."""
    root.mkdir()
    nobkl = root / "nobkl-1"
    shutil.copytree(synth_run, nobkl)
    legacy = root / "legacy-1"
    legacy.mkdir()
    for n in ("console.log", "stats.txt"):
        shutil.copy(synth_run / n, legacy / n)
    (legacy / "trace.txt").write_text("".join(
        line + "\n" for line in _report_lines_of(synth_run)
        if "nobkl_store" in line or line.startswith("cpus=")))
    assert _analysed(legacy)[1]["error"]
    floor = root / "floor-1"
    floor.mkdir()
    shutil.copy(synth_run / "stats.txt", floor / "stats.txt")
    (floor / "verdict.json").write_text(json.dumps({"verdict": "pass", "problems": []}))
    return root


def _report(root):
    md, rounds, _ = cb.report(str(root), {"title": "t"})
    return md, (root / "bench.json").read_text(), rounds


def test_the_report_is_the_one_the_trace_report_gave(tmp_path, synth_run, monkeypatch):
    root = _bench_dir(tmp_path / "bench", synth_run)
    new = _report(root)
    # the same runs, each read from its report text as before
    monkeypatch.setattr(consolebench_runs.ConsoleTrace, "of_model", classmethod(
        lambda cls, model: report_trace(_report_lines_of(root / "nobkl-1"))))
    old = _report(root)
    assert new[0] == old[0] and new[1] == old[1]
    # what the pictures draw: the histograms and each emergency record's row
    assert new[2] == old[2] and cb.emergency_points(new[2]) == cb.emergency_points(old[2])
    figs = new[2][0]["modes"]
    assert figs["nobkl"]["throughput"]["samples"] > 1000
    assert "## Emergency records: store to console" in new[0].splitlines()
    assert figs["nobkl"]["emergency_delay"]["records"] == len(figs["nobkl"]["emergency_rows"])
    assert "throughput" not in figs["legacy"] and "emergency_rows" not in figs["legacy"]
    assert figs["legacy"]["console"]["records"] == figs["nobkl"]["console"]["records"]


def _main_error(root, capsys):
    capsys.readouterr()
    assert cb.main(["consolebench", str(root)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("consolebench: ") and "Traceback" not in err
    return err


def test_a_run_without_its_analysis_files_is_an_error_naming_recheck(tmp_path, synth_run,
                                                                       capsys):
    root = _bench_dir(tmp_path / "bench", synth_run)
    run = root / "nobkl-1"
    (run / "trace.dat").write_bytes(b"")
    os.rename(run / "analysis.json", tmp_path / "analysis.json")
    err = _main_error(root, capsys)
    assert "no analysis.json next to %s" % (run / "trace.dat") in err
    assert "`make recheck RESULTS=%s`" % run in err
    # analysis.json without the intervals file next to it
    os.rename(tmp_path / "analysis.json", run / "analysis.json")
    os.unlink(run / intervals.GZIP_NAME)
    err = _main_error(root, capsys)
    assert "no intervals.jsonl.gz in %s: run `make recheck RESULTS=%s` first" % (run, run) \
        in err
    # without trace.dat and analysis.json there is nothing to read: no
    # figures of the trace, no error
    os.unlink(run / "trace.dat")
    os.unlink(run / "analysis.json")
    md, rounds, _ = cb.report(str(root), {})
    assert "console" in rounds[0]["modes"]["nobkl"]
    assert "throughput" not in rounds[0]["modes"]["nobkl"]


def test_a_model_file_of_an_older_analysis_is_an_error_naming_recheck(tmp_path, synth_run,
                                                                       capsys):
    # the same file as an analysis wrote it before its store rows had len
    root = _bench_dir(tmp_path / "bench", synth_run)
    run = root / "nobkl-1"
    path = run / intervals.GZIP_NAME
    with gzip.open(path, "rt") as f:
        rows = [json.loads(line) for line in f]
    store_fields = None
    for row in rows[1:]:
        if row[0] == "K":
            for k, names in row[1]:
                if names == ["caller", "text", "len"]:
                    store_fields = k
                    names.pop()
        elif row[0] == "E":
            for e in row[1]:
                if e[6] == store_fields:
                    e[7].pop()
    assert store_fields is not None
    with gzip.open(path, "wt") as f:
        f.writelines(json.dumps(row) + "\n" for row in rows)
    err = _main_error(root, capsys)
    assert "%s has no record lengths" % path in err
    assert "`make recheck RESULTS=%s`" % run in err
