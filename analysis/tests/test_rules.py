"""Every rule: a clean trace passes, a trace with a real violation of the
rule is caught with that rule id.  Plus the benign trace reorders that
must not be reported."""

import pytest

from analysis import RULE_IDS
from analysis.tests.verdicts import check_results
from analysis.tests.tracebuilder import Trace, printed, pstress, clean_trace, \
    busy_with_a_record_from_before_the_trace
from analysis.tests.verdicts import violated, violation_counts


def run(tmp_path, t, **kw):
    d = t.write(tmp_path / "res")
    return check_results(d, **kw)


def base(n=4):
    t = Trace()
    T = t.ctx(0, thread=1)
    s = [t.store(pstress(1, "task", i, "p%d" % i)) for i in range(n)]
    return t, T, s


def test_clean_trace_passes(tmp_path):
    t, _ = clean_trace()
    v = run(tmp_path, t)
    assert v["verdict"] == "pass", v["violations"]
    assert v["exit_code"] == 0
    c = v["counts"]
    assert c["takeovers"]["hostile"] == 2 and c["takeovers"]["handover"] == 1
    assert c["handovers"]["timeouts"] == 1
    assert c["reprints"] == 2
    assert c["dropped_records"] == 3
    assert v["serial"]["partial_lines"] == 2
    assert v["serial"]["matched"] == 8
    assert v["latency"]["handover_wait"]["count"] == 1


def test_clean_trace_latency_format_passes(tmp_path):
    t, _ = clean_trace()
    t2 = Trace(latency=True)
    # re-render the same events in `trace-cmd report -l` layout
    import re
    out = [t.lines[0]]
    for ln in t.lines[1:]:
        m = re.match(r"\s*(.*)-(\d+)\s+\[(\d+)\]\s+(\S+): (.*)$", ln)
        comm, pid, cpu, ts, rest = m.groups()
        out.append("%8.8s-%-5s %3dd..1. %s: %s" % (comm, pid, int(cpu), ts, rest))
    t.lines = out
    v = run(tmp_path, t)
    assert v["verdict"] == "pass", v["violations"]
    assert v["trace"]["nobkl_events"] > 30


# ------------------------------------------------------------------ no-loss
def test_no_loss_uncounted_skip(tmp_path):
    t, T, s = base()
    t.acquire(T)
    t.print_rec(T, s[0])
    t.print_rec(T, s[2])          # s[1] skipped, dropped=0
    t.print_rec(T, s[3])
    t.release(T)
    v = run(tmp_path, t)
    assert v["verdict"] == "fail" and v["exit_code"] == 1
    assert violation_counts(v) == {"no-loss": 1}
    viol = [x for x in v["violations"] if x["rule"] == "no-loss"][0]
    assert viol["seq"] == s[1] and viol["cpus"] == [0]
    assert viol["events_before"] and viol["events_after"]


def test_no_loss_dropped_too_small(tmp_path):
    t, T, s = base(5)
    t.acquire(T)
    t.print_rec(T, s[0])
    t.print_rec(T, s[4], dropped=1)   # 3 skipped, 1 counted
    t.release(T)
    v = run(tmp_path, t, no_serial=True)
    assert violation_counts(v) == {"no-loss": 1}


def test_no_loss_commit_without_emit(tmp_path):
    t, T, s = base()
    t.acquire(T)
    t.print_rec(T, s[0])
    t.commit(T, s[1])             # never written
    t.release(T)
    v = run(tmp_path, t, no_serial=True)
    assert violation_counts(v) == {"no-loss": 1}


# ------------------------------------------------------------ dropped-count
def test_dropped_count_without_a_gap(tmp_path):
    t, T, s = base()
    t.acquire(T)
    t.print_rec(T, s[0])
    t.print_rec(T, s[1], dropped=2)   # nothing skipped since the commit of s[0]
    t.print_rec(T, s[2])
    t.print_rec(T, s[3])
    t.release(T)
    v = run(tmp_path, t)
    assert v["verdict"] == "fail" and v["exit_code"] == 1
    assert v["violations_by_rule"]["dropped-count"] == 1 and violated(v) == {"dropped-count"}
    viol = v["violations"][0]
    assert viol["seq"] == s[1] and viol["cpus"] == [0]
    assert v["counts"]["dropped_records"] == 0


def test_dropped_count_larger_than_the_gap(tmp_path):
    t, T, s = base(5)
    t.acquire(T)
    t.print_rec(T, s[0])
    t.print_rec(T, s[3], dropped=3)   # s[1], s[2] skipped: 2, not 3
    t.release(T)
    v = run(tmp_path, t, no_serial=True)
    assert violated(v) == {"dropped-count"} and v["violations_by_rule"]["dropped-count"] == 1
    assert v["counts"]["dropped_records"] == 2


def test_reprint_after_takeover_repeats_the_dropped_count(tmp_path):
    # the taker finds the same gap after the last commit: the same count
    t, T, s = base(5)
    N = t.ctx(0, prio="emergency", ctx="nmi")
    t.acquire(T)
    t.print_rec(T, s[0])
    t.emit(T, s[3], dropped=2)
    t.partial(s[3], 0.5, "T")
    t.acquire(N, "hostile", prev=T)
    t.print_rec(N, s[3], dropped=2)
    t.print_rec(N, s[4])
    t.release(N)
    t.lost(T, "exit_unsafe")
    v = run(tmp_path, t)
    assert v["verdict"] == "pass", [x["message"] for x in v["violations"]]
    assert v["counts"]["reprints"] == 1 and v["counts"]["dropped_records"] == 2


# ---------------------------------------------------------------- duplicate
def test_duplicate_emit_after_commit(tmp_path):
    t, T, s = base()
    t.acquire(T)
    t.print_rec(T, s[0])
    t.print_rec(T, s[0])          # printed twice while owning
    t.print_rec(T, s[1])
    t.release(T)
    v = run(tmp_path, t)
    # duplicate: the second emission and the second commit of s[0]; its
    # second copy on the log is a repeated line (serial-partial); s[2] and
    # s[3], stored and never printed, are not on the log (serial-missing)
    assert violation_counts(v) == {"duplicate": 2, "serial-partial": 1,
                                   "serial-missing": 2}, v["violations"]


def test_duplicate_reemit_without_loss(tmp_path):
    t, T, s = base()
    t.acquire(T)
    t.emit(T, s[0])
    t.line(s[0], "T")
    t.emit(T, s[0])               # skip_commit: same owner prints it again
    t.line(s[0], "T")
    t.commit(T, s[0])
    t.release(T)
    v = run(tmp_path, t, no_serial=True)
    assert violated(v) == {"duplicate"}


def test_reprint_after_takeover_is_legal(tmp_path):
    t, T, s = base(1)
    N = t.ctx(0, prio="emergency", ctx="nmi")
    t.acquire(T)
    t.emit(T, s[0])
    t.partial(s[0], 0.9, "T")
    t.take_over(N, T, [s[0]])
    t.lost(T, "seq")
    v = run(tmp_path, t)
    assert v["verdict"] == "pass", v["violations"]
    assert v["counts"]["reprints"] == 1


# ---------------------------------------------------------------- one-owner
def test_one_owner_direct_acquire_of_locked_console(tmp_path):
    t, T, s = base()
    X = t.ctx(1)
    t.acquire(T)
    t.acquire(X, prev=T)          # how=direct, prev_locked=1
    t.print_rec(X, s[0])
    t.release(X)
    v = run(tmp_path, t, no_serial=True)
    assert violation_counts(v) == {"one-owner": 1}


def test_one_owner_overlap_after_free_acquire(tmp_path):
    t, T, s = base()
    X = t.ctx(1)
    t.acquire(T)
    t.print_rec(T, s[0])
    t.acquire(X)                  # state word says free (T released?) ...
    t.print_rec(T, s[1])          # ... but T keeps printing: overlap
    t.release(T)
    t.print_rec(X, s[2])
    t.release(X)
    v = run(tmp_path, t, no_serial=True)
    # T's emission and commit of s[1] while X owns
    assert violation_counts(v) == {"one-owner": 2}


