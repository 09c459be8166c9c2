"""The ownership model of the RFC's nobkl consoles as ported to Linux 6.1
(rules.RFC_61): it applies the console events, in the order the
ordering stage gives them, to consoles, the contexts that own them and
their emission attempts (model.py), and hands what it saw to its host,
the checker: the facts the rules judge (rules.FACTS, through
host.judge()), the attempts as they end (for the serial alignment) and
the ownership intervals and marks (the `facts` recorder, intervals.py).
It judges nothing itself: which fact an event makes, and the
tolerances, are its; whether a fact breaks a rule is the units'
(trace_rules.py).

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
granted here is a row of tolerances.py with its counter in `counts`.

Invariants of the model:
  * a console has at most one owner (con.owner), a context in state
    OWNER; every other context it knows is GRANTED, HANDED, LOST,
    RELPEND or RELEASED, and only an acquire (or adopt(): the owner from
    before the trace) makes a context the owner;
  * a console has at most one open attempt (outcome None), its latest
    (con.attempt), which is also its context's (c.attempt); an attempt
    ends once, with one outcome, and is then handed to the host
    (attempt_ended());
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

The host provides: the record window (store, first_stored), the
trace's state (loss_seen, not_before_loss(), causal_order, chain_notes,
arch32, console_loglevel, serial_console) and where what the model
sees goes: judge() (a fact to its units), anomaly(), late_damage() (an
event found damaged after it was applied; keep_stamp() keeps the
happens-before stamp of an event kept for that), emitted() (a seq the
console printed, for the record window), attempt_ended() (the serial
alignment), records_passed() (the consoles' commits passed a seq).
"""

from collections import namedtuple

from .model import (OWNER, GRANTED, HANDED, LOST, RELPEND, RELEASED,
                    prio_rank, Attempt, Ctx, StrayByte, PRIO, PRIO_NAME)
from .chain_state import state_req_prio
from .rules import RFC_61
from .serial import pstress_id
from .stats import LogHist
from .trace_rules import Emission, Skip, Takeover

MODEL = RFC_61               # the console design this module models

# An acquire's fields as the model reads them: ev the event, c its
# context (model.Ctx), how, prio, the state word it replaced (prev_*),
# mark its unsafe_takeover field (None: the kernel has none)
Acquire = namedtuple("Acquire", "ev c how prio prev_locked prev_cpu prev_prio "
                                "prev_thread prev_unsafe mark")

PHANTOM_WINDOW = 0.5         # s: how late an acquire event may be traced (a vCPU whose
                             #    clock lags: 19 ms on a real run)
GRANT_WAIT = 0.5             # s: how late a handover grant may be traced after the acquire


