"""Trace rules of the 6.12 target only, as units over the nbcon model's
facts (model_nbcon.py; the registry is rules.py).

Mainline's ownership differs from the RFC's where these rules are: a
handover is requested only from an owner inside its unsafe section (a
safe one is taken directly), the owner's release with a waiter is the
grant, and the next owner of an interrupted record writes it again with
the replay marker, which the trace shows (nbcon_emit replay=1).  The
rules both designs share are judged by trace_rules.py's units, which
the model hands the same facts.

Each unit only judges: it changes no state of the model and calls no
other unit.
"""

from .model import PRIO
from .rules import unit


@unit("handover-request", consumes="nbcon:request")
def handover_request_owner(an, con, c, ev, owner_cpu, owner_prio, marked):
    """A handover is requested only from an owner on another CPU with a
    lower priority than the waiter's, never of a free console (the
    waiter acquires it directly) and never after an unsafe takeover
    (nbcon_context_try_acquire_handover())."""
    why = None
    if owner_prio == "none":
        why = "the console had no owner (a free console is acquired directly)"
    elif owner_cpu == ev.cpu:
        why = "the owner is on the same CPU (it cannot run while the waiter spins)"
    elif PRIO[owner_prio] >= PRIO[c.prio]:
        why = "the owner's priority %s is not lower than %s" % (owner_prio, c.prio)
    elif marked:
        why = "the console was taken over inside an unsafe section before"
    if why is not None:
        an.violate("handover-request", con, "%s requested a handover from cpu%d/%s: %s"
                   % (c.label(), owner_cpu, owner_prio, why),
                   cpus=(ev.cpu, owner_cpu), ctxs=(c.label(),))


@unit("handover-target", consumes="nbcon:handover-release")
def handover_release_to_waiter(an, con, c, ev, to_prio, request):
    """A release with handover=1 hands the console to a waiter whose
    request (of priority to_prio) is pending."""
    if request is None:
        an.violate("handover-target", con, "%s released the console for a handover to "
                   "a %s waiter, but no request of that priority is pending"
                   % (c.label(), to_prio), cpus=(ev.cpu,), ctxs=(c.label(),))


@unit("handover-target", "thread-takeover", consumes="nbcon:handover-acquire")
def handover_acquire_by_waiter(an, con, c, ev, request, word_req_prio):
    """A how=handover acquire is the waiter's whose request the state
    word reserved (req_prio): its own pending request, of its priority.
    The printer thread never takes a handover it did not request."""
    if request is not None and word_req_prio == c.prio:
        return
    msg = "%s acquired the console by handover %s" % (
        c.label(), "without a pending request" if request is None else
        "reserved for a %s waiter" % word_req_prio)
    if c.thread:
        an.violate("thread-takeover", con, msg, cpus=(ev.cpu,), ctxs=(c.label(),))
    else:
        an.violate("handover-target", con, msg, cpus=(ev.cpu,), ctxs=(c.label(),))


@unit("replay", consumes="nbcon:replay")
def replay_marker(an, con, ev, c, seq, replay, assigned, unknown):
    """An emission has the replay marker (replay=1) exactly when it is of
    the seq a previous owner was assigned and lost before its commit
    (nbcon_prev_seq): `assigned` that seq, None when no owner lost a
    record since the last commit; `unknown`: an owner lost the console
    before its emission was traced, so either is right."""
    if unknown:
        return
    if replay and assigned != seq:
        an.violate("replay", con, "emission of seq %d by %s carries the replay marker, "
                   "but %s" % (seq, c.label(), "no previous owner lost a record" if
                               assigned is None else "the interrupted record was seq %d"
                               % assigned),
                   seq=seq, cpus=(ev.cpu,), ctxs=(c.label(),), ev=ev)
    elif not replay and assigned == seq:
        an.violate("replay", con, "emission of seq %d by %s writes a record a previous "
                   "owner lost again without the replay marker" % (seq, c.label()),
                   seq=seq, cpus=(ev.cpu,), ctxs=(c.label(),), ev=ev)
