"""Losses and named owners in the RFC model (model_rfc.py): a context
noticing it lost the console (nobkl_lost), and the owners a state word
or a loss names, which the trace must show acquiring the console (an
acquire, or a grant to it) before they are explained.

Invariants: a named owner not shown yet waits (con.lost_names,
con.phantoms), kept with its event's happens-before stamp; one never
shown is damaged input (late_damage()), not a kernel violation, and
after trace loss only when proven before it.

A class of RfcModel (model_rfc.py): the state is the model's.
"""

from .model import OWNER, GRANTED, HANDED, LOST, RELPEND


class Owners:
    """RfcModel's losses and named owners (a class of it: the state is
    the model's)."""

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
            if (not self.trace.causal_order() or op in (None, "none") or
                    not f.get("owner_cpu", "").isdigit()):
                del con.unsafe_victims[ev.cpu]
            else:
                uv[1] = (int(f["owner_cpu"]), op)
        if con.owner is c and c.state == OWNER:
            # the taker's acquire is not traced yet
            self.grant(con, "lost-before-takeover", ev)
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
        self.sinks.keep_stamp(ev)

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
        proven before every loss (trace.not_before_loss(): in chain
        order by happens-before, not by the clocks)."""
        if self.trace.not_before_loss(ev):
            return
        f = ev.fields
        if ev.name == "nobkl_lost":
            why = "owner_cpu=%s owner_prio=%s" % (f.get("owner_cpu"), f.get("owner_prio"))
        else:
            why = "prev_cpu=%s prev_prio=%s prev_thread=%s" % (
                f.get("prev_cpu"), f.get("prev_prio"), f.get("prev_thread"))
        self.sinks.late_damage(con, ev, "%s names an owner that the trace never shows "
                               "acquiring the console (no acquire, no grant to it)" % why)