def test_one_owner_emit_without_acquire(tmp_path):
    t, T, s = base()
    X = t.ctx(1)
    t.acquire(T)
    t.print_rec(T, s[0])
    t.release(T)
    t.print_rec(X, s[1])          # X never acquired
    v = run(tmp_path, t, no_serial=True)
    # X's emission and commit of s[1]
    assert violation_counts(v) == {"one-owner": 2}


# --------------------------------------------------------------- after-loss
def test_after_loss_commit(tmp_path):
    t, T, s = base(1)
    E = t.ctx(2, prio="emergency")
    t.acquire(T)
    t.emit(T, s[0])
    t.partial(s[0], 0.5, "T")
    t.acquire(E, "hostile", prev=T)
    t.commit(T, s[0])             # writes the seq after losing the console
    t.print_rec(E, s[0])
    t.release(E)
    t.lost(T, "release", owner=E)
    v = run(tmp_path, t)
    assert violated(v) == {"after-loss"}
    viol = v["violations"][0]
    assert viol["seq"] == s[0]
    assert set(viol["cpus"]) == {0, 2}


def test_stale_emit_before_noticing_a_takeover_is_allowed(tmp_path):
    """The old owner passed its last check, was taken over, then traced its
    emission: it notices at its next check and prints nothing.  Seen on
    real runs (an NMI taking over from the printer thread on its CPU)."""
    t, T, s = base(2)
    E = t.ctx(2, prio="emergency")
    t.acquire(T)
    t.print_rec(T, s[0])
    t.take_over(E, T, [s[1]])
    t.emit(T, s[1])               # traced after the takeover
    t.lost(T, owner=E)            # noticed before the first byte
    v = run(tmp_path, t)
    assert v["verdict"] == "pass", v["violations"]
    assert v["counts"]["stale_emits"] == 1


def test_after_loss_emit_after_noticing_the_loss(tmp_path):
    t, T, s = base(2)
    E = t.ctx(2, prio="emergency")
    t.acquire(T)
    t.print_rec(T, s[0])
    t.take_over(E, T, [s[1]])
    t.lost(T, owner=E)
    t.emit(T, s[1])               # goes on printing after it noticed
    v = run(tmp_path, t, no_serial=True)
    # E committed s[1]: T's emission of it is a second one, not a reprint
    assert violation_counts(v) == {"after-loss": 1, "duplicate": 1}, v["violations"]


def test_after_loss_emit_after_handover(tmp_path):
    t, T, s = base()
    W = t.ctx(3, prio="emergency")
    t.acquire(T)
    t.request(W, T)
    t.hand_over(T, W)
    t.print_rec(T, s[0])          # T prints after handing over
    t.release(W)
    v = run(tmp_path, t, no_serial=True)
    # T's emission and commit of s[0]
    assert violation_counts(v) == {"after-loss": 2}, v["violations"]


# ------------------------------------------------------------ takeover-prio
def test_takeover_prio_same_priority(tmp_path):
    t, T, s = base()
    X = t.ctx(1, prio="normal")
    t.acquire(T)
    t.emit(T, s[0])
    t.take_over(X, T, [s[0]])
    t.lost(T)
    v = run(tmp_path, t, no_serial=True)
    assert violated(v) == {"takeover-prio"}


def test_takeover_prio_lower_priority(tmp_path):
    t, T, s = base()
    E = t.ctx(1, prio="emergency")
    X = t.ctx(2, prio="normal")
    t.acquire(E)
    t.print_rec(E, s[0])
    t.take_over(X, E, [s[1]])
    t.lost(E)
    v = run(tmp_path, t, no_serial=True)
    assert violation_counts(v) == {"takeover-prio": 1}


# ------------------------------------------------------------ unsafe-takeover
def _unsafe_taken(t, taker_prio="panic", final=False):
    """A thread owner taken over inside its unsafe section by a context of
    taker_prio on another CPU; then a direct acquire of the thread."""
    T = t.ctx(0, thread=1)
    X = t.ctx(1, prio=taker_prio, ctx="hardirq")
    s = [t.store(pstress(1, "task", i, "p%d" % i)) for i in range(3)]
    t.acquire(T)
    t.print_rec(T, s[0])
    t.emit(T, s[1])
    t.acquire(X, "hostile", prev=T, unsafe=1, final=final)
    t.print_rec(X, s[1])
    t.release(X)
    t.lost(T, "exit_unsafe", owner=X)
    t.acquire(T)
    t.print_rec(T, s[2])
    t.release(T)
    return t


@pytest.mark.parametrize("prio", ["panic", "emergency"])
def test_unsafe_takeover_before_the_final_flush(tmp_path, prio):
    v = run(tmp_path, _unsafe_taken(Trace(marks=True), prio), no_serial=True)
    assert violation_counts(v) == {"unsafe-takeover": 1}, v["violations"]


def test_unsafe_takeover_in_the_final_flush_marks_the_console(tmp_path):
    t = _unsafe_taken(Trace(marks=True), final=True)
    assert t.lines[-4].count("unsafe_takeover=1") == 1     # the thread's next acquire
    v = run(tmp_path, t, no_serial=True)
    assert v["verdict"] == "pass", v["violations"]


def test_unsafe_takeover_mark_that_goes_away(tmp_path):
    t = _unsafe_taken(Trace(marks=True), final=True)
    t.lines[-4] = t.lines[-4].replace("unsafe_takeover=1", "unsafe_takeover=0")
    v = run(tmp_path, t, no_serial=True)
    assert violation_counts(v) == {"unsafe-takeover": 1}, v["violations"]


def test_unsafe_takeover_mark_without_a_takeover(tmp_path):
    t, T, s = base(1)
    t.marks = True
    t.acquire(T)
    t.lines[-1] = t.lines[-1].replace("unsafe_takeover=0", "unsafe_takeover=1")
    t.print_rec(T, s[0])
    t.release(T)
    v = run(tmp_path, t, no_serial=True)
    assert violation_counts(v) == {"unsafe-takeover": 1}, v["violations"]


def test_unsafe_takeover_is_not_checked_without_the_mark(tmp_path):
    # a kernel whose acquire has no unsafe_takeover field (before the port
    # allowed it only in the final flush): panic output takes over at once
    v = run(tmp_path, _unsafe_taken(Trace()), no_serial=True)
    assert v["verdict"] == "pass", v["violations"]


# ------------------------------------------------------------ panic-protect
def _panic_owner_hands_over(mid_record):
    """A panic-priority owner on CPU 2 prints s[0] and hands the console
    over to an emergency waiter on CPU 3, in the middle of s[1] or at
    its release (not mid_record); the waiter prints s[1]."""
    t, T, s = base()
    P = t.ctx(2, prio="panic")
    W = t.ctx(3, prio="emergency")
    t.acquire(P)
    t.print_rec(P, s[0])
    if mid_record:
        t.emit(P, s[1])
    t.request(W, P)
    t.hand_over(P, W)
    t.print_rec(W, s[1])
    t.release(W)
    return t, s


def test_panic_protect_handover_away_from_panic_cpu(tmp_path):
    # the panic-priority owner hands over in the middle of its record
    t, s = _panic_owner_hands_over(mid_record=True)
    v = run(tmp_path, t, no_serial=True)
    assert violated(v) == {"panic-protect"}
    assert v["violations"][0]["seq"] == s[1]


def test_panic_owner_handing_over_at_its_release_is_not_a_takeover(tmp_path):
    # results/stress-20261203-095925: a panic-priority section finished its
    # records and released; the release handed the console to a waiting
    # emergency context (the series hands over to any waiter at release).
    # Nothing was taken from the panic owner: an anomaly, not panic-protect.
    t, _ = _panic_owner_hands_over(mid_record=False)
    v = run(tmp_path, t, no_serial=True)
    assert not violated(v), v["violations"]
    assert v["counts"]["panic_release_handovers"] == 1
    assert "end of its output" in v["anomalies"]["examples"][0]["message"]


