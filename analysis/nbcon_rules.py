"""Trace rules of the 6.12 target only, as units over the nbcon model's
facts (model_nbcon.py; the registry is rules.py).

Mainline's ownership differs from the RFC's where these rules are: a
handover is requested only from an owner inside its unsafe section (a
safe one is taken directly), the owner's release with a waiter is the
grant, and the next owner of an interrupted record writes it again with
the replay marker, which the trace shows (nbcon_emit replay=1).  The
rules both designs share are judged by trace_rules.py's units, which
the model hands the same facts.

Each unit is a function of one fact (facts.py) that returns the
Violation it raises, or None: it changes no state of the model and
calls no other unit.
"""

from .facts import NbconHandoverAcquire, NbconHandoverRelease, NbconReplay, NbconRequest
from .model import PRIO
from .rules import NBCON_612, Violation, unit

# the units of rules both designs have, over facts only this model tells
NBCON = (NBCON_612,)


@unit("handover-request", consumes=NbconRequest)
def handover_request_owner(f):
    """A handover is requested only from an owner on another CPU with a
    lower priority than the waiter's, never of a free console (the
    waiter acquires it directly) and never after an unsafe takeover
    (nbcon_context_try_acquire_handover())."""
    c, owner_cpu, owner_prio = f.ctx, f.owner_cpu, f.owner_prio
    why = None
    if owner_prio == "none":
        why = "the console had no owner (a free console is acquired directly)"
    elif owner_cpu == f.ev.cpu:
        why = "the owner is on the same CPU (it cannot run while the waiter spins)"
    elif PRIO[owner_prio] >= PRIO[c.prio]:
        why = "the owner's priority %s is not lower than %s" % (owner_prio, c.prio)
    elif f.marked:
        why = "the console was taken over inside an unsafe section before"
    if why is None:
        return None
    return Violation("handover-request", "%s requested a handover from cpu%d/%s: %s"
                     % (c.label(), owner_cpu, owner_prio, why),
                     cpus=(f.ev.cpu, owner_cpu), ctxs=(c.label(),))


@unit("handover-target", consumes=NbconHandoverRelease, models=NBCON)
def handover_release_to_waiter(f):
    """A release with handover=1 hands the console to a waiter whose
    request (of priority to_prio) is pending."""
    if f.request is not None:
        return None
    return Violation("handover-target", "%s released the console for a handover to "
                     "a %s waiter, but no request of that priority is pending"
                     % (f.ctx.label(), f.to_prio), cpus=(f.ev.cpu,), ctxs=(f.ctx.label(),))


@unit("handover-target", "thread-takeover", consumes=NbconHandoverAcquire,
      models=NBCON)
def handover_acquire_by_waiter(f):
    """A how=handover acquire is the waiter's whose request the state
    word reserved (req_prio): its own pending request, of its priority.
    The printer thread never takes a handover it did not request."""
    c = f.ctx
    if f.request is not None and f.word_req_prio == c.prio:
        return None
    msg = "%s acquired the console by handover %s" % (
        c.label(), "without a pending request" if f.request is None else
        "reserved for a %s waiter" % f.word_req_prio)
    if c.thread:
        return Violation("thread-takeover", msg, cpus=(f.ev.cpu,), ctxs=(c.label(),))
    return Violation("handover-target", msg, cpus=(f.ev.cpu,), ctxs=(c.label(),))


@unit("replay", consumes=NbconReplay)
def replay_marker(f):
    """An emission has the replay marker (replay=1) exactly when it is of
    the seq a previous owner was assigned and lost before its commit
    (nbcon_prev_seq): `assigned` that seq, None when no owner lost a
    record since the last commit; `unknown`: an owner lost the console
    before its emission was traced, so either is right."""
    if f.unknown:
        return None
    c, seq, assigned = f.ctx, f.seq, f.assigned
    if f.replay and assigned != seq:
        return Violation("replay", "emission of seq %d by %s carries the replay marker, "
                         "but %s" % (seq, c.label(), "no previous owner lost a record" if
                                     assigned is None else "the interrupted record was "
                                     "seq %d" % assigned),
                         seq=seq, cpus=(f.ev.cpu,), ctxs=(c.label(),), ev=f.ev)
    if not f.replay and assigned == seq:
        return Violation("replay", "emission of seq %d by %s writes a record a previous "
                         "owner lost again without the replay marker" % (seq, c.label()),
                         seq=seq, cpus=(f.ev.cpu,), ctxs=(c.label(),), ev=f.ev)
    return None
