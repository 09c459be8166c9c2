"""The ABA choice of the ordering stage: the spool, the checkpoint and the
runs again with a slot forced.

The ABA choice.  Two transitions can have the same old state bits: on
32-bit the word does not say which CPU requests, so two waiters that
spin request/timeout against one owner make the same bits 32
transitions apart.  Which of them links where the chain is, is the
listing's choice (root(): the first listed candidate; drain(): the
earliest listed head), and a wrong one shows only when the chain gets
stuck: at the trace's end a transition waits that never linked.  Such
a stranded transition S could have filled a slot the chain went
through after S's stream's last link: the slot after a transition Z
whose installed state S links to (by ready()'s rule), filled by
another transition X.  The stage then takes the items again from its
checkpoint with S forced into that slot (only S may fill it: X waits;
repair()), and so on for the next stranded transition
(next_repair(): first the slot closest after S's stream's last link;
no slot twice with the same transition), until every transition
links or the runs again have taken REPAIR_WORK items.  When no run
links everything, the items are taken once more as at first, so the
chain breaks where it did (incomplete).

The invariant: nothing reaches the sink that another run could change.
What the stage passes on is spooled, with the items read since the
checkpoint and its state then, until the trace ends or REPAIR_WINDOW
items were read (then it goes on for good, and a new checkpoint is
taken: a slot filled before it is not revisited).  Every run links by
ready()'s rule, a forced slot only narrows which of the transitions
that link there may fill it, so a repaired chain is one the state
words allow, whatever the listing.  Counts, not times.

A class of CausalOrder (ordering.py), with the module's helpers: the
state is the stage's.  The bounds (REPAIR_WINDOW, REPAIR_WORK) and the
decision to run again (repair()) are ordering.py's.
"""

from collections import deque

from .chain_state import ChainState, state_key
from .happens_before import VectorClock
from .traceparse import Event, Store

# in the spooled output: where on_chain is called, and on_read with an
# item read
_CHAIN = object()


class _Read:
    __slots__ = ("item",)

    def __init__(self, item):
        self.item = item


# attributes of CausalOrder that are not the state a run starts from
# (the spool and the repair's own; `notes` is restored in place, the
# checker holds it)
_NOT_STATE = frozenset(("sink", "out_sink", "on_chain", "chain_cb", "on_read", "notes", "stamps",
                        "spooling", "outbuf", "log", "ckpt", "forced", "tried", "repairs"))


_IMMUTABLE = (int, float, str, tuple, frozenset, type(None))


def _clone(v):
    """A copy of the stage's state value v that a run cannot change: its
    containers copied, the items in them (never changed) shared.  A new
    kind of mutable state (an attribute of CausalOrder or ChainState)
    must be copied here: shared, a run again would start from what the
    run before left in it; it fails loudly instead."""
    t = v.__class__
    if t is dict:
        return {k: _clone(x) for k, x in v.items()}
    if t is list:
        return [_clone(x) for x in v]
    if t is deque:
        return deque([_clone(x) for x in v], v.maxlen)
    if t is set:
        return set(v)
    if t is VectorClock:
        return v.copy()
    if t is ChainState:
        c = ChainState.__new__(ChainState)
        for a in ChainState.__slots__:
            setattr(c, a, _clone(getattr(v, a)))
        return c
    if isinstance(v, _IMMUTABLE):
        return v
    raise TypeError("ordering: no copy of %s for a run again (_clone())" % t.__name__)