def test_panic_owner_release_handover_traced_before_the_grant(tmp_path):
    # the same with the waiter (an NMI with a stale clock) traced before
    # the panic owner's grant, as in results/stress-20261203-095925 line 353
    t, T, s = base()
    P = t.ctx(2, prio="panic", ctx="hardirq")
    W = t.ctx(0, prio="emergency", ctx="nmi")
    t.acquire(P)
    t.print_rec(P, s[0])
    t.request(W, P)
    t.acquire(W, "handover", prev=P)
    t.release(W)
    t.grant(P, 0, "emergency")
    t.release(P, handover=1)
    v = run(tmp_path, t, no_serial=True)
    assert not violated(v), v["violations"]
    assert v["counts"]["panic_release_handovers"] == 1


def test_panic_protect_hostile_from_other_cpu(tmp_path):
    t, T, s = base()
    P = t.ctx(2, prio="panic")
    Q = t.ctx(3, prio="panic")
    t.acquire(P)
    t.emit(P, s[0])
    t.take_over(Q, P, [s[0]])
    v = run(tmp_path, t, no_serial=True)
    # panic from panic is no higher priority either
    assert violation_counts(v) == {"panic-protect": 1, "takeover-prio": 1}, v["violations"]


# ---------------------------------------------------------- handover-target
def test_handover_target_grant_to_wrong_cpu(tmp_path):
    t, T, s = base()
    W = t.ctx(3, prio="emergency")
    t.acquire(T)
    t.request(W, T)
    t.print_rec(T, s[0])
    t.grant(T, 2, "emergency")    # cpu 2 never asked
    t.release(T, handover=1)
    t.timeout(W, T)
    v = run(tmp_path, t, no_serial=True)
    assert violated(v) == {"handover-target"}


def test_handover_target_acquire_without_request(tmp_path):
    t, T, s = base()
    W = t.ctx(3, prio="emergency")
    t.acquire(T)
    t.print_rec(T, s[0])
    t.grant(T, 3, "emergency")
    t.release(T, handover=1)
    t.acquire(W, "handover", prev=T)   # W never requested
    t.print_rec(W, s[1])
    t.release(W)
    v = run(tmp_path, t, no_serial=True)
    assert violation_counts(v) == {"handover-target": 1}


def test_handover_target_wrong_prio(tmp_path):
    t, T, s = base()
    W = t.ctx(3, prio="emergency")
    t.acquire(T)
    t.request(W, T)
    t.hand_over(T, W, to_prio="panic")
    t.print_rec(W, s[0])
    t.release(W)
    v = run(tmp_path, t, no_serial=True)
    # the grant names a prio nobody requested with, and W acquires a
    # handover granted to another prio
    assert violation_counts(v) == {"handover-target": 2}, v["violations"]


# ---------------------------------------------------------- thread-takeover
def test_thread_takeover_hostile(tmp_path):
    t, T, s = base()
    X = t.ctx(1, prio="normal")
    TT = t.ctx(0, prio="emergency", thread=1)
    t.acquire(X)
    t.emit(X, s[0])
    t.take_over(TT, X, [s[0]])
    t.lost(X)
    v = run(tmp_path, t, no_serial=True)
    assert violated(v) == {"thread-takeover"}


def test_thread_takeover_unrequested_handover(tmp_path):
    t, T, s = base()
    X = t.ctx(1, prio="normal")
    t.acquire(X)
    t.print_rec(X, s[0])
    t.hand_over(X, T)   # the thread never requested
    t.print_rec(T, s[1])
    t.release(T)
    v = run(tmp_path, t, no_serial=True)
    assert violation_counts(v) == {"thread-takeover": 1}


# ------------------------------------------------------------- serial rules
def serial_base():
    t, T, s = base(6)
    t.acquire(T)
    for q in s:
        t.print_rec(T, q)
    t.release(T)
    return t, s


def test_serial_clean_passes(tmp_path):
    t, s = serial_base()
    v = run(tmp_path, t)
    assert v["verdict"] == "pass", v["violations"]
    assert v["serial"]["matched"] == 6 and v["serial"]["stressor_records"] == 6


def test_serial_missing(tmp_path):
    t, s = serial_base()
    gone = t.serial.pop(4)
    assert "pstress" in gone
    v = run(tmp_path, t)
    assert violated(v) == {"serial-missing"}


def test_serial_corrupt(tmp_path):
    t, s = serial_base()
    t.serial[4] = t.serial[4][:-2] + "Z" + t.serial[4][-1:]
    v = run(tmp_path, t)
    assert violated(v) == {"serial-corrupt"}


def test_serial_corrupt_bad_crc_in_record(tmp_path):
    t, T, s = base(1)
    bad = t.store(pstress(2, "nmi", 0, "hello", crc="00000000"))
    t.acquire(T)
    t.print_rec(T, s[0])
    t.print_rec(T, bad)
    t.release(T)
    v = run(tmp_path, t)
    assert violated(v) == {"serial-corrupt"}


# Where the interrupted owner's byte lands in the taker's line: in the
# payload, between its CR and LF, or inside its `[  sec.usec]` prefix
# (stress runs on i386: `A[    9.33]0815] pstress ...`, the `]` of the
# victim's own prefix; `A[   14.50502\r6] pstress ...`, its line end; an
# LF that cut the line in two: `A[    8.292500] ps` / `tress r=1 ...`).
STRAY_PLACES = ["payload", "after_cr", "prefix", "cr_in_prefix", "lf_in_text",
                "lf_in_prefix", "after_prefix", "bracket_in_prefix", "notice"]


def unsafe_panic_takeover(tmp_path, unsafe, where):
    """The printer thread is taken over by panic output while it is inside
    the unsafe section of a byte; it writes that byte into the panic
    owner's line before it notices."""
    t = Trace()
    T = t.ctx(0, thread=1)
    P = t.ctx(1, prio="panic")
    s = [t.store(pstress(1, "task", i, "payload%dOfTheStressorRecord" % i)) for i in range(4)]
    t.acquire(T)
    t.print_rec(T, s[0])
    t.print_rec(T, s[1])
    t.emit(T, s[2])
    t.partial(s[2], 0.5, "T")
    t.acquire(P, "hostile", prev=T, unsafe=unsafe)
    if where == "notice":
        # in the taker's dropped notice (s[2] overwritten meanwhile; seen
        # on i386: `A** 8 printk mes5sages dropped **`)
        t.emit(P, s[3], dropped=1, serial=False)
        t.serial.append("A** 1 printk mes5sages dropped **")
        t.line(s[3], "A")
        t.commit(P, s[3])
        t.lost(T, "exit_unsafe", owner=P)
        t.release(P)
        return run(tmp_path, t)
    t.emit(P, s[2])
    t.line(s[2], "A")
    line = t.serial[-1]
    if where == "after_cr":
        t.serial[-1] = line + "\r "
    elif where in ("prefix", "cr_in_prefix", "lf_in_prefix"):
        dot = line.index(".")
        byte = {"prefix": "]", "cr_in_prefix": "\r", "lf_in_prefix": "\n"}[where]
        t.serial[-1] = line[:dot + 3] + byte + line[dot + 3:]
    elif where == "bracket_in_prefix":
        # the `[` of the victim's own prefix before the dot (seen on
        # x86_64: "A[    7[.451658] pstress v=2 r=1 c=2 ...")
        dot = line.index(".")
        t.serial[-1] = line[:dot] + "[" + line[dot:]
    elif where == "after_prefix":
        # between the prefix's `]` and its space (seen on i386:
        # "A[   11.062476]6 pstress r=1 c=1 x=task n=44 ...")
        at = line.index("] ") + 1
        t.serial[-1] = line[:at] + "6" + line[at:]
    elif where == "lf_in_text":
        at = line.index("] ps") + 4
        t.serial[-1] = line[:at] + "\n" + line[at:]
    else:
        t.serial[-1] = line[:-6] + "q" + line[-6:]
    t.commit(P, s[2])
    t.lost(T, "exit_unsafe", owner=P)
    t.print_rec(P, s[3])
    t.release(P)
    return run(tmp_path, t)


@pytest.mark.parametrize("where", STRAY_PLACES)
def test_serial_stray_byte_after_unsafe_panic_takeover_is_documented(tmp_path, where):
    v = unsafe_panic_takeover(tmp_path, unsafe=1, where=where)
    assert v["verdict"] == "pass", v["violations"]
    assert v["serial"]["stray_after_unsafe_takeover"] == 1


