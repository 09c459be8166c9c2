"""Regressions found on real traces of the patched kernel (results/*).

Every test builds a small synthetic trace with the shape that fooled the
analysis on a real run, and says which run it came from."""

import pytest
import re

from analysis.tests.verdicts import check_results
from analysis.pstress import pstress2_text
from analysis.tests.tracebuilder import Trace, printed, pstress
from analysis.tests.verdicts import violated, violation_counts, violation_messages

_TS_CPU = re.compile(r"\s*.*?-\d+\s+\[(\d+)\]\s+(\d+\.\d+):")


def as_trace_cmd_orders(t):
    """Re-list the events the way `trace-cmd report` merges the per-CPU
    buffers: by timestamp, equal timestamps by CPU (stable within a CPU)."""
    def key(ln):
        m = _TS_CPU.match(ln)
        return (float(m.group(2)), int(m.group(1)))
    t.lines[1:] = sorted(t.lines[1:], key=key)


def run(tmp_path, t, **kw):
    return check_results(t.write(tmp_path / "res"), **kw)


# results/default-20261203-094752: the guest clock stood still at
# 16.806376; the printer (CPU 0) emitted and committed seq 276..279 with the
# same timestamp as their nobkl_store on CPU 1, so trace-cmd listed the
# emissions before the stores.  The analysis reported serial-extra=4.
def _stuck_clock_trace(level=4, with_emit=True, n_stuck=4):
    t = Trace()
    T = t.ctx(0, thread=1)
    first = t.store("pns-kmsg n=0 default scenario load", cpu=1)
    t.acquire(T)
    t.print_rec(T, first)
    t.release(T)
    # the clock stands still: stores on CPU 1 and the printer on CPU 0
    stuck = 100.5
    seqs = [t.store("pns-kmsg n=%d default scenario load" % i, cpu=1, ts=stuck, level=level)
            for i in range(1, 1 + n_stuck)]
    for s in seqs:
        t.acquire(T, ts=stuck)
        if with_emit:
            t.emit(T, s, ts=stuck)
            t.line(s, "T")
        t.commit(T, s, ts=stuck)
        t.release(T, ts=stuck)
    # the clock moves again
    t.t = 100.6
    tail = [t.store("pns-kmsg n=%d default scenario done" % i, cpu=1) for i in range(3)]
    t.acquire(T)
    for s in tail:
        t.print_rec(T, s)
    t.release(T)
    as_trace_cmd_orders(t)
    return t, seqs


def test_emit_listed_before_its_store_with_equal_timestamps(tmp_path):
    t, seqs = _stuck_clock_trace()
    # the shape of the real trace: emit of a seq listed before its store
    emit0 = next(i for i, ln in enumerate(t.lines) if "nobkl_emit" in ln and
                 "seq=%d " % seqs[0] in ln)
    store0 = next(i for i, ln in enumerate(t.lines) if "nobkl_store" in ln and
                  "seq=%d " % seqs[0] in ln)
    assert emit0 < store0
    v = run(tmp_path, t)
    assert v["verdict"] == "pass", violation_messages(v)
    assert v["serial"]["matched"] == 1 + len(seqs) + 3
    assert v["counts"]["commits"] == 1 + len(seqs) + 3


def test_suppressed_commit_listed_before_its_store(tmp_path):
    # a record above the console loglevel committed without an emission,
    # listed before its (equal-timestamp) store: still a suppressed record
    t, seqs = _stuck_clock_trace(level=7, with_emit=False)
    v = run(tmp_path, t)
    assert v["verdict"] == "pass", violation_messages(v)
    assert v["counts"]["suppressed_records"] == len(seqs)


def test_emit_without_any_store_still_checked(tmp_path):
    # a record stored before the trace started never gets a store event:
    # waiting for it must end, and the emission is still checked
    t = Trace()
    T = t.ctx(0, thread=1)
    t.texts[5] = "boot record stored before the trace"
    t.acquire(T)
    t.print_rec(T, 5)
    t.emit(T, 6, length=30)
    t.commit(T, 6)          # seq 6 is emitted but never printed
    s = [t.store(pstress(1, "task", i, "p%d" % i)) for i in range(3)]
    for x in s:
        t.print_rec(T, x)
    t.release(T)
    v = run(tmp_path, t)
    assert v["verdict"] == "fail"
    assert violated(v) == {"no-loss"}, v["violations"]


# results/console-20261203-091722 (kernel before d02a88b): every
# nobkl_store printed `caller=>c<84 text=9` for a record of len=34; the
# analysis blamed the kernel with serial-missing for records whose text it
# had simply never seen.  A store whose text does not have `len`
# characters is a broken event: the verdict is incomplete, not fail.
def test_store_text_not_matching_len_is_a_bad_event(tmp_path):
    t = Trace()
    T = t.ctx(0, thread=1)
    s = [t.store("pns-kmsg n=%d console scenario load" % i, cpu=2) for i in range(3)]
    t.acquire(T)
    for x in s:
        t.print_rec(T, x)
    t.release(T)
    t.lines = [re.sub(r"caller=T102 text=.*$", "caller=>c<84 text=9", ln) for ln in t.lines]
    v = run(tmp_path, t)
    assert v["verdict"] == "incomplete" and v["exit_code"] == 2, v["reasons"]
    assert v["trace"]["bad_field_events"] == 3
    assert not violated(v), v["violations"]


# results/warn-thread-20261203-095312: the printer thread was in the middle
# of seq 390 when the WARN context on CPU 3 requested a handover; it granted
# and released (handover=1), CPU 3 reprinted seq 390 in full.  Serial:
# `T[...] pns-kmsg n=134 warn-thread backl` then `A[...] pns-kmsg n=134 ...`.
# The run has no stressor records, so the serial matcher was still holding
# records back before its first sync, and it forgot the interrupted attempt
# meanwhile: serial-partial=1.
def _handover_mid_record_trace(n_before=5, pstress_after=False):
    t = Trace()
    T = t.ctx(0, thread=1)
    W = t.ctx(3, prio="emergency")
    s = [t.store("pns-kmsg n=%d warn-thread backlog" % i, cpu=3) for i in range(n_before + 3)]
    t.acquire(T)
    for x in s[:n_before]:
        t.print_rec(T, x)
    mid = s[n_before]
    t.emit(T, mid)
    t.partial(mid, 0.8, "T")
    t.request(W, T)
    t.hand_over(T, W)
    for x in s[n_before:]:
        t.print_rec(W, x)
    if pstress_after:
        p = t.store(pstress(3, "task", 0, "after"))
        t.print_rec(W, p)
    t.release(W)
    return t


