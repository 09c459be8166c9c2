"""Emergency records against the RFC's bound: the one sweep that collects
what the bound and the explanation of a late record need.

The RFC promises that an emergency record reaches the console within the
time of the records stored before it plus one record.  The bound of a
record R stored at t (seq s) is

    (pending + 1) * record time

pending: the records with a lower seq stored at or before t that the
console had not committed by t (their first commit after t, or none);
the record time: the console's median time per record while busy (from
one record's first commit to the next one's where the next was stored
before that commit).  R's delay runs from its store to the console's
first commit of it.  This module collects the facts; emergency_report.py
turns them into the bound, the delays and what each late record waited
for.

Invariants:
- the facts depend only on the timestamps of stores and first commits,
  not on the order the events arrive in (within WINDOW, below): the
  bench (from `trace-cmd report`) and the analysis (the checker's event
  stream, or the model file it wrote) give the same numbers for the
  same trace;
- a record never committed counts as pending for every later record (it
  was stored, the console never caught up with it), as the bench always
  counted it;
- one sweep over the events in time order: O(log) per event (a heap,
  bisect over runs of seqs), whatever the backlog, and memory that does
  not grow with the records but with the gaps in their seqs, the
  emergency records and one float per busy commit (below);
- what it keeps of an emergency record's wait on a console is only what
  lies between its store and its first commit there: the console's
  running counts at its store, at its last emission and at its commit,
  its longest silence, the records that overtook it and its owner at
  the store.

One sweep in timestamp order computes everything as the events come,
keeping only what later events still need.  At equal timestamps:
emissions, handover requests, the other ownership changes, stores,
commits, then the emergency records' own queries (so that a store at t
counts as stored at t, and a commit at t as committed by t, as the
definitions say).  What it keeps:

- the stored seqs, and per console the committed ones, as runs of
  consecutive seqs (RunSet): a few numbers per gap in them, not one per
  record.  pending = stored below s - stored and committed below s, both
  counted at the record's store;
- per console the gaps between busy first commits (8 bytes each: the
  record time is their median, known at the end) and the few seqs whose
  neighbour's commit is still to come;
- running counts per console (first commits, by the printer thread, by
  each CPU; ownership changes; the time a handover request was
  outstanding) that each emergency record snapshots at its store, its
  emissions and its commit, and the suffix maxima of the gaps between
  commits for its longest silence;
- the emergency records' own facts, and the records stored after one
  with a lower seq while it waits (they overtake it when printed first).

Events may arrive out of timestamp order (the checker takes the console
events in causal order, ordering.py): the History holds them for WINDOW
seconds of trace time before the sweep takes them.  One that comes later
than that is taken at once and counted (`events_beyond_window`).  An
emission or a commit stamped before its record's store (another CPU's
clock) waits WINDOW seconds for that store.

The counts assume what a console does: it prints in seq order (records
printed before an emergency record have lower seqs; only those stored
after it count as overtaking it) and no two commits of one console
share a timestamp.  A seq stored twice counts once, at its first store.
A console first seen after an emergency record's store counts no
records as overtaking that record.

History collects the facts from an event stream (the checker's hook,
api.py, or a model file's events, emergency_report.read_model()).
"""

import bisect
import heapq
from array import array

MARK = " x=emerg "            # a stressor record stored in an emergency section
TEXT = 60                     # characters of a record's text a report names
# ownership changes on a console that can make an emergency record wait
CHANGES = ("handover_request", "handover_timeout", "handover", "takeover")
# seconds of trace time the History holds events before the sweep takes
# them: more than the ordering stage has been seen to list an event late
WINDOW = 5.0
# the sweep's order of events at equal timestamps
EMIT, REQUEST, CHANGE, STORE, COMMIT, QUERY = range(6)


def is_emergency(text):
    return MARK in " " + text


def text_id(text):
    """A stressor record's identity, its producer and number (`r=1 c=0
    x=emerg w=task0 n=7`): the fields before its length; None for another
    text."""
    if not text.startswith("pstress "):
        return None
    fields = []
    for f in text.split(" ")[1:]:
        if f[:2] not in ("v=", "r=", "c=", "x=", "w=", "n="):
            break
        if f[:2] != "v=":
            fields.append(f)
    return " ".join(fields) if fields and fields[-1][:2] == "n=" else None


def owner_cpu(label):
    """The CPU of an owner label `cpuN/...`, None for another label."""
    head = (label or "").split("/", 1)[0]
    return int(head[3:]) if head.startswith("cpu") and head[3:].isdigit() else None


def is_thread(label):
    return "/thread/" in (label or "")


