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

The stage is one object, CausalOrder: its state is set up here
(__init__ says what each part is), with the way in (feed(), take(),
finish()), the holding of events and the chain breaks.  Its
jobs are classes of their own modules, each the methods of one job over
that state:

  chain_links.py     when a held event may be passed on (ready()), and
                     what passing it on does to its chain (pass_on());
  chain_root.py      a chain's first transition, found by linking;
  chain_repair.py    the ABA choice: the spool (an item read goes on in
                     its place, read()), the checkpoint and the runs
                     again with a slot forced;
  ordering_verdict.py  how the events were ordered, in the verdict.
What a console's chain is, and how a state word is read, is
chain_state.py's.

The stage's bounds (HOLD_MAX, ROOT_HOLD, REPAIR_WINDOW, REPAIR_WORK)
are here, with the methods that read them (take(), hold_one(),
try_root(), feed(), repair()): they decide when the stage gives up or
starts again, which is the driving's, and a test sets them here.
"""

from collections import deque

from .chain_links import Linking
from .chain_repair import Repair
from .chain_root import Rooting
from .chain_state import ChainState, trans_count
from .happens_before import VectorClock
from .ordering_verdict import OrderVerdict
from .traceparse import Drop, Event

# events that may carry old_state/new_state
TRANSITION_EVENTS = frozenset((
    "nobkl_acquire", "nobkl_handover_request", "nobkl_handover_grant",
    "nobkl_handover_timeout", "nobkl_release", "nobkl_commit"))
CONSOLE_EVENTS = TRANSITION_EVENTS | {"nobkl_emit", "nobkl_lost"}

# transitions a waiter makes (not the owner)
WAITER_EVENTS = frozenset(("nobkl_handover_request", "nobkl_handover_timeout"))

# items held back at most; beyond that the chain is declared broken
HOLD_MAX = 200000

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

# the ABA choice's bounds (chain_repair.py): items spooled before they go
# on for good, and items taken again by the runs again at most
REPAIR_WINDOW = HOLD_MAX
REPAIR_WORK = 10 * REPAIR_WINDOW


class CausalOrder(Linking, Rooting, Repair, OrderVerdict):
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

    def try_root(self, con):
        """Root console con's chain once ROOT_HOLD of its transitions
        wait (else at the trace's end or loss, settle())."""
        c = self.chain(con)
        if len(c.cand) >= ROOT_HOLD:
            self.root(con)

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
