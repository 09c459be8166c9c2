"""The ownership model of the RFC's nobkl consoles as ported to Linux 6.1
(rules.RFC_61): it applies the console events, in the order the
ordering stage gives them, to consoles, the contexts that own them and
their emission attempts (model.py), and hands what it saw on: the facts
the rules judge (typed values of facts.py, told to one sink, tell(),
the registry's dispatcher), the attempts as they end (for the serial
alignment), and the ownership intervals and marks (the recorder,
intervals.py).  It judges nothing itself:
which fact an event makes, and the tolerances, are its; whether a fact
breaks a rule is the units' (trace_rules.py).

Ordering tolerance.  A tracepoint fires some time before or after the
cmpxchg it reports, so with a global clock the trace order of events of
*different* CPUs (or of an NMI and the context it interrupted) near an
ownership change is not the order of the state changes.  The model
therefore trusts the `prev_*` fields of `nobkl_acquire` (the state word at
the successful cmpxchg) and accepts these reorders:

  * release of the old owner reported after the next direct acquire
    (`prev_locked=0`): the old owner is "release-pending" and must not
    emit or commit any more;
  * `nobkl_lost` of the victim reported before the taker's acquire;
  * an acquire reported after the hostile/handover acquire that took the
    console from it (the taker's prev_cpu/prev_prio name it);
  * `nobkl_handover_grant` reported before the waiter's request, or the
    waiter's handover acquire reported before the grant.

Events of one context are always in program order.  Every tolerance
granted here is a row of tolerances.py, told as a fact (grant()) and
counted from it, not by the model.

Invariants of the model:
  * a console has at most one owner (con.owner), a context in state
    OWNER; every other context it knows is GRANTED, HANDED, LOST,
    RELPEND or RELEASED, and only an acquire (or adopt(): the owner from
    before the trace) makes a context the owner;
  * a console has at most one open attempt (outcome None), its latest
    (con.attempt), which is also its context's (c.attempt); an attempt
    ends once, with one outcome, and is then handed on
    (sinks.attempt_ended());
  * con.next_seq, the seq the console commits next, moves only forward
    (until trace loss): by an emission that skips (counted as dropped)
    or by the owner's commit; a commit by a context that is not the
    owner moves it only when the next emission shows it took effect
    (ghost_commit);
  * an ownership interval is handed to the recorder when it ends
    (end_interval()): its context stops owning the console, or the
    trace ends;
  * what the trace has not shown yet is kept, not guessed: an owner the
    state word names before its acquire (phantoms), a grant or commit
    traced late (awaiting_grant, late_commits), a loss naming an owner
    not yet seen (lost_names); each is settled by the event it waits
    for or reported at the end (finish());
  * after trace loss every console's state is forgotten (forget()).

What the model reads of the trace and where what it sees goes are
model_io.py's, and nothing else: the checker that drives it builds a
TraceState (the record window, the ordering notes, whether the trace
lost events and whether an event is proven before that, the kernel's
arch32 and console loglevel, the serial console) and Sinks (tell(),
anomaly(), late_damage(), keep_stamp(), emitted(), attempt_ended(),
records_passed(), the dropped records' ledger) and hands them to the
constructor; the model never holds the checker.

The model is one object, RfcModel: its state is the consoles' (model.py)
and its own counters, set up here, with the way in (history(),
HANDLERS, applied(), transition_seen(), forget(), finish()) and what
every kind of event shares (a context, an ownership ending, an attempt
ending, the owner from before the trace).  The events are applied by
classes of their own modules, one family of events each:

  rfc_acquire.py   acquires: the victim, the phantoms (an owner named
                   before its acquire), the three ways to take a console;
  rfc_handover.py  releases and the handover's request, grant, timeout;
  rfc_owners.py    losses, and the owners a state word or a loss names;
  rfc_records.py   emissions and commits: the attempts, the seq, the
                   dropped records, the commits traced late.
"""

from .facts import (EmptyCommit, GrantAwaited, GrantUnclaimed, HandedOver, NotOwnerAction,
                    ToleranceGranted)
from .model import OWNER, GRANTED, HANDED, LOST, Ctx
from .rfc_acquire import Acquiring
from .rfc_handover import Handover
from .rfc_owners import Owners
from .rfc_records import Records
from .rules import RFC_61
from .stats import LogHist

MODEL = RFC_61               # the console design this module models


