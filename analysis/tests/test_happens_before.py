"""Whether a violation of an incomplete trace is the kernel's (`genuine`:
the verdict `fail`, else `incomplete`) by the order the trace proves,
not by the CPUs' clocks: happens_before.py, checker.Analyzer.genuine().

Each trace is built in causal order (tracebuilder's `chain=True`), one
CPU's clock off by `lag` seconds, and listed by timestamp as trace-cmd
lists it; a drop marker is listed where trace-cmd puts it, before its
CPU's first event after the gap.  The violation is a record printed
twice (`duplicate`)."""

from analysis.happens_before import before
from analysis.ordering import CausalOrder
from analysis.tests.tracebuilder import clean_trace
from analysis.traceparse import Event, parse_lines


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