def test_handover_mid_record_before_serial_sync(tmp_path):
    v = run(tmp_path, _handover_mid_record_trace())
    assert v["verdict"] == "pass", violation_messages(v)
    assert v["serial"]["partial_lines"] == 1
    assert v["counts"]["reprints"] == 1


def test_handover_mid_record_before_first_stressor_record(tmp_path):
    # sync on a later stressor record: the held records before it are
    # not checked, the cut line among them is not an error either
    v = run(tmp_path, _handover_mid_record_trace(pstress_after=True))
    assert v["verdict"] == "pass", violation_messages(v)


def test_partial_line_before_sync_without_lost_ownership_is_caught(tmp_path):
    # the same cut line, but the thread went on and committed the record:
    # nothing explains the cut line
    t = Trace()
    T = t.ctx(0, thread=1)
    s = [t.store("pns-kmsg n=%d warn-thread backlog" % i, cpu=3) for i in range(6)]
    t.acquire(T)
    for x in s[:3]:
        t.print_rec(T, x)
    t.partial(s[3], 0.8, "T")
    for x in s[3:]:
        t.print_rec(T, x)
    t.release(T)
    v = run(tmp_path, t)
    assert violated(v) == {"serial-partial"}, v["violations"]


# results/default-20261203-094752 (before the fix): the serial-extra
# violations of seq 280 (trace line 157) were shown with the console's
# events of trace line 1224..1239, where the serial matcher happened to
# check them.  A violation found after the fact gets no unrelated context.
def test_serial_violation_found_late_has_no_unrelated_context(tmp_path):
    t = Trace()
    T = t.ctx(0, thread=1)
    s = [t.store("kernel record %d" % i) for i in range(30)]
    t.acquire(T)
    t.print_rec(T, s[0])
    t.serial.append("[    1.500000] a kernel line nobody emitted")
    for x in s[1:]:
        t.print_rec(T, x)
    t.release(T)
    v = run(tmp_path, t)
    assert violated(v) == {"serial-extra"}
    viol = v["violations"][0]
    emit_line = viol["emit_line"]
    for e in viol["events_before"] + viol["events_after"]:
        assert int(e.split()[1]) < emit_line, e
    assert "timeline --seq" in viol["context_note"]


# results/stress-20261203-095925 seq 458: an NMI on CPU 0 emitted seq 458,
# noticed at its first console_can_proceed() that a panic-priority context
# on CPU 1 had taken the console over, and wrote nothing; CPU 1 printed
# seq 458 once, completely.  The serial matcher gave that one line to the
# interrupted attempt (as its "full repeat") and then reported the
# committed reprint as serial-missing.
def _nmi_taken_over_by_panic(whole_line):
    """An emergency NMI prints the first two of five records, emits the
    third, writing its whole line or nothing (whole_line), and notices
    that a panic context on CPU 1 took the console over; the panic
    context prints the third to the fifth."""
    t = Trace()
    E = t.ctx(0, prio="emergency", ctx="nmi")
    P = t.ctx(1, prio="panic", ctx="hardirq")
    s = [t.store(pstress(0, "nmi", i, "p%d" % i)) for i in range(5)]
    t.acquire(E)
    t.print_rec(E, s[0])
    t.print_rec(E, s[1])
    t.emit(E, s[2])
    if whole_line:
        t.line(s[2], "A")
    t.lost(E, "can_proceed", owner=P)
    t.acquire(P, "hostile", prev=E)
    for x in s[2:]:
        t.print_rec(P, x)
    t.release(P)
    return t


def test_interrupted_attempt_that_printed_nothing(tmp_path):
    # nothing of seq 2 reaches the serial log before the loss
    v = run(tmp_path, _nmi_taken_over_by_panic(whole_line=False))
    assert v["verdict"] == "pass", violation_messages(v)
    assert v["serial"]["matched"] == 5 and v["counts"]["reprints"] == 1


# A warn-thread run on i386 under host load: the printer thread emitted
# a /dev/kmsg record and was taken over before its first byte; the
# emergency owner printed it and the next records, whose texts differ
# from it in one digit. The matcher took the reprint for the thread's
# whole line and the next record for the reprint "one byte off", and
# every line after it was one record off (serial-corrupt on each).
def test_interrupted_attempt_that_printed_nothing_then_similar_records(tmp_path):
    t = Trace()
    T = t.ctx(1, thread=1)
    E = t.ctx(3, prio="emergency")
    s = [t.store("pns-kmsg n=%d warn-thread backlog" % n, cpu=3) for n in range(80, 90)]
    t.acquire(T)
    for x in s[:3]:
        t.print_rec(T, x)
    t.emit(T, s[3])                  # nothing reaches the serial log
    t.take_over(E, T, s[3:], unsafe=0)
    t.lost(T, "enter_unsafe", owner=E)
    v = run(tmp_path, t)
    assert v["verdict"] == "pass", violation_messages(v)
    assert v["serial"]["matched"] == 10 and v["serial"]["reprinted_full_lines"] == 0


def test_interrupted_attempt_that_printed_its_whole_line(tmp_path):
    # the other case: the whole line was written before the loss was
    # noticed, the new owner writes it again: two complete copies
    v = run(tmp_path, _nmi_taken_over_by_panic(whole_line=True))
    assert v["verdict"] == "pass", violation_messages(v)
    assert v["serial"]["reprinted_full_lines"] == 1 and v["serial"]["matched"] == 5