class Repair:
    """CausalOrder's ABA choice (a class of it: the state is the stage's)."""

    def slot_of(self, ev):
        """The slot transition ev fills if it is passed on now: the trace
        line of its console's last linked transition, ("root", con) for
        the root; None when it links nowhere (a transition from before
        the chain's start) or is none."""
        w = self.words(ev)
        if w is None or w[0] == w[1]:
            return None
        con = ev.fields.get("con")
        c = self.chains.get(con)
        if c is None:
            return None
        if c.cur is None:
            return ("root", con) if ev.lineno == c.root_line else None
        if state_key(w[0], self.arch32) == state_key(c.cur, self.arch32):
            return c.last
        return None

    def admits(self, ev, q=None):
        """ready(), and in a slot a repair forced, only the transition
        forced there (the others wait)."""
        if not self.ready(ev, q):
            return False
        if self.forced:
            slot = self.slot_of(ev)
            if slot is not None and self.forced.get(slot, ev.lineno) != ev.lineno:
                return False
        return True

    def note_link(self, ev):
        """Transition ev is passed on now: remember the slot it fills and
        what was installed there (next_repair() looks for the stranded
        transitions that could have filled it)."""
        slot = self.slot_of(ev)
        if slot is None:
            return
        c = self.chains[ev.fields.get("con")]
        self.links.append((slot, ev, c.cur, c.stream))
        c.last = ev.lineno

    def next_repair(self):
        """(slot, trace line of the transition to force there, trace line
        of the one that filled it), or None.
        A stranded transition S is a held stream's first event that is a
        transition; it could have filled a slot that was filled after its
        stream's last link, when its old state links to the state
        installed there by ready()'s rule, or, with no link of its
        stream, the root's.  Of these (slot, S) not tried, the one with
        the fewest links between S's stream's last link and the slot
        (the chain left S's stream there for another transition with the
        same old state: a waiter spinning request/timeout whose request
        another waiter's took the place of, 32 transitions early), then
        the latest slot, then the earliest listed S; a root last."""
        a32 = self.arch32
        links = self.links
        last = {}
        for i, (_, ev, _, _) in enumerate(links):
            last[(ev.fields.get("con"), self.stream_of(ev))] = i
        best = None
        for q in self.streams.values():
            if not q:
                continue
            s = q[0]
            w = self.words(s)
            if w is None or w[0] == w[1]:
                continue
            con = s.fields.get("con")
            ks = state_key(w[0], a32)
            start = last.get((con, self.stream_of(s)), -1)
            for i in range(start + 1, len(links)):
                slot, ev, cur, cs = links[i]
                if ev.fields.get("con") != con or (slot, s.lineno) in self.tried:
                    continue
                if cur is None:
                    if start != -1:
                        continue
                    rank = (1, 0, 0, s.lineno)
                elif state_key(cur, a32) == ks and (a32 or cur == w[0] or
                                                    self.stream_of(s) == cs):
                    rank = (0, i - start, -i, s.lineno)
                else:
                    continue
                if best is None or rank < best[0]:
                    best = (rank, slot, s.lineno, ev.lineno)
                if cur is not None:
                    break
        return None if best is None else best[1:]

    def snapshot(self):
        """The checkpoint: the stage's state (everything but the spool's
        and the repair's own) and the notes not yet taken."""
        return ({k: _clone(v) for k, v in vars(self).items() if k not in _NOT_STATE},
                dict(self.notes))

    def restore(self):
        """Back to the checkpoint: its state, its notes, nothing spooled."""
        state, notes = self.ckpt
        for k, v in state.items():
            setattr(self, k, _clone(v))
        self.notes.clear()
        self.notes.update(notes)
        self.outbuf = []

    def read(self, item):
        """An item read: on_read, in its place among what is passed on
        (spooled like it, so that the checker sees the reader's order
        where it did without the spool), then take it."""
        cls = item.__class__
        if self.on_read is not None and (cls is Event or cls is Store):
            if self.spooling:
                self.outbuf.append(_Read(item))
            else:
                self.on_read(item)
        self.take(item)

    def spool(self, item):
        """self.sink: keep what is passed on until it is final (commit())."""
        if self.spooling:
            self.outbuf.append(item)
        else:
            self.deliver(item)

    def deliver(self, item):
        if item is _CHAIN:
            self.chain_cb()
        elif item.__class__ is _Read:
            self.on_read(item.item)
        else:
            self.out_sink(item)

    def chain_found(self):
        """self.on_chain: the trace has the chain; told in the order of the
        items passed on."""
        self.spool(_CHAIN)

    def commit(self, final=False):
        """What was passed on since the checkpoint goes on for good; a new
        checkpoint (final: none, nothing is spooled from now on)."""
        self.counts["aba_relinked"] += sum(
            1 for slot, ev, _, _ in self.links if self.forced.get(slot) == ev.lineno)
        out, self.outbuf = self.outbuf, []
        if final:
            self.spooling = False
        for item in out:
            self.deliver(item)
        self.log = []
        self.links = []
        self.forced = {}
        self.tried = set()
        self.repairs = 0
        self.ckpt = None if final else self.snapshot()