class RfcModel:
    def __init__(self, host, consoles, counts, facts=None):
        self.host = host
        self.consoles = consoles         # name -> model.Console (the host creates them)
        self.counts = counts             # the verdict's counters (tolerances among them)
        self.facts = facts               # intervals and marks (intervals.Recorder)
        self.store = host.store          # seq -> (ts, text, level): the record window
        self.judge = host.judge
        self.anomaly = host.anomaly
        self.race32 = 0
        self.suppressed = 0              # commits of records below the console loglevel
        self.dropped_producer = {}       # producer -> set of n the serial console dropped
        self.lat_handover = LogHist()
        self.lat_store_commit = LogHist()
        self.lat_timeout = LogHist()

    # ------------------------------------------------------------ applying
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
        notes = self.host.chain_notes
        if notes and notes.get(ev.lineno) == "pre-chain":
            del notes[ev.lineno]
            f = ev.fields
            o = con.owner
            if o is None or o.key != (ev.cpu, f.get("ctx"), f.get("thread")):
                # a transition from before the console's first traced one,
                # traced late (ordering.py): history before the trace, as
                # if the trace had begun after it
                self.counts["pre_chain_events"] += 1
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
        if name == "nobkl_acquire" or (name == "nobkl_commit" and not self.host.arch32):
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
                self.judge("trace-end:grant", con, con.grant)
            for w, _ in con.awaiting_grant.values():
                self.judge("trace-end:awaited-grant", con, w)
            if con.attempt is not None and con.attempt.outcome is None:
                self.finish_attempt(con.attempt, "open")
            for c in con.ctxs.values():
                if c.state == OWNER and con.owner is c:
                    self.end_interval(con, c, last_ts, "trace end")

    # ------------------------------------------------------------ the state machine
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
        if self.facts is not None and c.since is not None:
            self.facts.interval(con.name, c.cpu, c.ctx, c.thread, c.prio, c.how,
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
            if st is not None and st[2] < self.host.console_loglevel:
                self.judge("empty-commit", self.consoles[att.con], att, st[2])
        self.host.attempt_ended(att)

    def lose(self, con, c, state, ts, how):
        """Context c stops owning the console (state LOST/HANDED/...)."""
        if con.owner is c:
            con.owner = None
        c.state = state
        c.noticed = False
        self.end_interval(con, c, ts, how)
        c.lost_mid = c.attempt is not None and c.attempt.outcome is None
        if c.attempt is not None:
            self.finish_attempt(c.attempt, "lost" if state == LOST else
                                "handover" if state in (HANDED, GRANTED) else "abandoned")

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

    def on_acquire(self, con, ev):
        """An acquire: the facts its fields make, then what it does to the
        state: a late one ends at once; else it ends a pending grant, takes
        the console from its victim (how) and makes its context the
        owner."""
        a = self.acquire_of(con, ev)
        self.judge_acquire(con, a)
        notes = self.host.chain_notes
        note = notes.pop(ev.lineno, None) if notes else None    # ordering.py's
        if self.acquire_was_late(con, a, note):
            return
        grant_lost = self.pending_grant(con, a)
        if con.awaiting_grant and not self.host.causal_order:
            self.overdue_grants(con, a)
        O = con.owner
        victim = self.victim_of(con, a, O, grant_lost)
        if a.how != "handover" and con.requests:
            # a waiter on this CPU that acquires otherwise gave up its request
            r = con.requests.get(ev.cpu)
            if r is not None and r["ctx"] == a.c.ctx:
                del con.requests[ev.cpu]
        if a.how == "direct":
            self.acquire_direct(con, a, O)
        elif a.how == "hostile":
            self.acquire_hostile(con, a, victim)
        elif a.how == "handover":
            self.acquire_handover(con, a, O, victim, note)
        else:
            self.anomaly(con, "unknown how=%s" % a.how)
        self.become_owner(con, a)

    def acquire_of(self, con, ev):
        """The acquire's fields as the model uses them (KeyError or
        ValueError: one is missing or damaged; counted once they read)."""
        f = ev.fields
        how = f["how"]
        if how == "handover":
            why = self.handover_prev_problem(con, ev)
            if why is not None:
                raise ValueError(why)
        c = self.ctx_of(con, ev)
        a = Acquire(ev, c, how, f["prio"], f["prev_locked"] == "1", int(f["prev_cpu"]),
                    f["prev_prio"], int(f["prev_thread"]), f.get("prev_unsafe") == "1",
                    f.get("unsafe_takeover"))
        self.counts["acquire"][how] = self.counts["acquire"].get(how, 0) + 1
        con.acquires[how] = con.acquires.get(how, 0) + 1
        return a

    def judge_acquire(self, con, a):
        """The facts every acquire makes, as its fields tell (before the
        model reads them against its state); the unsafe-takeover mark is
        sticky."""
        c, ev, mark = a.c, a.ev, a.mark
        if a.how == "hostile":
            self.judge("hostile-acquire", con, Takeover(
                c, ev.cpu, a.prio, a.prev_locked, prio_rank(a.prev_prio),
                "cpu%d/%s" % (a.prev_cpu, a.prev_prio), a.prev_cpu, None))
        self.judge("acquire", con, c, a.how, a.prev_unsafe,
                   None if mark is None else mark == "1")
        con.unsafe_mark = con.unsafe_mark or mark == "1"

    def acquire_was_late(self, con, a, note):
        """A late acquire event: the console was already taken from it (an
        earlier acquire's state word named it, a phantom).  Its interval
        ends where that acquire was; True when so."""
        c, ev = a.c, a.ev
        ph = con.phantoms.pop((ev.cpu, a.prio, c.thread), None) if con.phantoms else None
        if ph is None or not self.acquire_traced_late(ph, a.how, ev.ts, note):
            return False
        self.counts["acquires_traced_after_takeover"] += 1
        # taken by handover: its grant and release handover=1 follow
        c.late_grant = ph[1] == "handover"
        c.state = HANDED if c.late_grant else LOST
        c.how = a.how
        c.since = ev.ts
        c.lineno = ev.lineno
        self.end_interval(con, c, ph[0], "handed over (acquire traced late)" if c.late_grant
                          else "taken over (acquire traced late)")
        self.owner_seen(con, ev.cpu, a.prio)
        return True

    def pending_grant(self, con, a):
        """A still-pending grant that this acquire is not the pickup of
        ends here.  True when the state word shows the grant took effect
        (the tolerance: the target had not picked the console up)."""
        g = con.grant
        ev = a.ev
        if g is None or (a.how == "handover" and g["to_cpu"] == ev.cpu):
            return False
        grant_lost = False
        if a.prev_locked and a.prev_cpu == g["to_cpu"] and a.prev_prio == g["to_prio"]:
            # The grant took effect (the state word names its target),
            # but the target had not picked the console up yet (its
            # vCPU not running) when a higher priority took it over;
            # the target then gives up (handover timeout).
            grant_lost = True
            self.counts["grants_taken_before_pickup"] += 1
            self.anomaly(con, "cpu%d/%s took the console (how=%s) that cpu%d had granted "
                         "to cpu%d/%s before the target picked it up"
                         % (ev.cpu, a.prio, a.how, g["from"].cpu, g["to_cpu"], g["to_prio"]))
        else:
            self.judge("handover:bypassed-grant", con, g, ev, a.how)
        con.grant = None
        return grant_lost

    def overdue_grants(self, con, a):
        """By timestamps: handover acquires whose grant did not come
        within GRANT_WAIT stop waiting.

        The old owner's grant tracepoint fires after its cmpxchg and may
        be traced late (its vCPU preempted in between: 41 ms on a real
        run).  In chain order only a handover acquire the chain could
        not place waits (note "unchained": it saw a state from before its
        console's first transition); its grant can only be a transition
        from before the chain, listed anywhere, so it waits for it until
        the trace ends (finish()) or loses events, not for a time."""
        ts = a.ev.ts
        for vcpu, (w, wts) in list(con.awaiting_grant.items()):
            if ts - wts > GRANT_WAIT:
                del con.awaiting_grant[vcpu]
                self.judge("handover:overdue-grant", con, w, vcpu, a.ev, GRANT_WAIT)

    def victim_of(self, con, a, O, grant_lost):
        """The context this acquire takes the console from (or None), from
        the tracked owner O, the state word and the owner a loss
        expected; notes a state word owner whose acquire is not traced
        yet (a phantom)."""
        c, ev, how = a.c, a.ev, a.how
        prev_cpu, prev_prio, prev_thread = a.prev_cpu, a.prev_prio, a.prev_thread
        victim = O
        last = con.last_owner
        # A last owner that released cannot be the owner the state word
        # names: that is a new ownership of the same context whose acquire
        # is listed later (its CPU's clock lags behind)
        known_prev = (last is not None and last.cpu == prev_cpu and
                      last.thread == prev_thread and last.state != RELEASED)
        if O is c:
            self.judge("owner-acquire", con, Takeover(
                c, ev.cpu, a.prio, True, prio_rank(a.prio), c.label(), ev.cpu, c), how)
            victim = None
        elif a.prev_locked and con.started and not known_prev and \
                (O is None or O.cpu != prev_cpu or O.thread != prev_thread):
            # the state word names an owner whose acquire is not traced yet
            # (a grant's target: only its handover acquire can be that one).
            # The acquire that named it is kept to report it if it never
            # comes (owner_unexplained()), unless a grant installed that
            # owner (its target gave up before picking the console up), a
            # direct acquire found the word locked (one-owner judges
            # that), or a handover acquire's request-time state names the
            # last owner, which released (handover-target judges that)
            explained = grant_lost or how == "direct" or (
                how == "handover" and last is not None and
                (last.cpu, last.prio, last.thread) == (prev_cpu, prev_prio, prev_thread))
            con.phantoms[(prev_cpu, prev_prio, prev_thread)] = (
                ev.ts, how, "handover" if grant_lost else None, None if explained else ev)
            if not explained:
                self.host.keep_stamp(ev)
            if O is not None:
                self.anomaly(con, "acquire by cpu%d: state word owner cpu%d/%s, tracked owner %s"
                             % (ev.cpu, prev_cpu, prev_prio, O.label()))
        if O is None and con.expected_taker is not None:
            victim = con.expected_taker[2]
        elif O is None and a.prev_locked and known_prev and \
                last.state in (GRANTED, HANDED, LOST):
            victim = last
        return victim

    def acquire_direct(self, con, a, O):
        """A direct acquire: of a free state word, the tracked owner O
        released (its release traced later); of a locked one, a fact."""
        c, ev, ts = a.c, a.ev, a.ev.ts
        if a.prev_locked:
            self.judge("owner-acquire", con, Takeover(
                c, ev.cpu, a.prio, True, prio_rank(a.prev_prio),
                "cpu%d/%s" % (a.prev_cpu, a.prev_prio), a.prev_cpu, O), a.how)
            if O is not None and O is not c:
                self.lose(con, O, RELPEND, ts, "overlapped by direct acquire")
        elif O is not None and O is not c:
            # release of O not traced yet
            self.counts["releases_traced_after_next_acquire"] += 1
            O.state = RELPEND
            con.owner = None
            self.end_interval(con, O, ts, "released")

    def acquire_hostile(self, con, a, victim):
        """A hostile takeover (always prev_locked: field_problem() takes a
        hostile acquire of a free state word for a damaged record): the
        takeover fact with the owner as tracked, the victim loses it."""
        c, ev, prio, ts = a.c, a.ev, a.prio, a.ev.ts
        counts = self.counts
        counts["hostile_by_prio"][prio] = counts["hostile_by_prio"].get(prio, 0) + 1
        if ev.fields.get("ctx") == "nmi":
            counts["hostile_from_nmi"] += 1
        if a.prev_unsafe:
            self.unsafe_victim(con, a, victim)
        vprio = prio_rank(a.prev_prio) if a.prev_locked else 0
        vlabel = "cpu%d/%s" % (a.prev_cpu, a.prev_prio)
        vcpu = a.prev_cpu if a.prev_locked else None
        if victim is not None and victim is not c:
            if prio_rank(victim.prio) > vprio:
                vprio = prio_rank(victim.prio)
            vlabel = victim.label()
            vcpu = victim.cpu
        if vcpu == ev.cpu:
            counts["hostile_same_cpu"] += 1
        t = Takeover(c, ev.cpu, prio, a.prev_locked or victim is not None, vprio, vlabel,
                     vcpu, victim)
        self.judge("takeover", con, t)
        if self.facts is not None:
            self.facts.mark("hostile", con.name, ev.cpu, ts, "%s<-%s" % (prio, vlabel))
        if victim is not None and victim is not c:
            if victim.state in (OWNER, GRANTED):
                self.lose(con, victim, LOST, ts, "taken over (hostile, %s cpu%d)"
                          % (prio, ev.cpu))
            victim.lost_to_cpu = ev.cpu

    def unsafe_victim(self, con, a, victim):
        """A hostile takeover of an owner inside its unsafe section."""
        self.counts["hostile_unsafe"] += 1
        mark, prio = a.mark, a.prio
        if a.prev_locked and prio == "panic" and mark in (None, "1"):
            # The old owner may still write the byte of its unsafe
            # section (the documented last resort of panic output)
            # until it notices the loss: one byte, of the line it was
            # printing.  Only after a takeover the series allows: by
            # panic output, and where the kernel marks the takeovers it
            # allows (the final flush), only after those
            # (unsafe-takeover).  An earlier victim on that CPU keeps
            # its byte if it has not written it.
            att = victim.attempt if victim is not None else None
            text = att.text if att is not None else None
            old = con.unsafe_victims.get(a.prev_cpu)
            allowances = [b for b in old[3] if not b.spent] if old is not None else []
            allowances.append(StrayByte(a.prev_cpu, a.ev.lineno, text))
            con.unsafe_victims[a.prev_cpu] = [victim, None, None, allowances]
        if prio != "panic":
            self.anomaly(con, "hostile takeover by cpu%d/%s of an owner inside an unsafe "
                         "section (the series allows that to panic output only)"
                         % (a.ev.cpu, prio))

    def acquire_handover(self, con, a, O, victim, note):
        """A handover acquire: it takes its request and the pending grant
        (or waits for a grant traced late), the victim hands over."""
        c, ev, prio, ts = a.c, a.ev, a.prio, a.ev.ts
        req = con.requests.pop(ev.cpu, None)
        self.judge("handover:acquire", con, c, ev, a.prev_cpu, req, prio)
        if req is not None and req["prio"] == prio and req["thread"] == c.thread:
            self.lat_handover.add((ts - req["ts"]) * 1e6)
        g = con.grant
        if g is not None:
            self.judge("handover:granted-acquire", con, g, c, ev, prio)
            con.grant = None
        elif O is not None and O is not c:
            if self.host.causal_order and note != "unchained":
                # in chain order the grant that installed the state a
                # handover acquire saw comes before it: none did
                self.judge("handover:ungranted-acquire", con, c, ev, O)
            else:
                con.awaiting_grant[O.cpu] = (c, ts)
        if victim is not None:
            # The series hands over mid-record only to a higher priority
            # (none above panic), but every release hands the console
            # to a pending waiter.
            t = Takeover(c, ev.cpu, prio, True, prio_rank(victim.prio), victim.label(),
                         victim.cpu, victim)
            self.judge("handover-takeover", con, t)
        if victim is not None and victim is not c and victim.state in (OWNER, GRANTED):
            self.lose(con, victim, HANDED, ts, "handed over to cpu%d" % ev.cpu)
        if self.facts is not None:
            self.facts.mark("handover", con.name, ev.cpu, ts, prio)

    def become_owner(self, con, a):
        """The acquiring context owns the console from here on."""
        c, ev = a.c, a.ev
        con.expected_taker = None
        c.acq_idx = con.owners_seen
        self.owner_seen(con, ev.cpu, a.prio)
        con.last_owner = c
        c.state = OWNER
        c.how = a.how
        c.since = ev.ts
        c.lineno = ev.lineno
        c.pretrace = False
        c.lost_to_cpu = None
        con.owner = c
        con.started = True

    @staticmethod
    def handover_prev_problem(con, ev):
        """Why a handover acquire's prev_* fields contradict the trace
        itself, or None.  They describe the state the waiter saw when it
        requested the handover (the kernel's req_state), so they name the
        owner it requested from, which is the one that grants: an owner
        changes only by an acquire, which clears the request.  When the
        waiter's request names the granting owner (nobkl_handover_request
        owner_cpu, owner_prio) and the acquire another, two events of
        the trace agree against the acquire: it is damaged."""
        f = ev.fields
        g = con.grant
        grantor = g["from"] if g is not None and g["to_cpu"] == ev.cpu else con.owner
        req = con.requests.get(ev.cpu)
        if grantor is None or req is None or req["owner"] != (grantor.cpu, grantor.prio):
            return None
        if (int(f["prev_cpu"]), f["prev_prio"]) == req["owner"]:
            return None
        return ("prev_cpu=%s prev_prio=%s, but the waiter requested the console from %s "
                "(line %d), which granted it" % (f["prev_cpu"], f["prev_prio"],
                                                 grantor.label(), req["lineno"]))

    def acquire_traced_late(self, ph, how, ts, note):
        """Is this acquire the late event of the owner that an earlier
        acquire (phantom ph: time, how, "handover" when a grant to it was
        taken before pickup) named as the one it took the console from?
        In chain order only a handover acquire can be listed after the
        transition that ended its ownership (a transition links in its
        place), and the chain says it was: the state it saw had already
        been replaced.  In timestamp order (traces without the chain) it
        must come within PHANTOM_WINDOW."""
        if ph[2] is not None and ph[2] != how:
            return False
        if self.host.causal_order:
            return how == "handover" and note == "replaced"
        return ts - ph[0] < PHANTOM_WINDOW

    def check_owner(self, con, c, ev, what):
        """c does something only an owner may do.  Returns True when OK."""
        if con.owner is c and c.state == OWNER:
            return True
        if not con.started:
            self.adopt(con, c, ev)
            return True
        if (self.host.arch32 and c.state == LOST and ev.name == "nobkl_commit" and
                c.lost_to_cpu is not None and c.lost_to_cpu != ev.cpu and
                str(c.last_seq) == ev.fields.get("seq") and con.next_seq == c.last_seq):
            # seed patch 006: on 32-bit the seq is outside the state word;
            # an owner delayed (NMI) between its state check and the seq
            # cmpxchg commits after a remote takeover.  Documented
            # duplicate, never a loss.
            self.race32 += 1
            return False
        self.judge("action", con, c, ev, what)
        return False

    def on_release(self, con, ev):
        c = self.ctx_of(con, ev)
        self.counts["releases"] += 1
        handover = ev.fields["handover"] == "1"
        if c.attempt is not None and c.attempt.outcome is None:
            # Released in the middle of a record.  The series does that
            # when a higher-priority waiter requested a handover
            # (console_can_proceed) even if the waiter gave up meanwhile:
            # the reprint by the next owner is then a documented one.
            outcome = self.release_outcome(con, c.attempt, ev)
            if outcome == "handover":
                self.counts["releases_mid_record_on_request"] += 1
            self.finish_attempt(c.attempt, outcome)
        if c.state == RELPEND:
            c.state = RELEASED
            return
        if c.state in (HANDED, GRANTED) and handover:
            c.state = HANDED
            return
        if con.owner is c and c.state == OWNER:
            if handover:
                self.judge("handover:release", con, c, ev)
            self.lose(con, c, RELEASED, ev.ts, "released")
            return
        if not con.started:
            self.adopt(con, c, ev)
            self.lose(con, c, RELEASED, ev.ts, "released")
            return
        self.check_owner(con, c, ev, "release")
        if c.state != LOST:
            c.state = RELEASED

    def release_outcome(self, con, a, ev=None):
        """An owner released in the middle of record a: asked to (a
        waiter's request came during the record), else abandoned.  The
        proof is causal: the released state word still carries the
        request (`req_prio`), or in chain order a request came after the
        owner's last own transition before the record (on 64-bit its
        previous commit, on 32-bit its acquire).  Only a trace without
        the chain compares timestamps."""
        old = ev.fields.get("old_state") if ev is not None else None
        if con.requests or state_req_prio(old, self.host.arch32):
            return "handover"
        if self.host.causal_order and a.req_mark is not None:
            asked = con.request_count > a.req_mark
        else:
            asked = con.last_request_ts is not None and con.last_request_ts >= a.ts
        return "handover" if asked else "abandoned"

    def on_lost(self, con, ev):
        f = ev.fields
        c = self.ctx_of(con, ev)
        where = f["where"]
        lost = self.counts["lost"]
        lost[where] = lost.get(where, 0) + 1
        c.noticed = True
        self.check_lost_owner(con, c, ev)
        uv = con.unsafe_victims.get(ev.cpu)
        if uv is not None:
            # in chain order its byte may have hit any emission of the
            # owner its loss names: the loss is no transition, the chain
            # does not order it against that owner's emissions
            # (stray_possible()); in timestamp order the loss ends it
            op = f.get("owner_prio")
            if (not self.host.causal_order or op in (None, "none") or
                    not f.get("owner_cpu", "").isdigit()):
                del con.unsafe_victims[ev.cpu]
            else:
                uv[1] = (int(f["owner_cpu"]), op)
        if con.owner is c and c.state == OWNER:
            # the taker's acquire is not traced yet
            self.counts["losses_traced_before_takeover"] += 1
            self.lose(con, c, LOST, ev.ts, "lost (%s) to cpu%s/%s" % (where, f["owner_cpu"], f["owner_prio"]))
            c.lost_to_cpu = int(f["owner_cpu"])
            con.expected_taker = (int(f["owner_cpu"]), f["owner_prio"], c)
        elif c.state in (LOST, HANDED, GRANTED, RELPEND):
            if c.attempt is not None:
                self.finish_attempt(c.attempt, "lost")
        elif not con.started:
            self.adopt(con, c, ev)
            self.lose(con, c, LOST, ev.ts, "lost (%s)" % where)
        else:
            self.anomaly(con, "%s reported lost ownership it did not have" % c.label())

    def on_request(self, con, ev):
        f = ev.fields
        self.counts["handover_requests"] += 1
        thread = int(f["thread"])
        con.requests[ev.cpu] = {"prio": f["prio"], "thread": thread, "ts": ev.ts,
                                "ctx": f["ctx"], "lineno": ev.lineno,
                                "owner": (int(f["owner_cpu"]), f["owner_prio"])}
        con.last_request_ts = ev.ts
        con.request_count += 1
        g = con.grant
        if g is not None and not g["matched"] and g["to_cpu"] == ev.cpu:
            self.judge("handover:request-after-grant", con, g, ev, f["prio"])
            g["matched"] = True

    def on_timeout(self, con, ev):
        f = ev.fields
        self.counts["handover_timeouts"] += 1
        con.requests.pop(ev.cpu, None)     # the waiter gave up its request
        con.last_request_ts = ev.ts
        try:
            self.lat_timeout.add(float(f["waited_us"]))
        except ValueError:
            pass
        if self.facts is not None:
            self.facts.mark("timeout", con.name, ev.cpu, ev.ts, f["prio"])

    def on_grant(self, con, ev):
        f = ev.fields
        c = self.ctx_of(con, ev)
        self.counts["handover_grants"] += 1
        to_cpu = int(f["to_cpu"])
        to_prio = f["to_prio"]
        aw = con.awaiting_grant.pop(ev.cpu, None) if con.awaiting_grant else None
        if aw is not None:
            # the waiter's acquire was traced first; c is the old owner
            self.counts["grants_traced_after_pickup"] += 1
            self.judge("handover:grant-after-acquire", con, c, ev, to_cpu, to_prio, aw[0])
            if c.state not in (HANDED, GRANTED, OWNER):
                self.check_owner(con, c, ev, "handover grant")
            c.state = HANDED
            return
        if c.late_grant and c.state == HANDED:
            # its acquire was traced after the waiter's handover acquire
            # that named it (see on_acquire): the grant is that handover
            c.late_grant = False
            return
        if not self.check_owner(con, c, ev, "handover grant"):
            return
        req = con.requests.get(to_cpu)
        matched = False
        if req is not None:
            matched = True
            self.judge("handover:grant", con, c, ev, to_cpu, to_prio, req)
        elif self.host.causal_order and f.get("old_state") is not None:
            matched = self.unrequested_grant(con, c, ev, to_cpu, to_prio)
        con.grant = {"from": c, "to_cpu": to_cpu, "to_prio": to_prio, "ts": ev.ts,
                     "matched": matched, "lineno": ev.lineno}
        self.owner_seen(con, to_cpu, to_prio)
        self.lose(con, c, GRANTED, ev.ts, "handed over to cpu%d" % to_cpu)

    def unrequested_grant(self, con, c, ev, to_cpu, to_prio):
        """In chain order a waiter's request (a transition: it sets
        `req_prio`) comes before the grant that answers it, so a grant
        to a CPU with no pending request answers none when the state
        word it replaced carries no request, or carries the request of
        another waiter the trace shows pending.  That is judged at the
        grant, whoever takes the console next (a grant taken over before
        any pickup is otherwise forgotten).  True when judged (the grant
        is done with); a request from before the trace stays possible
        otherwise."""
        rp = state_req_prio(ev.fields["old_state"], self.host.arch32)
        other = [(cpu, r) for cpu, r in con.requests.items() if PRIO.get(r["prio"]) == rp]
        if rp and not other:
            return False
        self.judge("handover:unrequested-grant", con, c, ev, to_cpu, to_prio,
                   PRIO_NAME.get(rp, "none"), other[0][0] if other else None)
        return True

    def owner_seen(self, con, cpu, prio):
        """The trace shows (cpu, prio) owning the console (an acquire, or
        a grant to it): a loss that named it is explained."""
        con.owner_last[(cpu, prio)] = con.owners_seen
        con.owners_seen += 1
        if con.lost_names:
            con.lost_names = [x for x in con.lost_names if x[1] != (cpu, prio)]

    def check_lost_owner(self, con, c, ev):
        """A nobkl_lost names the owner the state word showed when the
        context noticed its loss (owner_cpu, owner_prio; none: free):
        the context itself (a failed seq update) or one that owned the
        console after the context acquired it.  Not known before the
        context's first traced acquire (the owner may have acquired
        before the trace).  One not shown yet waits in lost_names:
        (context, (cpu, prio), the loss)."""
        f = ev.fields
        op = f["owner_prio"]
        if op == "none" or c.acq_idx is None:
            return
        named = (int(f["owner_cpu"]), op)
        if named == (c.cpu, c.prio) or con.owner_last.get(named, -1) >= c.acq_idx:
            return
        con.lost_names.append((c, named, ev))
        self.host.keep_stamp(ev)

    def lost_owner_due(self, con, ev):
        """After acquire ev: a loss of the acquiring context whose named
        owner the trace has not shown never will be.  That owner took
        the console before the loss was noticed, so before this acquire:
        in chain order its acquire (or the grant to it) is a transition
        before this one; in timestamp order an acquire listed late is
        a phantom by now (this acquire, or the one before it, named it;
        owner_unexplained() reports it if it never comes)."""
        key = (ev.cpu, ev.fields.get("ctx"), ev.fields.get("thread"))
        late = {(k[0], k[1]) for k in con.phantoms}
        for x in [x for x in con.lost_names if x[0].key == key]:
            con.lost_names.remove(x)
            if x[1] not in late:
                self.owner_unexplained(con, x[2])

    def owner_unexplained(self, con, ev):
        """A state word named an owner that the trace never shows
        acquiring the console (no acquire of it, no grant to it): the
        prev_* fields of acquire ev or the owner_* of loss ev.  Every
        acquire is traced, so the trace lost that event or the name is
        damaged: incomplete input from ev on, not a kernel violation.
        After trace loss the model does not know every owner any more
        (the input is incomplete already): not judged unless ev is
        proven before every loss (host.not_before_loss(): in chain
        order by happens-before, not by the clocks)."""
        if self.host.not_before_loss(ev):
            return
        f = ev.fields
        if ev.name == "nobkl_lost":
            why = "owner_cpu=%s owner_prio=%s" % (f.get("owner_cpu"), f.get("owner_prio"))
        else:
            why = "prev_cpu=%s prev_prio=%s prev_thread=%s" % (
                f.get("prev_cpu"), f.get("prev_prio"), f.get("prev_thread"))
        self.host.late_damage(con, ev, "%s names an owner that the trace never shows acquiring "
                         "the console (no acquire, no grant to it)" % why)

    def late_commit_missing(self, con, old):
        """The old owner's commit that would explain a skipped seq did not
        come as its next event: the skip is a loss after all."""
        lc = con.late_commits.pop(old)
        self.judge("skip", con, lc[3])

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

    def on_emit(self, con, ev):
        f = ev.fields
        c = self.ctx_of(con, ev)
        seq = int(f["seq"])
        dropped = int(f["dropped"])
        self.counts["emits"] += 1
        con.emits += 1
        self.host.emitted(seq)
        if c.state == LOST and not c.noticed and con.started:
            # Taken over between its last ownership check and this
            # tracepoint: the old owner has not noticed yet and will at
            # its next check, before it writes a byte (the driver writes
            # inside unsafe sections).  Not an attempt of its own; a
            # commit by it is still an after-loss violation, and any
            # byte it printed shows up in the serial check.
            self.counts["stale_emits"] += 1
            return
        self.check_owner(con, c, ev, "emission of seq %d" % seq)
        if con.ghost_commit is not None and con.next_seq is not None and \
                seq == con.ghost_commit + 1 == con.next_seq + 1:
            con.committed = seq      # the non-owner's commit took effect (below)
        if con.committed is not None:
            self.judge("emission", con, ev, c, seq, dropped, con.committed)
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
        if con.first_seq is None:
            con.first_seq = seq
        reprint = False
        if con.ghost_commit is not None:
            if con.next_seq is not None and seq == con.ghost_commit + 1 == con.next_seq + 1:
                # the non-owner's commit took effect: already reported
                con.next_seq = seq
            con.ghost_commit = None
        if con.next_seq is None:
            self.first_record(con, seq, dropped, c, ev, "emission")
            con.next_seq = seq
        elif seq < con.next_seq:
            self.judge("reprint", con, Emission(c, ev.cpu, seq, con.next_seq, None))
        elif seq > con.next_seq:
            gap = seq - con.next_seq
            con.dropped_reported += dropped
            if dropped < gap:
                skip = Skip(ev, c, seq, dropped, con.next_seq)
                if prev is not None and prev.outcome == "lost" and prev.ctx is not c and \
                        prev.seq == con.next_seq and gap - dropped == 1:
                    # The old owner may have committed prev.seq just before
                    # the takeover and traced its commit late (seen on a
                    # real run: an NMI's commit traced 2 ms after the
                    # panic-priority taker's first emission of the next
                    # seq; a hardirq under a panic NMI on its own CPU
                    # traced it 2 s later).  Program order decides, not
                    # time: the commit must be that context's next event.
                    if prev.ctx in con.late_commits:
                        self.late_commit_missing(con, prev.ctx)
                    con.late_commits[prev.ctx] = (prev.ctx, prev.seq, ev.ts, skip)
                else:
                    self.judge("skip", con, skip)
            self.account_dropped(con, con.next_seq, seq)
            con.dropped_records += gap
            self.counts["dropped_records"] += gap
            con.next_seq = seq
        elif prev is not None and prev.seq == seq:
            # a reprint of the record the last attempt wrote
            self.judge("reprint", con, Emission(c, ev.cpu, seq, con.next_seq, prev))
            reprint = True
        if reprint:
            self.counts["reprints"] += 1
            con.reprints += 1
        st = self.store.get(seq)
        att = Attempt(con.name, seq, dropped, int(f["len"]), c, ev.ts, ev.lineno,
                      st[1] if st is not None else None)
        att.reprint = reprint
        att.req_mark = c.req_mark
        if con.unsafe_victims:
            att.stray_ok = self.stray_possible(con)
        con.attempt = att
        c.attempt = att
        c.last_seq = seq

    def first_record(self, con, seq, dropped, c, ev, what):
        """The console's first traced emission (or commit) is of `seq`.
        A record whose nobkl_store is in the trace was stored after the
        trace began, so the console cannot have printed it before: every
        seq from the first one stored in the trace up to `seq` must be
        counted by this emission's dropped count (the ringbuffer overwrote
        them before the console got there), else it is lost.  Not checked
        after trace loss (the console's state is unknown then)."""
        lo = self.host.first_stored
        if lo is None or self.host.loss_seen or seq <= lo:
            return
        gap = seq - lo
        counted = min(dropped, gap)
        if counted:
            self.account_dropped(con, seq - counted, seq)
            con.dropped_records += counted
            self.counts["dropped_records"] += counted
        self.judge("first-emission", con, ev, c, seq, dropped, lo, what)

    def account_dropped(self, con, lo, hi):
        if con.name != self.host.serial_console:
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
            self.counts["late_commits_after_takeover"] += 1
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
            self.judge("recommit", con, Emission(c, ev.cpu, seq, con.next_seq, None))
        else:
            self.judge("commit", con, ev, c, seq, con.next_seq)
        if att is None and first and c.pretrace:
            # the trace began between the emission and its commit: the
            # context owned the console before the trace (adopt())
            self.counts["commits_of_pretrace_emission"] += 1
        elif att is None or att.seq != seq:
            st = self.store.get(seq)
            if st is not None and st[2] >= self.host.console_loglevel:
                self.suppressed += 1      # below the console loglevel: not printed
            else:
                self.judge("unemitted-commit", con, ev, c, seq,
                           None if st is None else st[2])
        elif att.outcome is None:
            self.finish_attempt(att, "commit")
        if seq >= con.next_seq:
            con.next_seq = seq + 1
        con.committed = seq + 1
        con.last_commit = seq
        st = self.store.get(seq)
        if st is not None:
            self.lat_store_commit.add((ev.ts - st[0]) * 1e6)
        self.host.records_passed(seq)

    HANDLERS = {
        "nobkl_acquire": on_acquire,
        "nobkl_release": on_release,
        "nobkl_lost": on_lost,
        "nobkl_handover_request": on_request,
        "nobkl_handover_timeout": on_timeout,
        "nobkl_handover_grant": on_grant,
        "nobkl_emit": on_emit,
        "nobkl_commit": on_commit,
    }