# A shapes run (x86_64, make test): an emergency context in CPU 0's
# hardirq emitted seq 2481, a record of two lines (the multiline shape)
# after 18 dropped ones, and handed the console over to a panic-priority
# context on CPU 2 before its first byte; CPU 2 printed the notice and
# both lines once. The interrupted attempt took the first line, the
# reprint was reported serial-missing.
def _dropped_then_multiline(t):
    """Stores a record, 18 that the console drops, and a record of four
    lines; returns the first's and the last's seq and the last's lines."""
    s0 = t.store(pstress(1, "hardirq", 0), cpu=1)
    for n in range(1, 19):
        t.store(pstress(1, "hardirq", n), cpu=1)
    real = pstress2_text(1, 1, "hardirq", "hardirq", 19, multiline=True)
    lines = real.split("\n")
    assert len(lines) == 4
    return s0, t.store(real.replace("\n", " "), cpu=1), lines


def _multiline_handed_over(copies_before):
    """An emergency owner hands a two-line record over to a panic
    context after writing copies_before complete copies of it (0 or 1)."""
    t = Trace()
    E = t.ctx(0, prio="emergency", ctx="hardirq")
    P = t.ctx(2, prio="panic", ctx="hardirq")
    s0, seq, lines = _dropped_then_multiline(t)
    t.acquire(E)
    t.print_rec(E, s0)
    t.emit(E, seq, dropped=18, serial=bool(copies_before))
    for _ in range(copies_before):
        for ln in lines:
            t.line(seq, "A", text=ln)
    t.request(P, E)
    t.grant(E, 2, "panic")
    t.acquire(P, "handover", prev=E)
    t.release(E, handover=1)
    t.emit(P, seq, dropped=18)
    for ln in lines:
        t.line(seq, "A", text=ln)
    t.commit(P, seq)
    t.release(P)
    return t


@pytest.mark.parametrize("copies_before", [0, 1])
def test_multiline_record_of_an_interrupted_attempt(tmp_path, copies_before):
    v = run(tmp_path, _multiline_handed_over(copies_before))
    assert v["verdict"] == "pass", violation_messages(v)
    assert v["serial"]["matched"] == 2 and v["counts"]["reprints"] == 1
    assert v["serial"]["reprinted_full_lines"] == copies_before


@pytest.mark.parametrize("where", ["in its turn", "after the trace"])
def test_multiline_record_printed_twice_without_lost_ownership_is_caught(tmp_path, where):
    # the log of the handed-over record with a copy before the reprint,
    # but the trace says the emergency owner printed the record alone and
    # (in its turn) printed one more after it: the first copy is a repeat
    t = Trace()
    E = t.ctx(0, prio="emergency", ctx="hardirq")
    s0, seq, lines = _dropped_then_multiline(t)
    t.acquire(E)
    t.print_rec(E, s0)
    t.emit(E, seq, dropped=18)
    for _ in range(2):
        for ln in lines:
            t.line(seq, "A", text=ln)
    t.commit(E, seq)
    if where == "in its turn":
        t.print_rec(E, t.store(pstress(1, "hardirq", 20), cpu=1))
    t.release(E)
    v = run(tmp_path, t)
    assert violated(v) == {"serial-partial"}, violation_messages(v)
    assert v["violations_by_rule"]["serial-partial"] == 1


def test_record_printed_twice_without_lost_ownership_is_caught(tmp_path):
    t = Trace()
    E = t.ctx(0, prio="emergency", ctx="nmi")
    s = [t.store(pstress(0, "nmi", i, "p%d" % i)) for i in range(5)]
    t.acquire(E)
    t.print_rec(E, s[0])
    t.print_rec(E, s[1])
    t.line(s[2], "A")
    for x in s[2:]:
        t.print_rec(E, x)
    t.release(E)
    v = run(tmp_path, t)
    assert violated(v) & {"serial-partial", "serial-extra"}, v["violations"]


# results/stress-20261203-100028 trace line 5748..5900: a panic-priority
# section on CPU 3 owns the console and prints seq 1634..1677, all stamped
# 32.263586 (clock standing still), as are CPU 1's events: its handover
# acquire (prev_cpu=3), seq 1678, release, direct acquires.  trace-cmd
# lists CPU 1 first.  CPU 3's grant to CPU 1 and its release handover=1
# are traced 41 ms later (32.304618, 32.311082), after CPU 1 has released
# and re-acquired the console directly several times.  The analysis saw
# CPU 3 emit after it had handed over: after-loss=164, duplicate=50, ...
def _late_grant_trace(grant_delay=0.041):
    t = Trace()
    P3 = t.ctx(3, prio="panic", ctx="hardirq")
    P1 = t.ctx(1, prio="panic", ctx="hardirq")
    E1 = t.ctx(1, prio="emergency")
    s = [t.store(pstress(3, "panic", i, "p%d" % i), cpu=3) for i in range(8)]
    t.acquire(P3)
    t.print_rec(P3, s[0])
    stuck = t.t + 0.01
    t.request(P1, P3, ts=stuck)
    for x in s[1:5]:
        t.emit(P3, x, ts=stuck)
        t.line(x, "A")
        t.commit(P3, x, ts=stuck)
    # CPU 3's cmpxchg hands the console over here; its tracepoints are late
    t.acquire(P1, "handover", prev=P3, ts=stuck)
    t.emit(P1, s[5], ts=stuck)
    t.line(s[5], "A")
    t.commit(P1, s[5], ts=stuck)
    t.release(P1, ts=stuck)
    t.acquire(E1, ts=stuck + 0.03)
    t.print_rec(E1, s[6])
    t.release(E1)
    t.grant(P3, 1, "panic", ts=stuck + grant_delay)
    t.release(P3, handover=1)
    t.acquire(E1)
    t.print_rec(E1, s[7])
    t.release(E1)
    as_trace_cmd_orders(t)
    return t


