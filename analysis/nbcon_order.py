"""The ordering stage of the 6.12 target (mainline nbcon): the console
events of each console in the order of its state transitions, found by
linking the state words.

Why a linker of its own: a 6.12 state word (nbcon_events.decode_state())
has no transition count and no seq, so the same word recurs all the
time (the printer thread alternates {cpu1 free} and {cpu1 normal} for
every record) and ordering.py's chain, which relies on the count to make
a word name its predecessor, does not apply.  Each transition still
names the word it replaced, and that word was installed by an earlier
transition: the link rule.  With recurring words the rule is necessary,
not sufficient, so the choice between transitions it allows is made by
what else the trace proves, and, last, by the clocks.

Invariants of the order this stage hands on (per console, between two
places where the trace lost events):
  * program order: the events of one stream (a CPU's context: task,
    softirq, hardirq, NMI) keep the order they were read in;
  * the link rule: a transition (an event with old_state/new_state:
    acquire, handover request, a timeout that removed its request,
    release) replaces the word the transition placed before it
    installed; the first transition of a segment is its root;
  * a loss (nobkl_lost) comes after a transition that installed the
    word it saw, and after its stream's previous event;
  * an emission or commit comes right after its stream's previous event
    (an owner's records are written while it owns the console);
  * where the link rule allows several transitions next, the one whose
    owner's records come first in seq order goes first (commits are
    totally ordered by seq); only where seqs cannot tell do the
    timestamps decide, and each such choice is counted (`counts
    ["ts_decided"]`, reported in the verdict, never a violation);
  * seq order is also kept across choices: an emission or commit of seq
    S is not placed while another stream still holds an unplaced commit
    of a seq below S (the console wrote that record before S).  With
    recurring words the link rule can accept a wrong choice to the end
    (the emergency owner of a CPU installs {cpuN free} again and again,
    so a transition passed over relinks later); only this rule shows the
    choice wrong: a placement that breaks it is a dead end like the one
    below;
  * a choice that leads to a dead end (a transition no order can link,
    or a record out of seq order) is taken back (bounded by
    BACKTRACK_MAX); a transition that still cannot be linked is a
    break: the verdict is incomplete, and linking starts again from it
    as a new root.  A seq order that no untried choice is left to fix
    is what the link rule forces: it stays, and the model judges it;
    one that the bound left unfixed with choices untried is a break
    (the order is not known: incomplete, never a violation).

The console events are placed back into the slots console events had
in the read order, so stores, trace loss markers and other items stay
where the reader put them.  The stage is batch: it holds the trace's
items until finish().
"""

from .traceparse import Damage, Drop, Event

TRANSITIONS = frozenset(("nobkl_acquire", "nobkl_handover_request", "nobkl_handover_timeout",
                         "nobkl_release"))
BACKTRACK_MAX = 256          # choices taken back per segment before a break
INF = float("inf")


def is_transition(ev):
    f = ev.fields
    return ev.name in TRANSITIONS and not (f["old_state"] == "0" and f["new_state"] == "0")


def stream_of(ev):
    return (ev.cpu, ev.fields["ctx"])


class _Stream:
    """The events of one stream of one console segment, in program order,
    and how far they are placed."""
    __slots__ = ("events", "pos", "min_commit")

    def __init__(self):
        self.events = []
        self.pos = 0
        self.min_commit = None       # [i]: the lowest commit seq in events[i:]

    def index(self):
        low = INF
        self.min_commit = [INF] * (len(self.events) + 1)
        for i in range(len(self.events) - 1, -1, -1):
            e = self.events[i]
            if e.name == "nobkl_commit":
                low = min(low, int(e.fields["seq"]))
            self.min_commit[i] = low

    def head(self):
        return self.events[self.pos] if self.pos < len(self.events) else None


