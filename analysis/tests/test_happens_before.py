"""Whether a violation of an incomplete trace is the kernel's (`genuine`:
the verdict `fail`, else `incomplete`) by the order the trace proves,
not by the CPUs' clocks: happens_before.py, checker.Analyzer.genuine().

Each trace is built in causal order (tracebuilder's `chain=True`), one
CPU's clock off by `lag` seconds, and listed by timestamp as trace-cmd
lists it; a drop marker is listed where trace-cmd puts it, before its
CPU's first event after the gap.  The violation is a record printed
twice (`duplicate`)."""

import re

import pytest

from analysis import api
from analysis.happens_before import before
from analysis.ordering import CausalOrder
from analysis.tests.tracebuilder import Trace, clean_trace, pstress
from analysis.tests.verdicts import violated
from analysis.traceparse import Event, parse_lines


def run(tmp_path, t, **kw):
    v = api.check_results(t.write(tmp_path), no_serial=True, **kw)
    if kw.get("order") is None:
        assert (v["ordering"]["mode"], v["ordering"]["break_count"]) == ("chain", 0)
    return v


def cpu_ts(line):
    m = re.search(r"\[(\d{3})\]\s+([\d.]+):", line)
    return (int(m.group(1)), float(m.group(2))) if m else (None, None)


def drop_after(t, cpu, cut, n=5):
    """A drop marker of `cpu`: its events after timestamp `cut` follow a gap."""
    i = next(i for i, ln in enumerate(t.lines) if cpu_ts(ln)[0] == cpu and cpu_ts(ln)[1] > cut)
    t.lines.insert(i, "CPU:%d [%d EVENTS DROPPED]" % (cpu, n))


def printed_twice_then_taken(lag, chain=True, nmi_first=False, records=3, cpu1_stores=()):
    """CPU 1 (its clock `lag` s off) prints a record twice and releases;
    CPU 0's printer thread takes the console after it and prints the
    others.  `nmi_first`: an NMI of CPU 0 printed the first record before
    all that.  Returns (trace, the causal timestamp of CPU 0's release)."""
    t = Trace(chain=chain)
    E = t.ctx(1, prio="emergency")
    T = t.ctx(0, thread=1)
    N = t.ctx(0, prio="emergency", ctx="nmi")
    s = [t.store(pstress(2, "task", n, "payload%d" % n), cpu=1 if n in cpu1_stores else 2)
         for n in range(records + nmi_first)]
    t0 = t.t
    if nmi_first:
        t.t = t0 - 0.1
        t.acquire(N)
        t.print_rec(N, s.pop(0))
        t.release(N)
    t.t = t0 + lag
    t.acquire(E)
    t.print_rec(E, s[0])
    t.emit(E, s[0], serial=False)
    t.release(E)
    t.t = t0 + 0.01
    t.acquire(T)
    for q in s[1:]:
        t.print_rec(T, q)
    t.release(T)
    return t, t.t


def loss_after(lag, **kw):
    """printed_twice_then_taken(), and CPU 0 loses events after its
    release (0.5 s later it prints again)."""
    t, cut = printed_twice_then_taken(lag, records=2, **kw)
    T = t.ctx(0, thread=1)
    t.t = cut + 0.5
    q = t.store(pstress(2, "task", 9, "later"), cpu=2)
    t.acquire(T)
    t.print_rec(T, q)
    t.release(T)
    t.listed_by_time()
    drop_after(t, 0, cut)
    return t


def loss_before(lag, chain=True):
    """CPU 0's printer thread prints a record and releases, then loses
    events; CPU 1 (its clock `lag` s off) takes the console after that
    release and prints a record twice."""
    t = Trace(chain=chain)
    E = t.ctx(1, prio="emergency")
    T = t.ctx(0, thread=1)
    s = [t.store(pstress(2, "task", n, "payload%d" % n), cpu=2) for n in range(3)]
    t0 = t.t
    t.acquire(T)
    t.print_rec(T, s[0])
    t.release(T)
    cut = t.t
    t.t = t0 + lag
    t.acquire(E)
    t.print_rec(E, s[1])
    t.emit(E, s[1], serial=False)
    t.release(E)
    t.t = t0 + 0.5
    t.acquire(T)
    t.print_rec(T, s[2])
    t.release(T)
    t.listed_by_time()
    drop_after(t, 0, cut)
    return t