def test_equal_timestamps_across_cpus_and_a_late_grant(tmp_path):
    t = _late_grant_trace()
    # shape of the real trace: the waiter's acquire listed before the
    # owner's emissions
    acq = next(i for i, ln in enumerate(t.lines) if "how=handover" in ln)
    emits3 = [i for i, ln in enumerate(t.lines) if "[003]" in ln and "nobkl_emit" in ln]
    assert acq < emits3[-1]
    v = run(tmp_path, t)
    assert v["verdict"] == "pass", violation_messages(v)
    assert v["counts"]["tie_groups_reordered"] >= 1
    assert v["counts"]["takeovers"]["handover"] == 1


def test_grant_that_never_comes_is_still_caught(tmp_path):
    t = _late_grant_trace()
    t.lines = [ln for ln in t.lines if "nobkl_handover_grant" not in ln]
    v = run(tmp_path, t)
    assert violation_counts(v) == {"handover-target": 1}, v["violations"]


def test_owner_printing_after_its_traced_handover_is_caught(tmp_path):
    # distinct timestamps: CPU 3 really emits after CPU 1 took the console
    t = Trace()
    P3 = t.ctx(3, prio="panic", ctx="hardirq")
    P1 = t.ctx(1, prio="panic", ctx="hardirq")
    s = [t.store(pstress(3, "panic", i, "p%d" % i), cpu=3) for i in range(4)]
    t.acquire(P3)
    t.print_rec(P3, s[0])
    t.request(P1, P3)
    t.hand_over(P3, P1)
    t.print_rec(P3, s[1])
    t.print_rec(P1, s[2])
    t.release(P1)
    v = run(tmp_path, t, no_serial=True)
    # CPU 3's emission and commit of s[1]
    assert violation_counts(v) == {"after-loss": 2}, v["violations"]


# results/stress-20261203-100718 seq 286: a panic-priority context on CPU 1
# took the console over (hostile) from the printer thread on CPU 0, which
# noticed the loss only 29 ms later; meanwhile one stray byte of the thread
# landed in the middle of CPU 1's line of seq 286 ("...uvw xyz...").  The
# analysis reported serial-missing + serial-extra instead of one
# serial-corrupt: the damaged stressor record no longer parsed.
def test_stray_byte_inside_a_stressor_line_is_serial_corrupt(tmp_path):
    t, s = printed([pstress(2, "task", i, "efghijklmnopqrstuvwxyz0123456789ABCD%d" % i,
                            literal=True) for i in range(5)])
    i = next(k for k, ln in enumerate(t.serial) if "n=2 " in ln)
    t.serial[i] = t.serial[i].replace("uvw", "uvw ")
    v = run(tmp_path, t)
    assert violated(v) == {"serial-corrupt"}, violation_messages(v)
    assert v["violations"][0]["seq"] == s[2]


# A stray byte in the `[  sec.usec]` prefix: the line was taken for
# user-space output and the record reported serial-missing.
#  - results/stress-20261203-100718 seq 410: `A[   11.7o05816] pstress r=1
#    c=2 x=hardirq n=11 ...`
#  - a stress run of the test suite: `A[   17e.348681] pstress r=1 c=3 x=nmi
#    n=123 ...`, the byte next to the dot
@pytest.mark.parametrize("where", ["in the digits", "next to the dot"])
def test_stray_byte_in_the_prefix_is_serial_corrupt(tmp_path, where):
    t, s = printed([pstress(2, "hardirq", i, "p%d" % i) for i in range(5)])
    i = next(k for k, ln in enumerate(t.serial) if "n=2 " in ln)
    at = 6 if where == "in the digits" else t.serial[i].index(".")
    t.serial[i] = t.serial[i][:at] + "o" + t.serial[i][at:]
    assert "o" in t.serial[i][:12]
    v = run(tmp_path, t)
    assert violated(v) == {"serial-corrupt"}, violation_messages(v)
    assert "garbled" in v["violations"][0]["message"] and v["violations"][0]["seq"] == s[2]


# results/stress-20261203-100718 trace line 2998..3012: an NMI on CPU 0
# (panic priority) granted the console to CPU 1 (emergency) and released;
# CPU 1 acquired it by handover, CPU 0 took it back (hostile, prev_cpu=1)
# and CPU 1 noticed the loss - CPU 0's hostile acquire and CPU 1's events
# all stamped 12.567867, CPU 0 listed first.  Reported as handover-target
# ("cpu1 never acquired it by handover").
def test_equal_timestamps_grant_target_acquires_first(tmp_path):
    t = Trace()
    N = t.ctx(0, prio="panic", ctx="nmi")
    W = t.ctx(1, prio="emergency", ctx="hardirq")
    s = [t.store(pstress(0, "nmi", i, "p%d" % i), cpu=0) for i in range(2)]
    t.acquire(N)
    t.print_rec(N, s[0])
    t.request(W, N)
    t.grant(N, 1, "emergency")
    t.release(N, handover=1)
    stuck = t.t + 0.005
    t.acquire(W, "handover", prev=N, ts=stuck)
    t.acquire(N, "hostile", prev=W, ts=stuck)
    t.lost(W, "can_proceed", owner=N, ts=stuck)
    t.print_rec(N, s[1])
    t.release(N)
    as_trace_cmd_orders(t)
    assert t.lines.index(next(ln for ln in t.lines if "how=hostile" in ln)) < \
        t.lines.index(next(ln for ln in t.lines if "how=handover" in ln))
    v = run(tmp_path, t)
    assert v["verdict"] == "pass", violation_messages(v)


def _granted_to_cpu2(next_cpu):
    """The panic NMI on CPU 1 prints the first of two records and grants
    the console to an emergency waiter on CPU 2 (W); the next context
    (H) is a panic hardirq on next_cpu.  Returns t, N, W, H, s."""
    t = Trace()
    N = t.ctx(1, prio="panic", ctx="nmi")
    W = t.ctx(2, prio="emergency")
    H = t.ctx(next_cpu, prio="panic", ctx="hardirq")
    s = [t.store(pstress(1, "nmi", i, "p%d" % i), cpu=1) for i in range(2)]
    t.acquire(N)
    t.print_rec(N, s[0])
    t.request(W, N)
    t.grant(N, 2, "emergency")
    t.release(N, handover=1)
    return t, N, W, H, s


