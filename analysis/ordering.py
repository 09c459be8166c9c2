"""Order the console events of a trace by causality, not by clocks.

The readers deliver events in timestamp order.  Timestamps of different
CPUs do not order the state changes they report: every tracepoint fires
after the cmpxchg it reports, and a vCPU that the host deschedules in
between, or an NMI that takes the console over there, lists the events
in an order the console state never went through.

The kernel counts the transitions of each console's state word
(`cons_state::trans`, five bits) and the events that report one carry
the word the cmpxchg replaced and the one it installed (`old_state`,
`new_state`, docs/interfaces.md section 1).  Every counted transition is
reported by exactly one event, so per console the transitions form a
chain in which each one's old state is its predecessor's new state.
This stage sits between a reader and `checker.Analyzer.feed()` and
re-emits the items so that

- the transitions of each console come in chain order;
- the events of one stream (one CPU and one execution context: task,
  softirq, hardirq, nmi, printer thread or not) keep their trace order,
  which is their program order;
- an event that depends on a state without making a transition (a
  handover acquire, which sees the state its grant installed) comes
  after the transition that installed it, and before the transition
  that replaced that state when it is already read (the grant's target
  saw the state before a hostile acquire took the console from it);
- on 32-bit, where a commit is no transition, an emission comes after
  the commits that put the console's seq where it read it, and a
  hostile acquire right before its stream's next event (the emission
  that tells which of the victim's commits came before the takeover);
- a hostile acquire comes after the event that follows the victim's
  last acquire or commit in its stream (its emission, no transition,
  was made while it owned the console);
- everything else keeps its place: an item is passed on as soon as
  nothing it follows in its stream is waiting.

Stores (`nobkl_store`), `console` events and events without the fields
are never held, except at a chain's start: its first transition (the
root) is found by linking, not by listing (`root()`), and until it is
chosen every item waits.  The argument for why the chain is total, and the ABA
cases, are in docs/analysis.md ("Ordering by the state chain").

Where the chain cannot be continued (the transition that would link
never comes) the stage first takes the items again with another of the
transitions that link in a slot the chain went through (two transitions
with the same old state bits, the ABA choice: REPAIR_WINDOW); what it
passes on is spooled until then.  Where none lets every transition
link, it hands the analyzer a trace-loss marker naming the place: the
checker forgets its state there and the verdict is `incomplete`, never
a violation.  A trace without the fields (kernels
before the transition count) is passed through in timestamp order; its
verdict is `incomplete` unless the user asked to judge it by the CPUs'
clocks (`annotate(by_clocks=True)`, `check --order timestamps`).

What depends on the reader's order (a CPU's timestamps must not go
back) is checked by `on_read` as the items are read, before they are
reordered.

Each event passed on in chain order (pass_on()) gets a happens-before
stamp (happens_before.py) from its stream's program order and, for a
transition linked in its console's chain or an event that saw the state
the last one installed, from the chain: the checker tells by them
whether a violation happened before a trace loss (`genuine`), not by
the clocks.  Events handed on unlinked (trace loss, a chain break,
damage, a trace without the chain) get none.
"""

from collections import deque

from .happens_before import VectorClock
from .traceparse import Drop, Event, Store

# events that may carry old_state/new_state
TRANSITION_EVENTS = frozenset((
    "nobkl_acquire", "nobkl_handover_request", "nobkl_handover_grant",
    "nobkl_handover_timeout", "nobkl_release", "nobkl_commit"))

CONSOLE_EVENTS = TRANSITION_EVENTS | {"nobkl_emit", "nobkl_lost"}

# transitions a waiter makes (not the owner)
WAITER_EVENTS = frozenset(("nobkl_handover_request", "nobkl_handover_timeout"))

# how many installed states of a console are remembered for the events
# that depend on one (a grant's waiter traces its acquire later): fewer
# than 32, so no two of them have the same state bits (trans differs)
RECENT_STATES = 31

# on 64-bit the whole words installed (state bits and seq) are remembered
# for longer: a word whose seq the console has moved past cannot be
# installed again, so a handover acquire listed this many transitions
# after the grant that installed its word still finds it
RECENT_WORDS = 4096

# why a trace without the chain is not judged unless the user asks for the
# clocks: a tracepoint fires after its cmpxchg, and only the state words
# tell which of two CPUs' state changes came first
UNORDERED_REASON = ("cannot order the events of different CPUs: the trace has no "
                    "old_state/new_state fields (a kernel without the transition count); "
                    "judging it by the CPUs' clocks needs order=timestamps "
                    "(`check --order timestamps`)")

# grants remembered until their target's handover acquire is passed on
# (a target that gave up never traces one)
OPEN_GRANTS = 64

# items held back at most; beyond that the chain is declared broken
HOLD_MAX = 200000

TRANS_BITS = 5

# transitions after the chain's first one during which a transition from
# before it may still come (traced late when the trace began); fewer than
# the 32 that make a state word repeat
PRE_ROOT_LINKS = 24

# the chain's first transition (its root) is found by linking: a console's
# transitions are held, with every item listed after the first of them,
# until ROOT_HOLD of them wait, or the trace ends or loses events; the
# root is then chosen among them (CausalOrder.root(), docs/analysis.md).
# A count, not a time: how far a transition is listed from the others
# depends on its CPU's clock.  A root listed after ROOT_HOLD transitions
# of its console is not found: the held ones cannot all link without
# it, or the first of them is taken and the root, listed later, never
# links (more than PRE_ROOT_LINKS after it); the chain breaks, incomplete
ROOT_HOLD = 1024

