"""Admission: the order in which the checker hands console events to the
model (Analyzer.admit() holds or processes each one).

Two waits, both before the model sees an event:
  * the events of one timestamp (the tie): without the chain
    (order=timestamps) events of different CPUs with equal timestamps
    are unordered, and are admitted in an order consistent with the
    console state (flush_tie()); in chain order (ordering.py) they come
    as they are;
  * an emission or commit whose record's store is listed later waits,
    with every console event after it, for that store (must_wait(),
    release_held()), until trace loss, the trace's end or HELD_MAX events
    wait (overflow_held(): the store, listed after all, makes the verdict
    incomplete, store_after_overflow()).

Invariants: stores are never held; events of one CPU keep their order;
no event waits without a bound (TIE_MAX, HELD_MAX).

A class of Analyzer (checker.py): the state is the checker's.
"""

from collections import deque

from .record_window import HOLE_MAX
from .validation import int_or_none

TIE_MAX = 100000             # events of one timestamp reordered at most


class Admission:
    """Analyzer's admission of events (a class of it: the state is the
    checker's)."""

    def feed_console_event(self, item):
        """feed() of an event other than a store: events of one timestamp
        are collected for flush_tie()."""
        tie = self.tie
        if item.ts == self.tie_ts and len(tie) < TIE_MAX:
            tie.append(item)
            return
        if len(tie) == 1:
            self.admit(tie[0])
            tie[0] = item
        else:
            if tie:
                self.flush_tie()
            self.tie.append(item)
        self.tie_ts = item.ts

    def flush_tie(self):
        """Admit the events that share one timestamp.  Events of different
        CPUs with the same timestamp are unordered (the guest clock stood
        still, or the global trace clock clamped a CPU that lagged behind
        to the last timestamp), trace-cmd lists them by CPU number.  Admit
        them in an order consistent with the console state (the stores
        among them were taken first, by feed()): of the CPUs' next events
        (each CPU in program order), one of the CPU that owns its console,
        else the first listed."""
        tie = self.tie
        if not tie:
            return
        self.tie = []
        self.tie_ts = None
        if len(tie) == 1 or self.causal_order:
            # in chain order (ordering.py) a tie is no longer unordered
            for ev in tie:
                self.admit(ev)
            return
        cpu0 = tie[0].cpu
        for ev in tie:
            if ev.cpu != cpu0:
                break
        else:
            for ev in tie:
                self.admit(ev)
            return
        self.counts["tie_groups_reordered"] += 1
        queues = {}
        for ev in tie:
            q = queues.get(ev.cpu)
            if q is None:
                q = queues[ev.cpu] = deque()
            q.append(ev)
        consoles = self.consoles
        while queues:
            if len(queues) == 1:
                # one CPU left: its events in program order
                for q in queues.values():
                    for ev in q:
                        self.admit(ev)
                break
            pick = None
            # 1. the waiter a pending grant goes to takes it
            for cpu, q in queues.items():
                ev = q[0]
                if ev.name == "nobkl_acquire" and ev.fields.get("how") == "handover":
                    con = consoles.get(ev.fields.get("con"))
                    g = con.grant if con is not None else None
                    if g is not None and g["to_cpu"] == cpu:
                        pick = cpu
                        break
            # 2. the owner's CPU goes on
            if pick is None:
                for cpu, q in queues.items():
                    con = consoles.get(q[0].fields.get("con"))
                    owner = con.owner if con is not None else None
                    if owner is not None and owner.cpu == cpu and self.tie_fits(q[0], con, q):
                        pick = cpu
                        break
            # 3. an event that fits the state; 4. the first listed
            if pick is None:
                for cpu, q in queues.items():
                    if self.tie_fits(q[0], consoles.get(q[0].fields.get("con")), q):
                        pick = cpu
                        break
            if pick is None:
                pick = next(iter(queues))
            q = queues[pick]
            self.admit(q.popleft())
            if not q:
                del queues[pick]

    @staticmethod
    def next_emit_fits(con, q):
        """The first emission that follows in q (the acquiring CPU's events
        of the tie) prints the console's next record, or skips to it with
        a dropped count.  A CPU may acquire and release a free console
        several times within one timestamp; the emission tells which of
        those free states an acquire of another CPU found."""
        want = con.next_seq
        if want is None:
            return True
        for n, ev in enumerate(q):
            if n > 8 or ev.name == "nobkl_release":
                break
            if ev.name == "nobkl_emit" and ev.fields.get("con") == con.name:
                seq = int_or_none(ev.fields.get("seq"))
                dropped = int_or_none(ev.fields.get("dropped")) or 0
                return seq is None or want <= seq <= want + dropped
        return True

    @staticmethod
    def tie_fits(ev, con, q=()):
        """Whether ev fits the console state (for ordering a timestamp
        tie): an acquire must find the state word its prev_* fields
        describe (and be followed by the console's next record), an
        owner's action needs the owner (or no known one)."""
        if con is None:
            return True
        owner = con.owner
        name = ev.name
        f = ev.fields
        if name == "nobkl_acquire":
            g = con.grant
            if f.get("how") == "handover":
                # after the grant to it (traced before it is tolerated,
                # but within a tie the grant goes first)
                return g is not None and str(g["to_cpu"]) == str(ev.cpu)
            word = owner.cpu if owner is not None else (g["to_cpu"] if g is not None else None)
            if f.get("prev_locked") == "1":
                fits = word is not None and str(word) == f.get("prev_cpu")
            else:
                fits = word is None
            return fits and Admission.next_emit_fits(con, q)
        if name == "nobkl_handover_grant":
            # after the request it answers
            r = con.requests.get(int_or_none(f.get("to_cpu")))
            if r is None or r["prio"] != f.get("to_prio"):
                return False
        if name in ("nobkl_emit", "nobkl_commit", "nobkl_release", "nobkl_handover_grant"):
            return owner is None or owner.cpu == ev.cpu
        return True

    def must_wait(self, ev):
        """ev (emit/commit) names a seq whose store has not been listed:
        that store came before ev, so it waits for it (noting the seq in
        held_seq).  Not for a store forgotten already (trim_store()) or
        one an event of its seq stopped waiting for (overflow_held())."""
        seq = int_or_none(ev.fields["seq"])
        if seq is None or seq in self.store or seq in self.gave_up or \
                (self.forgotten_below is not None and seq < self.forgotten_below):
            return False
        self.held_seq = seq
        return True

    def release_held(self, overflow=False):
        """The store the first held event waited for was listed (or, with
        `overflow`, that event went on without it): process held events
        in order; one whose store has not been listed starts a new hold."""
        held = self.held
        first = held[0] if held and not overflow else None
        while held:
            ev = held[0]
            if ev.name in ("nobkl_emit", "nobkl_commit") and self.must_wait(ev):
                if ev is not first:
                    self.counts["held_for_store"] += 1
                return
            held.popleft()
            self.process(ev)
        self.held_seq = None

    def overflow_held(self):
        """More than HELD_MAX events wait for the store of held_seq (a
        record stored before the trace began has none): the first goes
        on without it, as at the trace's end, and the others as far as
        their stores are listed.  Should that store be listed after all,
        the check went on without a record the trace has: incomplete
        (process_store(), late_stores), never a pass."""
        held = self.held
        ev = held.popleft()
        self.counts["store_wait_overflow"] += 1
        if len(self.gave_up) < HOLE_MAX:
            self.gave_up.setdefault(self.held_seq, ev.ts)
        else:
            self.gave_up_full += 1
        self.process(ev)
        self.release_held(overflow=True)

    def store_after_overflow(self, seq):
        """The store of seq is listed after an event of its record went on
        without it (overflow_held())."""
        ts = self.gave_up.pop(seq)
        self.late_store_count += 1
        if len(self.late_stores) < 20:
            self.late_stores.append((seq, ts))
        if self.late_store_ts is None or ts < self.late_store_ts:
            self.late_store_ts = ts

    def flush_held(self):
        """Process every held event (trace loss marker, end of trace)."""
        held = self.held
        while held:
            self.process(held.popleft())
        self.held_seq = None