def test_granted_console_taken_before_the_target_picks_it_up(tmp_path):
    # results/stress-20261203-100718 line 8675..8807: the panic NMI on
    # CPU 1 granted the console to CPU 2 (emergency); CPU 2's vCPU hardly
    # ran (its timeout says it spun 333 us in 105 ms), a panic-priority
    # waiter on CPU 1 timed out and took the console over hostile 62 ms
    # later - from "cpu2/emergency", the state word the grant had written.
    # Reported as handover-target ("cpu2 never acquired it by handover").
    t, N, W, H, s = _granted_to_cpu2(next_cpu=1)
    t.request(H, W)
    t.timeout(H, W, waited=2001, ts=t.t + 0.062)
    t.take_over(H, W, [s[1]])
    t.timeout(W, N, waited=333)
    v = run(tmp_path, t)
    assert v["verdict"] == "pass", violation_messages(v)
    assert v["counts"]["grants_taken_before_pickup"] == 1


def test_grant_to_a_waiter_that_never_takes_it_is_caught(tmp_path):
    # the next acquire does not find the grant's target in the state word
    t, N, W, H, s = _granted_to_cpu2(next_cpu=3)
    t.acquire(H)
    t.print_rec(H, s[1])
    t.release(H)
    v = run(tmp_path, t)
    assert violated(v) == {"handover-target"}, v["violations"]


# results/stress-20261203-101358 trace line 585..714: CPU 1 (NMI,
# emergency) acquired by handover from "cpu2/panic" (prev_* fields) at
# 8.516428; the panic-priority NMI on CPU 2 traced its direct acquire, its
# grant to CPU 1 and its release handover=1 only at 8.516643..8.516677.
# The late acquire was taken as "taken over", its grant and release as
# after-loss=2.
def _handover_traced_before_its_grant(records):
    """The emergency NMI on CPU 1 prints the first of `records` records,
    acquires by handover from the panic NMI on CPU 2 (P) and prints the
    second; P's acquire, grant and release are traced after that.
    Returns t, P, s."""
    t = Trace()
    W = t.ctx(1, prio="emergency", ctx="nmi")
    P = t.ctx(2, prio="panic", ctx="nmi")
    s = [t.store(pstress(1, "nmi", i, "p%d" % i), cpu=1) for i in range(records)]
    t.acquire(W)
    t.print_rec(W, s[0])
    t.release(W)
    t.request(W, P)
    t.acquire(W, "handover", prev=P)
    t.print_rec(W, s[1])
    t.release(W)
    t.acquire(P)
    t.grant(P, 1, "emergency")
    t.release(P, handover=1)
    return t, P, s


def test_acquire_grant_release_traced_after_the_waiters_handover(tmp_path):
    t, P, s = _handover_traced_before_its_grant(records=2)
    v = run(tmp_path, t)
    assert v["verdict"] == "pass", violation_messages(v)


def test_late_acquirer_that_prints_after_handing_over_is_caught(tmp_path):
    t, P, s = _handover_traced_before_its_grant(records=3)
    t.print_rec(P, s[2])
    v = run(tmp_path, t, no_serial=True)
    # P's emission and commit of s[2]
    assert violation_counts(v) == {"after-loss": 2}, v["violations"]


# results/stress-20261203-101755 trace line 14637..14685: an NMI on CPU 3
# (emergency) emitted seq 3688; a panic-priority context on CPU 2 took the
# console over (hostile, 20.465201) and began with seq 3689; the NMI's
# commit of 3688 was traced only at 20.467287, then its nobkl_lost.  On
# 64-bit the commit is a cmpxchg of the state word, so it happened before
# the takeover (else it would have failed).  Reported: no-loss (3688
# skipped) + after-loss (commit after the takeover).
def _emergency_line_taken_over(unsafe=0, owner_ctx="nmi", taker=(2, "hardirq"), records=4):
    """An emergency context on CPU 3 (default an NMI) printed s[0] and
    wrote the line of s[1] when a panic-priority context (default a
    hardirq on CPU 2) took the console over."""
    t = Trace()
    E = t.ctx(3, prio="emergency", ctx=owner_ctx)
    P = t.ctx(taker[0], prio="panic", ctx=taker[1])
    s = [t.store(pstress(3, owner_ctx, i, "p%d" % i), cpu=3) for i in range(records)]
    t.acquire(E)
    t.print_rec(E, s[0])
    t.emit(E, s[1])
    t.line(s[1], "A")
    t.acquire(P, "hostile", prev=E, unsafe=unsafe)
    return t, E, P, s


def _late_commit_trace(with_commit=True):
    t, E, P, s = _emergency_line_taken_over()
    t.print_rec(P, s[2])
    t.print_rec(P, s[3])
    t.release(P)
    if with_commit:
        t.commit(E, s[1])
    t.lost(E, "can_proceed", owner=P)
    return t


def test_old_owners_commit_traced_after_the_takeover(tmp_path):
    v = run(tmp_path, _late_commit_trace())
    assert v["verdict"] == "pass", violation_messages(v)
    assert v["counts"]["late_commits_after_takeover"] == 1
    assert v["counts"]["dropped_records"] == 0


def test_seq_skipped_after_a_takeover_without_that_commit_is_caught(tmp_path):
    v = run(tmp_path, _late_commit_trace(with_commit=False), no_serial=True)
    assert violated(v) == {"no-loss"}, v["violations"]


# A stress run with tsc=reliable, trace line 16972..32682: a hardirq on
# CPU 3 (emergency) committed seq 4143 and was interrupted by a
# panic-priority NMI on the same CPU before its commit tracepoint; the NMI
# took the console over, printed 3500 records for 2 s and handed over;
# only then was the hardirq's commit traced.  Reported: no-loss + after-loss.
def _nested_late_commit_trace(next_event):
    t, E, N, s = _emergency_line_taken_over(owner_ctx="hardirq", taker=(3, "nmi"), records=5)
    t.print_rec(N, s[2])
    t.t += 2.0                         # the NMI prints for seconds
    t.print_rec(N, s[3])
    t.print_rec(N, s[4])
    t.release(N)
    next_event(t, E, N, s)
    return t