def seq_key(stream, i):
    """Where transition i of a stream falls in the console's seq order:
    after the last record its stream committed before it (a release), or
    at the first record its stream emits or commits after it (an
    acquire); None when its stream has no record around it."""
    evs = stream.events
    for j in range(i - 1, -1, -1):
        e = evs[j]
        if is_transition(e):
            break
        if e.name == "nobkl_commit":
            return int(e.fields["seq"]) + 0.5
    for j in range(i + 1, len(evs)):
        e = evs[j]
        if is_transition(e):
            break
        if e.name in ("nobkl_emit", "nobkl_commit"):
            return int(e.fields["seq"])
    return None


class _Linker:
    """Links the events of one console segment (the module doc)."""

    def __init__(self, events):
        self.streams = {}
        for ev in events:
            self.streams.setdefault(stream_of(ev), _Stream()).events.append(ev)
        for s in self.streams.values():
            s.index()
        self.total = len(events)
        self.conflict = None         # the first record placed out of seq order
        self.ts_decided = 0
        self.ts_lines = []
        self.backtracks = 0
        self.breaks = []

    def run(self):
        out = []
        word = None
        choices = []                 # (positions, word, len(out), alternatives left)
        while len(out) < self.total:
            self.place_records(out, word)
            if self.conflict is not None:
                ev, self.conflict = self.conflict, None
                if choices and self.backtracks < BACKTRACK_MAX:
                    word = self.take_back(choices, out)
                    continue
                if choices:
                    self.breaks.append((ev.lineno, (
                        "line %d: %s seq=%s would come before a commit of a lower seq of "
                        "another stream, and the choices that could order it were not "
                        "all tried (%d taken back)" % (ev.lineno, ev.name, ev.fields["seq"],
                                                       self.backtracks))))
            if len(out) == self.total:
                break
            cands = self.candidates(word)
            if not cands:
                if self.place_stuck_loss(out):
                    continue
                if choices and self.backtracks < BACKTRACK_MAX:
                    word = self.take_back(choices, out)
                    continue
                self.breaks.append(self.first_unlinked(word))
                word = None          # a new root
                continue
            first, rest = cands[0], cands[1:]
            if rest:
                choices.append(({k: s.pos for k, s in self.streams.items()}, word, len(out),
                                rest))
            word = self.place(first, out)
        return out

    def place_records(self, out, word):
        """Place every stream's emissions and commits (and losses whose
        word is the current one) that follow its placed events."""
        moved = True
        while moved:
            moved = False
            for s in self.streams.values():
                ev = s.head()
                while ev is not None and not is_transition(ev):
                    if ev.name == "nobkl_lost" and word is not None and \
                            int(ev.fields["state"]) != word:
                        break
                    if self.conflict is None and ev.name in ("nobkl_emit", "nobkl_commit") \
                            and self.pending_below(s, int(ev.fields["seq"])):
                        self.conflict = ev
                    out.append(ev)
                    s.pos += 1
                    moved = True
                    ev = s.head()

    def pending_below(self, stream, seq):
        """Another stream still has to commit a seq below `seq`."""
        for o in self.streams.values():
            if o is not stream and o.min_commit[o.pos] < seq:
                return True
        return False

    def place_stuck_loss(self, out):
        """Nothing links: a loss whose word never came goes where its
        stream stands (its word was installed by an untraced toggle
        only the unsafe bit tells, or before the segment)."""
        for s in self.streams.values():
            ev = s.head()
            if ev is not None and ev.name == "nobkl_lost":
                out.append(ev)
                s.pos += 1
                return True
        return False

    def candidates(self, word):
        """The streams whose next event is a transition the link rule
        allows now, best first: by seq order, then by timestamp (a
        choice the timestamps made is counted)."""
        cands = []
        for s in self.streams.values():
            ev = s.head()
            if ev is None or not is_transition(ev):
                continue
            if word is None or int(ev.fields["old_state"]) == word:
                cands.append((seq_key(s, s.pos), ev.ts, ev.lineno, s))
        if len(cands) < 2:
            return [c[3] for c in cands]
        cands.sort(key=lambda c: (c[0] is None, c[0] if c[0] is not None else 0, c[1],
                                  c[2]))
        a, b = cands[0], cands[1]
        if a[0] is None or b[0] is None or a[0] == b[0]:
            self.ts_decided += 1
            if len(self.ts_lines) < 10:
                self.ts_lines.append(a[2])
        return [c[3] for c in cands]

    def place(self, s, out):
        ev = s.head()
        out.append(ev)
        s.pos += 1
        return int(ev.fields["new_state"])

    def take_back(self, choices, out):
        """Undo to the last choice and take its next alternative."""
        self.backtracks += 1
        positions, word, n, rest = choices.pop()
        del out[n:]
        for k, s in self.streams.items():
            s.pos = positions[k]
        first, rest = rest[0], rest[1:]
        if rest:
            choices.append((positions, word, n, rest))
        return self.place(first, out)

    def first_unlinked(self, word):
        heads = [s.head() for s in self.streams.values() if s.head() is not None]
        ev = min(heads, key=lambda e: (e.ts, e.lineno))
        return (ev.lineno, "line %d: %s old_state=%s links to no state installed before it "
                "(current word %s)" % (ev.lineno, ev.name, ev.fields.get("old_state"), word))


