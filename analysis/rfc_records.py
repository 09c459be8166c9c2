"""Emissions and commits in the RFC model (model_rfc.py): each emission
attempt (model.Attempt) as it starts and ends, the seq the console is
at (con.next_seq), the records it skipped (counted as dropped or not),
a commit traced after the takeover that followed it, and the stray
byte an unsafe takeover's victim may still write.

Invariants: con.next_seq moves only forward (until trace loss); a
console has at most one open attempt; a skip that a late commit may
explain waits for that context's next event (con.late_commits).

A class of RfcModel (model_rfc.py): the state is the model's.
"""

from .model import GRANTED, HANDED, LOST, Attempt
from .pstress import pstress_id
from .facts import (Committed, Emitted, FirstEmitted, Recommitted, Reprinted, Skipped,
                    UnemittedCommit)


class Records:
    """RfcModel's emissions and commits (a class of it: the state is the
    model's)."""

    def start_emission(self, con, ev):
        """Emission ev counted: (its context, seq, dropped count), or
        None for the stale emission of a context taken over that has
        not noticed yet.  Both models (NbconModel too) start an
        emission this way."""
        f = ev.fields
        c = self.ctx_of(con, ev)
        seq = int(f["seq"])
        dropped = int(f["dropped"])
        self.counts["emits"] += 1
        con.emits += 1
        self.sinks.emitted(seq)
        if c.state == LOST and not c.noticed and con.started:
            # Taken over between its last ownership check and this
            # tracepoint: the old owner has not noticed yet and will at
            # its next check, before it writes a byte (the driver writes
            # inside unsafe sections).  Not an attempt of its own; a
            # commit by it is still an after-loss violation, and any
            # byte it printed shows up in the serial check.
            self.grant(con, "stale-emit", ev)
            return None
        return c, seq, dropped

    def on_emit(self, con, ev):
        started = self.start_emission(con, ev)
        if started is None:
            return
        c, seq, dropped = started
        self.check_owner(con, c, ev, "emission of seq %d" % seq)
        if con.ghost_commit is not None and con.next_seq is not None and \
                seq == con.ghost_commit + 1 == con.next_seq + 1:
            con.committed = seq      # the non-owner's commit took effect (below)
        if con.committed is not None:
            self.tell(Emitted(con, ev, c, seq, dropped, con.committed))
        prev = con.attempt
        if prev is not None and prev.outcome is None:
            pc = prev.ctx
            if pc is c:
                self.finish_attempt(prev, "abandoned")
            elif pc.state == LOST:
                self.finish_attempt(prev, "lost")
            elif pc.state in (HANDED, GRANTED):
                self.finish_attempt(prev, "handover")
            else:
                self.finish_attempt(prev, self.release_outcome(con, prev))
        if con.ghost_commit is not None:
            if con.next_seq is not None and seq == con.ghost_commit + 1 == con.next_seq + 1:
                # the non-owner's commit took effect: already reported
                con.next_seq = seq
            con.ghost_commit = None
        reprint = self.place_seq(con, ev, c, seq, dropped, prev)
        if reprint:
            self.counts["reprints"] += 1
            con.reprints += 1
        st = self.store.get(seq)
        att = Attempt(con.name, seq, dropped, int(ev.fields["len"]), c, ev.ts, ev.lineno,
                      st[1] if st is not None else None)
        att.reprint = reprint
        att.req_mark = c.req_mark
        if con.unsafe_victims:
            att.stray_ok = self.stray_possible(con)
        con.attempt = att
        c.attempt = att
        c.last_seq = seq

    def place_seq(self, con, ev, c, seq, dropped, prev):
        """Move the console's seq to an emission of `seq` by c (prev: the
        console's attempt before this one); True when it is a reprint of
        the record the last attempt wrote.  Both models (NbconModel too)
        place an emission this way: a console's seq is the same thing in
        both; only how a skip is reported differs (report_skip())."""
        if con.first_seq is None:
            con.first_seq = seq
        if con.next_seq is None:
            self.first_record(con, seq, dropped, c, ev, "emission")
            con.next_seq = seq
        elif seq < con.next_seq:
            self.tell(Reprinted(con, c, ev.cpu, seq, con.next_seq, None))
        elif seq > con.next_seq:
            gap = seq - con.next_seq
            con.dropped_reported += dropped
            if dropped < gap:
                self.report_skip(con, Skipped(con, ev, c, seq, dropped, con.next_seq), prev)
            self.account_dropped(con, con.next_seq, seq)
            con.dropped_records += gap
            self.counts["dropped_records"] += gap
            con.next_seq = seq
        elif prev is not None and prev.seq == seq:
            # a reprint of the record the last attempt wrote
            self.tell(Reprinted(con, c, ev.cpu, seq, con.next_seq, prev))
            return True
        return False

    def report_skip(self, con, skip, prev):
        """The emission skip.seq skips records its dropped count does not
        cover: a violation, unless the old owner's commit of the one
        missing record may still be traced late (then it waits for that
        context's next event: history())."""
        c = skip.ctx
        if prev is not None and prev.outcome == "lost" and prev.ctx is not c and \
                prev.seq == skip.next_seq and skip.seq - skip.next_seq - skip.dropped == 1:
            # The old owner may have committed prev.seq just before
            # the takeover and traced its commit late (seen on a
            # real run: an NMI's commit traced 2 ms after the
            # panic-priority taker's first emission of the next
            # seq; a hardirq under a panic NMI on its own CPU
            # traced it 2 s later).  Program order decides, not
            # time: the commit must be that context's next event.
            if prev.ctx in con.late_commits:
                self.late_commit_missing(con, prev.ctx)
            con.late_commits[prev.ctx] = (prev.ctx, prev.seq, skip.ev.ts, skip)
        else:
            self.tell(skip)

    def first_record(self, con, seq, dropped, c, ev, what):
        """The console's first traced emission (or commit) is of `seq`.
        A record whose nobkl_store is in the trace was stored after the
        trace began, so the console cannot have printed it before: every
        seq from the first one stored in the trace up to `seq` must be
        counted by this emission's dropped count (the ringbuffer overwrote
        them before the console got there), else it is lost.  Not checked
        after trace loss (the console's state is unknown then)."""
        lo = self.trace.first_stored()
        if lo is None or self.trace.loss_seen() or seq <= lo:
            return
        gap = seq - lo
        counted = min(dropped, gap)
        if counted:
            self.account_dropped(con, seq - counted, seq)
            con.dropped_records += counted
            self.counts["dropped_records"] += counted
        self.tell(FirstEmitted(con, ev, c, seq, dropped, lo, what))

    def account_dropped(self, con, lo, hi):
        if con.name != self.trace.serial_console():
            return
        get = self.store.get
        acc = self.dropped_producer
        for s in range(lo, min(hi, lo + 100000)):
            st = get(s)
            if st is None:
                continue
            p = pstress_id(st[1])
            if p is not None:
                ns = acc.get(p[0])
                if ns is None:
                    ns = acc[p[0]] = set()
                ns.add(p[1])

    def on_commit(self, con, ev):
        f = ev.fields
        c = self.ctx_of(con, ev)
        seq = int(f["seq"])
        self.counts["commits"] += 1
        con.commits += 1
        lc = con.late_commits.get(c) if con.late_commits else None
        if lc is not None and lc[1] == seq:
            del con.late_commits[c]
            con.committed = max(con.committed or 0, seq + 1)
            self.grant(con, "late-commit-after-takeover", ev)
            con.dropped_records -= 1
            self.counts["dropped_records"] -= 1
            self.anomaly(con, "commit of seq %d by %s traced after the takeover by %s, whose "
                         "first emission (seq %d) shows the commit took effect before it"
                         % (seq, c.label(), lc[3].ctx.label(), seq + 1))
            return
        owner_ok = self.check_owner(con, c, ev, "commit of seq %d" % seq)
        att = c.attempt
        if att is None and con.attempt is not None and con.attempt.seq == seq and con.attempt.ctx is c:
            att = con.attempt
        if not owner_ok:
            # reported above; a commit by a non-owner does not move the
            # console's seq in our model (the owner's reprint is legal)
            if att is not None and att.outcome is None and att.seq == seq:
                self.finish_attempt(att, "lost")
            if con.next_seq is not None and seq == con.next_seq:
                con.ghost_commit = seq
            return
        first = con.next_seq is None
        if first:
            self.first_record(con, seq, 0, c, ev, "commit")
            con.next_seq = seq
        if seq < con.next_seq:
            self.tell(Recommitted(con, c, ev.cpu, seq, con.next_seq))
        else:
            self.tell(Committed(con, ev, c, seq, con.next_seq))
        if att is None and first and c.pretrace:
            # the trace began between the emission and its commit: the
            # context owned the console before the trace (adopt())
            self.grant(con, "trace-starts-mid-ownership", ev)
        elif att is None or att.seq != seq:
            st = self.store.get(seq)
            if st is not None and st[2] >= self.trace.console_loglevel:
                # below the console loglevel: not printed
                self.grant(con, "suppressed-record", ev)
            else:
                self.tell(UnemittedCommit(con, ev, c, seq, None if st is None else st[2],
                                          self.trace.console_loglevel))
        elif att.outcome is None:
            self.finish_attempt(att, "commit")
        if seq >= con.next_seq:
            con.next_seq = seq + 1
        con.committed = seq + 1
        con.last_commit = seq
        st = self.store.get(seq)
        if st is not None:
            self.lat_store_commit.add((ev.ts - st[0]) * 1e6)
        self.sinks.records_passed(seq)

    def late_commit_missing(self, con, old):
        """The old owner's commit that would explain a skipped seq did not
        come as its next event: the skip is a loss after all."""
        lc = con.late_commits.pop(old)
        self.tell(lc[3])

    def stray_possible(self, con):
        """May an owner taken over inside an unsafe section still write its
        byte into an emission starting now?  Until it traces its loss,
        however late that is (a preempted victim writes its byte when it
        runs again); if that was listed before the takeover (equal
        timestamps), only into the taker's first emission.  In chain
        order a loss that names the owner it saw (`owner_cpu`,
        `owner_prio`) ends it only with that owner's ownership: the loss
        is no transition, so only the clocks order it against that
        owner's emissions (the stress run of 2026-12-04 17:28 listed with CPU 1
        50 ms late has it before the emission of CPU 1 whose line the
        byte hit)."""
        stray = []
        o = con.owner
        for cpu, uv in list(con.unsafe_victims.items()):
            victim, named, seen, allowances = uv
            if named is not None:
                if o is not None and (o.cpu, o.prio) == named:
                    uv[2] = o
                elif seen is not None:
                    # that owner's emissions are over
                    del con.unsafe_victims[cpu]
                    continue
            elif victim is not None and victim.noticed:
                del con.unsafe_victims[cpu]
            stray += [b for b in allowances if not b.spent]
        return stray
