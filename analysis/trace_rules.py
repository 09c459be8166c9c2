"""Trace rules as units over the ownership model's facts.

The ownership model (model_rfc.py, model_nbcon.py: consoles, contexts,
emission attempts and their transitions) works out what an event means
- who took the console from whom, whether the owner was inside a
record - and tells that as a typed fact (facts.py) to the registry's
dispatcher (rules.Dispatch), which hands it to the units registered
here (`@unit`, rules.py: the one registry) that consume its kind.

Invariants of a unit: its docstring is its invariant, the fact classes
it consumes are declared with it; it is a function of one fact that
returns the rules.Violation it raises, or None; it reads the fact (and
the contexts and attempts in it), changes no state and calls no other
unit.

The model keeps the state these rules depend on (the grant matching,
the seq the console is at, the unsafe-takeover mark) and grants the
tolerances; the units only judge the facts it tells them.
"""

from .facts import (Acquired, Committed, EmptyCommit, Emitted, FirstEmitted,
                    GrantAfterAcquire, GrantAwaited, GrantBypassed, Granted, GrantedAcquire,
                    GrantOverdue, GrantUnclaimed, HandedOver, HandoverAcquire,
                    HostileAcquired, NotOwnerAction, OwnerAcquired, Recommitted, Reprinted,
                    RequestAfterGrant, Skipped, TakenOver, UnemittedCommit, UngrantedAcquire,
                    UngrantedRelease, UnrequestedGrant)
from .model import GRANTED, HANDED, LOST, PRIO, PRIO_NAME, RELPEND
from .rules import RFC_61, RULE_TABLE, Violation, checked_by, consumers, unit

# the units of the RFC's grant step (6.12 has none: its release is the
# grant, nbcon_rules.py judges it)
RFC = (RFC_61,)

# attempt outcomes after which the record may be written again
LOST_OWNERSHIP = ("lost", "handover")

# the states of a context that owned the console and lost it (taken
# over, handed over, or granted it away)
LOST_STATES = (LOST, HANDED, GRANTED)


@unit("thread-takeover", consumes=HostileAcquired)
def thread_takeover(f):
    """The printer thread (thread=1) never takes a console over
    (never `how=hostile`)."""
    t = f.takeover
    if not t.taker.thread:
        return None
    return Violation("thread-takeover", "printer thread (cpu%d) took the console "
                     "over with how=hostile from %s" % (t.cpu, t.owner_label),
                     cpus=(t.cpu, t.owner_cpu), ctxs=(t.taker.label(),))


@unit("takeover-prio", consumes=TakenOver)
def takeover_prio(f):
    """A hostile takeover comes only from a strictly higher priority than
    the owner's."""
    t = f.takeover
    if not t.owner_known or PRIO.get(t.prio, 0) > t.owner_rank:
        return None
    return Violation("takeover-prio", "hostile takeover by %s from %s: "
                     "priority %s is not higher than the owner's %s" %
                     (t.taker.label(), t.owner_label, t.prio, PRIO_NAME[t.owner_rank]),
                     cpus=(t.cpu, t.owner_cpu), ctxs=(t.taker.label(), t.owner_label))


@unit("unsafe-takeover", consumes=Acquired)
def unsafe_takeover(f):
    """An owner inside its unsafe section is taken over only by the final
    flush of a panic, once the other CPUs are stopped: that acquire marks
    the console (unsafe_takeover=1) and the mark stays (`marked`: an
    acquire before this one carried it). Checked on kernels whose
    acquire carries the mark (`mark` not None)."""
    c, how, prev_unsafe, mark = f.ctx, f.how, f.prev_unsafe, f.mark
    if mark is None:
        return None
    if how == "hostile" and prev_unsafe and not (mark and c.prio == "panic"):
        msg = ("%s took the console over from an owner inside its unsafe section, not "
               "in the final flush of a panic" % c.label())
    elif mark and not f.marked and not (how == "hostile" and prev_unsafe):
        msg = ("%s acquired the console (%s) with the mark of a takeover inside an "
               "unsafe section, which none made" % (c.label(), how))
    elif f.marked and not mark:
        msg = ("%s acquired the console (%s) without the mark of the takeover inside an "
               "unsafe section before: it is sticky" % (c.label(), how))
    else:
        return None
    return Violation("unsafe-takeover", msg, cpus=(c.cpu,), ctxs=(c.label(),))


