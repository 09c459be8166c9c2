"""The nbcon model (model_nbcon.py) and its rules on synthetic 6.12
traces: what mainline does is no violation, and each rule that differs
from the RFC's is raised exactly.  And a 6.1 trace's verdict stays the
RFC model's."""

import pytest

from analysis import api
from analysis.rules import NBCON_612, RFC_61, RULE_TABLE, rules_of
from analysis.tests.nbcon_trace import NbconTrace
from analysis.tests.recorded import copy_recorded
from analysis.tests.verdicts import check_results

KTHREAD = (1, "task", "normal")      # the printer thread pr/ttyS0 on CPU 1
EMERG = (2, "task", "emergency")
PANIC = (3, "nmi", "panic")


def judge(t, tmp_path):
    v, _ = api.analyse(t.write(str(tmp_path / "run")), no_serial=True)
    return v, {r for r, n in v["violations_by_rule"].items() if n}


def stored(n):
    t = NbconTrace()
    for s in range(1, n + 1):
        t.store(0, s, "record %d" % s)
    return t


def kthread_prints(t, *seqs):
    t.acquire(*KTHREAD, thread=1)
    for s in seqs:
        t.print_record(*KTHREAD, s, thread=1)
    t.release(*KTHREAD, thread=1)


def emergency_takes_kthread_mid_record(t, replay=1):
    """The emergency context takes the safe printer thread in the middle of
    seq 2 (hostile, prev_unsafe=0), the thread notices, the taker replays."""
    t.acquire(*KTHREAD, thread=1)
    t.print_record(*KTHREAD, 1, thread=1)
    t.emit(*KTHREAD, 2, thread=1)
    t.acquire(*EMERG)
    t.lost(*KTHREAD, thread=1)
    t.print_record(*EMERG, 2, replay=replay)
    t.print_record(*EMERG, 3)
    t.release(*EMERG)


def test_a_kthread_printing_records_passes(tmp_path):
    t = stored(3)
    kthread_prints(t, 1, 2)
    kthread_prints(t, 3)
    v, bad = judge(t, tmp_path)
    assert v["verdict"] == "pass" and bad == set()
    assert v["inputs"]["target"] == "6.12"
    assert set(v["violations_by_rule"]) == set(rules_of(NBCON_612))
    assert v["counts"]["commits"] == 3 and v["ordering"]["break_count"] == 0


def test_emergency_takes_the_kthread_safely_and_replays(tmp_path):
    t = stored(3)
    emergency_takes_kthread_mid_record(t)
    v, bad = judge(t, tmp_path)
    assert v["verdict"] == "pass" and bad == set()
    c = v["counts"]
    assert (c["hostile_safe"], c["replays"], c["reprints"]) == (1, 1, 1)
    assert c["takeovers"]["hostile_while_unsafe"] == 0
    assert c["lost"] == {"can_proceed": 1}


def _thread_hands_seq_2_over(emitted):
    """The thread prints seq 1, (emitted: emits seq 2,) and releases for
    the waiter on CPU 2 that requested; the waiter acquires
    how=handover, prints seq 2 with the replay marker, and seq 3."""
    t = stored(3)
    t.acquire(*KTHREAD, thread=1)
    t.print_record(*KTHREAD, 1, thread=1)
    if emitted:
        t.emit(*KTHREAD, 2, thread=1)
    t.request(*EMERG)
    t.release(*KTHREAD, thread=1)
    t.acquire(*EMERG, how="handover")
    t.print_record(*EMERG, 2, replay=1)
    t.print_record(*EMERG, 3)
    t.release(*EMERG)
    return t


def test_a_handover_from_an_unsafe_owner(tmp_path):
    """The waiter on CPU 2 requests, the thread releases in the middle of
    seq 2 for it (handover=1), the waiter acquires how=handover and
    replays the record."""
    v, bad = judge(_thread_hands_seq_2_over(emitted=True), tmp_path)
    assert v["verdict"] == "pass" and bad == set()
    c = v["counts"]
    assert (c["takeovers"]["handover"], c["handovers"]["grants"], c["replays"]) == (1, 1, 1)