@pytest.mark.parametrize("where", STRAY_PLACES)
def test_serial_stray_byte_after_safe_takeover_is_corrupt(tmp_path, where):
    v = unsafe_panic_takeover(tmp_path, unsafe=0, where=where)
    assert violated(v) == {"serial-corrupt"}


def test_serial_order(tmp_path):
    t, s = serial_base()
    t.serial[3], t.serial[4] = t.serial[4], t.serial[3]
    v = run(tmp_path, t)
    assert violation_counts(v) == {"serial-order": 1}


def test_serial_partial_without_lost_ownership(tmp_path):
    t, T, s = base(3)
    t.acquire(T)
    t.print_rec(T, s[0])
    t.partial(s[1], 0.5, "T")     # cut line, but nobody took the console
    t.print_rec(T, s[1])
    t.print_rec(T, s[2])
    t.release(T)
    v = run(tmp_path, t)
    assert violated(v) == {"serial-partial"}


def test_serial_extra_line(tmp_path):
    t, s = serial_base()
    t.serial.insert(5, "[    1.999999] a kernel line no emission accounts for")
    v = run(tmp_path, t)
    assert violated(v) == {"serial-extra"}


def test_serial_dropped_notice_nowhere_skipped(tmp_path):
    # no emission had a dropped count (more in tests/test_serial_rules.py)
    t, s = serial_base()
    t.serial.insert(5, "T** 2 printk messages dropped **")
    v = run(tmp_path, t)
    assert violated(v) == {"serial-dropped"}


def test_serial_foreign_lines_ignored(tmp_path):
    t, s = serial_base()
    t.serial.insert(4, "stress-ng: info:  [123] dispatching hogs: 2 cpu")
    t.serial.insert(6, "")
    v = run(tmp_path, t)
    assert v["verdict"] == "pass", v["violations"]
    assert v["serial"]["foreign_lines"] >= 1


def test_producer_gap(tmp_path):
    t, s = printed([pstress(2, "hardirq", n, "q%d" % n) for n in (0, 1, 3, 4)])   # n=2 lost
    v = run(tmp_path, t)
    assert violated(v) == {"producer-gap"}


def test_producer_gap_accounted_by_dropped(tmp_path):
    t = Trace()
    T = t.ctx(0, thread=1)
    s = [t.store(pstress(2, "hardirq", n, "q%d" % n)) for n in range(5)]
    t.acquire(T)
    t.print_rec(T, s[0])
    t.print_rec(T, s[3], dropped=2)    # ringbuffer overwrote n=1,2
    t.print_rec(T, s[4])
    t.release(T)
    v = run(tmp_path, t)
    assert v["verdict"] == "pass", v["violations"]
    assert v["serial"]["dropped_lines"] == 1


def test_post_trace_records_must_reach_serial(tmp_path):
    t, T, s = base(3)
    t.acquire(T)
    t.print_rec(T, s[0])
    t.release(T)
    # s[1], s[2] stored but the trace ended before the console printed them
    t.line(s[1], "T")
    v = run(tmp_path, t)
    assert violated(v) == {"serial-missing"}
    assert "after" in v["violations"][0]["message"]
    t.line(s[2], "T")
    v = run(tmp_path, t)
    assert v["verdict"] == "pass", v["violations"]
    assert v["serial"]["post_trace_matched"] == 2


def test_producer_records_slightly_out_of_order(tmp_path):
    # version 1: several kthreads fed one producer, so n could reach the
    # ringbuffer reordered
    t, s = printed([pstress(2, "task", n, "q%d" % n, version=1) for n in (0, 2, 1, 3, 5, 4)])
    v = run(tmp_path, t)
    assert v["verdict"] == "pass", v["violations"]
    assert v["serial"]["writer_order_checked"] == 0


def test_suppressed_records(tmp_path):
    t = Trace()
    T = t.ctx(0, thread=1)
    a = t.store(pstress(1, "task", 0, "a"))
    dbg = t.store("a debug message below the console loglevel", level=7)
    b = t.store("another one", level=7)
    c = t.store(pstress(1, "task", 1, "c"))
    t.acquire(T)
    t.print_rec(T, a)
    t.commit(T, dbg)              # suppressed: committed without an emission
    t.emit(T, b, length=0)        # or emitted with len=0
    t.commit(T, b)
    t.print_rec(T, c)
    t.release(T)
    v = run(tmp_path, t)
    assert v["verdict"] == "pass", v["violations"]
    assert v["counts"]["suppressed_records"] == 2
    v = run(tmp_path, t, console_loglevel=8)
    assert violated(v) == {"no-loss"}


def post_trace_stray_byte(tmp_path, cut):
    """After the trace: the printer thread's line of s[1] cut (`cut`) and
    reprinted by the panic flush, whose next line, s[2], carries one
    byte more (seen on a panic-end run: the thread, taken over inside
    its unsafe section while its CPU still ran, wrote the ' ' after
    `c=2` into a later line of the panic's output)."""
    t, T, s = base(4)
    t.acquire(T)
    t.print_rec(T, s[0])
    t.release(T)
    if cut:
        t.partial(s[1], 0.3, "T")
    t.line(s[1], "A")
    t.line(s[2], "A")
    t.serial[-1] = t.serial[-1][:-20] + " " + t.serial[-1][-20:]
    t.line(s[3], "A")
    return run(tmp_path, t)


def test_post_trace_stray_byte_after_a_cut_line(tmp_path):
    v = post_trace_stray_byte(tmp_path, cut=True)
    assert v["verdict"] == "pass", v["violations"]
    assert v["serial"]["stray_after_unsafe_takeover"] == 1
    assert v["serial"]["post_trace_matched"] == 3


def test_post_trace_stray_byte_without_a_cut_line_is_corrupt(tmp_path):
    v = post_trace_stray_byte(tmp_path, cut=False)
    assert violated(v) == {"serial-corrupt"}
    assert v["violations_by_rule"]["serial-corrupt"] == 1


def test_post_trace_records_dropped_after_the_trace(tmp_path):
    t, T, s = base(4)
    t.acquire(T)
    t.print_rec(T, s[0])
    t.release(T)
    # after the trace: s[1], s[2] overwritten, "2 dropped", then s[3]
    t.serial.append("** 2 printk messages dropped **")
    t.line(s[3], "T")
    v = run(tmp_path, t)
    assert v["verdict"] == "pass", v["violations"]


def test_check_results_accepts_path_objects(tmp_path):
    t, _ = clean_trace()
    from pathlib import Path
    v = check_results(Path(t.write(tmp_path / "p")))
    assert v["verdict"] == "pass"


# ------------------------------------------------------- tolerated reorders
def test_reorder_release_after_next_acquire(tmp_path):
    t, T, s = base(2)
    X = t.ctx(1, ctx="hardirq")
    t.acquire(T)
    t.print_rec(T, s[0])
    t.acquire(X)                  # state word was already free
    t.release(T)                  # T's release traced late
    t.print_rec(X, s[1])
    t.release(X)
    v = run(tmp_path, t)
    assert v["verdict"] == "pass", v["violations"]
    assert v["counts"]["releases_traced_after_next_acquire"] == 1


def test_reorder_lost_before_takers_acquire(tmp_path):
    t, T, s = base(1)
    E = t.ctx(2, prio="emergency")
    t.acquire(T)
    t.emit(T, s[0])
    t.partial(s[0], 0.3, "T")
    t.lost(T, "can_proceed", owner=E)
    t.take_over(E, T, [s[0]])
    v = run(tmp_path, t)
    assert v["verdict"] == "pass", v["violations"]
    assert v["counts"]["losses_traced_before_takeover"] == 1