class RunSet:
    """A set of ints kept as sorted runs lo[i]..hi[i]: a trace's seqs come
    in long runs, so it holds two numbers per gap, not one per member."""

    def __init__(self):
        self.lo, self.hi, self.size = [], [], 0

    def __contains__(self, s):
        i = bisect.bisect_right(self.lo, s) - 1
        return i >= 0 and s <= self.hi[i]

    def add(self, s):
        """Add s; False when it was a member already."""
        lo, hi = self.lo, self.hi
        i = bisect.bisect_right(lo, s) - 1
        if i >= 0 and s <= hi[i]:
            return False
        self.size += 1
        left = i >= 0 and hi[i] == s - 1
        right = i + 1 < len(lo) and lo[i + 1] == s + 1
        if left and right:
            hi[i] = hi[i + 1]
            del lo[i + 1], hi[i + 1]
        elif left:
            hi[i] = s
        elif right:
            lo[i + 1] = s
        else:
            lo.insert(i + 1, s)
            hi.insert(i + 1, s)
        return True

    def count_below(self, s):
        """The members below s, counted down from the top (s is a recent
        seq: the runs above it are few)."""
        n, i = self.size, len(self.lo) - 1
        while i >= 0 and self.hi[i] >= s:
            n -= self.hi[i] - max(self.lo[i], s) + 1
            i -= 1
        return n


class Wait:
    """An emergency record on one console: the console's counts at its
    store (`start`) and at its last emission (`at_emit`), when it got its
    first commit after the store, its own emission and commit."""
    __slots__ = ("closed_below", "start", "first_after", "emit", "at_emit", "silence",
                 "commit", "at_commit", "overtaken")

    def __init__(self, closed_below=0, start=None):
        self.closed_below = closed_below   # stored and committed records below it, at its store
        self.start = start                 # counts() at its store; None: console not seen yet
        self.first_after = self.emit = self.at_emit = self.silence = None
        self.commit = self.at_commit = None
        self.overtaken = 0                 # records stored after it printed so far


class Marked:
    """What is known of an emergency record: its own facts, the stored
    records below it at its store, and its Wait on each console."""
    __slots__ = ("seq", "ts", "cpu", "caller", "text", "text_id", "owners", "stored_below",
                 "at")

    def __init__(self, seq, ts, cpu, caller, text, owners):
        self.seq, self.ts, self.cpu, self.caller = seq, ts, cpu, caller
        self.text, self.text_id = text[:TEXT], text_id(text)
        self.owners = owners      # {console: owner label at its store, None: free}
        self.stored_below = 0
        self.at = {}              # console -> Wait


class Console:
    """One console's state in the sweep."""

    def __init__(self):
        self.committed, self.closed = RunSet(), RunSet()   # closed: also stored
        self.first = self.thread = 0                  # first commits, by the thread
        self.by_cpu = {}                              # cpu -> first commits, not the thread's
        self.changes = dict.fromkeys(CHANGES, 0)
        self.asked, self.asked_since = 0.0, None      # time a handover request was outstanding
        self.first_ts = self.last = None              # its first and last first commit's time
        self.peak_ts, self.peak_gap = [], []          # suffix maxima of the gaps between commits
        self.gaps = array("d")                        # busy gaps: the record time's samples
        self.after = {}       # seq -> its predecessor's first commit, it stored by then
        self.orphans = {}     # seq -> its first commit, its predecessor's still to come
        self.waiting = []     # sorted seqs of emergency records not yet committed here
        self.fresh = []       # the Waits with no commit here since their store
        self.overtakers = {}  # seq stored after waiting records with higher seqs -> their seqs

    def counts(self, cpu, ts):
        """The running counts an emergency record on cpu snapshots at ts."""
        asked = self.asked + (ts - self.asked_since if self.asked_since is not None else 0)
        return (self.first, self.thread, self.by_cpu.get(cpu, 0), asked,
                tuple(self.changes[k] for k in CHANGES))

    def longest_silence(self, w, t, te):
        """The longest stretch of [t, te] without a first commit here,
        for Wait w at te (before the commits at te)."""
        if w.first_after is None:
            return te - t
        i = bisect.bisect_right(self.peak_ts, w.first_after)
        inner = self.peak_gap[i] if i < len(self.peak_gap) else 0
        return max(w.first_after - t, inner, te - self.last)

    def add_gap_sample(self, ts):
        """The gap from the last first commit to this one, into the
        suffix maxima."""
        if self.last is not None:
            gap = ts - self.last
            while self.peak_gap and self.peak_gap[-1] <= gap:
                self.peak_gap.pop()
                self.peak_ts.pop()
            self.peak_ts.append(ts)
            self.peak_gap.append(gap)
        self.last = ts


