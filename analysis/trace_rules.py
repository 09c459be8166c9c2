"""Trace rules as units over the ownership model's facts.

The ownership model (checker.Analyzer: consoles, contexts, emission
attempts and their transitions) works out what an event means - who
took the console from whom, whether the owner was inside a record - and
hands that to the rules registered here; each rule's docstring is its
invariant, and it only judges, it changes no state.  The rule table
(rules.py) names the unit that raises each rule.

Rules not yet split out of the model (no-loss, handover-target) are
raised where the model updates the state they depend on (the grant
matching, the seq the console is at); rules.py names those places.
"""

from collections import namedtuple

from .model import GRANTED, HANDED, LOST, OWNER, PRIO, PRIO_NAME, RELPEND

# A takeover, as the model sees it when the acquire is processed.
#   taker: the acquiring context (model.Ctx), cpu: its CPU, prio: its priority
#   owner_known: the state word or the model names an owner
#   owner_rank: the owner's priority (the higher of prev_prio and the tracked owner's)
#   owner_label, owner_cpu: who that owner is
#   owner: the tracked owner context (or None), for a handover: the one handing over
Takeover = namedtuple("Takeover", "taker cpu prio owner_known owner_rank owner_label "
                                  "owner_cpu owner")

# An emission or commit of a seq the console has passed, or a reprint.
#   ctx: the emitting/committing context, cpu: its CPU, seq: the record,
#   next_seq: the console's next seq to commit (model), prev: the last
#   attempt when it was of the same seq (a reprint), else None
Emission = namedtuple("Emission", "ctx cpu seq next_seq prev")

# attempt outcomes after which the record may be written again
LOST_OWNERSHIP = ("lost", "handover")


def thread_takeover(an, con, t):
    """The printer thread (thread=1) never takes a console over
    (never `how=hostile`)."""
    if t.taker.thread:
        an.violate("thread-takeover", con, "printer thread (cpu%d) took the console "
                   "over with how=hostile from %s" % (t.cpu, t.owner_label),
                   cpus=(t.cpu, t.owner_cpu), ctxs=(t.taker.label(),))


def takeover_prio(an, con, t):
    """A hostile takeover comes only from a strictly higher priority than
    the owner's."""
    if t.owner_known and PRIO.get(t.prio, 0) <= t.owner_rank:
        an.violate("takeover-prio", con, "hostile takeover by %s from %s: "
                   "priority %s is not higher than the owner's %s" %
                   (t.taker.label(), t.owner_label, t.prio, PRIO_NAME[t.owner_rank]),
                   cpus=(t.cpu, t.owner_cpu), ctxs=(t.taker.label(), t.owner_label))


def panic_protect_hostile(an, con, t):
    """Nothing takes a console over from a panic-priority owner on another
    CPU."""
    if t.owner_rank == PRIO["panic"] and t.owner_cpu is not None and t.owner_cpu != t.cpu:
        an.violate("panic-protect", con, "%s took the console from the panic-priority "
                   "owner %s" % (t.taker.label(), t.owner_label), cpus=(t.cpu, t.owner_cpu),
                   ctxs=(t.taker.label(), t.owner_label))


def panic_protect_handover(an, con, t):
    """A panic-priority owner on another CPU hands the console over only
    at the end of a record (its release hands it to any waiting
    context), never in the middle of one.  The release at the end is
    counted (`counts.panic_release_handovers`, a tolerance)."""
    v = t.owner
    if v is None or v is t.taker or v.prio != "panic" or v.cpu == t.cpu:
        return
    if v.state == OWNER:               # its grant is traced later
        mid = v.attempt is not None and v.attempt.outcome is None
    else:
        mid = v.lost_mid
    if mid:
        an.violate("panic-protect", con, "%s took the console from the "
                   "panic-priority owner %s by handover in the middle of seq %s"
                   % (t.taker.label(), v.label(), v.last_seq),
                   seq=v.last_seq, cpus=(t.cpu, v.cpu),
                   ctxs=(t.taker.label(), v.label()))
    else:
        an.counts["panic_release_handovers"] += 1
        an.anomaly(con, "panic-priority owner %s handed the console over to "
                   "%s at the end of its output (release with a waiter)"
                   % (v.label(), t.taker.label()))


def dropped_count(an, con, ev, c, seq, dropped, committed):
    """The dropped count of an emission is exactly the number of seqs it
    skips since the console's last commit (`committed`: the seq after it).

    The series does not store a dropped count: an emission reads the
    record after the console's committed seq and counts the seqs it
    skips on the way (cons_get_record(): dropped = desc.seq - newseq), so
    a reprint after a takeover shows the same count.  Fewer is a loss
    (`no-loss`, raised by the model); more counts records as dropped that
    the console did not skip.  The model calls it once a commit since
    the trace start (or the last trace loss) tells the console's seq."""
    if seq < committed or dropped <= seq - committed:
        return
    an.violate("dropped-count", con, "emission of seq %d by %s counts dropped=%d, but "
               "the console's last commit was of seq %d: %d record(s) skipped"
               % (seq, c.label(), dropped, committed - 1, seq - committed),
               seq=seq, cpus=(ev.cpu,), ctxs=(c.label(),), ev=ev)