class RfcModel(Acquiring, Handover, Owners, Records):
    """The ownership model of the RFC's nobkl consoles (rfc-6.1): the
    checker hands it each console event in causal order; it keeps
    every console's owner, contexts and emission attempts, hands what it
    sees to the rule units as facts (tell()) and the ownership
    intervals to the recorder (intervals.Recorder).  The event families
    are applied by the classes it is made of: acquires (rfc_acquire.py),
    releases and handovers (rfc_handover.py), losses and named owners
    (rfc_owners.py), emissions and commits (rfc_records.py)."""

    def __init__(self, trace, sinks, consoles, counts, recorder=None):
        self.trace = trace               # what it reads of the trace (model_io.py)
        self.sinks = sinks               # where what it sees goes (model_io.py)
        self.consoles = consoles         # name -> model.Console (the checker creates them)
        self.counts = counts             # the verdict's counters of what it saw
        self.recorder = recorder         # intervals and marks (intervals.Recorder)
        self.store = trace.store         # seq -> (ts, text, level): the record window
        self.tell = sinks.tell           # the facts' one sink (rules.Dispatch)
        self.anomaly = sinks.anomaly
        # producer -> set of n the serial console dropped
        self.dropped_producer = sinks.dropped_producer
        self.lat_handover = LogHist()
        self.lat_store_commit = LogHist()
        self.lat_timeout = LogHist()

    def history(self, con, ev):
        """Before ev is applied: settle what waited for the named
        context's next event.  True when ev is history from before the
        console's first traced transition (not applied)."""
        name = ev.name
        if con.phantoms and name != "nobkl_acquire":
            # the named context goes on without the acquire the state
            # word promised: that acquire never comes
            k = (ev.cpu, ev.fields.get("prio"), int(ev.fields.get("thread", 0)))
            ph = con.phantoms.pop(k, None)
            if ph is not None and ph[3] is not None:
                self.owner_unexplained(con, ph[3])
        if con.late_commits:
            f = ev.fields
            lc = con.late_commits.get(con.ctxs.get((ev.cpu, f.get("ctx"), f.get("thread"))))
            if lc is not None and not (name == "nobkl_commit" and f.get("seq") == str(lc[1])):
                # the old owner's next event is not that commit
                self.late_commit_missing(con, lc[0])
        notes = self.trace.chain_notes
        if notes and notes.get(ev.lineno) == "pre-chain":
            del notes[ev.lineno]
            f = ev.fields
            o = con.owner
            if o is None or o.key != (ev.cpu, f.get("ctx"), f.get("thread")):
                # a transition from before the console's first traced one,
                # traced late (ordering.py): history before the trace, as
                # if the trace had begun after it
                self.grant(con, "transition-before-chain-start", ev)
                return True
        return False

    # Applying console event ev (its fields checked) is
    # HANDLERS[ev.name](model, con, ev), which raises KeyError or
    # ValueError when a field it needs is missing or damaged; then:
    def applied(self, con, ev):
        """After ev was applied: an acquire settles its context's losses
        whose named owner the trace did not show."""
        if con.lost_names and ev.name == "nobkl_acquire":
            self.lost_owner_due(con, ev)

    def transition_seen(self, con, ev):
        """After ev, applied or not: an owner's own transition marks the
        requests counted so far as before its next record (in chain
        order)."""
        name = ev.name
        if name == "nobkl_acquire" or (name == "nobkl_commit" and not self.trace.arch32):
            c = con.ctxs.get((ev.cpu, ev.fields.get("ctx"), ev.fields.get("thread")))
            if c is not None:
                c.req_mark = con.request_count

    def forget(self):
        """Trace loss: every console's state is unknown from here on; an
        open attempt's outcome is unknown (the serial check skips it)."""
        for con in self.consoles.values():
            if con.attempt is not None and con.attempt.outcome is None:
                con.attempt.outcome = "open"
                self.counts["attempts"]["open"] += 1
            con.reset()

    def finish(self, last_ts):
        """End of the trace: settle what still waits, end the open
        attempts and the owners' intervals."""
        for con in self.consoles.values():
            for old in list(con.late_commits):
                self.late_commit_missing(con, old)
            named = [ph[3] for ph in con.phantoms.values() if ph[3] is not None] + \
                [x[2] for x in con.lost_names]
            con.phantoms = {}
            con.lost_names = []
            for ev in named:
                self.owner_unexplained(con, ev)
            if con.grant is not None and not con.grant["matched"]:
                self.tell(GrantUnclaimed(con, con.grant))
            for w, _ in con.awaiting_grant.values():
                self.tell(GrantAwaited(con, w))
            if con.attempt is not None and con.attempt.outcome is None:
                self.finish_attempt(con.attempt, "open")
            for c in con.ctxs.values():
                if c.state == OWNER and con.owner is c:
                    self.end_interval(con, c, last_ts, "trace end")

    def ctx_of(self, con, ev):
        f = ev.fields
        key = (ev.cpu, f["ctx"], f["thread"])
        c = con.ctxs.get(key)
        if c is None:
            c = con.ctxs[key] = Ctx(key)
        c.prio = f["prio"]
        return c

    def end_interval(self, con, c, ts, how):
        c.end_how = how
        con.intervals += 1
        if self.recorder is not None and c.since is not None:
            self.recorder.interval(con.name, c.cpu, c.ctx, c.thread, c.prio, c.how,
                                c.since, ts, how)

    def finish_attempt(self, att, outcome):
        if att is None or att.outcome is not None:
            return
        att.outcome = outcome
        self.counts["attempts"][outcome] += 1
        if att.ctx.attempt is att:
            att.ctx.attempt = None
        if att.len == 0 and outcome == "commit":
            st = self.store.get(att.seq)
            if st is not None and st[2] < self.trace.console_loglevel:
                self.tell(EmptyCommit(self.consoles[att.con], att, st[2],
                                      self.trace.console_loglevel))
        self.sinks.attempt_ended(att)

    def end_ownership(self, con, c, state, ts, how):
        """c is no longer the console's owner, in `state`; its interval
        ends.  Both models' lose() start this way; what becomes of c's
        open attempt is each model's own."""
        if con.owner is c:
            con.owner = None
        c.state = state
        c.noticed = False
        self.end_interval(con, c, ts, how)

    def lose(self, con, c, state, ts, how):
        """Context c stops owning the console (state LOST/HANDED/...)."""
        self.end_ownership(con, c, state, ts, how)
        c.lost_mid = c.attempt is not None and c.attempt.outcome is None
        if c.attempt is not None:
            self.finish_attempt(c.attempt, "lost" if state == LOST else
                                "handover" if state in (HANDED, GRANTED) else "abandoned")

    def handed_over(self, con, t, ev):
        """Handover acquire ev took the console from t.owner: the fact,
        with whether that was a panic-priority owner on another CPU and
        whether it was in the middle of a record.  Such an owner's release
        at the end of its record hands the console to any waiting context:
        a tolerance.  Both models tell a handover this way."""
        v = t.owner
        panic = v is not None and v is not t.taker and v.prio == "panic" and v.cpu != t.cpu
        mid = panic and (v.attempt is not None and v.attempt.outcome is None
                         if v.state == OWNER else v.lost_mid)
        self.tell(HandedOver(con, t, panic, mid))
        if panic and not mid:
            self.grant(con, "panic-release-handover", ev)
            self.anomaly(con, "panic-priority owner %s handed the console over to "
                         "%s at the end of its output (release with a waiter)"
                         % (v.label(), t.taker.label()))

    def grant(self, con, name, ev):
        """The model takes ev for legitimate under tolerance `name`, a
        row of tolerances.py: a fact like any other it sees.  The model
        keeps no count of it; the tolerances' counter (tolerances.Tally)
        does.  Both models grant a tolerance this way."""
        self.tell(ToleranceGranted(con, name, ev))

    def adopt(self, con, c, ev):
        """First sight of a console: c owned it before the trace started."""
        con.last_owner = c
        c.state = OWNER
        c.how = "pre-trace"
        c.since = ev.ts
        c.lineno = ev.lineno
        c.pretrace = True
        con.owner = c
        con.started = True

    def owns_or_adopted(self, con, c, ev):
        """True when c owns the console, or when the console had no
        traced transition yet: then c owned it before the trace
        (adopt()).  The start of every owner check, in both models (the
        first owner is not seen acquiring)."""
        if con.owner is c and c.state == OWNER:
            return True
        if not con.started:
            self.adopt(con, c, ev)
            return True
        return False

    def check_owner(self, con, c, ev, what):
        """c does something only an owner may do.  Returns True when OK."""
        if self.owns_or_adopted(con, c, ev):
            return True
        if (self.trace.arch32 and c.state == LOST and ev.name == "nobkl_commit" and
                c.lost_to_cpu is not None and c.lost_to_cpu != ev.cpu and
                str(c.last_seq) == ev.fields.get("seq") and con.next_seq == c.last_seq):
            # seed patch 006: on 32-bit the seq is outside the state word;
            # an owner delayed (NMI) between its state check and the seq
            # cmpxchg commits after a remote takeover.  Documented
            # duplicate, never a loss.
            self.grant(con, "race32-late-commit", ev)
            return False
        self.tell(NotOwnerAction(con, c, ev, what, con.owner))
        return False

    HANDLERS = {
        "nobkl_acquire": Acquiring.on_acquire,
        "nobkl_release": Handover.on_release,
        "nobkl_lost": Owners.on_lost,
        "nobkl_handover_request": Handover.on_request,
        "nobkl_handover_timeout": Handover.on_timeout,
        "nobkl_handover_grant": Handover.on_grant,
        "nobkl_emit": Records.on_emit,
        "nobkl_commit": Records.on_commit,
    }