def test_a_handover_before_the_owners_emission_may_leave_a_replay(tmp_path):
    """The thread acquires for seq 2 and notes it as its record
    (nbcon_prev_seq) in the unsafe section that prepares it; at the end
    of that section it finds the request and releases for it, before its
    emission is traced. The waiter's emission of seq 2 then carries the
    replay marker though the trace shows no emission of it before: the
    marker is right (seen on a real run: a hardirq's emergency section
    against the printer thread, 115200 baud)."""
    v, bad = judge(_thread_hands_seq_2_over(emitted=False), tmp_path)
    assert v["verdict"] == "pass" and bad == set()


def test_a_waiter_that_times_out_then_acquires_directly(tmp_path):
    t = stored(3)
    t.acquire(*KTHREAD, thread=1)
    t.emit(*KTHREAD, 1, thread=1)
    t.request(*EMERG)
    t.timeout(*EMERG)
    t.commit(*KTHREAD, 1, thread=1)
    t.release(*KTHREAD, thread=1)
    t.acquire(*EMERG)
    t.print_record(*EMERG, 2)
    t.print_record(*EMERG, 3)
    t.release(*EMERG)
    v, bad = judge(t, tmp_path)
    assert v["verdict"] == "pass" and bad == set()
    assert v["counts"]["handovers"]["timeouts"] == 1


def test_the_panic_flush_takes_an_unsafe_owner(tmp_path):
    """The final flush of a panic takes the emergency owner inside its
    unsafe section (hostile, prev_unsafe=1): the sticky mark is set, and
    every later acquire carries it."""
    t = stored(3)
    t.acquire(*EMERG)
    t.print_record(*EMERG, 1)
    t.emit(*EMERG, 2)
    t.acquire(*PANIC, prev_unsafe=1)
    t.print_record(*PANIC, 2, replay=1)
    t.print_record(*PANIC, 3)
    t.release(*PANIC)
    t.acquire(*PANIC)
    t.release(*PANIC)
    v, bad = judge(t, tmp_path)
    assert v["verdict"] == "pass" and bad == set()
    assert "unsafe_takeover=1" in t.lines[-2]


def request_of_free_console(t):
    kthread_prints(t, 1)
    t.request(*EMERG)


def request_of_own_cpu(t):
    t.acquire(*KTHREAD, thread=1)
    t.emit(*KTHREAD, 1, thread=1)
    t.request(1, "hardirq", "emergency")


def request_of_higher_prio(t):
    t.acquire(*PANIC)
    t.emit(*PANIC, 1)
    t.request(*EMERG)


def unsafe_takeover_outside_panic(t):
    t.acquire(*KTHREAD, thread=1)
    t.emit(*KTHREAD, 1, thread=1)
    t.acquire(*EMERG, prev_unsafe=1)
    t.print_record(*EMERG, 1, replay=1)


def replay_without_loss(t):
    kthread_prints(t, 1)
    t.acquire(*EMERG)
    t.print_record(*EMERG, 2, replay=1)


def replay_missing(t):
    emergency_takes_kthread_mid_record(t, replay=0)


def safe_takeover_by_equal_prio(t):
    t.acquire(*KTHREAD, thread=1)
    t.emit(*KTHREAD, 1, thread=1)
    t.acquire(2, "task", "normal")
    t.print_record(2, "task", "normal", 1, replay=1)


@pytest.mark.parametrize("scenario, rules", [
    (request_of_free_console, {"handover-request"}),
    (request_of_own_cpu, {"handover-request"}),
    (request_of_higher_prio, {"handover-request"}),
    (unsafe_takeover_outside_panic, {"unsafe-takeover"}),
    (replay_without_loss, {"replay"}),
    (replay_missing, {"replay"}),
    (safe_takeover_by_equal_prio, {"takeover-prio"}),
])
def test_each_nbcon_violation_is_raised_exactly(tmp_path, scenario, rules):
    t = stored(3)
    scenario(t)
    v, bad = judge(t, tmp_path)
    assert bad == rules
    assert v["verdict"] == "fail"