class NbconOrder:
    """A filter in front of `sink` (Analyzer.feed) with the interface of
    ordering.CausalOrder: feed(item) takes the reader's items, finish()
    links each console and passes everything on."""

    def __init__(self, sink, on_chain=None):
        self.sink = sink
        self.on_chain = on_chain
        self.items = []
        self.counts = {"ts_decided": 0, "backtracks": 0, "segments": 0, "transitions": 0}
        self.ts_lines = []
        self.breaks = []
        self.done = False            # after finish(): items go straight on

    def feed(self, item):
        if self.done:
            self.sink(item)
        else:
            self.items.append(item)

    def finish(self):
        self.done = True
        if self.on_chain is not None:
            self.on_chain()
        items = self.items
        self.items = []
        start = 0
        for i, item in enumerate(items + [None]):
            if item is None or isinstance(item, (Drop, Damage)):
                self.link_segment(items, start, i)
                start = i
        for item in items:
            self.sink(item)

    def link_segment(self, items, lo, hi):
        """Link the console events of items[lo:hi] (no trace loss inside)
        and put them back into their consoles' slots."""
        slots = {}
        for i in range(lo, hi):
            it = items[i]
            if it.__class__ is Event and it.name != "nobkl_store" and "con" in it.fields:
                slots.setdefault(it.fields["con"], []).append(i)
        for con, idx in slots.items():
            events = [items[i] for i in idx]
            ln = _Linker(events)
            linked = ln.run()
            self.counts["segments"] += 1
            self.counts["transitions"] += sum(1 for e in events if is_transition(e))
            self.counts["ts_decided"] += ln.ts_decided
            self.counts["backtracks"] += ln.backtracks
            self.ts_lines += ln.ts_lines[:10 - len(self.ts_lines)]
            self.breaks += [(con, line, msg) for line, msg in ln.breaks]
            for i, ev in zip(idx, linked):
                items[i] = ev

    def incomplete_reasons(self, by_clocks=False):
        if not self.breaks:
            return []
        return ["events could not be ordered by the state words (%d place(s)); first: %s"
                % (len(self.breaks), self.breaks[0][2])]

    def annotate(self, verdict, by_clocks=False):
        verdict.setdefault("inputs", {})["ordering"] = (
            "causal: nbcon state words linked (old_state of each transition installed by "
            "an earlier one), per-stream program order, commit seq order, timestamps "
            "only as the last tie-break")
        verdict["ordering"] = dict(self.counts, mode="nbcon-link",
                                   ts_decided_lines=list(self.ts_lines),
                                   breaks=[m for _, _, m in self.breaks[:10]],
                                   break_count=len(self.breaks))