def test_reorder_handover_acquire_before_grant(tmp_path):
    t, T, s = base(1)
    W = t.ctx(3, prio="emergency")
    t.acquire(T)
    t.grant(T, 3, "emergency")     # grant before the request event
    t.request(W, T)
    t.acquire(W, "handover", prev=T)
    t.release(T, handover=1)
    t.print_rec(W, s[0])
    t.release(W)
    t2, T2, s2 = base(1)
    W2 = t2.ctx(3, prio="emergency")
    t2.acquire(T2)
    t2.request(W2, T2)
    t2.acquire(W2, "handover", prev=T2)   # acquire traced before the grant
    t2.grant(T2, 3, "emergency")
    t2.release(T2, handover=1)
    t2.print_rec(W2, s2[0])
    t2.release(W2)
    for i, tr in enumerate((t, t2)):
        v = check_results(tr.write(tmp_path / ("r%d" % i)))
        assert v["verdict"] == "pass", v["violations"]


def test_reorder_acquire_traced_after_takeover(tmp_path):
    t, T, s = base(2)
    X = t.ctx(0, ctx="task")
    N = t.ctx(0, prio="emergency", ctx="nmi")
    t.acquire(T)
    t.print_rec(T, s[0])
    t.release(T)
    # X's cmpxchg succeeded, an NMI on the same CPU took over before X's
    # acquire tracepoint fired
    t.take_over(N, X, [s[1]])
    t.acquire(X)
    t.lost(X, "can_proceed")
    v = run(tmp_path, t)
    assert v["verdict"] == "pass", v["violations"]


def test_trace_starting_mid_ownership(tmp_path):
    t, T, s = base(2)
    t.print_rec(T, s[0])          # T acquired before tracing started
    t.print_rec(T, s[1])
    t.release(T)
    v = run(tmp_path, t)
    assert v["verdict"] == "pass", v["violations"]


def test_every_rule_has_a_test():
    import inspect
    import sys
    src = inspect.getsource(sys.modules[__name__])
    # the serial rules' tests are in test_serial_rules.py, stressor-selfcheck's in
    # test_selfcheck.py, those of the 6.12 model's own rules in test_nbcon_model.py,
    # cont-fragments' in test_cont_fragments.py
    import importlib
    for m in ("test_serial_rules", "test_selfcheck", "test_nbcon_model", "test_cont_fragments"):
        src += inspect.getsource(importlib.import_module("analysis.tests." + m))
    for r in RULE_IDS:
        assert '"%s"' % r in src, r


def test_serial_sync_ignores_repeated_boot_texts(tmp_path):
    """The trace starts with records whose text also appears earlier in the
    boot log; the matcher must sync on a stressor record, not on them."""
    t = Trace()
    T = t.ctx(0, thread=1)
    for i in range(500):
        t.serial.append("[    0.%06d] boot line %d" % (i, i))
    t.serial.append("[    0.900000] random: kernel message")
    k = t.store("random: kernel message")
    s = [t.store(pstress(1, "task", n, "p%d" % n)) for n in range(3)]
    t.acquire(T)
    t.print_rec(T, k)
    for q in s:
        t.print_rec(T, q)
    t.release(T)
    v = run(tmp_path, t)
    assert v["verdict"] == "pass", v["violations"]
    # the kernel message is checked too: the one right before the first
    # stressor record, not the same text earlier in the boot log
    assert v["serial"]["matched"] == 4
    assert v["serial"]["lines_before_trace"] == 2 + 500 + 1


def test_serial_only_kernel_records(tmp_path):
    t, s = printed(["kernel message %d" % i for i in range(5)])
    v = run(tmp_path, t)
    assert v["verdict"] == "pass", v["violations"]
    assert v["serial"]["matched"] == 5
    del t.serial[-2]
    v = run(tmp_path, t)
    assert violated(v) == {"serial-missing"}


def test_hostile_acquire_of_a_free_console_is_a_damaged_record(tmp_path):
    """The kernel takes the hostile path only for a locked state word and
    its cmpxchg succeeds only on the word it read (__cons_try_acquire()):
    `how=hostile prev_locked=0` is no record the tracepoint writes (one
    flipped bit of prev_locked, or of how).  Before: taken as T's release
    traced late, and the trace passed."""
    t, T, s = base(2)
    E = t.ctx(2, prio="normal")
    t.acquire(T)
    t.print_rec(T, s[0])
    t.acquire(E, "hostile")
    t.release(T)
    t.print_rec(E, s[1])
    t.release(E)
    v = run(tmp_path, t)
    assert (v["verdict"], v["exit_code"], v["trace"]["bad_field_events"]) == \
        ("incomplete", 2, 1), v["reasons"]
    assert "how=hostile with prev_locked=0" in v["reasons"][0]
    assert all(x["after_trace_loss"] for x in v["violations"])


def race32_trace():
    """Seed patch 006: CPU0 is delayed between its state check and the seq
    cmpxchg, CPU1 takes over and reprints, CPU0's commit lands."""
    t, T, s = base(2)
    E = t.ctx(1, prio="emergency")
    t.acquire(T)
    t.emit(T, s[0])
    t.line(s[0], "T")
    t.acquire(E, "hostile", prev=T)
    t.emit(E, s[0])
    t.line(s[0], "A")
    t.commit(T, s[0])             # the late 32-bit commit
    t.lost(E, "seq", owner=E)
    t.acquire(E, "direct")
    t.print_rec(E, s[1])
    t.release(E)
    return t


def test_32bit_race_is_the_documented_exception(tmp_path):
    t = race32_trace()
    v = run(tmp_path, t, arch32=False)
    assert violation_counts(v) == {"after-loss": 1}
    v = run(tmp_path, t, arch32=True)
    assert v["verdict"] == "pass", v["violations"]
    assert v["counts"]["race32_late_commits"] == 1
    # detected from kernel.config
    d = t.write(tmp_path / "r32")
    with open(d + "/kernel.config", "w") as f:
        f.write("CONFIG_X86_32=y\n# CONFIG_64BIT is not set\n")
    assert check_results(d)["verdict"] == "pass"


def test_console_loglevel_from_printk_txt(tmp_path):
    t = Trace()
    T = t.ctx(0, thread=1)
    # printed records below both loglevels: a console prints none at or
    # above its loglevel
    a = t.store(pstress(1, "task", 0, "a"), level=3)
    w = t.store("a warning", level=4)
    c = t.store(pstress(1, "task", 1, "c"), level=3)
    t.acquire(T)
    t.print_rec(T, a)
    t.commit(T, w)                # not printed: level 4 >= console loglevel 4
    t.print_rec(T, c)
    t.release(T)
    d = t.write(tmp_path / "r")
    assert violation_counts(check_results(d)) == {"no-loss": 1}
    with open(d + "/printk.txt", "w") as f:
        f.write("4\t4\t1\t7\n")
    v = check_results(d)
    assert v["verdict"] == "pass", v["violations"]
    assert v["inputs"]["console_loglevel"] == 4


def test_fail_reasons_name_the_rules(tmp_path):
    t, T, s = base(3)
    t.acquire(T)
    t.print_rec(T, s[0])
    t.print_rec(T, s[2])
    t.release(T)
    v = run(tmp_path, t, no_serial=True)
    assert v["reasons"] and v["reasons"][0].startswith("rule violations: no-loss=1")


def stats_trace(tail=4, dataless=0):
    """Records n=0..tail-1 stored and printed; then `dataless` records
    without text (prb_reserve() found no room), which no console reached."""
    t, s = printed([pstress(1, "task", n, "z%d" % n) for n in range(tail)])
    for _ in range(dataless):
        t.dataless()
    return t


def write_stats(d, attempted, stored):
    with open(d + "/stats.txt", "w") as f:
        f.write("run=1 state=idle last_stop=duration elapsed_ms=10\n"
                "producer cpu=1 ctx=task writer=task0 attempted=%d stored=%d\n"
                "producer cpu=2 ctx=nmi writer=nmi attempted=0 stored=0\n"
                "total ctx=task attempted=%d stored=%d\n" % (attempted, stored, attempted, stored))


def test_stressor_stats_complete_run_passes(tmp_path):
    d = stats_trace().write(tmp_path / "r")
    write_stats(d, 4, 4)
    v = check_results(d)
    assert v["verdict"] == "pass", v["violations"]
    assert v["serial"]["stressor_stats_producers"] == 2


def test_stressor_stats_tail_missing(tmp_path):
    # the stressor stored n=0..5, only n=0..3 were traced and printed
    d = stats_trace().write(tmp_path / "r")
    write_stats(d, 6, 6)
    v = check_results(d)
    assert violated(v) == {"producer-gap"}
    assert "n=4..5" in v["violations"][0]["message"]


