"""Rooting: the first transition of a console's chain (its root) is
found by linking, not by listing.  A console's transitions are held,
with every item listed after the first of them, until ROOT_HOLD of
them wait (CausalOrder.try_root()), or the trace ends or loses events
(settle()); the root is then chosen among them (root()) and everything
held is taken again as if it had been known from the start (replay()).

Invariants: while a root is looked for, every other item waits
(`pending`) and goes on in trace order around the root; the root
precedes every other transition of its console, so it is the first
held transition of its stream; a root a repair forced is taken when it
is a candidate (chain_repair.py).

A class of CausalOrder (ordering.py): the state is the stage's.
"""

from .chain_state import state_key
from .traceparse import Event


class Rooting:
    """CausalOrder's rooting (a class of it: the state is the stage's)."""

    def root_candidate(self, ev):
        """A transition held while its console's root is looked for:
        remember it, and choose the root once ROOT_HOLD of them wait."""
        w = self.words(ev)
        if w is None or w[0] == w[1]:
            return
        con = ev.fields.get("con")
        c = self.chain(con)
        if not c.rooting():
            return
        c.add_candidate(ev)
        self.rooting.add(con)
        if not self.replaying:
            self.try_root(con)

    def stream_lists(self, con):
        """Per stream, the held transitions of console con in stream order."""
        out = []
        for q in self.streams.values():
            lst = []
            for e in q:
                if e.fields.get("con") == con:
                    w = self.words(e)
                    if w is not None and w[0] != w[1]:
                        lst.append((e, w))
            if lst:
                out.append(lst)
        return out

    def links_from(self, lists, i):
        """The trace lines of the held transitions that link into one chain
        from the first held transition of stream list i, by the rule
        ready() applies (a dry run of the stage with that root)."""
        a32 = self.arch32
        pos = [0] * len(lists)
        pos[i] = 1
        ev, (o, cur) = lists[i][0]
        cs = self.owner_stream(ev)
        linked = {ev.lineno}
        while True:
            best = None
            kc = state_key(cur, a32)
            for j, lst in enumerate(lists):
                p = pos[j]
                if p < len(lst):
                    e, (eo, en) = lst[p]
                    if (state_key(eo, a32) == kc and (eo == cur or self.stream_of(e) == cs)
                            and (best is None or e.lineno < best[0].lineno)):
                        best = (e, en, j)
            if best is None:
                return linked
            e, en, j = best
            pos[j] += 1
            cur = en
            cs = self.owner_stream(e)
            linked.add(e.lineno)

    def root(self, con):
        """Choose the root of console con's chain among its held
        transitions and take everything held again (replay()).  The root
        precedes every other transition of the console, so also those of
        its own stream: the candidates are each stream's first held
        transition.  The root is the first listed candidate whose old
        state no other held transition installed, except one that links
        after it (the dry run links_from(): a state word repeats after
        32 transitions, so a transition 32 or more after the root may
        install the same state bits again).  When every candidate has a
        predecessor held (only where a repeat is not linked), the first
        listed.  A candidate forced by a repair (next_repair()) is the
        root; a forced one that is no candidate is dropped."""
        c = self.chain(con)
        if not c.rooting() or not c.cand:
            self.rooting.discard(con)
            return
        a32 = self.arch32
        lists = self.stream_lists(con)
        order = sorted(range(len(lists)), key=lambda i: lists[i][0][0].lineno)
        pick = None
        forced = self.forced.get(("root", con))
        if forced is not None:
            pick = next((i for i in order if lists[i][0][0].lineno == forced), None)
            if pick is None:
                del self.forced[("root", con)]
            else:
                order = ()
        for i in order:
            ev, (o, _) = lists[i][0]
            ko = state_key(o, a32)
            preds = [e for e in c.cand if e is not ev and state_key(self.words(e)[1], a32) == ko]
            if preds:
                linked = self.links_from(lists, i)
                if any(e.lineno not in linked for e in preds):
                    continue
            pick = i
            break
        if pick is None:
            pick = order[0]
        ev, (o, _) = lists[pick][0]
        self.counts["root_held"] = max(self.counts["root_held"], len(c.cand))
        c.rooted(ev, state_key(o, a32))
        self.rooting.discard(con)
        self.replay()

    def replay(self):
        """A root was chosen: take everything held again, in trace order,
        as if the root had been known from the start (the events of a
        console whose root is still looked for are held again)."""
        items = sorted([e for q in self.streams.values() for e in q] + list(self.pending),
                       key=lambda e: e.lineno)
        self.streams.clear()
        self.pending.clear()
        self.held = 0
        self.held_deps.clear()
        for con in self.rooting:
            self.chains[con].cand = []
        # the streams are read again: what a takeover waits for
        # (victim_shown()) is what was read before it then
        for it in items:
            if it.__class__ is Event:
                self.last_read.pop(self.stream_of(it), None)
        self.replaying = True
        try:
            for it in items:
                self.take(it)
        finally:
            self.replaying = False
        if not self.rooting:
            self.flush_pending()
        for con in list(self.rooting):
            if con in self.rooting:
                self.try_root(con)

    def settle(self):
        """The trace ends or loses events: root every chain still looked
        for with what is held, and pass on what links."""
        for con in list(self.rooting):
            self.root(con)
        self.rooting.clear()

    def flush_pending(self, before=None):
        """Pass on the items that waited while a root was looked for: all,
        or those listed before trace line `before`."""
        p = self.pending
        while p and (before is None or p[0].lineno < before):
            self.sink(p.popleft())
