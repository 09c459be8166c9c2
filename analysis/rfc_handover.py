"""Releases and handovers in the RFC model (model_rfc.py): an owner
releasing (mid-record: asked to, or abandoned), a waiter's request and
timeout, the owner's grant to it (matched with its request, or with
none in chain order).

Invariants: a grant ends its owner's ownership (GRANTED) and is pending
(con.grant) until the target's handover acquire, another acquire or the
trace's end; a request is pending (con.requests) until its waiter
acquires or gives up.

A class of RfcModel (model_rfc.py): the state is the model's.
"""

from .chain_state import state_req_prio
from .facts import (GrantAfterAcquire, Granted, RequestAfterGrant, UngrantedRelease,
                    UnrequestedGrant)
from .model import OWNER, GRANTED, HANDED, LOST, RELPEND, RELEASED, PRIO, PRIO_NAME


class Handover:
    """RfcModel's releases and handovers (a class of it: the state is the
    model's)."""

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
                self.grant(con, "release-mid-record-on-request", ev)
            self.finish_attempt(c.attempt, outcome)
        if c.state == RELPEND:
            c.state = RELEASED
            return
        if c.state in (HANDED, GRANTED) and handover:
            c.state = HANDED
            return
        if con.owner is c and c.state == OWNER:
            if handover:
                self.tell(UngrantedRelease(con, c, ev))
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
        if con.requests or state_req_prio(old, self.trace.arch32):
            return "handover"
        if self.trace.causal_order() and a.req_mark is not None:
            asked = con.request_count > a.req_mark
        else:
            asked = con.last_request_ts is not None and con.last_request_ts >= a.ts
        return "handover" if asked else "abandoned"

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
            self.tell(RequestAfterGrant(con, g, ev, f["prio"]))
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
        if self.recorder is not None:
            self.recorder.mark("timeout", con.name, ev.cpu, ev.ts, f["prio"])

    def on_grant(self, con, ev):
        f = ev.fields
        c = self.ctx_of(con, ev)
        self.counts["handover_grants"] += 1
        to_cpu = int(f["to_cpu"])
        to_prio = f["to_prio"]
        aw = con.awaiting_grant.pop(ev.cpu, None) if con.awaiting_grant else None
        if aw is not None:
            # the waiter's acquire was traced first; c is the old owner
            self.grant(con, "grant-traced-after-pickup", ev)
            self.tell(GrantAfterAcquire(con, c, ev, to_cpu, to_prio, aw[0]))
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
            self.tell(Granted(con, c, ev, to_cpu, to_prio, req))
        elif self.trace.causal_order() and f.get("old_state") is not None:
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
        rp = state_req_prio(ev.fields["old_state"], self.trace.arch32)
        other = [(cpu, r) for cpu, r in con.requests.items() if PRIO.get(r["prio"]) == rp]
        if rp and not other:
            return False
        self.tell(UnrequestedGrant(con, c, ev, to_cpu, to_prio, PRIO_NAME.get(rp, "none"),
                                   other[0][0] if other else None))
        return True