def test_stressor_stats_refused_records_are_accounted(tmp_path):
    """printk() refused two records (stats.txt: attempted 6, stored 4):
    two of the producer's numbers may be missing, whether or not the
    refusals left data-less records in the trace (none once the
    descriptor ring is full).  A third missing number is a gap."""
    for dataless in (2, 1, 0):
        d = stats_trace(dataless=dataless).write(tmp_path / f"r{dataless}")
        write_stats(d, 6, 4)
        v = check_results(d)
        assert v["verdict"] == "pass", v["violations"]
        assert (v["serial"]["refused_by_printk"], v["trace"]["dataless_records"]) == \
            (2, dataless)
    d = stats_trace(dataless=2).write(tmp_path / "gap")
    write_stats(d, 6, 5)
    v = check_results(d)
    assert violated(v) == {"producer-gap"}
    assert "n=5..5" in v["violations"][0]["message"]
    assert v["serial"]["refused_by_printk"] == 1


def test_multi_line_record_and_continuation(tmp_path):
    """nobkl_store joins the lines of a multi-line record with blanks; a
    LOG_CONT record is stored again (same seq) with its full text."""
    t, T, s = base(1)
    ml = t.store("first line second line third")
    cont = t.store("partial")
    t.store("partial continued", seq=cont)
    t.acquire(T)
    t.print_rec(T, s[0])
    t.emit(T, ml)
    t.line(ml, "T", text="first line")
    t.line(ml, "T", text="second line")
    t.line(ml, "T", text="third")
    t.commit(T, ml)
    t.print_rec(T, cont)
    t.release(T)
    v = run(tmp_path, t)
    assert v["verdict"] == "pass", v["violations"]
    assert v["counts"]["records"] == 3 and v["counts"]["store_updates"] == 1
    assert v["serial"]["multi_line_records"] == 1
    t.serial[-3] = t.serial[-3].replace("second", "sec0nd")
    v = run(tmp_path, t)
    # one byte off in one of its lines: the record is corrupt, as a single
    # line one byte off is; its other lines are its own, not extra lines
    assert violation_counts(v) == {"serial-corrupt": 1}, v["violations"]
    assert v["serial"]["multi_line_records"] == 1


def test_release_mid_record_on_handover_request_then_reprint(tmp_path):
    """console_can_proceed() releases for a higher-priority request; the
    waiter timed out meanwhile, so it is a plain release (handover=0).
    The next owner's reprint is documented, not a duplicate."""
    t, T, s = base(2)
    W = t.ctx(3, prio="emergency")
    t.acquire(T)
    t.request(W, T)
    t.emit(T, s[0])
    t.partial(s[0], 0.5, "T")
    t.timeout(W, T)
    t.release(T)                  # released in the middle of s[0]
    t.acquire(T)
    t.print_rec(T, s[0])
    t.print_rec(T, s[1])
    t.release(T)
    v = run(tmp_path, t)
    assert v["verdict"] == "pass", v["violations"]
    assert v["counts"]["releases_mid_record_on_request"] == 1
    # without any request the same release-and-reprint is a duplicate
    t2, T2, s2 = base(2)
    t2.acquire(T2)
    t2.emit(T2, s2[0])
    t2.release(T2)
    t2.acquire(T2)
    t2.print_rec(T2, s2[0])
    t2.print_rec(T2, s2[1])
    t2.release(T2)
    v = check_results(t2.write(tmp_path / "r2"), no_serial=True)
    assert violated(v) == {"duplicate"}
    assert v["counts"]["releases_mid_record_on_request"] == 0


def test_serial_console_that_matches_nothing_is_not_a_pass(tmp_path):
    t, T, s = base(2)
    t.acquire(T)
    for q in s:
        t.print_rec(T, q)
    t.release(T)
    d = t.write(tmp_path / "r")
    v = check_results(d, serial_console="ttyS9")
    assert v["verdict"] == "incomplete" and "serial log not checked" in v["reasons"][0]


def late_listed_reacquire(tmp_path, lag):
    """The printer thread released, acquired again and was taken over by
    an emergency context; the thread's CPU clock lags, so its new acquire
    is listed after the takeover that names it (prev_* = the thread)."""
    t, T, s = base(3)
    E = t.ctx(2, prio="emergency")
    t.acquire(T)
    t.print_rec(T, s[0])
    t.release(T)
    t.acquire(E, "hostile", prev=T)
    t.print_rec(E, s[1])
    t.acquire(T, ts=t.t + lag)    # listed late, in the middle of E's output
    t.print_rec(E, s[2])
    t.release(E)
    t.lost(T, owner=E)
    return run(tmp_path, t)


def test_late_listed_reacquire_of_a_released_owner_passes(tmp_path):
    v = late_listed_reacquire(tmp_path, 0.019)
    assert v["verdict"] == "pass", v["violations"]


def test_reacquire_listed_too_late_is_one_owner(tmp_path):
    # beyond the window it cannot be a clock lag: T acquired while E owned
    v = late_listed_reacquire(tmp_path, 1.0)
    # E's emission and commit of s[2] after T's acquire
    assert violation_counts(v) == {"one-owner": 2}, v["violations"]


def late_commit_of_remote_owner(lag, lost_first=False):
    """An emergency NMI on CPU 3 wrote the line of s[1] and committed it;
    a panic-priority hardirq on CPU 2 took the console over and began
    with s[2].  The NMI's vCPU was descheduled between its commit and the
    commit's tracepoint: the commit is traced `lag` seconds later, as
    the NMI's next event (lost_first: after its nobkl_lost, i.e. the
    commit came after it noticed the loss)."""
    t = Trace()
    E = t.ctx(3, prio="emergency", ctx="nmi")
    P = t.ctx(2, prio="panic", ctx="hardirq")
    s = [t.store(pstress(3, "nmi", i, "p%d" % i), cpu=3) for i in range(4)]
    t.acquire(E)
    t.print_rec(E, s[0])
    t.emit(E, s[1])
    t.line(s[1], "A")
    t.acquire(P, "hostile", prev=E)
    t.print_rec(P, s[2])
    t.t += lag
    t.print_rec(P, s[3])
    t.release(P)
    if lost_first:
        t.lost(E, "can_proceed", owner=P)
        t.commit(E, s[1])
    else:
        t.commit(E, s[1])
        t.lost(E, "can_proceed", owner=P)
    return t


def test_late_commit_is_the_old_owners_next_event_however_late(tmp_path):
    """Program order, not a time bound: the taker's next emission 0.6 s
    on used to end the checker's wait for the old owner's commit
    (LATE_COMMIT_WAIT, 0.5 s: no-loss + after-loss)."""
    v = run(tmp_path, late_commit_of_remote_owner(0.6))
    assert (v["verdict"], violated(v)) == ("pass", set()), v["violations"]
    assert v["counts"]["late_commits_after_takeover"] == 1
    assert v["counts"]["dropped_records"] == 0


def test_late_commit_after_the_old_owner_noticed_the_loss_is_caught(tmp_path):
    """The commit comes 1 ms later, but after the old owner traced its
    loss: it is not the commit that took effect before the takeover
    (that one is traced before anything else the context does)."""
    v = run(tmp_path, late_commit_of_remote_owner(0.001, lost_first=True), no_serial=True)
    assert violated(v) == {"no-loss", "after-loss"}, v["violations"]
    assert v["counts"]["late_commits_after_takeover"] == 0


def test_trace_starting_between_emit_and_commit(tmp_path):
    """The trace begins while the printer thread writes s[0]: its first
    traced event is the commit of an emission before the trace."""
    t, T, s = base(2)
    t.line(s[0], "T")
    t.commit(T, s[0])
    t.print_rec(T, s[1])
    t.release(T)
    v = run(tmp_path, t)
    assert (v["verdict"], violated(v)) == ("pass", set()), v["violations"]
    assert v["counts"]["commits_of_pretrace_emission"] == 1


