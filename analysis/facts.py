"""The facts of the ownership model: what a kernel's model (model_rfc.py,
model_nbcon.py) saw at an event, as typed values, which the rule units
judge (rules.py).

The model applies the events and tells each fact it sees through one
sink, `tell(fact)` of its model_io.Sinks: the registry's dispatcher
(rules.Dispatch), which hands the fact to the units that consume its
kind for that model, and reports what they raise.

Invariants:
  * a fact is a namedtuple made by fact() here, one class per kind; its
    `kind` is its name in the registry (rules.FACTS), which the units
    name in `consumes` and `python3 -m analysis rules` prints; its first
    field is the console (model.Console) it is about;
  * a fact carries what its units need to judge it, as the model saw it
    at that event (the console's seq, the owner, the loglevel): a unit
    reads the fact and the objects in it (a context's label and state,
    an attempt's outcome, as they are when the fact is told: at the
    event, or for a skip the model holds, when it stops holding it),
    never the checker's state, and changes none;
  * the model decides which fact an event makes and grants the
    tolerances; whether a fact breaks a rule is for the units alone;
  * every kind is consumed by at least one unit (test_registry.py);
  * a tolerance the model grants is a fact too, ToleranceGranted, told
    to the same sink, but of no kind of KINDS: no unit judges it (a
    tolerance raises no rule), the dispatcher hands it to the
    tolerances' counter (tolerances.Tally), and the model keeps no
    count of it.
"""

from collections import namedtuple

# kind -> its class, in the order defined here
KINDS = {}


def fact(name, kind, fields, about):
    """A fact class `name` of `kind`: a namedtuple of the console and
    `fields`; `about`, what it says, is its docstring and its row of
    rules.FACTS."""
    cls = namedtuple(name, "con " + fields)
    cls.kind = kind
    cls.__doc__ = about
    if kind in KINDS:
        raise ValueError("fact %s defined twice" % kind)
    KINDS[kind] = cls
    return cls


# Who took the console from whom, as the model sees it at an acquire (a
# value the acquire facts carry, not a fact of its own).
#   taker: the acquiring context (model.Ctx), cpu: its CPU, prio: its priority
#   owner_known: the state word or the model names an owner
#   owner_rank: the owner's priority (the higher of prev_prio and the tracked owner's)
#   owner_label, owner_cpu: who that owner is
#   owner: the tracked owner context (or None), for a handover: the one handing over
Takeover = namedtuple("Takeover", "taker cpu prio owner_known owner_rank owner_label "
                                  "owner_cpu owner")

# ------------------------------------------------------------ acquires
Acquired = fact(
    "Acquired", "acquire", "ctx how prev_unsafe mark marked",
    "any acquire, with the state word's unsafe bit (prev_unsafe), the acquire's "
    "unsafe-takeover mark (mark; None: the kernel has none) and whether an acquire "
    "before it marked the console (marked)")
HostileAcquired = fact(
    "HostileAcquired", "hostile-acquire", "takeover",
    "a how=hostile acquire as its fields tell (prev_* of the state word)")
TakenOver = fact(
    "TakenOver", "takeover", "takeover",
    "a hostile takeover with the owner the model tracked")
HandedOver = fact(
    "HandedOver", "handover-takeover", "takeover from_panic_owner mid_record",
    "a handover acquire from an owner (takeover.owner), whether that was a "
    "panic-priority owner on another CPU, and whether it was in the middle of "
    "a record")
OwnerAcquired = fact(
    "OwnerAcquired", "owner-acquire", "takeover how",
    "an acquire by the owner itself, or a direct acquire of a locked state word")

# ------------------------------------------------------------ owners
NotOwnerAction = fact(
    "NotOwnerAction", "action", "ctx ev what owner",
    "an emission, commit, grant or release (what) by a context that is not the "
    "owner, with the console's owner then (or None)")

# ------------------------------------------------ emissions and commits
Emitted = fact(
    "Emitted", "emission", "ev ctx seq dropped committed",
    "an emission of a seq, with its dropped count and the seq after the console's "
    "last commit (committed)")
Reprinted = fact(
    "Reprinted", "reprint", "ctx cpu seq next_seq prev",
    "an emission of a seq the console has passed (prev None), or of the seq of its "
    "last attempt again (prev that attempt); next_seq: the console's next seq")
Recommitted = fact(
    "Recommitted", "recommit", "ctx cpu seq next_seq",
    "a commit of a seq the console has passed (next_seq: its next seq)")
Skipped = fact(
    "Skipped", "skip", "ev ctx seq dropped next_seq",
    "an emission that skips seqs beyond its dropped count (next_seq: the console's "
    "next seq before it)")
