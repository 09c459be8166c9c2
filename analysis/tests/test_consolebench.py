"""The console benchmark's figures come from what the runs left: the
stressor's latency histograms, the serial log and the trace."""

import pytest

from analysis import consolebench as cb
from analysis.serial import crc32_le_kernel


def test_percentiles_are_upper_bounds_of_log2_buckets(tmp_path):
    stats = tmp_path / "stats.txt"
    stats.write_text("run=1 state=idle\n"
                     "latency ctx=task count=100 log2_ns: 10:50 12:49 20:1\n"
                     "latency ctx=nmi count=3 log2_ns: 0:3\n")
    hists = cb.read_latency(stats)
    assert hists == {"task": {10: 50, 12: 49, 20: 1}, "nmi": {0: 3}}
    f = cb.latency_figures(hists)
    assert f["task"] == {"samples": 100, "p50_ns": 2 ** 11, "p99_ns": 2 ** 13,
                         "max_ns": 2 ** 21}
    assert f["nmi"]["p99_ns"] == 2          # below the clock's resolution


def test_histograms_with_their_maximum_and_per_cpu_lines(tmp_path):
    # the stats of today's stressor: max_ns in each line, and per CPU
    # lines that must not count twice
    stats = tmp_path / "stats.txt"
    stats.write_text("run=1 state=idle last_stop=duration result=SUCCESS elapsed_ms=1\n"
                     "latency ctx=task count=3 max_ns=5000 log2_ns: 10:2 12:1\n"
                     "latency_cpu cpu=0 ctx=task count=3 max_ns=5000 log2_ns: 10:2 12:1\n"
                     "nmi_time cpu=0 count=1 max_ns=9 log2_ns: 3:1\n")
    assert cb.read_latency(stats) == {"task": {10: 2, 12: 1}}


def test_a_histogram_that_does_not_add_up_is_refused(tmp_path):
    stats = tmp_path / "stats.txt"
    stats.write_text("latency ctx=task count=5 log2_ns: 10:4\n")
    with pytest.raises(ValueError, match="add up to 4, count says 5"):
        cb.read_latency(stats)


def test_ratios_of_the_p99_within_one_benchmark():
    lat = lambda p99: {"latency": {"task": {"samples": 9, "p99_ns": p99}}}  # noqa: E731
    r = cb.compare({"nobkl": lat(2 ** 12), "legacy": lat(2 ** 22), "floor": lat(2 ** 11)})
    assert r == {"task": {"legacy_over_nobkl_p99": 1024.0, "nobkl_over_floor_p99": 2.0}}


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


def _ev(cpu, ts, what, seq, text=None):
    tail = (" text=" + text) if text else " prio=normal thread=1 ctx=task"
    con = "" if what == "store" else "con=ttyS0 "
    return "  x-1 [%03d] %10.6f: nobkl_%s: %sseq=%d%s" % (cpu, ts, what, con, seq, tail)


def test_emergency_delay_against_the_backlog_before_it():
    rec = lambda x, n: "pstress r=1 c=0 x=%s n=%d l=3 k=0 abc" % (x, n)  # noqa: E731
    lines = [_ev(0, 1.000, "store", 1, rec("task", 0)),
             _ev(0, 1.001, "store", 2, rec("task", 1)),
             _ev(1, 1.002, "store", 3, rec("emerg", 0)),      # two pending before it
             _ev(0, 1.010, "commit", 1), _ev(0, 1.020, "commit", 2),
             _ev(0, 1.030, "commit", 3),
             _ev(0, 1.100, "store", 4, rec("emerg", 1)),      # nothing pending
             _ev(0, 1.150, "commit", 4)]
    t = cb.ConsoleTrace(lines)
    # busy intervals: 1->2 and 2->3 (10 ms each); 3->4 was idle
    assert t.record_time() == pytest.approx(0.010)
    d = t.emergency_delays()
    assert d["records"] == 2
    # seq 3: 28 ms <= (2 + 1) * 10 ms; seq 4: 50 ms > 10 ms
    assert d["within_bound"] == 1
    assert d["max_s"] == pytest.approx(0.050)
    tp = t.throughput()
    assert tp["records_per_s"] == pytest.approx(100.0) and tp["samples"] == 4


def test_legacy_console_events_are_store_times_not_output():
    # 6.1 fires printk:console when a record is stored: no output time.
    rec = lambda n: "pstress r=1 c=0 x=emerg n=%d l=3 k=0 abc" % n  # noqa: E731
    lines = [_ev(0, 1.0 + 0.001 * i, "store", i, rec(i)) for i in range(5)]
    lines += ["  x-1 [000] %10.6f: console:              %s" % (1.0 + 0.001 * i, rec(i))
              for i in range(5)]
    t = cb.ConsoleTrace(lines)
    assert t.committed == {}
    assert t.throughput() is None and t.emergency_delays() is None


def test_markdown_report_tables():
    figs = {
        "nobkl": {"latency": {"task": {"samples": 9, "p50_ns": 2 ** 10, "p99_ns": 2 ** 12,
                                       "max_ns": 2 ** 13}},
                  "console": {"records": 5, "dropped": 1},
                  "throughput": {"record_s": 0.01, "records_per_s": 100.0, "bytes_per_s": 12000.0},
                  "emergency_delay": {"records": 2, "per_record_s": 0.01, "p50_s": 0.02,
                                      "p99_s": 0.03, "max_s": 0.03, "within_bound": 1}},
        "legacy": {"latency": {"task": {"samples": 8, "p50_ns": 2 ** 20, "p99_ns": 2 ** 22,
                                        "max_ns": 2 ** 23}},
                   "console": {"records": 4, "dropped": 0}},
    }
    md = cb.markdown(figs, cb.compare(figs), {"command": "make bench", "verdicts": {
        "legacy": {"verdict": "fail", "problems": ["1 warning splat(s)"]}}})
    lines = md.splitlines()
    assert "- command: make bench" in lines
    assert "- run legacy not clean: 1 warning splat(s)" in lines
    assert "| task | nobkl | 9 | 1.02 us | 4.1 us | 8.19 us |" in lines
    assert "| task | legacy | 8 | 1.05 ms | 4.19 ms | 8.39 ms |" in lines
    assert "| task | 1.02e+03 | - |" in lines
    assert "| nobkl | 5 | 1 | 10 ms | 100 | 12000 |" in lines
    assert "| legacy | 4 | 0 | - | - | - |" in lines
    assert "| nobkl | 2 | 10 ms | 20 ms | 30 ms | 30 ms | 1 of 2 |" in lines
