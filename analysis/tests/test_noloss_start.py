"""no-loss at the start of a console's traced history.

A record whose nobkl_store is in the trace was stored after tracing began,
so the console cannot have printed it before the trace: if the console's
first traced emission is of a later seq, the records in between must be
counted by that emission's dropped count (design.md: "Every seq from the
console's first to its last committed record is committed exactly once,
except records the ringbuffer overwrote ... accounted for by the dropped
count").  Earlier the no-loss rule only looked from the console's first
traced emission on, so a record dropped before it went unnoticed."""

from analysis.tests.verdicts import check_results
from analysis.tests.tracebuilder import Trace, busy_with_a_record_from_before_the_trace, pstress
from analysis.tests.verdicts import violated


def run(tmp_path, t, **kw):
    return check_results(t.write(tmp_path / "res"), **kw)


def stores_then_print(first, dropped=0, n=4):
    t = Trace()
    T = t.ctx(0, thread=1)
    s = [t.store(pstress(1, "task", i, "p%d" % i)) for i in range(n)]
    t.acquire(T)
    t.print_rec(T, s[first], dropped=dropped)
    for x in s[first + 1:]:
        t.print_rec(T, x)
    t.release(T)
    return t, s


def test_record_dropped_before_the_first_traced_emission_is_lost(tmp_path):
    t, s = stores_then_print(first=1)          # s[0] stored, never printed, dropped=0
    for kw in ({}, {"no_serial": True}):
        v = run(tmp_path, t, **kw)
        assert v["verdict"] == "fail" and v["exit_code"] == 1
        assert violated(v) == {"no-loss"}
        viol = [x for x in v["violations"] if x["rule"] == "no-loss"][0]
        assert viol["seq"] == s[0] and viol["missing"] == [s[0], s[0]]
        assert viol["cpus"] == [0]


def test_dropped_count_too_small_for_the_records_before_the_first_emission(tmp_path):
    t, s = stores_then_print(first=3, dropped=2, n=5)      # 3 skipped, 2 counted
    v = run(tmp_path, t, no_serial=True)
    assert violated(v) == {"no-loss"}
    viol = [x for x in v["violations"] if x["rule"] == "no-loss"][0]
    assert viol["missing"] == [s[0], s[0]]


def test_records_before_the_first_emission_counted_as_dropped_pass(tmp_path):
    t, s = stores_then_print(first=2, dropped=2)
    v = run(tmp_path, t)
    assert v["verdict"] == "pass", v["violations"]
    assert v["counts"]["dropped_records"] == 2
    # a dropped count that also covers records from before the trace
    t, s = stores_then_print(first=2, dropped=7)
    assert run(tmp_path, t)["verdict"] == "pass"


def test_first_commit_without_emission_that_skips_stored_records(tmp_path):
    t = Trace()
    T = t.ctx(0, thread=1)
    s = [t.store(pstress(1, "task", i, "p%d" % i)) for i in range(3)]
    q = t.store("quiet debug line", level=7)   # below the console loglevel
    t.acquire(T)
    t.commit(T, q)                             # suppressed record: commit only
    t.release(T)
    v = run(tmp_path, t, no_serial=True)
    assert violated(v) == {"no-loss"}
    assert [x for x in v["violations"] if x["rule"] == "no-loss"][0]["missing"] == [s[0], s[2]]


def test_console_busy_with_records_from_before_the_trace_passes(tmp_path):
    """The console's first traced emission is of a record stored before the
    trace began (no store event): nothing is known to be skipped."""
    t = busy_with_a_record_from_before_the_trace()
    v = run(tmp_path, t)
    assert v["verdict"] == "pass", v["violations"]


def test_not_checked_after_trace_loss(tmp_path):
    """After lost trace events the console may have printed anything in
    the gap: the verdict is incomplete, not a no-loss failure."""
    t = Trace()
    T = t.ctx(0, thread=1)
    s = [t.store(pstress(1, "task", i, "p%d" % i)) for i in range(4)]
    t.lines.append("CPU:0 [12 EVENTS DROPPED]")
    t.acquire(T)
    for x in s[2:]:
        t.print_rec(T, x)
    t.release(T)
    v = run(tmp_path, t)
    assert v["verdict"] == "incomplete" and not violated(v)