FirstEmitted = fact(
    "FirstEmitted", "first-emission", "ev ctx seq dropped lo what",
    "the console's first traced emission or commit (what), with the first seq stored "
    "in the trace (lo)")
Committed = fact(
    "Committed", "commit", "ev ctx seq next_seq",
    "a commit by the owner, with the console's next seq")
UnemittedCommit = fact(
    "UnemittedCommit", "unemitted-commit", "ev ctx seq level loglevel",
    "a commit of a printable record (or one whose store is not in the trace: level "
    "None) that its context did not emit; loglevel: the console loglevel")
EmptyCommit = fact(
    "EmptyCommit", "empty-commit", "attempt level loglevel",
    "a commit ending an emission of len=0 (attempt) of a printable record (level, "
    "below the console loglevel)")

# ------------------------------- the RFC model's handover (request, grant)
# A grant (con.grant): a dict of its owner ("from", model.Ctx), "to_cpu",
# "to_prio", "ts", "matched", "lineno"; a request (con.requests[cpu]): of
# "prio", "thread", "ts", "ctx", "lineno", "owner".
GrantBypassed = fact(
    "GrantBypassed", "handover:bypassed-grant", "grant ev how",
    "another acquire (how) while a grant is pending, the state word not naming the "
    "grant's target")
GrantOverdue = fact(
    "GrantOverdue", "handover:overdue-grant", "waiter vcpu ev window",
    "by timestamps, a handover acquire (waiter) whose grant was not traced within "
    "window (GRANT_WAIT) from the owner on vcpu")
HandoverAcquire = fact(
    "HandoverAcquire", "handover:acquire", "ctx ev prev_cpu request prio",
    "a how=handover acquire, with its CPU's pending request")
GrantedAcquire = fact(
    "GrantedAcquire", "handover:granted-acquire", "grant ctx ev prio",
    "a how=handover acquire while a grant is pending")
UngrantedAcquire = fact(
    "UngrantedAcquire", "handover:ungranted-acquire", "ctx ev owner",
    "in chain order, a how=handover acquire while another context owns the console "
    "and no grant is pending")
UngrantedRelease = fact(
    "UngrantedRelease", "handover:release", "ctx ev",
    "a release with handover=1 by an owner that granted nothing")
RequestAfterGrant = fact(
    "RequestAfterGrant", "handover:request-after-grant", "grant ev prio",
    "a request of the CPU that a grant traced before it went to")
GrantAfterAcquire = fact(
    "GrantAfterAcquire", "handover:grant-after-acquire", "ctx ev to_cpu to_prio waiter",
    "a grant traced after the handover acquire that waited for it")
Granted = fact(
    "Granted", "handover:grant", "ctx ev to_cpu to_prio request",
    "a grant to a CPU with a pending request")
UnrequestedGrant = fact(
    "UnrequestedGrant", "handover:unrequested-grant",
    "ctx ev to_cpu to_prio word_prio waiter",
    "in chain order, a grant to a CPU with no pending request while the state word it "
    "replaced carries no request or another waiter's")
GrantUnclaimed = fact(
    "GrantUnclaimed", "trace-end:grant", "grant",
    "a grant still pending at the end of the trace, no request matched")
GrantAwaited = fact(
    "GrantAwaited", "trace-end:awaited-grant", "waiter",
    "a handover acquire still waiting for its grant at the end of the trace")

# ------------------------------------------------- the nbcon model only
NbconRequest = fact(
    "NbconRequest", "nbcon:request", "ctx ev owner_cpu owner_prio marked",
    "a handover request, with the owner its state word names and whether the "
    "word carries the unsafe-takeover mark")
NbconHandoverRelease = fact(
    "NbconHandoverRelease", "nbcon:handover-release", "ctx ev to_prio request",
    "a release with handover=1 (the grant of 6.12), with the request pending "
    "for its to_prio")
NbconHandoverAcquire = fact(
    "NbconHandoverAcquire", "nbcon:handover-acquire", "ctx ev request word_req_prio",
    "a how=handover acquire, with its CPU's pending request and the word's req_prio")
NbconReplay = fact(
    "NbconReplay", "nbcon:replay", "ev ctx seq replay assigned unknown",
    "an emission with its replay flag and the seq a previous owner was assigned "
    "and did not commit (required, or allowed when unknown)")

# ------------------------------------------------- tolerances granted


class ToleranceGranted(namedtuple("ToleranceGranted", "con name ev")):
    """The model took event ev for legitimate under the tolerance `name`,
    a row of tolerances.TOLERANCES: a shape that looks like a violation
    of that row's rule but is not.  Counted in the row's counter
    (tolerances.Tally), judged by no unit."""
    __slots__ = ()
    kind = "tolerance"