def stamped(t):
    """The events the ordering stage passes on for trace t, with their
    happens-before stamps."""
    out, stamps = [], {}
    order = CausalOrder(out.append, stamps=stamps)
    for item in parse_lines(t.report().splitlines(True)):
        order.feed(item)
    order.finish()
    return [(e, stamps.get(e.lineno)) for e in out
            if isinstance(e, Event) and e.name != "nobkl_store"]


def test_stamps_order_only_what_the_streams_and_the_chain_prove():
    """In the clean run the NMI of CPU 0 takes the console from the
    printer thread of CPU 0 inside a record; the thread then traces its
    loss, no transition.  Its loss follows the thread's earlier events
    and precedes its next acquire, and the NMI's takeover follows the
    thread's last transition; but nothing orders the loss and the NMI's
    events after the takeover, whatever their listing."""
    t, _ = clean_trace(chain=True)
    t.listed_by_time()
    evs = stamped(t)
    assert all(st is not None for _, st in evs)

    def find(name, cpu, ctx, nth=0):
        return [st for e, st in evs if (e.name, e.cpu, e.fields.get("ctx")) ==
                (name, cpu, ctx)][nth]

    lost = find("nobkl_lost", 0, "task")
    take = find("nobkl_acquire", 0, "nmi")
    nmi_release = find("nobkl_release", 0, "nmi")
    thread_acquires = [st for e, st in evs if e.name == "nobkl_acquire" and
                       e.fields.get("thread") == "1"]
    assert before(thread_acquires[0][1], take[1]) and before(take[1], nmi_release[1])
    assert before(thread_acquires[0][1], lost[1]) and before(lost[1], thread_acquires[1][1])
    assert not before(lost[1], nmi_release[1]) and not before(nmi_release[1], lost[1])
    assert not before(take[1], lost[1])
    # stamps of one stream count its events, in order
    own = [st[1][st[0]] for e, st in evs if (e.cpu, e.fields.get("ctx"),
                                               e.fields.get("thread")) == (0, "task", "1")]
    assert own == list(range(1, len(own) + 1))


@pytest.mark.parametrize("lag", [0.3, -0.01])
def test_a_violation_before_the_loss_by_the_chain_fails_whatever_the_clocks(tmp_path, lag):
    """CPU 1's duplicate comes before CPU 0's takeover in the chain, and so
    before every event CPU 0 loses after it: the kernel's, `fail`, with
    CPU 1's clock 0.3 s ahead too.  Before, the violation's timestamp
    after CPU 0's last one before the loss made it `incomplete`."""
    v = run(tmp_path, loss_after(lag))
    assert (v["verdict"], violated(v), v["trace"]["drop_markers"]) == ("fail", {"duplicate"}, 1)
    assert (v["violations"][0]["ts"] > v["trace"]["loss_starts_at_ts"]) == (lag > 0)


@pytest.mark.parametrize("lag", [-0.3, 0.02])
def test_a_violation_after_the_loss_by_the_chain_is_incomplete_whatever_the_clocks(
        tmp_path, lag):
    """CPU 1 takes the console after CPU 0's release, the last event of
    CPU 0 before its loss: what CPU 0 lost may come before the duplicate,
    so it is not proven the kernel's, `incomplete`, with CPU 1's clock
    0.3 s behind too.  Before, a timestamp before CPU 0's last one made
    it `fail`."""
    v = run(tmp_path, loss_before(lag))
    assert (v["verdict"], violated(v), v["trace"]["drop_markers"]) == (
        "incomplete", {"duplicate"}, 1)
    assert (v["violations"][0]["ts"] < v["trace"]["loss_starts_at_ts"]) == (lag < 0)


@pytest.mark.parametrize("lag", [-0.01, 0.3])
def test_the_events_a_cpu_loses_may_be_of_any_of_its_streams(tmp_path, lag):
    """As in the first case, but an NMI of CPU 0 printed a record before
    everything else: the events CPU 0 lost may be that NMI's, after its
    last event (its release), which nothing orders after CPU 1's
    duplicate, so `incomplete`.  Before, the duplicate's timestamp before
    CPU 0's last one made it `fail`."""
    v = run(tmp_path, loss_after(lag, nmi_first=True))
    assert (v["verdict"], violated(v)) == ("incomplete", {"duplicate"})


