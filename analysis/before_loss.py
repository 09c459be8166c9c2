"""Before the loss: whether a violation of an incomplete trace is the
kernel's.

In chain order (ordering.py) an incomplete trace's violation is the
kernel's when it happens before every trace loss: the lost events
came after the place the trace proves for the loss, so none of them
took part in it (genuine()).  Places and stamps: happens_before.py.
A trace without the chain (order=timestamps) is judged by the clocks
instead (untrusted_from()).

Invariants: stamps are kept for the events of the last HB_RECENT trace
lines and for HB_KEPT events the model reports on later; an event
without a stamp is never proven before a loss.

A class of Analyzer (checker.py): the state is the checker's.
"""

from .happens_before import NOWHERE, before, meet

                             #    remembered (a damaged page may be dated too late)
HB_RECENT = 4096             # stamps of the events of the last trace lines kept (hb_of())
HB_KEPT = 4096               # and of the events the model reports on later (keep_stamp())


class BeforeLoss:
    """Analyzer's happens-before bookkeeping (a class of it: the state is
    the checker's)."""

    def hb_of(self, ev):
        """The happens-before stamp of event ev, or None: not stamped
        (a trace without the chain, an event the ordering stage passed
        on unlinked, a store) or no longer known."""
        if ev is self.hb_cur_ev:
            return self.hb_cur
        x = self.hb_recent[ev.lineno % HB_RECENT]
        if x is not None and x[0] == ev.lineno:
            return x[1]
        return self.hb_kept.get(ev.lineno)

    def keep_stamp(self, ev):
        """The model keeps ev to report on later (owner_unexplained()):
        keep its stamp too."""
        st = self.hb_of(ev)
        if st is not None:
            kept = self.hb_kept
            kept[ev.lineno] = st
            if len(kept) > HB_KEPT:
                kept.popitem(last=False)

    def hb_done(self, ev, st):
        """Event ev with stamp st was processed: the last of its stream."""
        self.hb_last.setdefault(ev.cpu, {})[st[0]] = st[1]
        self.hb_recent[ev.lineno % HB_RECENT] = (ev.lineno, st)

    def violation_stamp(self, ev):
        """A violation placed at event ev was found before trace loss:
        per stream the earliest such one is kept (before a place when a
        later one of its stream is)."""
        st = self.hb_of(ev)
        if st is None:
            return
        i, v = st
        old = self.hb_violations.get(i)
        if old is None or v[i] < old[i]:
            self.hb_violations[i] = v

    def loss_place(self, cpu):
        """The place before events lost on `cpu`: each was in a stream of
        that CPU (which one is not known), after the stream's last event
        processed, so the place before the last of each of its streams
        (the meet); NOWHERE for an unknown CPU or one without a stamped
        event yet.  An event the ordering stage holds back is not
        processed: its stream's place is then an earlier one, never a
        later one.  A stream of that CPU without an event before the
        loss is taken to have lost none."""
        last = self.hb_last.get(cpu) if cpu is not None else None
        if not last:
            return NOWHERE
        it = iter(last.values())
        place = next(it)
        for v in it:
            place = meet(place, v)
        return place

    def not_before_loss(self, ev):
        """Is ev not proven before every trace loss seen so far?  In chain
        order by happens-before (an event without a stamp is not); by
        the clocks (a trace without the chain) its timestamp at or after
        the earliest loss start."""
        if not self.loss_seen:
            return False
        if self.causal_order:
            st = self.hb_of(ev)
            return st is None or not before(st[1], self.loss_at)
        return self.loss_start_ts is not None and ev.ts >= self.loss_start_ts

    def genuine(self):
        """Is a violation of an incomplete trace the kernel's?  In chain
        order: one found before trace loss (at a stamped event) happens
        before every trace loss; a missing store or one listed after its
        record's events went on without it has no place the trace tells
        (the store event fired somewhere before the record's use), so
        none is then.  A violation the serial rules found has no stamp:
        it is placed at an attempt, but judged on the serial log and on
        what the trace showed when the attempt ended, so it is never
        proven before a loss.  Without trace loss, any violation found
        is.  A trace without the chain (order=timestamps) is judged by
        the clocks: the earliest violation's timestamp before
        untrusted_from()."""
        if not self.causal_order:
            untrusted = self.untrusted_from()
            return (self.first_violation_ts is not None and
                    (untrusted is None or self.first_violation_ts < untrusted))
        place = self.loss_at
        if self.missing_store_count or self.late_store_count:
            place = NOWHERE
        if place is None:
            return self.first_violation_ts is not None
        return any(before(v, place) for v in self.hb_violations.values())

    def untrusted_from(self):
        """The earliest time from which the trace may miss events (trace
        loss, damage, a missing store, a store listed after its event
        went on without it), or None: violations found later are not the
        kernel's.  By the CPUs' clocks: genuine() uses it only for a
        trace without the chain, which gives no other order."""
        ts = [t for t in (self.loss_start_ts, self.missing_store_ts, self.late_store_ts)
              if t is not None]
        return min(ts) if ts else None