@unit("panic-protect", consumes=TakenOver)
def panic_protect_hostile(f):
    """Nothing takes a console over from a panic-priority owner on another
    CPU."""
    t = f.takeover
    if t.owner_rank != PRIO["panic"] or t.owner_cpu is None or t.owner_cpu == t.cpu:
        return None
    return Violation("panic-protect", "%s took the console from the panic-priority "
                     "owner %s" % (t.taker.label(), t.owner_label), cpus=(t.cpu, t.owner_cpu),
                     ctxs=(t.taker.label(), t.owner_label))


@unit("panic-protect", consumes=HandedOver)
def panic_protect_handover(f):
    """A panic-priority owner on another CPU hands the console over only
    at the end of a record (its release hands it to any waiting
    context), never in the middle of one.  The release at the end is the
    model's tolerance (`counts.panic_release_handovers`)."""
    if not (f.from_panic_owner and f.mid_record):
        return None
    t = f.takeover
    v = t.owner
    return Violation("panic-protect", "%s took the console from the "
                     "panic-priority owner %s by handover in the middle of seq %s"
                     % (t.taker.label(), v.label(), v.last_seq),
                     seq=v.last_seq, cpus=(t.cpu, v.cpu),
                     ctxs=(t.taker.label(), v.label()))


@unit("dropped-count", consumes=Emitted)
def dropped_count(f):
    """The dropped count of an emission is exactly the number of seqs it
    skips since the console's last commit (`committed`: the seq after it).

    The series does not store a dropped count: an emission reads the
    record after the console's committed seq and counts the seqs it
    skips on the way (cons_get_record(): dropped = desc.seq - newseq), so
    a reprint after a takeover shows the same count.  Fewer is a loss
    (`no-loss`, raised by the model); more counts records as dropped that
    the console did not skip.  The model tells it once a commit since
    the trace start (or the last trace loss) tells the console's seq."""
    seq, dropped, committed = f.seq, f.dropped, f.committed
    if seq < committed or dropped <= seq - committed:
        return None
    return Violation("dropped-count", "emission of seq %d by %s counts dropped=%d, but "
                     "the console's last commit was of seq %d: %d record(s) skipped"
                     % (seq, f.ctx.label(), dropped, committed - 1, seq - committed),
                     seq=seq, cpus=(f.ev.cpu,), ctxs=(f.ctx.label(),), ev=f.ev)


@unit("duplicate", consumes=Reprinted)
def duplicate_emission(e):
    """A record is emitted again only after the earlier attempt lost
    ownership (hostile takeover, handover, `nobkl_lost`) before its
    commit: never a seq the console already committed, never a re-emit
    without a loss."""
    c = e.ctx
    if e.prev is None:
        return Violation("duplicate", "seq %d emitted by %s again after it was committed "
                         "(console seq already %d)" % (e.seq, c.label(), e.next_seq),
                         seq=e.seq, cpus=(e.cpu,), ctxs=(c.label(),))
    if e.prev.outcome not in LOST_OWNERSHIP:
        p = e.prev
        return Violation("duplicate", "seq %d emitted again by %s although the earlier "
                         "attempt (line %d, %s) did not lose ownership (%s)" %
                         (e.seq, c.label(), p.lineno, p.ctx.label(), p.outcome),
                         seq=e.seq, cpus=(e.cpu, p.ctx.cpu), ctxs=(c.label(), p.ctx.label()))
    return None


@unit("duplicate", consumes=Recommitted)
def duplicate_commit(e):
    """A record is committed once: never a seq the console already
    committed."""
    return Violation("duplicate", "seq %d committed again by %s (console seq already %d)"
                     % (e.seq, e.ctx.label(), e.next_seq), seq=e.seq, cpus=(e.cpu,),
                     ctxs=(e.ctx.label(),))


def _seq(ev):
    s = ev.fields.get("seq")
    return int(s) if s is not None else None


def _owner(o):
    """(cpus, labels) of the console's owner o (or None), for a message."""
    return ((o.cpu,), (o.label(),)) if o is not None else ((), ())


@unit("after-loss", consumes=NotOwnerAction)
def after_loss(f):
    """A context that was taken over or handed the console over does not
    emit, commit, grant or release until it acquires again.  The model
    tells an owner's action by a context that is not the owner; the
    contexts that had lost the console are this rule's (LOST_STATES)."""
    c, ev = f.ctx, f.ev
    if c.state == LOST:
        oc, ol = _owner(f.owner)
        return Violation("after-loss", "%s by %s after it lost the console (%s) and "
                         "did not re-acquire it" % (f.what, c.label(), c.end_how),
                         seq=_seq(ev), cpus=(ev.cpu,) + oc, ctxs=(c.label(),) + ol)
    if c.state in (HANDED, GRANTED):
        return Violation("after-loss", "%s by %s after it handed the console over"
                         % (f.what, c.label()), seq=_seq(ev), cpus=(ev.cpu,),
                         ctxs=(c.label(),))
    return None