def damaged_acquire(lag):
    """printed_twice_then_taken(), and CPU 0's printer thread acquires
    again at once, a record whose `how` is damaged."""
    t, _ = printed_twice_then_taken(lag, records=2)
    T = t.ctx(0, thread=1)
    q = t.store(pstress(2, "task", 9, "later"), cpu=2)
    t.acquire(T)
    t.lines[-1] = t.lines[-1].replace("how=direct", "how=bogus")
    t.print_rec(T, q)
    t.release(T)
    t.listed_by_time()
    return t


@pytest.mark.parametrize("lag", [0.3, -0.01])
def test_a_damaged_event_is_a_loss_after_the_events_of_its_cpu_before_it(tmp_path, lag):
    """The damaged acquire of CPU 0 comes after its release in the chain,
    which comes after CPU 1's duplicate: the kernel's, `fail`.  Before,
    with CPU 1's clock 0.3 s ahead the duplicate's timestamp was after
    the damaged event's: `incomplete`."""
    v = run(tmp_path, damaged_acquire(lag))
    assert (v["verdict"], violated(v), v["trace"]["bad_field_events"]) == (
        "fail", {"duplicate"}, 1)


def owner_named_after_damage(lag):
    """CPU 0's printer thread prints a record and, 0.05 s later, prints it
    again; its release 0.05 s after that is damaged (handover=2).  CPU 1
    (its clock `lag` s behind) takes the console after that release and
    traces a loss naming an owner the trace never shows (cpu2/panic)."""
    t = Trace(chain=True)
    T = t.ctx(0, thread=1)
    E = t.ctx(1, prio="emergency")
    s = [t.store(pstress(2, "task", n, "payload%d" % n), cpu=2) for n in range(2)]
    t0 = t.t
    t.acquire(T)
    t.print_rec(T, s[0])
    t.t = t0 + 0.05
    t.emit(T, s[0], serial=False)
    t.t = t0 + 0.1
    t.release(T)
    t.lines[-1] = t.lines[-1].replace("handover=0", "handover=2")
    t.t = t0 + 0.1 - lag
    t.acquire(E)
    t.emit(E, s[1])
    t.lost(E, "seq", owner=t.ctx(2, prio="panic"))
    t.listed_by_time()
    return t


@pytest.mark.parametrize("lag", [0.08, 0.0])
def test_an_owner_named_after_a_loss_by_the_chain_is_not_judged(tmp_path, lag):
    """CPU 1's loss comes after CPU 0's damaged release in the chain: the
    owner it names may be one whose acquire that damage hid, so the name
    is not judged (owner_unexplained()), and the duplicate before the
    damage stays the kernel's.  Before, with CPU 1's clock 0.08 s behind,
    the loss's timestamp was before the damaged release's: its name was
    judged damage, which placed the trace loss before the duplicate's
    timestamp, `incomplete`."""
    v = run(tmp_path, owner_named_after_damage(lag))
    assert (v["verdict"], violated(v), v["trace"]["bad_field_events"]) == (
        "fail", {"duplicate"}, 1)


@pytest.mark.parametrize("lag", [-0.01, 0.3])
def test_a_missing_store_has_no_place_in_the_order(tmp_path, lag):
    """The store of one of the records CPU 0 prints is not in the trace
    (36 records stored below it, the console printed it): the store
    fired somewhere before the record was printed, nothing tells after
    what, so no violation is proven before it, `incomplete`.  Before,
    the duplicate's timestamp before that of the store that opened the
    hole made it `fail`."""
    t, _ = printed_twice_then_taken(lag, records=41, cpu1_stores=(40,))
    t.listed_by_time()
    hole = 10 + 36
    t.lines = [ln for ln in t.lines
               if not ("nobkl_store:" in ln and " seq=%d " % hole in ln)]
    v = run(tmp_path, t)
    assert (v["verdict"], violated(v), v["trace"]["missing_store_seqs"]) == (
        "incomplete", {"duplicate"}, [hole])


@pytest.mark.parametrize("trace,lag,want", [(loss_after, -0.01, "fail"),
                                             (loss_before, 0.02, "incomplete")])
def test_without_the_chain_the_clocks_decide_when_asked(tmp_path, trace, lag, want):
    """A trace without the state words judged by the clocks on request
    (order=timestamps) has no other order: the duplicate is the kernel's
    when its timestamp is before CPU 0's last one before the loss (the
    clocks here list the events in causal order)."""
    v = run(tmp_path, trace(lag, chain=False), order="timestamps")
    assert (v["ordering"]["mode"], v["verdict"], violated(v)) == (
        "timestamps", want, {"duplicate"})