def test_which_rules_apply_to_which_model():
    nbcon_only = {r.id for r in RULE_TABLE if r.models == (NBCON_612,)}
    assert nbcon_only == {"handover-request", "replay"}
    # the serial log is checked end to end on both (test_serial612.py)
    assert "serial-missing" in rules_of(NBCON_612) and "producer-gap" in rules_of(NBCON_612)
    assert not nbcon_only & set(rules_of(RFC_61))


def test_a_61_trace_is_still_judged_by_the_rfc_model(tmp_path):
    """The recorded 6.1 run: the RFC model, its rules only, the chain
    order, and its verdict as before the 6.12 target (pass)."""
    d = copy_recorded(tmp_path)
    (d / "source.json").write_text('{"target": "6.1"}\n')
    v = check_results(str(d))
    assert v["verdict"] == "pass" and v["violation_count"] == 0
    assert v["inputs"]["target"] == "6.1"
    assert list(v["violations_by_rule"]) == list(rules_of(RFC_61))
    assert v["ordering"]["mode"] != "nbcon-link"


def every_change_of_owner(first_format):
    """A waiter times out on the printing thread, an emergency context
    takes the safe thread over and replays its record, the panic flush
    takes the emergency owner inside an unsafe section."""
    t = NbconTrace(first_format=first_format)
    for s in range(1, 6):
        t.store(0, s, "record %d" % s)
    t.acquire(*KTHREAD, thread=1)
    t.emit(*KTHREAD, 1, thread=1)
    t.request(*EMERG)
    t.timeout(*EMERG, waited_us=1500)
    t.commit(*KTHREAD, 1, thread=1)
    t.emit(*KTHREAD, 2, thread=1)
    t.acquire(*EMERG)
    t.lost(*KTHREAD, thread=1)
    t.print_record(*EMERG, 2, replay=1)
    t.print_record(*EMERG, 3)
    t.emit(*EMERG, 4)
    t.acquire(*PANIC, prev_unsafe=1)
    t.print_record(*PANIC, 4, replay=1)
    t.print_record(*PANIC, 5)
    t.release(*PANIC)
    return t


def test_both_formats_of_the_series_give_one_verdict(tmp_path):
    """The first version of the series printed a safe owner's takeover
    how=hostile and a timeout's passes as waited_us; the current one
    how=takeover and waited_ns: the verdict is the same."""
    verdicts = []
    for first_format in (True, False):
        t = every_change_of_owner(first_format)
        v, _ = api.analyse(t.write(str(tmp_path / "run")), no_serial=True)
        v.pop("analysis_seconds", None)
        verdicts.append(v)
    first, current = verdicts
    assert first["verdict"] == "pass" and first["violation_count"] == 0
    c = first["counts"]
    assert (c["hostile_safe"], c["takeovers"]["hostile_while_unsafe"],
            c["handovers"]["timeouts"]) == (1, 1, 1)
    assert first["latency"]["handover_timeout_waited"]["max"] == 1500
    assert first == current


def _thread_reacquires_after_takeover(then_emits):
    """The emergency context takes the thread over in seq 2 and prints 2
    (replayed) and 3; the thread, its hardware to restore, takes the
    console back with nbcon_reacquire_nobuf() (reacquire=1) and, when
    then_emits, emits seq 4 with it."""
    t = stored(4)
    emergency_takes_kthread_mid_record(t)
    t.acquire(*KTHREAD, thread=1, reacquire=1)
    if then_emits:
        t.print_record(*KTHREAD, 4, thread=1)
    t.release(*KTHREAD, thread=1)
    return t


def test_a_driver_that_reacquires_to_restore_its_port_passes(tmp_path):
    v, bad = judge(_thread_reacquires_after_takeover(False), tmp_path)
    assert v["verdict"] == "pass" and bad == set()
    assert v["counts"]["reacquires"] == 1 and v["counts"]["device_acquires"] == 0


def test_a_reacquiring_owner_that_emits_is_a_violation(tmp_path):
    v, bad = judge(_thread_reacquires_after_takeover(True), tmp_path)
    assert v["verdict"] == "fail"
    assert bad == {"one-owner"}, bad
    assert [x["message"].split(" by cpu")[0] for x in v["violations"]] == [
        "emission of seq 4 by a reacquiring owner"], v["violations"]
