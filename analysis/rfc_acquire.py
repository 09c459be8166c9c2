"""The acquires of the RFC model (model_rfc.py): the facts an acquire's
fields make, the owner it takes the console from (its victim: the
tracked owner, the state word's or the one a loss expected), an owner
the state word names before its acquire is traced (a phantom), and the
three ways to take a console: direct, hostile, handover.

Invariants: only an acquire makes a context the owner (become_owner());
an acquire traced after the one that took the console from it ends at
once where that one was (acquire_was_late()); its tolerances
(PHANTOM_WINDOW, GRANT_WAIT: by timestamps only) are rows of
tolerances.py.

A class of RfcModel (model_rfc.py): the state is the model's.
"""

from collections import namedtuple

from .model import OWNER, GRANTED, HANDED, LOST, RELPEND, RELEASED, prio_rank, StrayByte
from .facts import (Acquired, GrantBypassed, GrantedAcquire, GrantOverdue, HandoverAcquire,
                    HostileAcquired, OwnerAcquired, Takeover, TakenOver, UngrantedAcquire)

# An acquire's fields as the model reads them: ev the event, c its
# context (model.Ctx), how, prio, the state word it replaced (prev_*),
# mark its unsafe_takeover field (None: the kernel has none)
Acquire = namedtuple("Acquire", "ev c how prio prev_locked prev_cpu prev_prio "
                                "prev_thread prev_unsafe mark")

PHANTOM_WINDOW = 0.5         # s: how late an acquire event may be traced (a vCPU whose
                             #    clock lags: 19 ms on a real run)
                             #    clock lags: 19 ms on a real run)
GRANT_WAIT = 0.5             # s: how late a handover grant may be traced after the acquire


class Acquiring:
    """RfcModel's acquires (a class of it: the state is the model's)."""

    def on_acquire(self, con, ev):
        """An acquire: the facts its fields make, then what it does to the
        state: a late one ends at once; else it ends a pending grant, takes
        the console from its victim (how) and makes its context the
        owner."""
        a = self.acquire_of(con, ev)
        self.judge_acquire(con, a)
        notes = self.trace.chain_notes
        note = notes.pop(ev.lineno, None) if notes else None    # ordering.py's
        if self.acquire_was_late(con, a, note):
            return
        grant_lost = self.pending_grant(con, a)
        if con.awaiting_grant and not self.trace.causal_order():
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
            self.tell(HostileAcquired(con, Takeover(
                c, ev.cpu, a.prio, a.prev_locked, prio_rank(a.prev_prio),
                "cpu%d/%s" % (a.prev_cpu, a.prev_prio), a.prev_cpu, None)))
        self.tell(Acquired(con, c, a.how, a.prev_unsafe,
                           None if mark is None else mark == "1", con.unsafe_mark))
        con.unsafe_mark = con.unsafe_mark or mark == "1"

    def acquire_was_late(self, con, a, note):
        """A late acquire event: the console was already taken from it (an
        earlier acquire's state word named it, a phantom).  Its interval
        ends where that acquire was; True when so."""
        c, ev = a.c, a.ev
        ph = con.phantoms.pop((ev.cpu, a.prio, c.thread), None) if con.phantoms else None
        if ph is None or not self.acquire_traced_late(ph, a.how, ev.ts, note):
            return False
        self.grant(con, "acquire-traced-after-takeover", ev)
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
            self.grant(con, "grant-taken-before-pickup", ev)
            self.anomaly(con, "cpu%d/%s took the console (how=%s) that cpu%d had granted "
                         "to cpu%d/%s before the target picked it up"
                         % (ev.cpu, a.prio, a.how, g["from"].cpu, g["to_cpu"], g["to_prio"]))
        else:
            self.tell(GrantBypassed(con, g, ev, a.how))
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
                self.tell(GrantOverdue(con, w, vcpu, a.ev, GRANT_WAIT))

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
            self.tell(OwnerAcquired(con, Takeover(
                c, ev.cpu, a.prio, True, prio_rank(a.prio), c.label(), ev.cpu, c), how))
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
                self.sinks.keep_stamp(ev)
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
            self.tell(OwnerAcquired(con, Takeover(
                c, ev.cpu, a.prio, True, prio_rank(a.prev_prio),
                "cpu%d/%s" % (a.prev_cpu, a.prev_prio), a.prev_cpu, O), a.how))
            if O is not None and O is not c:
                self.lose(con, O, RELPEND, ts, "overlapped by direct acquire")
        elif O is not None and O is not c:
            # release of O not traced yet
            self.grant(con, "release-after-next-acquire", ev)
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
        self.tell(TakenOver(con, t))
        if self.recorder is not None:
            self.recorder.mark("hostile", con.name, ev.cpu, ts, "%s<-%s" % (prio, vlabel))
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
        self.tell(HandoverAcquire(con, c, ev, a.prev_cpu, req, prio))
        if req is not None and req["prio"] == prio and req["thread"] == c.thread:
            self.lat_handover.add((ts - req["ts"]) * 1e6)
        g = con.grant
        if g is not None:
            self.tell(GrantedAcquire(con, g, c, ev, prio))
            con.grant = None
        elif O is not None and O is not c:
            if self.trace.causal_order() and note != "unchained":
                # in chain order the grant that installed the state a
                # handover acquire saw comes before it: none did
                self.tell(UngrantedAcquire(con, c, ev, O))
            else:
                con.awaiting_grant[O.cpu] = (c, ts)
        if victim is not None:
            # The series hands over mid-record only to a higher priority
            # (none above panic), but every release hands the console
            # to a pending waiter.
            self.handed_over(con, Takeover(c, ev.cpu, prio, True, prio_rank(victim.prio),
                                           victim.label(), victim.cpu, victim), ev)
        if victim is not None and victim is not c and victim.state in (OWNER, GRANTED):
            self.lose(con, victim, HANDED, ts, "handed over to cpu%d" % ev.cpu)
        if self.recorder is not None:
            self.recorder.mark("handover", con.name, ev.cpu, ts, prio)

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
        if self.trace.causal_order():
            return how == "handover" and note == "replaced"
        return ts - ph[0] < PHANTOM_WINDOW
