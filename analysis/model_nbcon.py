"""The ownership model of mainline's nbcon consoles on Linux 6.12
(rules.NBCON_612): it applies the console events, in the order the
linker gives them (nbcon_order.py), to consoles, the contexts that own
them and their emission attempts (model.py), and hands what it saw on:
the facts the rules judge (facts.py, told to one sink, tell(), the
registry's dispatcher; the rules both designs share are judged by
trace_rules.py, its own by nbcon_rules.py), the attempts as they end,
and the ownership intervals (the recorder, intervals.py).  It judges
nothing itself.  What it reads of the trace and where what it sees
goes are model_io.py's (TraceState, Sinks), as for the RFC model.

How 6.12 differs from the RFC model (model_rfc.py), and so what this
model does instead:
  * a higher priority takes a *safe* owner directly (how=hostile,
    prev_unsafe=0): the normal emergency-over-printer-thread takeover,
    a fact for takeover-prio and panic-protect, no violation;
  * there is no grant event: a release with a waiter in req_prio
    (handover=1) is the grant, and the waiter's how=handover acquire is
    a transition of its own;
  * the next owner of a record a previous owner lost writes it again
    with the replay marker, which nbcon_emit shows (replay=1): the model
    keeps the seq that was interrupted (con.interrupted) for the replay
    rule;
  * device=1 acquires (the uart port lock) and reacquire=1 ones (a
    driver that lost the console takes it back to restore its hardware,
    nbcon_reacquire_nobuf()) own the console and never emit;
  * the linker orders by the state words, so there are no late events
    to tolerate here (the RFC model's phantoms, late grants and late
    commits): what the chain placed is applied as it comes.

Invariants of the model:
  * a console has at most one owner (con.owner), a context in state
    OWNER; only an acquire (or adopt(): the owner before the trace)
    makes one;
  * a console has at most one open attempt (con.attempt); an attempt
    ends once and is then handed on (sinks.attempt_ended());
  * con.next_seq moves only forward (until trace loss), by an emission
    that skips or by the owner's commit;
  * con.interrupted is the seq an owner lost before committing it, set
    when the loss ends its attempt and cleared by the commit of it;
  * after trace loss every console's state is forgotten (forget()).

The helpers every model needs (intervals, an ownership's and an
attempt's end, the owner before the trace, the first record, an
emission's start and the seq it places, a handover's fact with the
tolerance for a panic owner's release) are the RFC model's, shared as
they are.
"""

from .facts import (Acquired, Committed, Emitted, HostileAcquired, NbconHandoverAcquire,
                    NbconHandoverRelease, NbconReplay, NbconRequest, NotOwnerAction,
                    OwnerAcquired, Recommitted, Takeover, TakenOver, UnemittedCommit)
from .model import HANDED, LOST, OWNER, RELEASED, Attempt, prio_rank
from .model_rfc import RfcModel
from .nbcon_events import decode_state
from .rfc_records import Records
from .rules import NBCON_612
from .stats import LogHist

MODEL = NBCON_612