def test_commit_traced_after_a_long_nested_takeover(tmp_path):
    def commit_then_lost(t, E, N, s):
        t.commit(E, s[1])
        t.lost(E, "can_proceed", owner=N)
    v = run(tmp_path, _nested_late_commit_trace(commit_then_lost))
    assert v["verdict"] == "pass", violation_messages(v)
    assert v["counts"]["late_commits_after_takeover"] == 1


def test_nested_owner_whose_next_event_is_no_commit_lost_the_record(tmp_path):
    def lost_only(t, E, N, s):
        t.lost(E, "can_proceed", owner=N)
        t.commit(E, s[1])               # too late: after it noticed the loss
    v = run(tmp_path, _nested_late_commit_trace(lost_only), no_serial=True)
    # the NMI went on at s[2] without s[1]; its commit is after the loss
    assert violation_counts(v) == {"no-loss": 1, "after-loss": 1}, v["violations"]


# results/stress-20261203-101755: seven single stray bytes, in the header
# of a stressor record (`x=hardir6q`, `pstressd`), in its payload
# (`ABCDElF`), in the prefix (`A[T   23.732383]`) and before it
# (`dA[   15.595616]`).  Each one is a serial-corrupt of that record; the
# analysis reported serial-missing + serial-extra for four of them.
def test_single_stray_bytes_anywhere_are_serial_corrupt(tmp_path):
    t, s = printed([pstress(1, "hardirq", i, "abcdefghijklmnopqrstuvwxyz%d" % i, literal=True)
                    for i in range(8)])
    edits = {2: ("x=hardirq", "x=hardir6q"), 3: ("pstress", "pstressd"),
             4: ("lmnop", "lmnoXp"), 5: ("T[", "dT[")}
    for n, (a, b) in edits.items():
        i = next(k for k, ln in enumerate(t.serial) if " n=%d " % n in ln)
        t.serial[i] = t.serial[i].replace(a, b, 1)
    v = run(tmp_path, t)
    assert violated(v) == {"serial-corrupt"}, violation_messages(v)
    assert sorted(x["seq"] for x in v["violations"]) == [s[n] for n in sorted(edits)]


def test_missing_record_next_to_a_similar_one_is_not_corrupt(tmp_path):
    t, s = printed(["kernel message %d" % i for i in range(5)])
    del t.serial[-2]
    v = run(tmp_path, t)
    assert violated(v) == {"serial-missing"}, v["violations"]


# results/stress-20261203-101833 trace line 5860..5885, all at 9.844902:
# CPU 0 (panic) grants to CPU 3 (emergency) and releases, CPU 0 requests
# again, CPU 3 acquires by handover, grants back to CPU 0 and releases,
# CPU 0 acquires by handover (prev_cpu=3) and prints on.  trace-cmd lists
# all of CPU 0 first; the tie order took CPU 0's handover acquire before
# CPU 3 had the console: panic-protect, after-loss=1544, serial-missing=11893.
def test_equal_timestamps_handover_ping_pong(tmp_path):
    t = Trace()
    P = t.ctx(0, prio="panic", ctx="hardirq")
    E = t.ctx(3, prio="emergency", ctx="hardirq")
    s = [t.store(pstress(0, "hardirq", i, "p%d" % i), cpu=0) for i in range(4)]
    t.acquire(P)
    t.print_rec(P, s[0])
    stuck = t.t + 0.001
    t.request(E, P, ts=stuck)
    t.emit(P, s[1], ts=stuck)
    t.line(s[1], "A")
    t.commit(P, s[1], ts=stuck)
    t.grant(P, 3, "emergency", ts=stuck)
    t.release(P, handover=1, ts=stuck)
    t.acquire(E, "handover", prev=P, ts=stuck)
    t.request(P, E, ts=stuck)
    t.grant(E, 0, "panic", ts=stuck)
    t.release(E, handover=1, ts=stuck)
    t.acquire(P, "handover", prev=E, ts=stuck)
    t.emit(P, s[2], ts=stuck)
    t.line(s[2], "A")
    t.commit(P, s[2], ts=stuck)
    t.t = stuck + 0.001
    t.print_rec(P, s[3])
    t.release(P)
    as_trace_cmd_orders(t)
    v = run(tmp_path, t)
    assert v["verdict"] == "pass", violation_messages(v)
    assert v["counts"]["takeovers"]["handover"] == 2


# results/stress-20261203-102411 trace line 22049..22055, all at 23.982009:
# the waiter on CPU 0 timed out its emergency request and requested again
# at panic priority; the owner on CPU 3 granted to cpu0/panic.  trace-cmd
# lists CPU 0 first, the tie order took the owner's grant first and saw it
# answer the old emergency request: handover-target.
def test_equal_timestamps_grant_after_the_request_it_answers(tmp_path):
    t = Trace()
    O = t.ctx(3, prio="emergency", ctx="hardirq")
    W = t.ctx(0, prio="emergency", ctx="hardirq")
    WP = t.ctx(0, prio="panic", ctx="hardirq")
    s = [t.store(pstress(3, "hardirq", i, "p%d" % i), cpu=3) for i in range(3)]
    t.acquire(O)
    t.request(W, O)
    t.print_rec(O, s[0])
    stuck = t.t + 0.002
    t.timeout(W, O, waited=2001, ts=stuck)
    t.request(WP, O, ts=stuck)
    t.grant(O, 0, "panic", ts=stuck)
    t.release(O, handover=1, ts=stuck)
    t.acquire(WP, "handover", prev=O, ts=stuck)
    t.t = stuck + 0.001
    t.print_rec(WP, s[1])
    t.print_rec(WP, s[2])
    t.release(WP)
    as_trace_cmd_orders(t)
    v = run(tmp_path, t)
    assert v["verdict"] == "pass", violation_messages(v)