@unit("one-owner", consumes=NotOwnerAction)
def one_owner_action(f):
    """No emission, commit, grant or release by a context that does not
    own the console: one that never acquired it, or whose ownership
    another context's direct acquire of the free state word ended (its
    release traced late, overlapping intervals).  A context that had
    the console and lost it (LOST_STATES) is after-loss's to judge."""
    c, ev = f.ctx, f.ev
    if c.state in LOST_STATES:
        return None
    oc, ol = _owner(f.owner)
    if c.state == RELPEND:
        return Violation("one-owner", "%s by %s while another context already owns the "
                         "console (it was acquired directly, state word free)"
                         % (f.what, c.label()),
                         seq=_seq(ev), cpus=(ev.cpu,) + oc, ctxs=(c.label(),) + ol)
    return Violation("one-owner", "%s by %s, which does not own the console (owner: %s)"
                     % (f.what, c.label(), ol[0] if ol else "none"),
                     seq=_seq(ev), cpus=(ev.cpu,), ctxs=(c.label(),))


@unit("one-owner", consumes=OwnerAcquired)
def one_owner_acquire(f):
    """At most one owner at a time: a context does not acquire a console
    it owns, and a `how=direct` acquire takes only a free console
    (`prev_locked=0`).  The model tells it for an acquire by the owner
    itself (the takeover's owner is the taker) and for a direct acquire
    whose state word was locked."""
    t = f.takeover
    c = t.taker
    if t.owner is c:
        return Violation("one-owner", "%s acquired (how=%s) the console it already owns"
                         % (c.label(), f.how), cpus=(t.cpu,), ctxs=(c.label(),))
    return Violation("one-owner", "direct acquire by %s of a console that was "
                     "locked by %s" % (c.label(), t.owner_label),
                     cpus=(t.cpu, t.owner_cpu), ctxs=(c.label(),))


# ------------------------------------------------------------ no-loss

@unit("no-loss", consumes=Skipped)
def no_loss_skip(s):
    """Every seq from the console's last commit up to an emission is
    committed or counted by the emission's dropped count.  The model
    tells the skip at once, or holds it while the old owner's late
    commit may still explain one skipped seq (the late-commit
    tolerance)."""
    return Violation("no-loss", "seqs %d..%d skipped but the emission of seq %d "
                     "counts only dropped=%d" % (s.next_seq, s.seq - 1, s.seq, s.dropped),
                     seq=s.next_seq, cpus=(s.ev.cpu,), ctxs=(s.ctx.label(),), ev=s.ev,
                     extra={"missing": [s.next_seq, s.seq - 1]})


@unit("no-loss", consumes=FirstEmitted)
def no_loss_first(f):
    """A record stored in the trace (`lo`: the first seq stored) was
    stored after tracing began, so the console cannot have printed it
    before: its first traced emission (or commit) of `seq` counts every
    seq from `lo` below it as dropped.  The model tells it unless trace
    loss makes the console's state unknown."""
    seq, lo, c = f.seq, f.lo, f.ctx
    counted = min(f.dropped, seq - lo)
    if counted >= seq - lo:
        return None
    return Violation("no-loss", "seqs %d..%d were stored in the trace but never "
                     "printed by %s: its first traced %s is of seq %d (by %s, dropped=%d)"
                     % (lo, seq - counted - 1, f.con.name, f.what, seq, c.label(), f.dropped),
                     seq=lo, cpus=(f.ev.cpu,), ctxs=(c.label(),), ev=f.ev,
                     extra={"missing": [lo, seq - counted - 1]})


@unit("no-loss", consumes=Committed)
def no_loss_commit_skip(f):
    """A commit does not skip seqs: the seq committed is the console's
    next one (a skip is counted by an emission, never by a commit)."""
    seq, next_seq = f.seq, f.next_seq
    if seq <= next_seq:
        return None
    return Violation("no-loss", "commit of seq %d by %s skips seqs %d..%d without a "
                     "dropped count" % (seq, f.ctx.label(), next_seq, seq - 1),
                     seq=next_seq, cpus=(f.ev.cpu,), ctxs=(f.ctx.label(),),
                     extra={"missing": [next_seq, seq - 1]})