def duplicate_emission(an, con, e):
    """A record is emitted again only after the earlier attempt lost
    ownership (hostile takeover, handover, `nobkl_lost`) before its
    commit: never a seq the console already committed, never a re-emit
    without a loss."""
    c = e.ctx
    if e.prev is None:
        an.violate("duplicate", con, "seq %d emitted by %s again after it was committed "
                   "(console seq already %d)" % (e.seq, c.label(), e.next_seq),
                   seq=e.seq, cpus=(e.cpu,), ctxs=(c.label(),))
    elif e.prev.outcome not in LOST_OWNERSHIP:
        p = e.prev
        an.violate("duplicate", con, "seq %d emitted again by %s although the earlier "
                   "attempt (line %d, %s) did not lose ownership (%s)" %
                   (e.seq, c.label(), p.lineno, p.ctx.label(), p.outcome),
                   seq=e.seq, cpus=(e.cpu, p.ctx.cpu), ctxs=(c.label(), p.ctx.label()))


def duplicate_commit(an, con, e):
    """A record is committed once: never a seq the console already
    committed."""
    an.violate("duplicate", con, "seq %d committed again by %s (console seq already %d)"
               % (e.seq, e.ctx.label(), e.next_seq), seq=e.seq, cpus=(e.cpu,),
               ctxs=(e.ctx.label(),))


def _seq(ev):
    s = ev.fields.get("seq")
    return int(s) if s is not None else None


def _owner(con):
    """(cpus, labels) of the console's current owner, for a message."""
    o = con.owner
    return ((o.cpu,), (o.label(),)) if o is not None else ((), ())


def after_loss(an, con, c, ev, what):
    """A context that was taken over or handed the console over does not
    emit, commit, grant or release until it acquires again.  The model
    calls it for an owner's action by a context that is not the owner;
    returns whether this rule judged it (the context had lost it)."""
    if c.state == LOST:
        oc, ol = _owner(con)
        an.violate("after-loss", con, "%s by %s after it lost the console (%s) and "
                   "did not re-acquire it" % (what, c.label(), c.end_how),
                   seq=_seq(ev), cpus=(ev.cpu,) + oc, ctxs=(c.label(),) + ol)
        return True
    if c.state in (HANDED, GRANTED):
        an.violate("after-loss", con, "%s by %s after it handed the console over"
                   % (what, c.label()), seq=_seq(ev), cpus=(ev.cpu,), ctxs=(c.label(),))
        return True
    return False


def one_owner_action(an, con, c, ev, what):
    """No emission, commit, grant or release by a context that does not
    own the console: one that never acquired it, or whose ownership
    another context's direct acquire of the free state word ended (its
    release traced late, overlapping intervals)."""
    oc, ol = _owner(con)
    if c.state == RELPEND:
        an.violate("one-owner", con, "%s by %s while another context already owns the "
                   "console (it was acquired directly, state word free)" % (what, c.label()),
                   seq=_seq(ev), cpus=(ev.cpu,) + oc, ctxs=(c.label(),) + ol)
    else:
        an.violate("one-owner", con, "%s by %s, which does not own the console (owner: %s)"
                   % (what, c.label(), ol[0] if ol else "none"),
                   seq=_seq(ev), cpus=(ev.cpu,), ctxs=(c.label(),))


def one_owner_acquire(an, con, t, how):
    """At most one owner at a time: a context does not acquire a console
    it owns, and a `how=direct` acquire takes only a free console
    (`prev_locked=0`).  The model calls it for an acquire by the owner
    itself (t.owner is the taker) and for a direct acquire whose state
    word was locked."""
    c = t.taker
    if t.owner is c:
        an.violate("one-owner", con, "%s acquired (how=%s) the console it already owns"
                   % (c.label(), how), cpus=(t.cpu,), ctxs=(c.label(),))
    else:
        an.violate("one-owner", con, "direct acquire by %s of a console that was "
                   "locked by %s" % (c.label(), t.owner_label),
                   cpus=(t.cpu, t.owner_cpu), ctxs=(c.label(),))


# the units, by the acquire they judge, in the order they run
ON_HOSTILE = (takeover_prio, panic_protect_hostile)
ON_HANDOVER = (panic_protect_handover,)

UNITS = {
    "after-loss": (after_loss,),
    "one-owner": (one_owner_action, one_owner_acquire),
    "dropped-count": (dropped_count,),
    "duplicate": (duplicate_emission, duplicate_commit),
    "thread-takeover": (thread_takeover,),
    "takeover-prio": (takeover_prio,),
    "panic-protect": (panic_protect_hostile, panic_protect_handover),
}
