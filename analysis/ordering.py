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
never comes) the stage hands the analyzer a trace-loss marker naming the
place: the checker forgets its state there and the verdict is
`incomplete`, never a violation.  A trace without the fields (kernels
before the transition count) is passed through in timestamp order; its
verdict is `incomplete` unless the user asked to judge it by the CPUs'
clocks (`annotate(by_clocks=True)`, `check --order timestamps`).

What depends on the reader's order (a CPU's timestamps must not go
back) is checked by `on_read` as the items are read, before they are
reordered.
"""

from collections import deque

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
                 "owner_stream", "owner_mark")

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

    def __init__(self, sink, arch32=False, on_read=None, on_chain=None, notes=None):
        self.sink = sink
        # trace line -> what the chain says of a handover acquire passed
        # on: "unchained" (its console's chain had not started: the state
        # it saw may be from before the trace), "replaced" (a transition
        # passed on before it replaced the state it saw: it traced its
        # acquire after that transition); for a transition linked before
        # the chain's first one: "pre-chain"; the checker pops them
        self.notes = notes if notes is not None else {}
        self.on_chain = on_chain     # called once when the trace has the chain
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
                       "held_for_victim": 0}

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
        cls = item.__class__
        if self.on_read is not None and (cls is Event or cls is Store):
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
        if self.ready(item):
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
        listed."""
        c = self.chain(con)
        if not c.rooting() or not c.cand:
            self.rooting.discard(con)
            return
        a32 = self.arch32
        lists = self.stream_lists(con)
        order = sorted(range(len(lists)), key=lambda i: lists[i][0][0].lineno)
        pick = None
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
            elif c.cur is None:
                c.cur = n
                c.stream = self.owner_stream(ev)
                c.pre_root.add(state_key(o, a32))
                self.remember(c, n, a32)
                self.counts["transitions"] += 1
            elif state_key(o, a32) == state_key(c.cur, a32):
                if o != c.cur:
                    self.counts["seq_differs"] += 1
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
        self.sink(ev)

    def drain(self):
        """Pass on every held event that has become ready, in trace
        order among the streams' heads."""
        progress = True
        while progress and self.held:
            progress = False
            best = None
            for key, q in self.streams.items():
                if q and (best is None or q[0].lineno < best[0].lineno) and self.ready(q[0], q):
                    best = q
            if best is not None:
                self.unhold(best)
                progress = True
                # the rest of that stream may follow at once
                while best and self.ready(best[0], best):
                    self.unhold(best)

    def unhold(self, q):
        """Pass on the first held event of stream q."""
        ev = q.popleft()
        self.held -= 1
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
        """End of the trace: whatever still waits can never link."""
        self.settle()
        # nothing more comes: the takeovers and emissions that wait for
        # a later event or commit go on as far as the chain allows
        self.ending = True
        self.seq_expired.update(self.seq_waits)
        self.seq_waits.clear()
        if self.held:
            self.drain()
        if self.held:
            self.break_chain("the trace ends")
        self.flush_pending()

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

    def annotate(self, verdict, by_clocks=False):
        """Record the ordering in the verdict; a broken chain makes it
        incomplete with the place named.  Also when rules were violated
        before the place (api.analyse() sees to it): the break is
        found where an event waits for good, but the order may have gone
        wrong long before (a root chosen among transitions of a CPU listed
        late), so no violation is proven (the violations stay listed for
        whoever looks).  A trace without the chain is named the same way
        unless the user asked to judge it by the clocks (`by_clocks`)."""
        verdict.setdefault("inputs", {})["ordering"] = self.describe(by_clocks)
        mode = "chain" if self.mode == "chain" else "timestamps" if by_clocks else "none"
        verdict["ordering"] = dict(self.counts, mode=mode,
                                   breaks=[m for _, _, m in self.breaks[:10]],
                                   break_count=len(self.breaks))
        if mode == "none":
            verdict["reasons"].insert(0, UNORDERED_REASON)
        if self.breaks:
            reasons = [r for r in verdict["reasons"]
                       if not r.startswith("trace lost events (0 drop marker")]
            reasons.insert(0, "events could not be ordered by the state chain (%d place(s)); "
                           "first: %s" % (len(self.breaks), self.breaks[0][2]))
            verdict["reasons"] = reasons