@unit("no-loss", consumes=UnemittedCommit)
def no_loss_unemitted(f):
    """No commit of a record that was not emitted (written), unless its
    level is below the console loglevel (`level`: the stored record's,
    None when its store is not in the trace).  The model tells it for a
    commit without an emission of its seq by the committing context,
    except for suppressed records (a tolerance)."""
    c, level = f.ctx, f.level
    return Violation("no-loss", "commit of seq %d by %s without an emission of it "
                     "(the record was not written%s)" % (
                         f.seq, c.label(), "" if level is None else
                         ", level %d < console loglevel %d" % (level, f.loglevel)),
                     seq=f.seq, cpus=(f.ev.cpu,), ctxs=(c.label(),))


@unit("no-loss", consumes=EmptyCommit)
def no_loss_empty_emission(f):
    """A committed emission wrote its record: an emission of len=0 (nothing
    written) is committed only for a record below the console loglevel.
    The model tells it when such an attempt ends in its commit and the
    stored record's `level` is printable."""
    att = f.attempt
    return Violation("no-loss", "seq %d committed by %s after an emission of len=0, but "
                     "its level %d is below the console loglevel %d: the record was not "
                     "written" % (att.seq, att.ctx.label(), f.level, f.loglevel),
                     seq=att.seq, cpus=(att.ctx.cpu,), ctxs=(att.ctx.label(),))


# ---------------------------------------------------- handover-target

@unit("handover-target", consumes=GrantBypassed, models=RFC)
def handover_grant_not_taken(f):
    """A grant is taken by its target: the next acquire after a grant is
    the target's `how=handover` one.  The model tells it for another
    acquire, unless the state word shows the grant took effect and a
    higher priority took the console from the target before it picked
    it up (a tolerance)."""
    g = f.grant
    return Violation("handover-target", "cpu%d granted the console to cpu%d/%s, "
                     "but cpu%d never acquired it by handover (next acquire: cpu%d "
                     "how=%s)" % (g["from"].cpu, g["to_cpu"], g["to_prio"], g["to_cpu"],
                                  f.ev.cpu, f.how),
                     cpus=(g["from"].cpu, g["to_cpu"], f.ev.cpu))


@unit("handover-target", consumes=GrantOverdue, models=RFC)
def handover_grant_late(f):
    """By timestamps (no chain), a waiter's `how=handover` acquire listed
    before the owner's grant is followed by that grant within `window`
    seconds (GRANT_WAIT, a tolerance)."""
    w = f.waiter
    return Violation("handover-target", "cpu%d acquired by handover but no "
                     "owner granted it (cpu%d traced no grant within %.1f s)"
                     % (w.cpu, f.vcpu, f.window), cpus=(w.cpu, f.vcpu, f.ev.cpu),
                     ctxs=(w.label(),))


@unit("handover-target", "thread-takeover", consumes=HandoverAcquire, models=RFC)
def handover_unrequested(f):
    """A `how=handover` acquire matches the acquiring context's pending
    request (CPU, priority, printer thread or not); for the printer
    thread it is `thread-takeover`: the thread takes the console only by
    a handover it requested."""
    c, ev, req = f.ctx, f.ev, f.request
    if req is not None and req["prio"] == f.prio and req["thread"] == c.thread:
        return None
    why = ("no pending request from cpu%d" % ev.cpu) if req is None else \
          ("its request was prio=%s thread=%d" % (req["prio"], req["thread"]))
    msg = "%s acquired by handover without having requested it (%s)" % (c.label(), why)
    if c.thread:
        return Violation("thread-takeover", msg, cpus=(ev.cpu, f.prev_cpu),
                         ctxs=(c.label(),))
    return Violation("handover-target", msg, cpus=(ev.cpu, f.prev_cpu), ctxs=(c.label(),))


@unit("handover-target", consumes=GrantedAcquire, models=RFC)
def handover_wrong_target(f):
    """A `how=handover` acquire after a grant is by the grant's target
    (to_cpu, to_prio)."""
    g, ev = f.grant, f.ev
    if g["to_cpu"] == ev.cpu and g["to_prio"] == f.prio:
        return None
    return Violation("handover-target", "grant was to cpu%d/%s but cpu%d/%s "
                     "acquired by handover" % (g["to_cpu"], g["to_prio"], ev.cpu, f.prio),
                     cpus=(g["from"].cpu, g["to_cpu"], ev.cpu), ctxs=(f.ctx.label(),))


@unit("handover-target", consumes=UngrantedAcquire, models=RFC)
def handover_without_grant(f):
    """In chain order a `how=handover` acquire comes after the grant that
    installed the state it saw: one while another context owns the
    console and no grant is pending was granted by nobody."""
    c, owner = f.ctx, f.owner
    return Violation("handover-target", "%s acquired by handover, but no "
                     "grant installed the state it saw (owner %s)"
                     % (c.label(), owner.label()), cpus=(f.ev.cpu, owner.cpu),
                     ctxs=(c.label(), owner.label()))