# The ABA choice.  Two transitions can have the same old state bits: on
# 32-bit the word does not say which CPU requests, so two waiters that
# spin request/timeout against one owner make the same bits 32
# transitions apart.  Which of them links where the chain is, is the
# listing's choice (root(): the first listed candidate; drain(): the
# earliest listed head), and a wrong one shows only when the chain gets
# stuck: at the trace's end a transition waits that never linked.  Such
# a stranded transition S could have filled a slot the chain went
# through after S's stream's last link: the slot after a transition Z
# whose installed state S links to (by ready()'s rule), filled by
# another transition X.  The stage then takes the items again from its
# checkpoint with S forced into that slot (only S may fill it: X waits;
# repair()), and so on for the next stranded transition
# (next_repair(): first the slot closest after S's stream's last link;
# no slot twice with the same transition), until every transition
# links or the runs again have taken REPAIR_WORK items.  When no run
# links everything, the items are taken once more as at first, so the
# chain breaks where it did (incomplete).
#
# The invariant: nothing reaches the sink that another run could change.
# What the stage passes on is spooled, with the items read since the
# checkpoint and its state then, until the trace ends or REPAIR_WINDOW
# items were read (then it goes on for good, and a new checkpoint is
# taken: a slot filled before it is not revisited).  Every run links by
# ready()'s rule, a forced slot only narrows which of the transitions
# that link there may fill it, so a repaired chain is one the state
# words allow, whatever the listing.  Counts, not times.
REPAIR_WINDOW = HOLD_MAX
REPAIR_WORK = 10 * REPAIR_WINDOW

# in the spooled output: where on_chain is called, and on_read with an
# item read
_CHAIN = object()


class _Read:
    __slots__ = ("item",)

    def __init__(self, item):
        self.item = item


# attributes of CausalOrder that are not the state a run starts from
# (the spool and the repair's own; `notes` is restored in place, the
# checker holds it)
_NOT_STATE = frozenset(("sink", "out_sink", "on_chain", "chain_cb", "on_read", "notes", "stamps",
                        "spooling", "outbuf", "log", "ckpt", "forced", "tried", "repairs"))


_IMMUTABLE = (int, float, str, tuple, frozenset, type(None))


def _clone(v):
    """A copy of the stage's state value v that a run cannot change: its
    containers copied, the items in them (never changed) shared.  A new
    kind of mutable state (an attribute of CausalOrder or ChainState)
    must be copied here: shared, a run again would start from what the
    run before left in it; it fails loudly instead."""
    t = v.__class__
    if t is dict:
        return {k: _clone(x) for k, x in v.items()}
    if t is list:
        return [_clone(x) for x in v]
    if t is deque:
        return deque([_clone(x) for x in v], v.maxlen)
    if t is set:
        return set(v)
    if t is VectorClock:
        return v.copy()
    if t is ChainState:
        c = ChainState.__new__(ChainState)
        for a in ChainState.__slots__:
            setattr(c, a, _clone(getattr(v, a)))
        return c
    if isinstance(v, _IMMUTABLE):
        return v
    raise TypeError("ordering: no copy of %s for a run again (_clone())" % t.__name__)


def state_key(word, arch32):
    """The 32 state bits of a state word (alive .. trans), without the
    sequence that the 64-bit word carries in its low half: the chain
    links on these bits (the transition count included), the sequence
    only breaks ties (see docs/analysis.md)."""
    return word if arch32 else word >> 32


REQ_PRIO_SHIFT = 7


def state_req_prio(word, arch32):
    """`cons_state::req_prio` of a state word given as the decimal text of
    a trace field (0 for none, no field, or a word that does not parse):
    a waiter's pending request."""
    try:
        w = int(word)
    except (TypeError, ValueError):
        return 0
    return (state_key(w, arch32) >> REQ_PRIO_SHIFT) & 3


def trans_count(word, arch32):
    """`cons_state::trans` of a state word: its top five bits."""
    return (word >> ((32 if arch32 else 64) - TRANS_BITS)) & ((1 << TRANS_BITS) - 1)


class ChainState:
    """What the ordering knows of one console's chain."""

    __slots__ = ("cur", "stream", "recent", "words", "grants", "pre_root", "linked",
                 "root_line", "root_key", "cand", "next_seq",
                 "owner_stream", "owner_mark", "last", "place")

    def __init__(self):
        self.cur = None              # new_state of the last transition passed on
        self.stream = None           # the owner's stream that made it (owner_stream())
        self.recent = deque(maxlen=RECENT_STATES)   # keys installed recently
        self.words = {}              # 64-bit: whole words installed -> self.linked then
        self.grants = {}             # word a grant installed -> its target CPU, until picked up
        self.pre_root = set()        # keys before the first transition passed on
        self.linked = 0              # transitions linked since the first
        # while the root is looked for (cur is None): the chosen root's
        # trace line and old key once decided; the held transitions in
        # trace order
        self.root_line = None
        self.root_key = None
        self.cand = []
        # the console's seq after the last commit passed on (None before
        # one): on 32-bit what an emission's seq - dropped must have reached
        self.next_seq = None
        # the stream of the owner's last acquire or commit passed on, and
        # that event's trace line (a takeover waits for its next event)
        self.owner_stream = None
        self.owner_mark = 0
        # the happens-before vector of the last transition linked in this
        # chain (happens_before.py), None before one
        self.place = None
        # the trace line of the last transition linked (the root or a
        # link): the slot the next one fills (CausalOrder.note_link())
        self.last = None

    def rooting(self):
        return self.cur is None and self.root_line is None

    def add_candidate(self, ev):
        """A transition held while the root is looked for."""
        self.cand.append(ev)

    def rooted(self, ev, ko):
        self.root_line = ev.lineno
        self.root_key = ko
        self.cand = []