def store_hole_trace(gap_at, dataless=False, emit_hole=False, before=0):
    """The printer thread acquires at the trace's first event and prints
    `before` records stored on CPU 1; records s0, s1 are stored `gap_at`
    s after the acquire with the store of the seq between them missing
    (s1 counted as dropped, or printed after an emission of the hole with
    `emit_hole`); with `dataless` the kernel traced that seq as a record
    without text.  Every CPU's events go on for 2 s after it, CPU 1
    storing more records."""
    t = Trace()
    T = t.ctx(0, thread=1)
    t.acquire(T, ts=100.0)
    for n in range(before):
        t.print_rec(T, t.store(pstress(1, "task", 100 + n, "q%d" % n)))
    t.t = 100.0 + gap_at
    a = t.store(pstress(1, "task", 0, "p0"))
    hole = t.seq
    if dataless:
        t.dataless(cpu=2, seq=hole)
    b = t.store(pstress(1, "task", 1, "p1"), seq=hole + 1)
    t.print_rec(T, a)
    if emit_hole:
        t.emit(T, hole, length=20)
        t.commit(T, hole)
        t.emit(T, b)
    else:
        t.emit(T, b, dropped=1)
    t.line(b, "T")
    t.commit(T, b)
    t.t += 2.0
    c = t.store(pstress(1, "task", 2, "p2"))
    t.print_rec(T, c)
    t.release(T)
    return t, hole


def test_store_hole_at_the_trace_start_is_tolerated_and_counted(tmp_path):
    """A seq missing between stored ones with no more seqs stored below it
    than the CPUs can have had in flight when tracing began (reserved
    before, traced after: 8 a CPU, 32 here) can be a record stored before
    tracing began: counted, not a lost store, however late the hole is
    listed; with more stored below, it is a lost store however early.
    Before, a hole opened 1.0 s after the trace's first event was a lost
    store and one 0.1 s after it with 40 records stored below was none
    (a window of 0.5 s)."""
    for gap in (0.1, 1.0):
        t, hole = store_hole_trace(gap)
        v = run(tmp_path / ("edge%s" % gap), t, no_serial=True)
        assert (v["verdict"], v["trace"]["missing_stores"]) == ("pass", 0), (gap, v["reasons"])
        assert v["counts"]["store_holes_at_trace_edges"] == 1
        t, hole = store_hole_trace(gap, before=40)
        v = run(tmp_path / ("mid%s" % gap), t, no_serial=True)
        assert (v["verdict"], v["trace"]["missing_store_seqs"]) == ("incomplete", [hole]), gap
        assert v["counts"]["store_holes_at_trace_edges"] == 0


def test_a_store_hole_is_placed_without_the_clocks(tmp_path):
    """The storing CPU's clock 0.2 s off changes nothing: a hole 0.4 s
    after the trace's first event passes and one with 40 records stored
    below it is a lost store, listed either way.  Before, CPU 1 listed
    0.2 s late put the first hole 0.6 s from the start: a lost store
    (incomplete)."""
    from analysis.tests.test_ordering import shifted_cpus
    for before, want in ((0, "pass"), (40, "incomplete")):
        t, hole = store_hole_trace(0.4, before=before)
        for shift in (-200000, 0, 200000):
            d = tmp_path / ("b%d_%d" % (before, shift))
            t.write(d)
            (d / "trace.txt").write_text(shifted_cpus(t.report(), {1: shift}))
            v = check_results(str(d), no_serial=True)
            assert v["verdict"] == want, (before, shift, v["reasons"])


def test_store_hole_after_the_last_record_a_console_passed_is_tolerated(tmp_path):
    """A seq missing near the trace's end, above every seq a console
    emitted or committed: its store can have fired after tracing ended
    (nothing in the trace shows the record committed), however far from
    the end its neighbours are listed."""
    t = Trace()
    T = t.ctx(0, thread=1)
    t.acquire(T)
    for n in range(40):
        t.print_rec(T, t.store(pstress(1, "task", n, "q%d" % n)))
    t.release(T)
    t.store(pstress(1, "task", 40, "late40"))
    hole = t.seq
    t.store(pstress(1, "task", 41, "late41"), seq=hole + 1)
    t.t += 2.0
    t.store(pstress(1, "task", 42, "late42"))
    v = run(tmp_path, t, no_serial=True)
    assert (v["verdict"], v["trace"]["missing_stores"]) == ("pass", 0), v["reasons"]
    assert v["counts"]["store_holes_at_trace_edges"] == 1


def test_store_hole_of_a_dataless_record_is_no_missing_store(tmp_path):
    """A seq the kernel traced as data-less (nobkl_dataless: the data ring
    had no room) has no nobkl_store and the console skips it with a
    dropped count: the trace is complete.  Not when a console emitted it
    (readers skip data-less records, so its store was lost), nor when the
    seq has a store too."""
    t, hole = store_hole_trace(1.0, dataless=True)
    v = run(tmp_path / "dataless", t, no_serial=True)
    assert (v["verdict"], v["trace"]["missing_stores"]) == ("pass", 0), v["reasons"]
    assert (v["counts"]["store_holes_dataless"], v["trace"]["dataless_records"]) == (1, 1)
    t, hole = store_hole_trace(1.0, dataless=True, emit_hole=True)
    v = run(tmp_path / "emitted", t, no_serial=True)
    assert (v["verdict"], v["trace"]["missing_store_seqs"]) == ("incomplete", [hole])
    assert v["counts"]["store_holes_dataless"] == 0
    t, hole = store_hole_trace(1.0, dataless=True)
    t.store(pstress(1, "task", 3, "p3"), seq=hole)
    v = run(tmp_path / "twice", t, no_serial=True)
    assert v["verdict"] == "incomplete" and v["trace"]["bad_field_events"] == 1, v["reasons"]


def test_every_tolerance_counts_and_has_a_test(tmp_path):
    """analysis/tolerances.py: each row's counter is in a verdict, and its
    test exists and asserts that counter."""
    import importlib
    import inspect
    from analysis.tolerances import TOLERANCES, counter_value
    t, _ = clean_trace(chain=True)
    v = run(tmp_path, t)
    names = set()
    for tol in TOLERANCES:
        assert tol.name not in names
        names.add(tol.name)
        assert tol.order in ("both", "timestamps", "serial"), tol
        assert isinstance(counter_value(v, tol.counter), int), tol
        mod, fn = tol.test.split("::")
        src = inspect.getsource(getattr(importlib.import_module("analysis.tests." + mod), fn))
        assert tol.counter.split(".")[-1] in src, (tol.name, tol.test)


def test_emission_listed_before_its_store_waits_for_it(tmp_path):
    """CPU 1's clock runs 1.5 ms behind: the store of s1 is listed after
    the printer thread's emission and commit of it.  The emission waits
    for the store of its seq."""
    def trace(lag):
        t, T, s = base(1)
        t.acquire(T)
        t.print_rec(T, s[0])
        t0 = t.t
        t.texts[s[0] + 1] = pstress(1, "task", 1, "p1")
        t.emit(T, s[0] + 1)
        t.line(s[0] + 1, "T")
        t.commit(T, s[0] + 1)
        t.release(T)
        t.store(t.texts[s[0] + 1], seq=s[0] + 1, ts=t0 + lag)
        t.listed_by_time()
        return t
    v = run(tmp_path / "wait", trace(0.0015))
    assert (v["verdict"], violated(v)) == ("pass", set()), v["violations"]
    assert v["counts"]["held_for_store"] == 1


def late_store_trace(lag, shown=None):
    """The printer thread prints s0, then seq q (a kernel record, no
    stressor crc of its own) and q + 1; the store of q is on CPU 1 whose
    clock runs `lag` behind: it is listed after all of them.  The serial
    log shows q as `shown` (default: right)."""
    t, T, s = base(1)
    t.acquire(T)
    t.print_rec(T, s[0])
    t0 = t.t
    q = s[0] + 1
    t.texts[q] = "kernel record whose store is listed late"
    t.texts[q + 1] = pstress(1, "task", 1, "p1")
    t.store(t.texts[q + 1], seq=q + 1)
    t.emit(T, q)
    t.line(q, "T", text=shown)
    t.commit(T, q)
    t.print_rec(T, q + 1)
    t.release(T)
    t.store(t.texts[q], seq=q, ts=t0 + lag)
    t.listed_by_time()
    return t