def _grant_then_take_back():
    """A panic NMI on CPU 3 grants the console to CPU 2 (emergency),
    releases, and takes it back (hostile, prev_cpu=2) before CPU 2's
    handover acquire is traced."""
    t = Trace()
    N = t.ctx(3, prio="panic", ctx="nmi")
    W = t.ctx(2, prio="emergency")
    s = [t.store(pstress(3, "nmi", i, "p%d" % i), cpu=3) for i in range(3)]
    t.acquire(N)
    t.request(W, N)
    t.print_rec(N, s[0])
    t.grant(N, 2, "emergency")
    t.release(N, handover=1)
    t.acquire(N, "hostile", prev=W)
    return t, N, W, s


# results/stress-20261203-102448 trace line 7355..7364: the panic NMI on
# CPU 3 granted to CPU 2 (emergency), released, took the console back
# (hostile, prev_cpu=2 emergency) and emitted seq 1928; CPU 2's handover
# acquire was traced only then (14.781024, the same timestamp as that
# emission), followed by its nobkl_lost.  Reported: panic-protect,
# after-loss=487, producer-gap=153.
def test_grant_targets_acquire_traced_after_the_takeover_that_named_it(tmp_path):
    t, N, W, s = _grant_then_take_back()
    stuck = t.t + 0.0002
    t.emit(N, s[1], ts=stuck)
    t.acquire(W, "handover", prev=N, ts=stuck)
    t.lost(W, "can_proceed", owner=N)
    t.line(s[1], "A")
    t.commit(N, s[1])
    t.print_rec(N, s[2])
    t.release(N)
    as_trace_cmd_orders(t)
    v = run(tmp_path, t)
    assert v["verdict"] == "pass", violation_messages(v)


def test_grant_target_acquiring_directly_soon_after_is_a_new_acquire(tmp_path):
    # the target gave up (timeout) and acquires directly 1 ms later: that
    # acquire is its own, not the late pickup of the grant
    t, N, W, s = _grant_then_take_back()
    t.print_rec(N, s[1])
    t.release(N)
    t.timeout(W, N, waited=500)
    t.acquire(W)
    t.print_rec(W, s[2])
    t.release(W)
    v = run(tmp_path, t)
    assert v["verdict"] == "pass", violation_messages(v)


# results/stress-20261203-115530 trace line 6120..6171, all at 11.806845
# (TSC unstable, the clock stood still): CPU 1 printed, released, acquired
# again and printed seq 1653..1662; CPU 0's NMI then acquired the free
# console and printed 1663.  trace-cmd lists CPU 0 first; the tie order
# let CPU 0 acquire at CPU 1's first release: no-loss, duplicate=22,
# after-loss=16.  The acquirer's next emission (1663) tells which free
# state it found.
def test_equal_timestamps_acquire_placed_by_its_next_emission(tmp_path):
    t = Trace()
    A = t.ctx(1, prio="emergency", ctx="hardirq")
    B = t.ctx(0, prio="emergency", ctx="nmi")
    s = [t.store(pstress(1, "hardirq", i, "p%d" % i), cpu=1) for i in range(6)]
    t.acquire(A)
    t.print_rec(A, s[0])
    t.release(A)
    stuck = t.t + 0.001
    t.t = stuck
    for ev in ([A, [s[1]]], [A, [s[2], s[3]]], [B, [s[4], s[5]]]):
        c, recs = ev
        t.acquire(c, ts=stuck)
        for x in recs:
            t.emit(c, x, ts=stuck)
            t.line(x, "A")
            t.commit(c, x, ts=stuck)
        t.release(c, ts=stuck)
    t.t = stuck + 0.001
    t.acquire(A)                       # the clock moves on
    t.release(A)
    as_trace_cmd_orders(t)
    v = run(tmp_path, t)
    assert v["verdict"] == "pass", violation_messages(v)


# results/stress-20261203-120229: the printer thread wrote the first
# stressor record completely and was taken over in the unsafe section of
# its last byte; the panic-priority taker printed it again.  That was
# before the serial check had synced (a kernel record came first): the
# thread's full line was taken for the reprint and the reprint reported
# serial-extra.
def test_full_line_of_an_interrupted_attempt_before_the_sync(tmp_path):
    t = Trace()
    T = t.ctx(3, thread=1)
    P = t.ctx(3, prio="panic")
    k = t.store("printk_stress: start run=1")
    s = [t.store(pstress(1, "task", i, "p%d" % i), cpu=1) for i in range(3)]
    t.acquire(T)
    t.print_rec(T, k)
    t.emit(T, s[0])
    t.line(s[0], "T")                  # complete, '\n' included
    t.take_over(P, T, [s[0], s[1], s[2]], unsafe=1)
    t.lost(T, "exit_unsafe", owner=P)
    v = run(tmp_path, t)
    assert v["verdict"] == "pass", violation_messages(v)
    assert v["serial"]["reprinted_full_lines"] == 1


# results of a stress run on i386 (seq 807): an NMI at emergency priority
# wrote a whole record except its line-end LF and was taken over by a
# panic-priority context inside that byte's unsafe section; the LF
# landed in the reprint and cut it in two (`A[    8.292500] ps` /
# `tress r=1 ...`). Reported as serial-missing plus serial-partial.
@pytest.mark.parametrize("unsafe", [1, 0])
def test_full_line_of_an_interrupted_attempt_then_a_reprint_cut_by_its_lf(tmp_path, unsafe):
    t, E, P, s = _emergency_line_taken_over(unsafe)   # its line lacks only the LF
    t.emit(P, s[1])
    t.line(s[1], "A")
    line = t.serial[-1]
    at = line.index("] ps") + 4
    t.serial[-1] = line[:at] + "\n" + line[at:]
    t.commit(P, s[1])
    t.lost(E, "exit_unsafe", owner=P)
    t.print_rec(P, s[2])
    t.print_rec(P, s[3])
    t.release(P)
    v = run(tmp_path, t)
    if unsafe:
        assert v["verdict"] == "pass", violation_messages(v)
        assert v["serial"]["reprinted_full_lines"] == 1
        assert v["serial"]["stray_after_unsafe_takeover"] == 1
    else:
        assert violated(v) == {"serial-corrupt"}, violation_messages(v)