@unit("handover-target", consumes=UngrantedRelease, models=RFC)
def handover_release_without_grant(f):
    """A release hands the console over (`handover=1`) only after the
    owner granted it to a waiter."""
    return Violation("handover-target", "%s released with handover=1 without "
                     "a grant" % f.ctx.label(), cpus=(f.ev.cpu,), ctxs=(f.ctx.label(),))


@unit("handover-target", consumes=RequestAfterGrant, models=RFC)
def handover_request_prio(f):
    """A grant traced before the waiter's request names the priority the
    waiter requests with."""
    g, ev = f.grant, f.ev
    if g["to_prio"] == f.prio:
        return None
    return Violation("handover-target", "cpu%d granted to cpu%d/%s but cpu%d "
                     "requested with prio %s" % (g["from"].cpu, ev.cpu, g["to_prio"],
                                                 ev.cpu, f.prio),
                     cpus=(g["from"].cpu, ev.cpu))


@unit("handover-target", consumes=GrantAfterAcquire, models=RFC)
def handover_grant_to_acquirer(f):
    """A grant traced after the waiter's `how=handover` acquire names
    that waiter (its CPU and priority)."""
    c, w = f.ctx, f.waiter
    if w.cpu == f.to_cpu and w.prio == f.to_prio:
        return None
    return Violation("handover-target", "%s granted to cpu%d/%s, but %s acquired "
                     "by handover" % (c.label(), f.to_cpu, f.to_prio, w.label()),
                     cpus=(f.ev.cpu, f.to_cpu, w.cpu), ctxs=(c.label(), w.label()))


@unit("handover-target", consumes=Granted, models=RFC)
def handover_grant_prio(f):
    """A grant goes to a waiter with the priority it requested."""
    if f.request["prio"] == f.to_prio:
        return None
    return Violation("handover-target", "%s granted to cpu%d/%s but that waiter "
                     "requested with prio %s" % (f.ctx.label(), f.to_cpu, f.to_prio,
                                                 f.request["prio"]),
                     cpus=(f.ev.cpu, f.to_cpu), ctxs=(f.ctx.label(),))


@unit("handover-target", consumes=UnrequestedGrant, models=RFC)
def handover_grant_unrequested(f):
    """In chain order a grant answers the request in the state word it
    replaced (`req_prio` of its `old_state`): a grant to a CPU with no
    pending request, while that word carries no request or another
    waiter's, went to a context that never requested, whether or not
    anyone picked it up."""
    waiter, word_prio = f.waiter, f.word_prio
    held = "no request" if waiter is None and word_prio == "none" else \
        "the request of cpu%d/%s" % (waiter, word_prio) if waiter is not None else \
        "a request at prio %s" % word_prio
    return Violation("handover-target", "%s granted the console to cpu%d/%s, which had "
                     "no request pending (the state word it replaced carries %s)"
                     % (f.ctx.label(), f.to_cpu, f.to_prio, held),
                     cpus=(f.ev.cpu, f.to_cpu), ctxs=(f.ctx.label(),))


@unit("handover-target", consumes=GrantUnclaimed, models=RFC)
def handover_grant_unclaimed(f):
    """At the end of the trace, a grant that no request matched was taken
    by nobody: it went to no waiter."""
    g = f.grant
    return Violation("handover-target", "cpu%d granted the console to cpu%d/%s, "
                     "which never requested or acquired it" %
                     (g["from"].cpu, g["to_cpu"], g["to_prio"]),
                     cpus=(g["from"].cpu, g["to_cpu"]))


@unit("handover-target", consumes=GrantAwaited, models=RFC)
def handover_acquire_ungranted(f):
    """At the end of the trace, every `how=handover` acquire waiting for
    its grant (listed before it, by timestamps) has had it traced."""
    w = f.waiter
    return Violation("handover-target", "%s acquired by handover but no grant "
                     "was traced" % w.label(), cpus=(w.cpu,), ctxs=(w.label(),))


# the units, by the acquire they judge, in the order they run: the
# registry's consumers of the two takeover facts (a view, as UNITS is;
# every fact reaches its units through rules.Dispatch)
ON_HOSTILE = consumers("takeover", "trace_rules")
ON_HANDOVER = consumers("handover-takeover", "trace_rules")

# the units of each trace rule, as the registry (rules.py) has them
UNITS = {r.id: tuple(globals()[name] for name in checked_by(r.id, "trace_rules"))
         for r in RULE_TABLE if checked_by(r.id, "trace_rules")}