@pytest.mark.parametrize("lag", [0.005, 0.3])
def test_emission_waits_for_the_store_of_its_seq_however_late(tmp_path, lag):
    """The emission of q proves the store of q came before it (the kernel
    stores a record before any console can read it), so it waits for
    that store however late it is listed, not for a time: its serial
    line is compared with the stored text.  A wrong line is caught (it
    used to pass unchecked once the store was listed more than 2 ms
    late), and the right one is checked, not taken on trust."""
    v = run(tmp_path / "wrong", late_store_trace(lag, shown="kernel record whose store is "
                                                              "listed LATE"))
    assert (v["verdict"], v["serial"]["unchecked_text"]) == ("fail", 0), v["serial"]
    assert violated(v) & {"serial-corrupt", "serial-missing"}, v["violations"]
    v = run(tmp_path / "right", late_store_trace(lag))
    assert (v["verdict"], violated(v)) == ("pass", set()), v["violations"]
    assert v["counts"]["held_for_store"] == 1
    assert v["serial"]["unchecked_text"] == 0


def test_more_events_held_than_held_max_is_never_a_silent_pass(tmp_path, monkeypatch):
    """The hold is bounded: beyond HELD_MAX events waiting, the first
    goes on without its store (as for a record stored before the trace
    began, which has none).  Its store listed after that is incomplete
    input, wrong line or right, never a pass without the comparison."""
    from analysis import checker
    monkeypatch.setattr(checker, "HELD_MAX", 2)
    for name, shown in (("right", None), ("wrong", "kernel record whose store is listed LATE")):
        v = run(tmp_path / name, late_store_trace(0.005, shown))
        assert v["verdict"] == "incomplete", (name, v["reasons"])
        assert v["counts"]["store_wait_overflow"] == 1
        assert v["trace"]["stores_listed_after_use"] == 1
        assert v["reasons"][0].startswith("1 nobkl_store event(s) listed after an emission or "
                                          "commit of their record had gone on without them"), \
            v["reasons"]


def test_record_from_before_the_trace_goes_on_after_held_max(tmp_path, monkeypatch):
    """A record stored before the trace began never gets its store: the
    console's events wait behind its emission until the trace ends, or
    until more than HELD_MAX wait; either way the run is judged as
    without the bound."""
    from analysis import checker
    t = busy_with_a_record_from_before_the_trace()
    for held_max in (checker.HELD_MAX, 2):
        monkeypatch.setattr(checker, "HELD_MAX", held_max)
        v = run(tmp_path / str(held_max), t)
        assert (v["verdict"], violated(v)) == ("pass", set()), v["reasons"]
        assert v["counts"]["store_wait_overflow"] == (held_max == 2)
        assert v["serial"]["unchecked_text"] == 0


def test_rule_table_names_where_each_rule_is_raised():
    """analysis/rules.py: every function a rule names raises it (reports
    it through violate(), or returns a Violation of it), and no
    other function of the stages (the modules that define units, the
    model, the serial alignment) raises any rule."""
    import ast
    import importlib
    import inspect
    import re
    from analysis.rules import RULE_TABLE, UNIT_MODULES
    raised = {}
    stages = ("checker", "serialcheck") + tuple(m for m in UNIT_MODULES
                                                if m not in ("checker", "serialcheck"))
    for mod in (importlib.import_module("analysis." + m) for m in stages):
        src = inspect.getsource(mod)
        tree = ast.parse(src)
        for fn in tree.body:
            if isinstance(fn, ast.FunctionDef):
                seg = ast.get_source_segment(src, fn)
                for m in re.finditer(r'"([a-z]+(?:-[a-z]+)*)"', seg):
                    said = seg.replace('"', "'")
                    if m.group(1) in RULE_IDS and ("violate(%r" % m.group(1) in said or
                                                   "Violation(%r" % m.group(1) in said):
                        raised.setdefault(m.group(1), set()).add(
                            "%s.%s" % (mod.__name__.split(".")[-1], fn.name))
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                for fn in node.body:
                    if isinstance(fn, ast.FunctionDef):
                        seg = ast.get_source_segment(src, fn)
                        for m in re.finditer(r'"([a-z]+(?:-[a-z]+)*)"', seg):
                            if m.group(1) in RULE_IDS:
                                raised.setdefault(m.group(1), set()).add(
                                    "%s.%s.%s" % (mod.__name__.split(".")[-1], node.name,
                                                  fn.name))
    for r in RULE_TABLE:
        assert set(r.checked_by) == raised.get(r.id, set()), r.id


def test_docs_list_every_rule_and_tolerance():
    import os
    from analysis.rules import RULE_TABLE
    from analysis.tolerances import TOLERANCES
    doc = open(os.path.join(os.path.dirname(__file__), "..", "..", "docs",
                            "analysis.md")).read()
    for r in RULE_TABLE:
        assert "| `%s` |" % r.id in doc, r.id
    for t in TOLERANCES:
        assert "| `%s` | `%s` | %s | `%s` |" % (t.name, t.rule, t.order, t.counter) in doc, t.name


def test_trace_rule_units_have_their_invariant_as_docstring():
    from analysis import trace_rules
    from analysis.rules import RULES
    for rule, units in trace_rules.UNITS.items():
        assert rule in RULES
        for u in units:
            assert u.__doc__ and len(u.__doc__.split()) > 6, u.__name__
            assert "trace_rules." + u.__name__ in dict(
                (r.id, r.checked_by) for r in __import__("analysis.rules").rules.RULE_TABLE)[rule]


def stray_on_its_own_line(tmp_path, unsafe=1, stray="A", after_lost=False):
    """Seen on a seed-demo run (scenarios helper's results, serial line
    605): an emergency hardirq on CPU 3 began seq 613 and was descheduled
    inside the unsafe section of its first byte; a panic context on CPU 2
    waited 2 ms, took over (prev_unsafe=1), printed 613 and 614; then
    CPU 3 wrote its byte, `A` (the line's context mark), on a line of its
    own, and traced nobkl_lost at exit_unsafe.  `after_lost`: the line
    comes after a record the panic context emitted once the victim had
    noticed its loss (its byte was written before that)."""
    t = Trace()
    E = t.ctx(3, prio="emergency", ctx="hardirq")
    P = t.ctx(2, prio="panic", ctx="hardirq")
    s = [t.store(pstress(3, "hardirq", i, "p%d" % i), cpu=3) for i in range(5)]
    t.acquire(E)
    t.print_rec(E, s[0])
    t.emit(E, s[1])
    t.take_over(P, E, [s[1], s[2]], unsafe=unsafe)
    if not after_lost:
        t.serial.append(stray)
    t.lost(E, "exit_unsafe", owner=None)
    t.acquire(P)
    t.print_rec(P, s[3])
    if after_lost:
        t.serial.append(stray)
    t.print_rec(P, s[4])
    t.release(P)
    return run(tmp_path, t)


def test_stray_byte_of_unsafe_victim_on_a_line_of_its_own(tmp_path):
    """The documented last resort of panic output, like a stray byte
    inside the taker's line: it passes, counted.  Before: serial-partial,
    'partial line before seq 13 but the trace shows no (further) lost
    ownership before it' (the matcher expected the victim's cut line
    before the taker's reprint)."""
    v = stray_on_its_own_line(tmp_path)
    assert (v["verdict"], violated(v)) == ("pass", set()), v["violations"]
    assert v["serial"]["stray_after_unsafe_takeover"] == 1
    assert v["serial"]["partial_lines"] == 0


@pytest.mark.parametrize("kw", [
    {"unsafe": 0},               # the owner was not inside an unsafe section
    {"stray": "A["},             # more than the one byte of its section
    {"after_lost": True},        # after a line emitted once the victim noticed
], ids=["safe-takeover", "two-bytes", "after-the-loss"])
def test_line_of_its_own_without_unsafe_victim_is_partial(tmp_path, kw):
    v = stray_on_its_own_line(tmp_path, **kw)
    assert violated(v) == {"serial-partial"}, v["violations"]
    assert v["serial"].get("stray_after_unsafe_takeover", 0) == 0