class NbconModel:
    """The ownership model of mainline's nbcon consoles (nbcon-6.12),
    with the RFC model's interface: the checker hands it each event as
    the nbcon linker (nbcon_order.py) ordered it; it keeps the owners,
    contexts and attempts, and hands facts to the rule units and
    intervals to the Recorder.  The parts that read only the state both
    models keep are the RFC model's."""

    def __init__(self, trace, sinks, consoles, counts, recorder=None):
        self.trace = trace
        self.sinks = sinks
        self.consoles = consoles
        self.counts = counts
        self.recorder = recorder
        self.store = trace.store
        self.tell = sinks.tell
        self.anomaly = sinks.anomaly
        self.dropped_producer = sinks.dropped_producer
        self.lat_handover = LogHist()
        self.lat_store_commit = LogHist()
        self.lat_timeout = LogHist()
        for k in ("hostile_safe", "replays", "device_acquires", "reacquires"):
            counts.setdefault(k, 0)

    # shared with the RFC model: they read only the state both keep
    end_interval = RfcModel.end_interval
    end_ownership = RfcModel.end_ownership
    handed_over = RfcModel.handed_over
    grant = RfcModel.grant
    ctx_of = RfcModel.ctx_of
    finish_attempt = RfcModel.finish_attempt
    adopt = RfcModel.adopt
    owns_or_adopted = RfcModel.owns_or_adopted
    first_record = Records.first_record
    account_dropped = Records.account_dropped
    place_seq = Records.place_seq
    start_emission = Records.start_emission

    # ------------------------------------------------------ the way in
    def history(self, con, ev):
        """Nothing is history: the linker placed every event."""
        return False

    def applied(self, con, ev):
        pass

    def transition_seen(self, con, ev):
        pass

    def forget(self):
        for con in self.consoles.values():
            if con.attempt is not None and con.attempt.outcome is None:
                con.attempt.outcome = "open"
                self.counts["attempts"]["open"] += 1
            con.reset()
            con.interrupted = con.interrupted_unknown = None

    def finish(self, last_ts):
        for con in self.consoles.values():
            if con.attempt is not None and con.attempt.outcome is None:
                self.finish_attempt(con.attempt, "open")
            if con.owner is not None:
                self.end_interval(con, con.owner, last_ts, "trace end")

    # ------------------------------------------------------- contexts
    def check_owner(self, con, c, ev, what):
        """c does what only the owner may: True when it is the owner."""
        if self.owns_or_adopted(con, c, ev):
            return True
        self.tell(NotOwnerAction(con, c, ev, what, con.owner))
        return False

    def lose(self, con, c, state, ts, how):
        """c stops owning the console; its open attempt ends."""
        self.end_ownership(con, c, state, ts, how)
        att = c.attempt
        c.lost_mid = att is not None and att.outcome is None
        if c.lost_mid:
            self.finish_attempt(att, "lost" if state == LOST else "handover")
            con.interrupted = att.seq
        elif state in (LOST, HANDED):
            # it may have noted the record it was starting (nbcon_prev_seq)
            # before it lost the console or handed it over at the end of
            # that unsafe section, before its emission was traced
            con.interrupted_unknown = True

    # -------------------------------------------------------- acquire
    def on_acquire(self, con, ev):
        f = ev.fields
        c = self.ctx_of(con, ev)
        how, prio, prev_prio = f["how"], f["prio"], f["prev_prio"]
        prev_cpu = int(f["prev_cpu"])
        prev_unsafe = f["prev_unsafe"] == "1"
        mark = f["unsafe_takeover"] == "1"
        self.counts["acquire"][how] += 1
        O = con.owner
        t = Takeover(c, ev.cpu, prio, prev_prio != "none", prio_rank(prev_prio),
                     "cpu%d/%s" % (prev_cpu, prev_prio), prev_cpu, O)
        self.tell(Acquired(con, c, how, prev_unsafe, mark, con.unsafe_mark))
        con.unsafe_mark = con.unsafe_mark or mark
        ACQUIRE[how](self, con, c, ev, t)
        if O is c:
            self.tell(OwnerAcquired(con, t, how))
        elif O is not None:
            self.lose(con, O, LOST, ev.ts, "taken over (%s) by %s" % (how, c.label()))
            O.lost_to_cpu = ev.cpu
        self.mark_silent(con, c, f)
        self.become_owner(con, c, how, ev)

    def mark_silent(self, con, c, f):
        """An owner that must not emit: the uart port lock's (device=1)
        or a driver's reacquire, which only restores the hardware
        before the core releases the console."""
        con.silent.pop(c, None)
        if f["device"] == "1":
            self.counts["device_acquires"] += 1
            con.silent[c] = "device owner"
        elif f["reacquire"] == "1":
            self.counts["reacquires"] += 1
            con.silent[c] = "reacquiring owner"

    def acquire_direct(self, con, c, ev, t):
        if con.owner is not None and con.owner is not c:
            # the word was free but the model has an owner: its release
            # was never traced
            self.tell(OwnerAcquired(con, t._replace(owner_label=con.owner.label()),
                                    "direct"))

    def acquire_hostile(self, con, c, ev, t):
        counts = self.counts
        counts["hostile_by_prio"][t.prio] = counts["hostile_by_prio"].get(t.prio, 0) + 1
        counts["hostile_same_cpu"] += t.owner_cpu == ev.cpu
        counts["hostile_from_nmi"] += c.ctx == "nmi"
        if ev.fields["prev_unsafe"] == "1":
            counts["hostile_unsafe"] += 1
        else:
            counts["hostile_safe"] += 1
        self.tell(HostileAcquired(con, t))
        self.tell(TakenOver(con, t))

    def acquire_handover(self, con, c, ev, t):
        r = con.requests.pop(ev.cpu, None)
        word = decode_state(int(ev.fields["old_state"]))
        self.tell(NbconHandoverAcquire(con, c, ev, r if r is not None and r["ctx"] is c
                                       else None, word.req_prio))
        if con.last_owner is not None and con.last_owner is not c:
            self.handed_over(con, t._replace(owner=con.last_owner), ev)
        if r is not None:
            self.lat_handover.add((ev.ts - r["ts"]) * 1e6)

    def become_owner(self, con, c, how, ev):
        r = con.requests.get(ev.cpu)
        if r is not None and r["ctx"] is c:
            del con.requests[ev.cpu]      # a waiter that acquired otherwise
        c.state = OWNER
        c.how = how
        c.since = ev.ts
        c.lineno = ev.lineno
        c.pretrace = False
        c.noticed = False
        con.owner = con.last_owner = c
        con.started = True

    # ------------------------------------------------------- handover
    def on_request(self, con, ev):
        f = ev.fields
        c = self.ctx_of(con, ev)
        self.counts["handover_requests"] += 1
        word = decode_state(int(f["old_state"]))
        self.tell(NbconRequest(con, c, ev, int(f["owner_cpu"]), f["owner_prio"],
                               bool(word.unsafe_takeover)))
        con.requests[ev.cpu] = {"ctx": c, "prio": c.prio, "ts": ev.ts}

    def on_timeout(self, con, ev):
        c = self.ctx_of(con, ev)
        self.counts["handover_timeouts"] += 1
        r = con.requests.get(ev.cpu)
        if r is not None and r["ctx"] is c:
            del con.requests[ev.cpu]
        self.lat_timeout.add(int(ev.fields["waited_us"]))

    def on_release(self, con, ev):
        f = ev.fields
        c = self.ctx_of(con, ev)
        self.counts["releases"] += 1
        if not self.check_owner(con, c, ev, "release"):
            return
        handover = f["handover"] == "1"
        if handover:
            self.counts["handover_grants"] += 1
            req = [r for r in con.requests.values() if r["prio"] == f["to_prio"]]
            self.tell(NbconHandoverRelease(con, c, ev, f["to_prio"], req[0] if req else None))
            self.lose(con, c, HANDED, ev.ts, "handed over to a %s waiter" % f["to_prio"])
        else:
            if c.attempt is not None and c.attempt.outcome is None:
                self.finish_attempt(c.attempt, "abandoned")
            self.lose(con, c, RELEASED, ev.ts, "released")
        con.silent.pop(c, None)

    def on_lost(self, con, ev):
        f = ev.fields
        c = self.ctx_of(con, ev)
        lost = self.counts["lost"]
        lost[f["where"]] = lost.get(f["where"], 0) + 1
        if con.owner is c and c.state == OWNER:
            # it saw another owner's word while the chain still has it
            # owning: only a seq moved under it (nbcon_seq_force() in panic)
            self.anomaly(con, "%s traced nbcon_lost (%s) while it owns the console"
                         % (c.label(), f["where"]))
            return
        c.noticed = True

    # -------------------------------------------------------- records
    def on_emit(self, con, ev):
        started = self.start_emission(con, ev)
        if started is None:
            return
        c, seq, dropped = started
        f = ev.fields
        if c in con.silent:
            self.tell(NotOwnerAction(con, c, ev, "emission of seq %d by a %s" % (
                seq, con.silent[c]), con.owner))
        self.check_owner(con, c, ev, "emission of seq %d" % seq)
        if con.committed is not None:
            self.tell(Emitted(con, ev, c, seq, dropped, con.committed))
        prev = con.attempt
        if prev is not None and prev.outcome is None:
            self.finish_attempt(prev, "abandoned")
        self.tell(NbconReplay(con, ev, c, seq, f["replay"] == "1", con.interrupted,
                              bool(con.interrupted_unknown)))
        reprint = self.place_seq(con, ev, c, seq, dropped, prev)
        if f["replay"] == "1" or reprint:
            self.counts["reprints"] += reprint
            self.counts["replays"] += f["replay"] == "1"
            con.reprints += reprint
        st = self.store.get(seq)
        att = Attempt(con.name, seq, dropped, int(f["len"]), c, ev.ts, ev.lineno,
                      st[1] if st is not None else None)
        att.reprint = reprint
        att.replay = f["replay"] == "1"
        con.attempt = c.attempt = att
        c.last_seq = seq

    def report_skip(self, con, skip, prev):
        """A skip the dropped count does not cover is a violation: the
        linker orders by the state words, so no late commit explains it
        (the RFC model's report_skip())."""
        self.tell(skip)

    def on_commit(self, con, ev):
        c = self.ctx_of(con, ev)
        seq = int(ev.fields["seq"])
        self.counts["commits"] += 1
        con.commits += 1
        att = c.attempt
        if not self.check_owner(con, c, ev, "commit of seq %d" % seq):
            if att is not None and att.outcome is None and att.seq == seq:
                self.finish_attempt(att, "lost")
            return
        if con.next_seq is None:
            self.first_record(con, seq, 0, c, ev, "commit")
            con.next_seq = seq
        if seq < con.next_seq:
            self.tell(Recommitted(con, c, ev.cpu, seq, con.next_seq))
        else:
            self.tell(Committed(con, ev, c, seq, con.next_seq))
        if att is not None and att.seq == seq and att.outcome is None:
            self.finish_attempt(att, "commit")
        elif not c.pretrace:
            st = self.store.get(seq)
            if st is not None and st[2] >= self.trace.console_loglevel:
                self.grant(con, "suppressed-record", ev)
            else:
                self.tell(UnemittedCommit(con, ev, c, seq, None if st is None else st[2],
                                          self.trace.console_loglevel))
        con.next_seq = max(con.next_seq, seq + 1)
        con.committed = seq + 1
        con.last_commit = seq
        con.interrupted = con.interrupted_unknown = None
        st = self.store.get(seq)
        if st is not None:
            self.lat_store_commit.add((ev.ts - st[0]) * 1e6)
        self.sinks.records_passed(seq)

    HANDLERS = {
        "nobkl_acquire": on_acquire,
        "nobkl_release": on_release,
        "nobkl_lost": on_lost,
        "nobkl_handover_request": on_request,
        "nobkl_handover_timeout": on_timeout,
        "nobkl_emit": on_emit,
        "nobkl_commit": on_commit,
    }


# how=X -> what that acquire does before its context becomes the owner
ACQUIRE = {
    "direct": NbconModel.acquire_direct,
    "hostile": NbconModel.acquire_hostile,
    "handover": NbconModel.acquire_handover,
}
