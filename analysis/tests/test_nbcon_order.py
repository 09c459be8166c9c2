"""The 6.12 linker (nbcon_order.py): console events in state-word order,
program order per stream, seq order between candidates, timestamps only
as the counted last resort, and a break where nothing links."""

import io

from analysis.nbcon_order import NbconOrder
from analysis.tests.nbcon_trace import NbconTrace
from analysis.traceparse import Event, ReportStats, parse_lines


def linked(lines):
    out = []
    order = NbconOrder(out.append)
    for item in parse_lines(io.StringIO("\n".join(lines) + "\n"), ReportStats()):
        order.feed(item)
    order.finish()
    return [(e.cpu, e.name[6:], e.fields.get("seq")) for e in out if isinstance(e, Event)
            and e.name != "nobkl_store"], order


def test_a_release_listed_after_the_next_acquire_is_linked_before_it():
    t = NbconTrace()
    t.acquire(1, "task", "normal", thread=1)
    t.print_record(1, "task", "normal", 1, thread=1)
    t.release(1, "task", "normal", thread=1)
    t.acquire(2, "hardirq", "emergency")
    t.print_record(2, "hardirq", "emergency", 2)
    t.release(2, "hardirq", "emergency")
    lines = t.lines
    # CPU 1's release is listed last (its clock lags)
    lines = lines[:4] + lines[5:] + [lines[4]]
    got, order = linked(lines)
    assert got == [(1, "acquire", None), (1, "emit", "1"), (1, "commit", "1"),
                   (1, "release", None), (2, "acquire", None), (2, "emit", "2"),
                   (2, "commit", "2"), (2, "release", None)]
    assert order.counts["ts_decided"] == 0 and not order.breaks


def kthread_between(t, first, second):
    """The kthread on CPU 1 frees the console, `first` takes it, the
    kthread takes it back and frees it again, `second` takes it: both
    acquire from the same word {cpu1 free}."""
    t.acquire(1, "task", "normal", thread=1)
    t.release(1, "task", "normal", thread=1)
    first(t)
    t.acquire(1, "task", "normal", thread=1)
    t.release(1, "task", "normal", thread=1)
    second(t)


def emergency_record(cpu, ctx, seq, device=0):
    def run(t):
        t.acquire(cpu, ctx, "emergency", device=device)
        if seq is not None:
            t.print_record(cpu, ctx, "emergency", seq)
        t.release(cpu, ctx, "emergency")
    return run


def test_seq_order_decides_between_acquires_of_the_same_word():
    """CPUs 2 and 3 both acquire from {cpu1 free}: the one whose record
    comes first in seq order goes first, whatever the clocks say."""
    t = NbconTrace()
    kthread_between(t, emergency_record(2, "task", 7), emergency_record(3, "task", 8))
    lines = t.lines
    # listed: CPU 3's ownership (lines 9-12) before CPU 2's (3-6)
    lines = lines[:3] + lines[9:] + lines[7:9] + lines[3:7]
    got, order = linked(lines)
    assert [s for _, n, s in got if n == "commit"] == ["7", "8"]
    assert order.counts["ts_decided"] == 0 and not order.breaks


def test_an_order_only_the_clocks_decide_is_counted_not_judged():
    """Two contexts of CPU 2 (task, hardirq) install the same words: which
    of them the kthread's acquire from {cpu2 free} followed only the
    clocks tell (they print nothing: device acquires)."""
    t = NbconTrace()
    kthread_between(t, emergency_record(2, "task", None, device=1),
                    emergency_record(2, "hardirq", None, device=1))
    got, order = linked(t.lines)
    assert order.counts["ts_decided"] >= 1 and not order.breaks
    assert order.incomplete_reasons() == []
    assert len(got) == 8


def test_a_transition_that_links_to_nothing_is_a_break():
    t = NbconTrace()
    t.acquire(1, "task", "normal", thread=1)
    t.release(1, "task", "normal", thread=1)
    t.word = 12345 << 6               # a word no traced transition installed
    t.acquire(2, "task", "emergency")
    got, order = linked(t.lines)
    assert len(order.breaks) == 1
    assert "links to no state" in order.incomplete_reasons()[0]
    assert len(got) == 3


def test_a_choice_the_words_relink_is_taken_back_by_seq_order():
    """The 6.12 backlog run: CPU 3's emergency contexts install {cpu3
    free} again and again.  From the first such word the kthread (no
    record) and CPU 2 (record 12) may both acquire; CPU 2 ranks first by
    its seq, and the words still link to the end (CPU 3's hardirq frees
    the console into {cpu3 free} again for the kthread), but CPU 3's
    task commits 11 after it: seq order takes the choice back."""
    t = NbconTrace()
    t.acquire(3, "hardirq", "emergency")
    t.print_record(3, "hardirq", "emergency", 10)
    t.release(3, "hardirq", "emergency")               # {cpu3 free}
    t.acquire(1, "task", "normal", thread=1)
    t.release(1, "task", "normal", thread=1)           # {cpu1 free}
    t.acquire(3, "task", "emergency")
    t.print_record(3, "task", "emergency", 11)
    t.release(3, "task", "emergency")                  # {cpu3 free}
    t.acquire(2, "task", "emergency")
    t.print_record(2, "task", "emergency", 12)
    t.release(2, "task", "emergency")                  # {cpu2 free}
    t.acquire(3, "hardirq", "emergency")
    t.print_record(3, "hardirq", "emergency", 13)
    t.release(3, "hardirq", "emergency")               # {cpu3 free}
    got, order = linked(t.lines)
    assert [s for _, n, s in got if n == "commit"] == ["10", "11", "12", "13"]
    assert not order.breaks and order.incomplete_reasons() == []


def test_an_order_the_bound_left_out_of_seq_order_is_incomplete(monkeypatch):
    """With no take-back left (BACKTRACK_MAX) the choice the seqs show
    wrong is not handed on as the kernel's: a break, incomplete."""
    import analysis.nbcon_order as nbcon_order
    monkeypatch.setattr(nbcon_order, "BACKTRACK_MAX", 0)
    t = NbconTrace()
    t.acquire(3, "hardirq", "emergency")
    t.print_record(3, "hardirq", "emergency", 10)
    t.release(3, "hardirq", "emergency")
    t.acquire(1, "task", "normal", thread=1)
    t.release(1, "task", "normal", thread=1)
    t.acquire(3, "task", "emergency")
    t.print_record(3, "task", "emergency", 11)
    t.release(3, "task", "emergency")
    t.acquire(2, "task", "emergency")
    t.print_record(2, "task", "emergency", 12)
    t.release(2, "task", "emergency")
    t.acquire(3, "hardirq", "emergency")
    t.print_record(3, "hardirq", "emergency", 13)
    t.release(3, "hardirq", "emergency")
    got, order = linked(t.lines)
    assert order.breaks
    assert "lower seq" in order.incomplete_reasons()[0]