class CausalOrder:
    """A filter in front of `sink` (Analyzer.feed); see the module doc.

    feed(item) takes the reader's items, finish() ends the trace.
    `mode` is None until the first console event with or without the
    fields decides it: "chain" or "timestamps"."""

    def __init__(self, sink, arch32=False, on_read=None, on_chain=None, notes=None,
                 stamps=None):
        # what is passed on is spooled until no run again can change it
        # (the ABA choice, REPAIR_WINDOW): self.sink spools, out_sink gets it
        self.out_sink = sink
        self.sink = self.spool
        self.spooling = True
        self.outbuf = []
        # since the checkpoint (its state, taken at the first item read and
        # each REPAIR_WINDOW items): the items read; the slots forced
        # (trace line of the transition before, or ("root", con) -> trace
        # line of the transition that fills it), the (slot, line) pairs
        # tried, the items the runs again took
        self.log = []
        self.ckpt = None
        self.forced = {}
        self.tried = set()
        self.repairs = 0
        # (slot, transition, state word it replaced, owner stream that
        # installed it) of each transition linked since the checkpoint
        self.links = []
        # trace line -> happens-before stamp (happens_before.py) of each
        # event passed on (pass_on()), for the checker, which pops them;
        # None: not stamped. A run again writes its events' stamps anew;
        # the clock is state, restored with the rest at a run again
        self.stamps = stamps
        self.clock = VectorClock() if stamps is not None else None
        # trace line -> what the chain says of a handover acquire passed
        # on: "unchained" (its console's chain had not started: the state
        # it saw may be from before the trace), "replaced" (a transition
        # passed on before it replaced the state it saw: it traced its
        # acquire after that transition); for a transition linked before
        # the chain's first one: "pre-chain"; the checker pops them
        self.notes = notes if notes is not None else {}
        self.chain_cb = on_chain     # called once when the trace has the chain
        self.on_chain = self.chain_found if on_chain is not None else None
        self.on_read = on_read       # called with each Store/Event as read
        self.arch32 = arch32
        self.mode = None
        self.chains = {}
        self.streams = {}            # stream key -> deque of held Events
        self.held = 0
        # (con, state key) -> held events that saw that state without a
        # transition (handover acquires): a transition from it waits
        self.held_deps = {}
        self.breaks = []             # (lineno, console, message)
        # consoles whose root is looked for with transitions held; while
        # there are any, the other items wait in `pending` (a store listed
        # after a held emission must not be passed on before it)
        self.rooting = set()
        self.pending = deque()
        self.max_passed = 0          # the last trace line of a console event passed on
        self.replaying = False
        self.ending = False          # finish(): nothing more will be read
        # the trace lines of the events that wait for another stream's
        # event without a transition to link to: a 32-bit emission for the
        # commits that put the console's seq where it read it (seq_need()),
        # a hostile acquire for its victim's next event (victim_shown()).
        # A wait ends on the awaited event, the trace's end (finish(): then
        # the trace lines go to seq_expired and the events on as far as
        # the chain allows) or trace loss (on_drop(): everything held goes
        # on in trace order); never on a timestamp.  Bounded by HOLD_MAX
        # events held: beyond it the chain breaks (incomplete), as an
        # event passed on before what it waits for could be a violation
        # that only the listing made
        self.seq_waits = set()
        self.seq_expired = set()
        self.last_read = {}          # stream -> trace line of its last event read
        self.counts = {"transitions": 0, "reordered": 0, "held_max": 0,
                       "before_chain_start": 0, "seq_differs": 0,
                       "dependent_events": 0, "held_behind_handover_acquire": 0,
                       "root_held": 0, "held_for_seq": 0,
                       "held_for_victim": 0, "aba_relinked": 0}

    # ------------------------------------------------------------ fields
    def words(self, ev):
        """(old, new) state words of an event, or None when it has none
        (old traces, other events, or 0/0: no transition, no dependency)."""
        f = ev.fields
        o = f.get("old_state")
        n = f.get("new_state")
        if o is None or n is None or not (o.isdigit() and n.isdigit()):
            # none, or a bad value: the checker reports that as damage
            return None
        o, n = int(o), int(n)
        if o == 0 and n == 0:
            return None
        return o, n

    def owner_stream(self, ev):
        """The stream of a transition for the 64-bit seq exception: the
        owner's (acquire, commit, grant, release), None for a waiter's
        request or timeout.  Only the owner updates the seq unseen (the
        break_drop_uncounted breaker); a waiter whose request saw the
        same state bits 32 commits later must not link in its place."""
        if ev.name in WAITER_EVENTS:
            return None
        return self.stream_of(ev)

    @staticmethod
    def stream_of(ev):
        f = ev.fields
        return (ev.cpu, f.get("ctx"), f.get("thread"))

    def chain(self, con):
        c = self.chains.get(con)
        if c is None:
            c = self.chains[con] = ChainState()
        return c

    # ----------------------------------------------------------- driving
    def feed(self, item):
        """Take the next item in trace order; pass it on, or hold it
        while its stream waits for a transition."""
        if not self.spooling:
            self.read(item)
            return
        if self.ckpt is None:
            self.ckpt = self.snapshot()
        self.log.append(item)
        self.read(item)
        if self.mode == "timestamps":
            # no chain, no choice to take again
            self.commit(final=True)
        elif len(self.log) >= REPAIR_WINDOW:
            self.commit()

    def read(self, item):
        """An item read: on_read, in its place among what is passed on
        (spooled like it, so that the checker sees the reader's order
        where it did without the spool), then take it."""
        cls = item.__class__
        if self.on_read is not None and (cls is Event or cls is Store):
            if self.spooling:
                self.outbuf.append(_Read(item))
            else:
                self.on_read(item)
        self.take(item)

    def take(self, item):
        cls = item.__class__
        if cls is Drop:
            self.on_drop(item)
            return
        if cls is not Event or item.name not in CONSOLE_EVENTS:
            # stores, headers, console events: their place is their timestamp
            if self.rooting:
                self.pending.append(item)
                if len(self.pending) > HOLD_MAX:
                    self.settle()
                    self.flush_pending()
            else:
                self.sink(item)
            return
        if self.mode is None and item.name in TRANSITION_EVENTS:
            self.mode = "chain" if "old_state" in item.fields else "timestamps"
            if self.mode == "chain" and self.on_chain is not None:
                self.on_chain()
        if self.mode != "chain":
            self.sink(item)
            return
        f = item.fields
        if "old_state" in f and not (f["old_state"].isdigit() and
                                     f.get("new_state", "").isdigit()):
            # damage (the checker reports it and resynchronises): the
            # chains start again after it, as after trace loss
            self.settle()
            self.flush_all()
            self.sink(item)
            return
        key = self.stream_of(item)
        if item.lineno > self.last_read.get(key, 0):
            self.last_read[key] = item.lineno
        q = self.streams.get(key)
        if q:
            q.append(item)
            self.hold_one(item)
            if self.seq_waits or (len(q) == 2 and self.is_takeover(q[0])):
                # the event after a held takeover, or the victim's: it
                # may decide it
                self.drain()
            return
        if self.admits(item):
            self.note_link(item)
            self.pass_on(item)
            if self.held:
                self.drain()
            return
        if q is None:
            q = self.streams[key] = deque()
        q.append(item)
        self.hold_one(item)
        if self.seq_waits:
            # it may be the event a wait is for (a victim's next event)
            self.drain()

    def root_candidate(self, ev):
        """A transition held while its console's root is looked for:
        remember it, and choose the root once ROOT_HOLD of them wait."""
        w = self.words(ev)
        if w is None or w[0] == w[1]:
            return
        con = ev.fields.get("con")
        c = self.chain(con)
        if not c.rooting():
            return
        c.add_candidate(ev)
        self.rooting.add(con)
        if not self.replaying:
            self.try_root(con)

    def try_root(self, con):
        """Root console con's chain once ROOT_HOLD of its transitions
        wait (else at the trace's end or loss, settle())."""
        c = self.chain(con)
        if len(c.cand) >= ROOT_HOLD:
            self.root(con)

    def stream_lists(self, con):
        """Per stream, the held transitions of console con in stream order."""
        out = []
        for q in self.streams.values():
            lst = []
            for e in q:
                if e.fields.get("con") == con:
                    w = self.words(e)
                    if w is not None and w[0] != w[1]:
                        lst.append((e, w))
            if lst:
                out.append(lst)
        return out

    def links_from(self, lists, i):
        """The trace lines of the held transitions that link into one chain
        from the first held transition of stream list i, by the rule
        ready() applies (a dry run of the stage with that root)."""
        a32 = self.arch32
        pos = [0] * len(lists)
        pos[i] = 1
        ev, (o, cur) = lists[i][0]
        cs = self.owner_stream(ev)
        linked = {ev.lineno}
        while True:
            best = None
            kc = state_key(cur, a32)
            for j, lst in enumerate(lists):
                p = pos[j]
                if p < len(lst):
                    e, (eo, en) = lst[p]
                    if (state_key(eo, a32) == kc and (eo == cur or self.stream_of(e) == cs)
                            and (best is None or e.lineno < best[0].lineno)):
                        best = (e, en, j)
            if best is None:
                return linked
            e, en, j = best
            pos[j] += 1
            cur = en
            cs = self.owner_stream(e)
            linked.add(e.lineno)

    def root(self, con):
        """Choose the root of console con's chain among its held
        transitions and take everything held again (replay()).  The root
        precedes every other transition of the console, so also those of
        its own stream: the candidates are each stream's first held
        transition.  The root is the first listed candidate whose old
        state no other held transition installed, except one that links
        after it (the dry run links_from(): a state word repeats after
        32 transitions, so a transition 32 or more after the root may
        install the same state bits again).  When every candidate has a
        predecessor held (only where a repeat is not linked), the first
        listed.  A candidate forced by a repair (next_repair()) is the
        root; a forced one that is no candidate is dropped."""
        c = self.chain(con)
        if not c.rooting() or not c.cand:
            self.rooting.discard(con)
            return
        a32 = self.arch32
        lists = self.stream_lists(con)
        order = sorted(range(len(lists)), key=lambda i: lists[i][0][0].lineno)
        pick = None
        forced = self.forced.get(("root", con))
        if forced is not None:
            pick = next((i for i in order if lists[i][0][0].lineno == forced), None)
            if pick is None:
                del self.forced[("root", con)]
            else:
                order = ()
        for i in order:
            ev, (o, _) = lists[i][0]
            ko = state_key(o, a32)
            preds = [e for e in c.cand if e is not ev and state_key(self.words(e)[1], a32) == ko]
            if preds:
                linked = self.links_from(lists, i)
                if any(e.lineno not in linked for e in preds):
                    continue
            pick = i
            break
        if pick is None:
            pick = order[0]
        ev, (o, _) = lists[pick][0]
        self.counts["root_held"] = max(self.counts["root_held"], len(c.cand))
        c.rooted(ev, state_key(o, a32))
        self.rooting.discard(con)
        self.replay()

    def replay(self):
        """A root was chosen: take everything held again, in trace order,
        as if the root had been known from the start (the events of a
        console whose root is still looked for are held again)."""
        items = sorted([e for q in self.streams.values() for e in q] + list(self.pending),
                       key=lambda e: e.lineno)
        self.streams.clear()
        self.pending.clear()
        self.held = 0
        self.held_deps.clear()
        for con in self.rooting:
            self.chains[con].cand = []
        # the streams are read again: what a takeover waits for
        # (victim_shown()) is what was read before it then
        for it in items:
            if it.__class__ is Event:
                self.last_read.pop(self.stream_of(it), None)
        self.replaying = True
        try:
            for it in items:
                self.take(it)
        finally:
            self.replaying = False
        if not self.rooting:
            self.flush_pending()
        for con in list(self.rooting):
            if con in self.rooting:
                self.try_root(con)

    def settle(self):
        """The trace ends or loses events: root every chain still looked
        for with what is held, and pass on what links."""
        for con in list(self.rooting):
            self.root(con)
        self.rooting.clear()

    def flush_pending(self, before=None):
        """Pass on the items that waited while a root was looked for: all,
        or those listed before trace line `before`."""
        p = self.pending
        while p and (before is None or p[0].lineno < before):
            self.sink(p.popleft())

    def dep_key(self, ev):
        """(con, state word) of an event that saw a state without making
        a transition (old_state == new_state), else None.  The whole word:
        on 64-bit its seq tells the state apart from the same state bits
        32 transitions later (a handover acquire of then, waiting in its
        stream, must not hold up the transition from this one)."""
        w = self.words(ev)
        if w is None or w[0] != w[1]:
            return None
        return ev.fields.get("con"), w[0]

    def hold_one(self, ev):
        k = self.dep_key(ev)
        if k is not None:
            self.held_deps[k] = self.held_deps.get(k, 0) + 1
        self.held += 1
        if self.held > self.counts["held_max"]:
            self.counts["held_max"] = self.held
        self.root_candidate(ev)
        if self.held > HOLD_MAX:
            self.settle()
            if self.held > HOLD_MAX:
                self.break_chain("more than %d events wait for a transition" % HOLD_MAX)

    def is_takeover(self, ev):
        """A hostile acquire on 32-bit: the state word does not carry the
        seq, so the chain does not place it after the victim's commits."""
        return (self.arch32 and ev.name == "nobkl_acquire" and
                ev.fields.get("how") == "hostile")

    def seq_need(self, ev):
        """32-bit: can emission ev be passed on as far as the console's
        seq goes?  It read the seq `seq - dropped`, so the commit that put
        the console there came before it (the seq is a location of its
        own on 32-bit, advanced by the commits; a commit is no counted
        transition).  Waits only once a commit of the console was passed
        on, and until that commit is passed on or the trace ends (a seq
        advanced without a traced commit: the checker judges that) or
        loses events; see seq_waits."""
        if not self.arch32 or ev.name != "nobkl_emit":
            return True
        c = self.chains.get(ev.fields.get("con"))
        if c is None or c.next_seq is None or ev.lineno in self.seq_expired:
            return True
        try:
            read = int(ev.fields["seq"]) - int(ev.fields.get("dropped") or 0)
        except (KeyError, ValueError):
            return True
        if read <= c.next_seq:
            return True
        if ev.lineno not in self.seq_waits:
            self.seq_waits.add(ev.lineno)
            self.counts["held_for_seq"] += 1
        return False

    def victim_shown(self, ev):
        """A hostile acquire waits until the owner it takes the console
        from has shown the event after its last acquire or commit: that
        owner's emission is no transition, and listed late it would be
        passed on after the takeover and the taker's reprint (its cut
        line on the serial log then has no interrupted attempt).  Until
        that event is read, the trace ends or loses events (see
        seq_waits); a victim preempted for long just holds it longer."""
        c = self.chains.get(ev.fields.get("con"))
        if c is None or c.owner_stream is None or ev.lineno in self.seq_expired:
            return True
        v = c.owner_stream
        if str(v[0]) != ev.fields.get("prev_cpu") or v == self.stream_of(ev):
            return True
        if self.last_read.get(v, 0) > c.owner_mark:
            return True
        if ev.lineno not in self.seq_waits:
            self.seq_waits.add(ev.lineno)
            self.counts["held_for_victim"] += 1
        return False

    def ready(self, ev, q=None):
        """Can ev be passed on now?  A transition when it links to its
        console's chain, a dependent event when the state it saw was
        installed; other events always.  q: ev's stream when ev is its
        first held event (a 32-bit takeover waits for the event after
        it: the emission that tells which commits came before)."""
        if self.rooting and ev.fields.get("con") in self.rooting:
            # its console's root is looked for: every event of it waits
            # and goes on in trace order around the root
            return False
        if not self.seq_need(ev):
            return False
        if self.is_takeover(ev) and not self.ending:
            nxt = q[1] if q is not None and len(q) > 1 else None
            if nxt is None or not self.seq_need(nxt):
                return False
        if (ev.name == "nobkl_acquire" and ev.fields.get("how") == "hostile" and
                not self.ending and not self.victim_shown(ev)):
            return False
        w = self.words(ev)
        if w is None:
            return True
        con = ev.fields.get("con")
        c = self.chain(con)
        o, n = w
        a32 = self.arch32
        if o == n:
            k = state_key(o, a32)
            if c.cur is None:
                # before the root: only the state the root replaced
                return k == c.root_key and c.root_line is not None
            return (k in c.recent or k in c.pre_root or self.installed_before(c, o) or
                    c.grants.get(o) == ev.cpu)
        if c.cur is None:
            # the root, once chosen by linking (root()); but after a
            # handover acquire that saw the state it replaced
            return ev.lineno == c.root_line and not self.dep_blocks(con, o)
        if state_key(o, a32) == state_key(c.cur, a32):
            # on 64-bit the seq must match too, except for the owner's
            # stream that made the last transition: only the owner's own
            # untraced seq update (the break_drop_uncounted breaker)
            # changes it unseen
            if not (o == c.cur or self.stream_of(ev) == c.stream):
                return False
            # a handover acquire that saw this state (read, waiting in its
            # stream) observed it before this transition replaced it
            return not self.dep_blocks(con, c.cur)
        # a transition from before the chain's first one, traced late
        return state_key(n, a32) in c.pre_root

    def dep_blocks(self, con, word):
        """Does a held event that saw state `word` of console con without a
        transition (a handover acquire, held_deps) hold up the transition
        from it?  Not one behind a held transition of that console in its
        stream: that transition came before it in program order and has
        not linked, so the state it saw was installed later, the same
        word again (on 32-bit 32 transitions on: a grant's target whose
        grant waits for its own place held up a waiter's request from
        the state the grant installs 32 transitions later)."""
        if not self.held_deps.get((con, word)):
            return False
        for q in self.streams.values():
            for e in q:
                if e.fields.get("con") != con:
                    continue
                w = self.words(e)
                if w is None:
                    continue
                if w[0] != w[1]:
                    break
                if w[0] == word:
                    return True
        return False

    def installed_before(self, c, word):
        """On 64-bit: was the whole word installed among the last
        RECENT_WORDS transitions, with a seq the console has moved past
        since (so no later transition can install it again)?"""
        if self.arch32 or c.cur is None:
            return False
        return word in c.words and (word ^ c.cur) & 0xffffffff != 0

    @staticmethod
    def remember_grant(c, ev, word):
        """A grant installed word for its target; the target's handover
        acquire, however late it is listed, saw that word.  Grants whose
        target gave up are never picked up: the oldest are forgotten."""
        try:
            c.grants[word] = int(ev.fields["to_cpu"])
        except (KeyError, ValueError):
            return
        if len(c.grants) > OPEN_GRANTS:
            del c.grants[next(iter(c.grants))]

    @staticmethod
    def remember(c, word, a32):
        """A transition installed word."""
        c.recent.append(state_key(word, a32))
        if a32:
            return
        c.words[word] = c.linked
        if len(c.words) > 2 * RECENT_WORDS:
            old = c.linked - RECENT_WORDS
            c.words = {w: i for w, i in c.words.items() if i > old}

    def pass_on(self, ev):
        if self.pending:
            self.flush_pending(ev.lineno)
        if ev.lineno > self.max_passed:
            self.max_passed = ev.lineno
        if ev.name in ("nobkl_acquire", "nobkl_commit"):
            c = self.chain(ev.fields.get("con"))
            c.owner_stream = self.stream_of(ev)
            c.owner_mark = ev.lineno
        elif ev.name in ("nobkl_release", "nobkl_handover_grant"):
            self.chain(ev.fields.get("con")).owner_stream = None
        if ev.name == "nobkl_commit":
            c = self.chain(ev.fields.get("con"))
            try:
                nxt = int(ev.fields["seq"]) + 1
            except (KeyError, ValueError):
                nxt = None
            if nxt is not None and (c.next_seq is None or nxt > c.next_seq):
                c.next_seq = nxt
        elif ev.name in ("nobkl_emit", "nobkl_acquire"):
            self.seq_waits.discard(ev.lineno)
        w = self.words(ev)
        # happens-before: the chain ev comes after (its transition's
        # predecessor, or the transition that installed the state it saw),
        # and the chain ev is linked in
        after = linked = None
        if w is not None:
            o, n = w
            c = self.chain(ev.fields.get("con"))
            a32 = self.arch32
            if o == n:
                self.counts["dependent_events"] += 1
                if c.grants.get(o) == ev.cpu:
                    del c.grants[o]
                if c.cur is None:
                    self.notes[ev.lineno] = "unchained"
                elif state_key(o, a32) != state_key(c.cur, a32):
                    self.notes[ev.lineno] = "replaced"
                elif o == c.cur:
                    after = c
            elif c.cur is None:
                linked = c
                c.cur = n
                c.stream = self.owner_stream(ev)
                c.pre_root.add(state_key(o, a32))
                self.remember(c, n, a32)
                self.counts["transitions"] += 1
            elif state_key(o, a32) == state_key(c.cur, a32):
                if o != c.cur:
                    self.counts["seq_differs"] += 1
                after = linked = c
                c.cur = n
                c.stream = self.owner_stream(ev)
                c.linked += 1
                self.remember(c, n, a32)
                if ev.name == "nobkl_handover_grant":
                    self.remember_grant(c, ev, n)
                self.counts["transitions"] += 1
                if c.linked == PRE_ROOT_LINKS:
                    # later a key of before the start could only be the
                    # same state again (ABA), no late transition of then
                    c.pre_root.clear()
            else:
                c.pre_root.add(state_key(o, a32))
                self.counts["before_chain_start"] += 1
                self.notes[ev.lineno] = "pre-chain"
                self.counts["transitions"] += 1
        if self.stamps is not None:
            self.stamp(ev, after, linked)
        self.sink(ev)

    def stamp(self, ev, after, linked):
        """Stamp ev (happens_before.py): after its stream's events and,
        when `after` (a ChainState) is given, after the last transition
        linked in that chain; `linked`: ev is now that chain's last
        transition."""
        join = after.place if after is not None else None
        st = self.clock.stamp(self.stream_of(ev), join)
        if linked is not None:
            linked.place = st[1]
        self.stamps[ev.lineno] = st

    def drain(self):
        """Pass on every held event that has become ready, in trace
        order among the streams' heads."""
        progress = True
        while progress and self.held:
            progress = False
            best = None
            for key, q in self.streams.items():
                if q and (best is None or q[0].lineno < best[0].lineno) and \
                        self.admits(q[0], q):
                    best = q
            if best is not None:
                self.unhold(best)
                progress = True
                # the rest of that stream may follow at once
                while best and self.admits(best[0], best):
                    self.unhold(best)

    def unhold(self, q):
        """Pass on the first held event of stream q."""
        ev = q.popleft()
        self.held -= 1
        self.note_link(ev)
        if ev.lineno < self.max_passed:
            self.counts["reordered"] += 1
        k = self.dep_key(ev)
        if k is not None:
            n = self.held_deps[k] - 1
            if n:
                self.held_deps[k] = n
            else:
                del self.held_deps[k]
                if self.blocked_by_dep(k):
                    self.counts["held_behind_handover_acquire"] += 1
        self.pass_on(ev)

    def blocked_by_dep(self, k):
        """Is the first event of some stream a transition from the state
        of k that could link but for the held event that saw it?"""
        con, word = k
        c = self.chains.get(con)
        if c is None or c.cur != word:
            return False
        sk = state_key(word, self.arch32)
        for q in self.streams.values():
            if q:
                w = self.words(q[0])
                if (w is not None and w[0] != w[1] and q[0].fields.get("con") == con and
                        state_key(w[0], self.arch32) == sk):
                    return True
        return False

    def waiting(self):
        """The first held event (by trace line) and its stream."""
        first = None
        for q in self.streams.values():
            if q and (first is None or q[0].lineno < first.lineno):
                first = q[0]
        return first

    def awaited(self, ev):
        """What held event ev waits for, in words."""
        if ev.lineno in self.seq_waits:
            if ev.name == "nobkl_emit":
                return "the commit before the seq it read (seq - dropped = %s - %s)" % (
                    ev.fields.get("seq"), ev.fields.get("dropped") or 0)
            return "the next event of the owner it takes the console from (cpu %s)" % (
                ev.fields.get("prev_cpu"))
        w = self.words(ev)
        if w is None:
            return "its predecessor"
        if w[0] == w[1]:
            return "the transition that installed its state"
        return "the transition from trans=%d" % trans_count(w[0], self.arch32)

    def break_chain(self, why):
        """The chain cannot be continued: name the place, hand the
        analyzer a loss marker and the held events in trace order, and
        start every chain afresh."""
        ev = self.waiting()
        if ev is None:
            return
        con = ev.fields.get("con")
        c = self.chain(con)
        msg = ("%s: %s at trace line %d (cpu %d, %s) waits for %s of console %s; "
               "the chain is at trans=%s" % (
                   why, ev.name, ev.lineno, ev.cpu, ev.ts, self.awaited(ev), con,
                   "?" if c.cur is None else trans_count(c.cur, self.arch32)))
        self.breaks.append((ev.lineno, con, msg))
        self.flush_pending(ev.lineno)
        self.sink(Drop(ev.lineno, None, None, "ORDER: " + msg))
        self.flush_all()

    def flush_all(self):
        rest = sorted([e for q in self.streams.values() for e in q] + list(self.pending),
                      key=lambda e: e.lineno)
        self.streams.clear()
        self.pending.clear()
        self.rooting.clear()
        self.links.clear()           # the chains start afresh: no slot before is one now
        self.held = 0
        self.held_deps.clear()
        self.chains.clear()
        self.seq_waits.clear()
        for e in rest:
            if e.__class__ is Event and e.lineno > self.max_passed:
                self.max_passed = e.lineno
            self.sink(e)

    def on_drop(self, d):
        """Trace loss: events of the chain are missing; what is held goes
        on in trace order (after what links, the roots looked for chosen
        with what was read) and the chains start again after the marker."""
        self.settle()
        self.flush_all()
        self.sink(d)

    def finish(self):
        """End of the trace: whatever still waits can never link, unless
        another transition in an ABA slot lets it (repair())."""
        while True:
            self.settle()
            # nothing more comes: the takeovers and emissions that wait for
            # a later event or commit go on as far as the chain allows
            self.ending = True
            self.seq_expired.update(self.seq_waits)
            self.seq_waits.clear()
            if self.held:
                self.drain()
            if not self.held or not self.repair():
                break
        if self.held:
            self.break_chain("the trace ends")
        self.flush_pending()
        self.commit(final=True)

    # ------------------------------------------------------ the ABA choice
    def slot_of(self, ev):
        """The slot transition ev fills if it is passed on now: the trace
        line of its console's last linked transition, ("root", con) for
        the root; None when it links nowhere (a transition from before
        the chain's start) or is none."""
        w = self.words(ev)
        if w is None or w[0] == w[1]:
            return None
        con = ev.fields.get("con")
        c = self.chains.get(con)
        if c is None:
            return None
        if c.cur is None:
            return ("root", con) if ev.lineno == c.root_line else None
        if state_key(w[0], self.arch32) == state_key(c.cur, self.arch32):
            return c.last
        return None

    def admits(self, ev, q=None):
        """ready(), and in a slot a repair forced, only the transition
        forced there (the others wait)."""
        if not self.ready(ev, q):
            return False
        if self.forced:
            slot = self.slot_of(ev)
            if slot is not None and self.forced.get(slot, ev.lineno) != ev.lineno:
                return False
        return True

    def note_link(self, ev):
        """Transition ev is passed on now: remember the slot it fills and
        what was installed there (next_repair() looks for the stranded
        transitions that could have filled it)."""
        slot = self.slot_of(ev)
        if slot is None:
            return
        c = self.chains[ev.fields.get("con")]
        self.links.append((slot, ev, c.cur, c.stream))
        c.last = ev.lineno

    def next_repair(self):
        """(slot, trace line of the transition to force there, trace line
        of the one that filled it), or None.
        A stranded transition S is a held stream's first event that is a
        transition; it could have filled a slot that was filled after its
        stream's last link, when its old state links to the state
        installed there by ready()'s rule, or, with no link of its
        stream, the root's.  Of these (slot, S) not tried, the one with
        the fewest links between S's stream's last link and the slot
        (the chain left S's stream there for another transition with the
        same old state: a waiter spinning request/timeout whose request
        another waiter's took the place of, 32 transitions early), then
        the latest slot, then the earliest listed S; a root last."""
        a32 = self.arch32
        links = self.links
        last = {}
        for i, (_, ev, _, _) in enumerate(links):
            last[(ev.fields.get("con"), self.stream_of(ev))] = i
        best = None
        for q in self.streams.values():
            if not q:
                continue
            s = q[0]
            w = self.words(s)
            if w is None or w[0] == w[1]:
                continue
            con = s.fields.get("con")
            ks = state_key(w[0], a32)
            start = last.get((con, self.stream_of(s)), -1)
            for i in range(start + 1, len(links)):
                slot, ev, cur, cs = links[i]
                if ev.fields.get("con") != con or (slot, s.lineno) in self.tried:
                    continue
                if cur is None:
                    if start != -1:
                        continue
                    rank = (1, 0, 0, s.lineno)
                elif state_key(cur, a32) == ks and (a32 or cur == w[0] or
                                                    self.stream_of(s) == cs):
                    rank = (0, i - start, -i, s.lineno)
                else:
                    continue
                if best is None or rank < best[0]:
                    best = (rank, slot, s.lineno, ev.lineno)
                if cur is not None:
                    break
        return None if best is None else best[1:]

    def repair(self):
        """The trace ends with transitions held: take the items since the
        checkpoint again with the next slot forced (next_repair()), and
        True; with none left, or beyond REPAIR_WORK items taken again,
        once more as at first (True) so that the chain breaks where it
        did, then False."""
        if self.ckpt is None:
            return False
        nxt = None
        if self.repairs is not None and self.repairs + len(self.log) <= REPAIR_WORK:
            nxt = self.next_repair()
        if nxt is None:
            if not self.forced:
                return False
            self.forced = {}
            self.repairs = None
        else:
            # neither the stranded transition nor the one it replaces is
            # tried in that slot again: no run is the same as one before
            slot, line, was = nxt
            self.forced[slot] = line
            self.tried.add((slot, line))
            self.tried.add((slot, was))
            self.repairs += len(self.log)
        self.restore()
        for it in self.log:
            self.read(it)
        return True

    def snapshot(self):
        """The checkpoint: the stage's state (everything but the spool's
        and the repair's own) and the notes not yet taken."""
        return ({k: _clone(v) for k, v in vars(self).items() if k not in _NOT_STATE},
                dict(self.notes))

    def restore(self):
        """Back to the checkpoint: its state, its notes, nothing spooled."""
        state, notes = self.ckpt
        for k, v in state.items():
            setattr(self, k, _clone(v))
        self.notes.clear()
        self.notes.update(notes)
        self.outbuf = []

    def spool(self, item):
        """self.sink: keep what is passed on until it is final (commit())."""
        if self.spooling:
            self.outbuf.append(item)
        else:
            self.deliver(item)

    def deliver(self, item):
        if item is _CHAIN:
            self.chain_cb()
        elif item.__class__ is _Read:
            self.on_read(item.item)
        else:
            self.out_sink(item)

    def chain_found(self):
        """self.on_chain: the trace has the chain; told in the order of the
        items passed on."""
        self.spool(_CHAIN)

    def commit(self, final=False):
        """What was passed on since the checkpoint goes on for good; a new
        checkpoint (final: none, nothing is spooled from now on)."""
        self.counts["aba_relinked"] += sum(
            1 for slot, ev, _, _ in self.links if self.forced.get(slot) == ev.lineno)
        out, self.outbuf = self.outbuf, []
        if final:
            self.spooling = False
        for item in out:
            self.deliver(item)
        self.log = []
        self.links = []
        self.forced = {}
        self.tried = set()
        self.repairs = 0
        self.ckpt = None if final else self.snapshot()

    # ----------------------------------------------------------- verdict
    def unordered(self):
        """True when nothing in the trace orders the events of different
        CPUs: no console event carries old_state/new_state."""
        return self.mode != "chain"

    def describe(self, by_clocks=False):
        if self.mode == "chain":
            return "causal: console state transition chain (old_state/new_state)"
        if by_clocks:
            return ("timestamps, as asked (order=timestamps): the trace has no "
                    "old_state/new_state fields, the events of different CPUs are "
                    "ordered by the CPUs' clocks")
        return ("none: the trace has no old_state/new_state fields (kernel without the "
                "transition count); not judged by the CPUs' clocks unless asked "
                "(order=timestamps)")

    def incomplete_reasons(self, by_clocks=False):
        """Why nothing orders the events of different CPUs: a broken
        chain, with the place named, and a trace without the chain
        unless the user asked to judge it by the clocks (`by_clocks`).
        The verdict is then incomplete (verdict.judge_order()) also when
        rules were violated before the place: the break is found where
        an event waits for good, but the order may have gone wrong long
        before (a root chosen among transitions of a CPU listed late), so
        no violation is proven (the violations stay listed for whoever
        looks)."""
        why = []
        if self.breaks:
            why.append("events could not be ordered by the state chain (%d place(s)); "
                       "first: %s" % (len(self.breaks), self.breaks[0][2]))
        if self.unordered() and not by_clocks:
            why.append(UNORDERED_REASON)
        return why

    def annotate(self, verdict, by_clocks=False):
        """Record the ordering in the verdict: how the events were
        ordered, the stage's counts and the places the chain broke."""
        verdict.setdefault("inputs", {})["ordering"] = self.describe(by_clocks)
        mode = "chain" if self.mode == "chain" else "timestamps" if by_clocks else "none"
        verdict["ordering"] = dict(self.counts, mode=mode,
                                   breaks=[m for _, _, m in self.breaks[:10]],
                                   break_count=len(self.breaks))