class History:
    """The facts of a run that the report needs, fed in any order within
    WINDOW s of trace time: store() for every record, mark() right after
    the store of an emergency one, commit() for every commit, emit() for
    the emissions, change() for ownership changes.  Owner labels as
    Owner.label() gives them (`cpu0/task/thread/normal`), None for a free
    console.  window=None holds every event until flush()."""

    def __init__(self, window=WINDOW):
        self.window = window
        self.heap, self.arrived, self.newest = [], 0, None
        self.last_taken = None            # (ts, order) of the sweep's last event
        self.beyond_window = 0
        self.stored = RunSet()
        self.marked = {}                  # seq -> Marked
        self.consoles = {}
        self.to_mark = {}                 # seq -> mark()'s facts, until its store is taken
        self.just_taken = None            # (ts, seq) of a store taken as it came
        # emissions and commits stamped before their record's store:
        # (con, seq) -> (ts, owner)
        self.early_emits, self.early_commits = {}, {}

    # -- the way in: every event waits in the heap, ordered for the sweep

    def push(self, ts, order, *args):
        # what is due goes first, so that an event waits in the heap at
        # least until the next one comes (a store for its mark())
        if self.window is not None and self.newest is not None:
            self.release(self.newest - self.window)
        self.arrived += 1
        self.just_taken = None
        if self.last_taken is not None and (ts, order) < self.last_taken:
            self.beyond_window += 1
            self.take(ts, order, args)
            if order == STORE:
                self.just_taken = (ts, args[1])
            return
        # one flat tuple per event held: the window holds every event of
        # its WINDOW seconds, a tuple of the arguments besides would
        # double the count of objects held
        heapq.heappush(self.heap, (ts, order, self.arrived) + args)
        if self.newest is None or ts > self.newest:
            self.newest = ts

    def release(self, until):
        """Take the events stamped before until (those at until wait for
        the rest of their timestamp)."""
        while self.heap and self.heap[0][0] < until:
            e = heapq.heappop(self.heap)
            self.take(e[0], e[1], e[3:])

    def flush(self):
        self.release(float("inf"))

    def store(self, seq, ts):
        self.push(ts, STORE, "store", seq)

    def mark(self, seq, cpu, caller, text, owners):
        """An emergency record's own facts (is_emergency(text)), right
        after its store or at least before the sweep takes it; owners:
        {console: owner label at its store}."""
        facts = (cpu, caller, text, dict(owners))
        if self.just_taken is not None and self.just_taken[1] == seq:
            self.query(self.just_taken[0], seq, facts)   # its store came beyond the window
        else:
            self.to_mark[seq] = facts

    def query(self, ts, seq, facts):
        """The emergency record's query, after everything else at ts."""
        self.arrived += 1
        heapq.heappush(self.heap, (ts, QUERY, self.arrived, "query", Marked(seq, ts, *facts)))

    def commit(self, con, seq, ts, owner):
        self.push(ts, COMMIT, "commit", con, seq, owner)

    def emit(self, con, seq, ts):
        self.push(ts, EMIT, "emit", con, seq)

    def change(self, con, kind, ts):
        self.push(ts, REQUEST if kind == "handover_request" else CHANGE, "change", con, kind)

    def feed_event(self, name, ts, seq, con, owner, fields):
        """One console event as the checker or the model file has it (name
        without `nobkl_`, owner the label it left)."""
        if name in ("commit", "emit") and seq is None:
            return                 # a damaged event: the checker says so
        if name == "commit":
            self.commit(con, seq, ts, owner)
        elif name == "emit":
            self.emit(con, seq, ts)
        elif name in ("handover_request", "handover_timeout"):
            self.change(con, name, ts)
        elif name == "acquire" and fields.get("how") in ("handover", "hostile"):
            self.change(con, "handover" if fields["how"] == "handover" else "takeover", ts)

    # -- the sweep

    def con(self, name):
        c = self.consoles.get(name)
        if c is None:
            c = self.consoles[name] = Console()
        return c

    def take(self, ts, order, args):
        self.last_taken = max(self.last_taken or (ts, order), (ts, order))
        kind = args[0]
        if kind == "store":
            self.on_store(ts, args[1])
        elif kind == "commit":
            self.on_commit(ts, *args[1:])
        elif kind == "emit":
            self.on_emit(ts, *args[1:])
        elif kind == "change":
            self.on_change(ts, *args[1:])
        else:
            self.on_query(ts, args[1])
        self.forget_early(ts)

    def forget_early(self, ts):
        """Events stamped before their record's store wait WINDOW s for it
        (in the sweep's order, their time order), then are forgotten."""
        if self.window is None:
            return
        for early in (self.early_emits, self.early_commits):
            while early:
                key, (t, _) = next(iter(early.items()))
                if t >= ts - self.window:
                    break
                del early[key]

    def on_store(self, ts, seq):
        if not self.stored.add(seq):
            return                 # stored twice: the first store counts
        facts = self.to_mark.pop(seq, None)
        if facts is not None:
            self.query(ts, seq, facts)
        for c in self.consoles.values():
            if seq in c.committed:
                c.closed.add(seq)  # committed before its store (another CPU's clock)
            else:
                i = bisect.bisect_right(c.waiting, seq)
                if i < len(c.waiting):
                    c.overtakers[seq] = c.waiting[i:]

    def on_query(self, ts, m):
        """An emergency record's store: what it waits for, on each console."""
        self.marked[m.seq] = m
        m.stored_below = self.stored.count_below(m.seq)
        for name, c in self.consoles.items():
            w = m.at[name] = Wait(c.closed.count_below(m.seq), c.counts(m.cpu, ts))
            early = self.early_commits.pop((name, m.seq), None)
            if early is not None:
                w.commit, w.at_commit = early[0], c.counts(m.cpu, early[0])
            else:
                bisect.insort(c.waiting, m.seq)
                c.fresh.append(w)
        for (name, seq), (t, _) in list(self.early_emits.items()):
            if seq == m.seq:
                self.wait_of(m, name).emit = t
                del self.early_emits[(name, seq)]

    def wait_of(self, m, name):
        """m's Wait on console name, made when the console was first seen
        after m's store."""
        w = m.at.get(name)
        if w is None:
            c = self.con(name)
            w = m.at[name] = Wait()
            if c.first:
                w.first_after = c.first_ts
            else:
                c.fresh.append(w)
        return w

    def on_emit(self, ts, name, seq):
        m = self.marked.get(seq)
        if m is None:
            if seq not in self.stored:
                self.early_emits[(name, seq)] = (ts, None)
            return
        c = self.con(name)
        w = self.wait_of(m, name)
        if w.commit is not None:
            return                 # printed again after its first commit
        w.emit = ts
        w.at_emit = c.counts(m.cpu, ts) + (w.overtaken,)
        w.silence = c.longest_silence(w, m.ts, ts)

    def on_change(self, ts, name, kind):
        c = self.con(name)
        c.changes[kind] += 1
        if kind == "handover_request":
            if c.asked_since is None:
                c.asked_since = ts
        elif c.asked_since is not None:
            c.asked += ts - c.asked_since
            c.asked_since = None

    def on_commit(self, ts, name, seq, owner):
        c = self.con(name)
        if not c.committed.add(seq):
            return                 # printed again: only the first commit counts
        stored = seq in self.stored
        if stored:
            c.closed.add(seq)
        self.record_time_sample(c, seq, ts, stored)
        m = self.marked.get(seq)
        if m is not None:
            self.commit_marked(c, name, m, ts)
        elif not stored:
            self.early_commits[(name, seq)] = (ts, owner)
        self.count_overtaking(c, name, seq, stored)
        for w in c.fresh:
            w.first_after = ts
        c.fresh = []
        if not c.first:
            c.first_ts = ts
        c.first += 1
        if is_thread(owner):
            c.thread += 1
        else:
            cpu = owner_cpu(owner)
            if cpu is not None:
                c.by_cpu[cpu] = c.by_cpu.get(cpu, 0) + 1
        c.add_gap_sample(ts)

    def record_time_sample(self, c, seq, ts, stored):
        """The busy gaps this first commit ends or starts: from seq-1's
        first commit, where seq was stored by then, and to seq+1's."""
        before = c.after.pop(seq, None)
        if before is not None:
            c.gaps.append(ts - before)
        if seq - 1 not in c.committed:
            c.orphans[seq] = ts
        nxt = c.orphans.pop(seq + 1, None)
        if seq + 1 in self.stored:
            if nxt is not None:
                c.gaps.append(nxt - ts)
            elif seq + 1 not in c.committed:
                c.after[seq + 1] = ts

    def commit_marked(self, c, name, m, ts):
        w = self.wait_of(m, name)
        if w.start is not None and w.commit is None and m.seq in c.waiting:
            c.waiting.pop(bisect.bisect_left(c.waiting, m.seq))
        w.commit = ts
        w.at_commit = c.counts(m.cpu, ts) + (w.overtaken,)
        if w.emit is None or w.emit > ts:
            w.emit, w.at_emit = None, w.at_commit
            w.silence = c.longest_silence(w, m.ts, ts)

    def count_overtaking(self, c, name, seq, stored):
        """A record printed before emergency records with higher seqs that
        were stored before it: it overtook them."""
        if stored:
            waiting = c.overtakers.pop(seq, ())
        else:
            # its store, still to come, is after this commit and so after
            # the store of every record waiting now
            waiting = c.waiting[bisect.bisect_right(c.waiting, seq):]
        for s in waiting:
            w = self.marked[s].at.get(name)
            if w is not None and w.commit is None:
                w.overtaken += 1