# results/load-20261204-031355 (the storm under stress-ng), seq 281: a
# panic-priority task on CPU 0 took the console from the printer thread
# inside its unsafe section (10.723477); stress-ng had preempted the
# thread there, and it wrote its byte 0.68 s later, into the taker's
# line of seq 281 (`pstSress`), then traced its nobkl_lost (11.404909).
# The analysis allowed that byte for 0.5 s only: serial-corrupt.  The
# byte is one of the thread's own line (here an `M` of its payload, one
# of the record it was printing); a byte its line does not have is no
# byte of the thread's (`stray`).
def _thread_preempted_in_its_unsafe_section(stray_after_lost, stray="M", second=False,
                                            taker="panic"):
    t = Trace()
    T = t.ctx(1, thread=1)
    P = t.ctx(0, prio=taker)
    s = [t.store(pstress(0, "task", i, "abcdefghijklmnopqrstuvwxyz%d" % i), cpu=0)
         for i in range(4)]
    t.acquire(T)
    t.emit(T, s[0])
    t.acquire(P, "hostile", prev=T, unsafe=1)
    t.print_rec(P, s[0])
    t.t += 0.6                          # the thread stays preempted
    if stray_after_lost:
        t.lost(T, "exit_unsafe", owner=P)
    t.emit(P, s[1])
    t.line(s[1], "A")
    t.serial[-1] = t.serial[-1].replace("pstress", "pst%sress" % stray)
    t.commit(P, s[1])
    if second:
        # a second byte of the same victim, in the taker's next line
        t.emit(P, s[2])
        t.line(s[2], "A")
        t.serial[-1] = t.serial[-1].replace("pstress", "pst%sress" % stray)
        t.commit(P, s[2])
    if not stray_after_lost:
        t.lost(T, "exit_unsafe", owner=P)
    if not second:
        t.print_rec(P, s[2])
    t.print_rec(P, s[3])
    t.release(P)
    return t


def test_stray_byte_of_a_victim_preempted_for_long_is_accepted(tmp_path):
    v = run(tmp_path, _thread_preempted_in_its_unsafe_section(stray_after_lost=False))
    assert v["verdict"] == "pass", violation_messages(v)
    assert v["serial"]["stray_after_unsafe_takeover"] == 1


def test_stray_byte_the_victim_could_not_have_written_is_corruption(tmp_path):
    # `#` is nowhere in the thread's line: no byte of its unsafe section
    v = run(tmp_path, _thread_preempted_in_its_unsafe_section(stray_after_lost=False,
                                                              stray="#"))
    assert violated(v) == {"serial-corrupt"}, violation_messages(v)
    assert v["serial"].get("stray_after_unsafe_takeover", 0) == 0


def test_second_stray_byte_of_one_victim_is_corruption(tmp_path):
    # the victim wrote one byte of its unsafe section: the allowance is
    # spent by the first line it hit, the second line is corrupt
    v = run(tmp_path, _thread_preempted_in_its_unsafe_section(stray_after_lost=False,
                                                              second=True))
    assert violated(v) == {"serial-corrupt"}, violation_messages(v)
    assert [x["seq"] for x in v["violations"]] == [12]
    assert v["serial"]["stray_after_unsafe_takeover"] == 1


def test_stray_byte_after_an_unsafe_takeover_below_panic_is_corruption(tmp_path):
    # only the final panic flush may take over inside an unsafe section
    # (a kernel without the mark is not checked for that): a takeover by
    # an emergency context allows no stray byte
    v = run(tmp_path, _thread_preempted_in_its_unsafe_section(stray_after_lost=False,
                                                              taker="emergency"))
    assert "serial-corrupt" in violated(v), violation_messages(v)
    assert v["serial"].get("stray_after_unsafe_takeover", 0) == 0


def test_stray_byte_after_the_victim_noticed_its_loss_is_corruption(tmp_path):
    v = run(tmp_path, _thread_preempted_in_its_unsafe_section(stray_after_lost=True))
    assert violated(v) == {"serial-corrupt"}, violation_messages(v)
    assert v["serial"].get("stray_after_unsafe_takeover", 0) == 0


# A stress run in make test (x86_64, seq 13881): an NMI at emergency
# priority had written `... n=24` of its record (n=2454) when a
# panic-priority hardirq took the console over inside its unsafe
# section; the taker's record came after one dropped, and the victim's
# next byte, `5`, landed after the `1` of its notice: `** 15 printk
# messages dropped **`, reported serial-dropped ("its emission had
# dropped=1"). Without the unsafe takeover the same count is one.
def _notice_hit_by_a_stray_digit(unsafe):
    t = Trace()
    E = t.ctx(3, prio="emergency")
    P = t.ctx(0, prio="panic")
    s = [t.store(pstress(1, "hardirq", 2452 + i, "abcdefghijklmnopqrstuvwxyz%d" % i), cpu=1)
         for i in range(4)]
    t.acquire(E)
    t.print_rec(E, s[0])
    t.emit(E, s[1])
    t.line(s[1], "A")
    t.serial[-1] = t.serial[-1][:40]          # cut inside the record
    t.acquire(P, "hostile", prev=E, unsafe=unsafe)
    t.emit(P, s[2], dropped=1, serial=False)
    t.serial.append("A** 15 printk messages dropped **")
    t.line(s[2], "A")
    t.commit(P, s[2])
    t.print_rec(P, s[3])
    t.release(P)
    t.lost(E, "exit_unsafe", owner=P)
    return t


def test_stray_digit_in_the_notice_of_an_unsafe_takeover_is_the_stray_byte(tmp_path):
    v = run(tmp_path, _notice_hit_by_a_stray_digit(unsafe=1))
    assert v["verdict"] == "pass", violation_messages(v)
    assert v["serial"]["stray_after_unsafe_takeover"] == 1


def test_notice_one_digit_off_without_an_unsafe_takeover_is_corruption(tmp_path):
    v = run(tmp_path, _notice_hit_by_a_stray_digit(unsafe=0))
    assert violation_counts(v) == {"serial-corrupt": 1}, violation_messages(v)
