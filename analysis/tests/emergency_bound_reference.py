"""Emergency records against the RFC's bound, and what the late ones waited for.

The RFC promises that an emergency record reaches the console within the
time of the records stored before it plus one record.  The bound of a
record R stored at t (seq s) is

    (pending + 1) * record time

pending: the records with a lower seq stored at or before t that the
console had not committed by t (their first commit after t, or none);
the record time: the console's median time per record while busy (from
one record's first commit to the next one's where the next was stored
before that commit).  R's delay runs from its store to the console's
first commit of it.

Invariants:
- the figures depend only on the timestamps of stores and first commits,
  never on the order the events arrive in: the bench (from `trace-cmd
  report`) and the analysis (the checker's event stream, or the model
  file it wrote) give the same numbers for the same trace;
- a record never committed counts as pending for every later record (it
  was stored, the console never caught up with it), as the bench always
  counted it;
- everything is a sort and sweeps over it (a Fenwick tree over ranks,
  bisect over sorted times): n log n in the records, whatever the
  backlog, so a run of millions of records costs seconds, not hours;
- the explanation of a record past its bound uses only what lies between
  its store and its first commit on that console: the records committed
  before its own emission (stored before it: the backlog the bound
  counts; after it, with a lower seq: records that overtook it), who
  printed them (the printer thread, a context on its own CPU, one on
  another CPU), the console's owner when it was stored, and the handover
  requests, timeouts, handovers and hostile takeovers in its wait.

What a late record waited for.  Its store t, its last emission before
its first commit te (te = its commit tc without one), the record time
per.  Its lateness, delay - bound, is exactly the sum of three parts:

    overtaken     (printed_before - pending) * per: records printed before
                  its emission beyond those the bound counted (stored
                  after it with a lower seq; printed_before >= pending
                  only through them);
    stall         (te - t) - printed_before * per: its wait to its
                  emission beyond the records printed meanwhile at the
                  record time;
    own_emission  (tc - te) - per: its own emission beyond a record time.

`waited_for` names the largest part (ties: stall, overtaken,
own_emission); a stall is told apart by what the console did in
(t, te), the first that holds:

    handover_wait   a handover request was outstanding (from the request
                    to the console's next handover, timeout or takeover)
                    for at least half the stall;
    not_printing    its longest stretch without a commit on the console
                    (`silence_s`, from t or a commit to the next commit
                    or te) exceeds a record time by at least half the
                    stall;
    printer_thread  the printer thread owned the console at its store and
                    printed records before its emission;
    backlog         otherwise: the records ahead of it took longer each
                    than the record time.

History collects the facts from an event stream (the checker's hook,
api.py, or a model file's events, read_model()); evaluate() turns them
into the report of one console.  Memory: about 40 bytes per record and
console (arrays, not objects) plus the marked records' own facts.
"""

import bisect
from array import array

MARK = " x=emerg "            # a stressor record stored in an emergency section
TEXT = 60                     # characters of a record's text a report names
NAMED = 20                    # records a report names; the rest it counts
# ownership changes on a console that can make an emergency record wait
CHANGES = ("handover_request", "handover_timeout", "handover", "takeover")
# the parts of a late record's lateness, in the order that breaks a tie
PARTS = ("stall", "overtaken", "own_emission")
# what a late record waited for (the design comment defines each)
WAITED_FOR = ("overtaken", "own_emission", "handover_wait", "not_printing",
              "printer_thread", "backlog")


def is_emergency(text):
    return MARK in " " + text


def median_low(xs):
    """The element at len/2 of the sorted values (the bench's median)."""
    xs = sorted(xs)
    return xs[len(xs) // 2] if xs else None


def record_time(stored, committed):
    """The console's time per record while it is busy: from one record's
    first commit to the next seq's, where the next was already stored at
    the first one's commit.  stored {seq: ts}, committed {seq: first
    commit ts}; None when the trace does not tell."""
    return median_low([committed[s + 1] - committed[s] for s in committed
                       if s + 1 in committed and s + 1 in stored
                       and stored[s + 1] <= committed[s]])


class Fenwick:
    """Prefix sums over ranks 0..n-1 with point updates, both O(log n)."""

    def __init__(self, n):
        self.tree = [0] * (n + 1)

    def add(self, rank, delta):
        i = rank + 1
        while i < len(self.tree):
            self.tree[i] += delta
            i += i & -i

    def below(self, rank):
        """The sum over ranks < rank."""
        total, i = 0, rank
        while i > 0:
            total += self.tree[i]
            i -= i & -i
        return total


def sweep(points, queries, size):
    """For each query (t, limit): the sum of the weights of the points
    (key, rank, weight) with key <= t and rank < limit.  One sort of
    each, one pass: O((points + queries) log size)."""
    tree = Fenwick(size)
    points = sorted(points, key=lambda p: p[0])
    order = sorted(range(len(queries)), key=lambda i: queries[i][0])
    out, k = [0] * len(queries), 0
    for i in order:
        t, limit = queries[i]
        while k < len(points) and points[k][0] <= t:
            tree.add(points[k][1], points[k][2])
            k += 1
        out[i] = tree.below(limit)
    return out


def pending_counts(stored, committed, seqs):
    """{seq: pending} for each of seqs: the records of lower seq stored at
    or before its store and not committed by then.  A record counts
    from its store until its first commit (a commit stamped before its
    store by another CPU's clock ends it at the store)."""
    ranks = {s: i for i, s in enumerate(sorted(stored))}
    points = [(ts, ranks[s], 1) for s, ts in stored.items()]
    points += [(max(ts, committed[s]), ranks[s], -1) for s, ts in stored.items()
               if s in committed]
    counts = sweep(points, [(stored[s], ranks[s]) for s in seqs], len(ranks))
    return dict(zip(seqs, counts))


def delay_rows(stored, committed, marked, per):
    """[(seq, delay, bound, pending)] of the marked records the console
    committed, in seq order; times in s."""
    seqs = sorted(s for s in marked if s in committed and s in stored)
    pending = pending_counts(stored, committed, seqs)
    return [(s, committed[s] - stored[s], (pending[s] + 1) * per, pending[s]) for s in seqs]


def delay_summary(rows, per):
    """The bench's figures of the rows: records, per_record_s, p50_s,
    p99_s, max_s (the value at int(q n) of the sorted delays),
    within_bound; None without rows."""
    if not rows:
        return None
    delays = sorted(d for _, d, _, _ in rows)

    def pick(q):
        return delays[min(len(delays) - 1, int(q * len(delays)))]
    return {"records": len(rows), "per_record_s": per, "p50_s": pick(0.5), "p99_s": pick(0.99),
            "max_s": delays[-1], "within_bound": sum(1 for _, d, b, _ in rows if d <= b)}


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


class Marked:
    """What is known of an emergency record besides its store time."""
    __slots__ = ("cpu", "caller", "text", "text_id", "owners")

    def __init__(self, cpu, caller, text, owners):
        self.cpu, self.caller, self.text = cpu, caller, text[:TEXT]
        self.text_id = text_id(text)
        self.owners = owners      # {console: owner label at its store, None: free}


class ConsoleColumns:
    """One console's commits (every one, in arrival order), the emissions
    of the marked records and the ownership changes."""

    def __init__(self):
        self.seq, self.ts, self.owner = array("q"), array("d"), array("l")
        self.labels, self.label_ids = [], {}
        self.emits = {}            # marked seq -> [ts of its emissions]
        self.changes = {k: [] for k in CHANGES}

    def label_id(self, label):
        k = self.label_ids.get(label)
        if k is None:
            k = self.label_ids[label] = len(self.labels)
            self.labels.append(label)
        return k

    def first_commits(self):
        """{seq: (ts, owner label)} of each seq's earliest commit."""
        out = {}
        for s, ts, o in zip(self.seq, self.ts, self.owner):
            if s not in out or ts < out[s][0]:
                out[s] = (ts, self.labels[o])
        return out


class History:
    """The facts of a run that the report needs, fed in any order:
    store() for every record, mark() for the emergency ones, commit() for every commit, emit() for the
    emissions (kept for marked records only), change() for ownership
    changes.  Owner labels as Owner.label() gives them
    (`cpu0/task/thread/normal`), None for a free console."""

    def __init__(self):
        self.store_seq, self.store_ts = array("q"), array("d")
        self.marked = {}
        self.consoles = {}

    def con(self, name):
        c = self.consoles.get(name)
        if c is None:
            c = self.consoles[name] = ConsoleColumns()
        return c

    def store(self, seq, ts):
        self.store_seq.append(seq)
        self.store_ts.append(ts)

    def mark(self, seq, cpu, caller, text, owners):
        """An emergency record's own facts (is_emergency(text)); owners:
        {console: owner label at its store}."""
        self.marked[seq] = Marked(cpu, caller, text, dict(owners))

    def commit(self, con, seq, ts, owner):
        c = self.con(con)
        c.seq.append(seq)
        c.ts.append(ts)
        c.owner.append(c.label_id(owner))

    def emit(self, con, seq, ts):
        if seq in self.marked:
            self.con(con).emits.setdefault(seq, []).append(ts)

    def change(self, con, kind, ts):
        self.con(con).changes[kind].append(ts)

    def stored(self):
        """{seq: ts} of every store (the last one of a seq stored twice)."""
        return dict(zip(self.store_seq, self.store_ts))

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


def owner_cpu(label):
    """The CPU of an owner label `cpuN/...`, None for another label."""
    head = (label or "").split("/", 1)[0]
    return int(head[3:]) if head.startswith("cpu") and head[3:].isdigit() else None


def is_thread(label):
    return "/thread/" in (label or "")


class CommitTimeline:
    """A console's first commits sorted by time, with prefix counts of who
    printed them, for the counts of any time window in O(log n)."""

    def __init__(self, first):
        rows = sorted((ts, s, o) for s, (ts, o) in first.items())
        self.ts = [r[0] for r in rows]
        self.rank = {s: i for i, (_, s, _) in enumerate(rows)}
        self.thread = [0]
        self.cpu = {}             # cpu -> prefix counts of its commits, the thread's not
        cpus = {owner_cpu(o) for _, _, o in rows if not is_thread(o)}
        for c in cpus:
            self.cpu[c] = [0]
        for _, _, o in rows:
            self.thread.append(self.thread[-1] + is_thread(o))
            c = None if is_thread(o) else owner_cpu(o)
            for k, prefix in self.cpu.items():
                prefix.append(prefix[-1] + (k == c and c is not None))

    def between(self, t0, t1):
        """(lo, hi): the indexes of the commits with t0 < ts < t1."""
        lo, hi = bisect.bisect_right(self.ts, t0), bisect.bisect_left(self.ts, t1)
        return lo, max(lo, hi)

    def printers(self, lo, hi, cpu):
        """(by the printer thread, by another context on cpu, by one on
        another CPU) of the commits lo..hi-1."""
        n = hi - lo
        thread = self.thread[hi] - self.thread[lo]
        p = self.cpu.get(cpu)
        own = p[hi] - p[lo] if p is not None else 0
        return thread, own, n - thread - own


def backlog_printed(stored, timeline, windows):
    """For each window (t, lo, hi) of a record stored at t: how many of the
    commits lo..hi-1 are of records stored at or before t."""
    points = [(ts, timeline.rank[s], 1) for s, ts in stored.items() if s in timeline.rank]
    upper = sweep(points, [(t, hi) for t, _, hi in windows], len(timeline.ts))
    lower = sweep(points, [(t, lo) for t, lo, _ in windows], len(timeline.ts))
    return [a - b for a, b in zip(upper, lower)]


def count_between(times, t0, t1):
    """The number of sorted times with t0 < x <= t1."""
    return max(0, bisect.bisect_right(times, t1) - bisect.bisect_right(times, t0))


def silence(commits, t, te):
    """The longest stretch of [t, te] without a commit; commits: the
    sorted commit times in (t, te)."""
    edges = [t] + commits + [te]
    return max(b - a for a, b in zip(edges, edges[1:]))


def handover_wait(requests, ends, t, te):
    """The time in (t, te) during which a handover request was
    outstanding: from each request to the console's next handover,
    timeout or takeover (ends), te without one.  Both lists sorted;
    a request's end is never before an earlier one's, so the last
    request at or before t is the only earlier one that can reach into
    the window."""
    total, reach = 0, t
    for r in requests[max(0, bisect.bisect_right(requests, t) - 1):]:
        if r >= te:
            break
        k = bisect.bisect_left(ends, r)
        end = min(ends[k], te) if k < len(ends) else te
        total += max(0, end - max(r, reach))
        reach = max(reach, end)
    return total


def waited_for(row, per):
    """The parts of a late row's lateness ({part: s}, summing to delay -
    bound) and what it waited for (the design comment's definitions)."""
    parts = {"overtaken": (row["printed_before"] - row["pending"]) * per,
             "stall": row["to_emission_s"] - row["printed_before"] * per,
             "own_emission": row["own_emission_s"] - per}
    largest = max(PARTS, key=parts.get)
    if largest != "stall":
        return parts, largest
    half = parts["stall"] / 2
    if row["handover_wait_s"] >= half:
        return parts, "handover_wait"
    if row["silence_s"] - per >= half:
        return parts, "not_printing"
    if is_thread(row["owner_at_store"]) and row["by_thread"]:
        return parts, "printer_thread"
    return parts, "backlog"


def explain(history, con, late, per):
    """The dict of each late row (seq, delay, bound, pending): what the
    record waited for on console con, per the record time."""
    c = history.con(con)
    stored, first = history.stored(), c.first_commits()
    timeline = CommitTimeline(first)
    changes = {k: sorted(v) for k, v in c.changes.items()}
    ends = sorted(changes["handover_timeout"] + changes["handover"] + changes["takeover"])
    windows = []
    for s, _, _, _ in late:
        t, (tc, _) = stored[s], first[s]
        emits = [x for x in c.emits.get(s, ()) if x <= tc]
        windows.append((t, tc, max(emits) if emits else tc))
    backlog = backlog_printed(stored, timeline, [(t, *timeline.between(t, te))
                                                 for t, _, te in windows])
    out = []
    for (s, delay, bound, pending), (t, tc, te), old in zip(late, windows, backlog):
        m = history.marked[s]
        lo, hi = timeline.between(t, te)
        thread, own, other = timeline.printers(lo, hi, m.cpu)
        owner = m.owners.get(con)
        row = {"seq": s, "cpu": m.cpu, "context": context(m.caller), "caller": m.caller,
               "text": m.text, "delay_s": delay, "bound_s": bound, "pending": pending,
               "printed_before": hi - lo, "backlog": old, "overtaken": hi - lo - old,
               "by_thread": thread, "by_own_cpu": own, "by_other_cpus": other,
               "to_emission_s": te - t, "own_emission_s": tc - te, "owner_at_store": owner,
               "owner_prio": owner.rsplit("/", 1)[-1] if owner else None}
        for k in CHANGES:
            row[k + "s"] = count_between(changes[k], t, tc)
        row["text_id"] = m.text_id
        row["silence_s"] = silence(timeline.ts[lo:hi], t, te)
        row["handover_wait_s"] = handover_wait(changes["handover_request"], ends, t, te)
        row["late_by_s"] = delay - bound
        row["late_parts_s"], row["waited_for"] = waited_for(row, per)
        out.append(row)
    return out


def context(caller):
    """The printk caller id's context: T<pid> a task, C<cpu> another."""
    if not caller:
        return None
    return "task" if caller.startswith("T") else "interrupt" if caller.startswith("C") else None


def totals(rows, per):
    """What the late records have in common, counted over all of them."""
    return {
        "less_than_a_record_time_late": sum(1 for r in rows
                                            if r["delay_s"] - r["bound_s"] <= per),
        "behind_owner": sum(1 for r in rows if r["owner_at_store"]),
        "behind_thread": sum(1 for r in rows if is_thread(r["owner_at_store"])),
        "overtaken": sum(1 for r in rows if r["overtaken"]),
        "printed_more_than_pending": sum(1 for r in rows if r["printed_before"] > r["pending"]),
        "own_emission_over_2_record_times": sum(1 for r in rows
                                                if r["own_emission_s"] > 2 * per),
        "with_handover_request": sum(1 for r in rows if r["handover_requests"]),
        "with_handover_timeout": sum(1 for r in rows if r["handover_timeouts"]),
        "with_takeover": sum(1 for r in rows if r["takeovers"]),
        # how long each record printed before a late one took, against per
        "printed_record_time_s": median_low([r["to_emission_s"] / r["printed_before"]
                                             for r in rows if r["printed_before"]]),
        "waited_for": {k: sum(1 for r in rows if r["waited_for"] == k) for k in WAITED_FOR},
    }


def evaluate(history, con, named=None):
    """The report of console con: the bench's figures (delay_summary())
    plus `past_bound` (count), `totals` and `late` (the rows of the late
    records, the furthest past their bound first; `named` of them, all
    when None); None without marked records the console committed or
    without a record time."""
    c = history.consoles.get(con)
    if c is None or not history.marked:
        return None
    stored = history.stored()
    committed = {s: ts for s, (ts, _) in c.first_commits().items()}
    per = record_time(stored, committed)
    if not per:
        return None
    rows = delay_rows(stored, committed, history.marked, per)
    out = delay_summary(rows, per)
    if out is None:
        return None
    late = sorted((r for r in rows if r[1] > r[2]), key=lambda r: (r[2] - r[1], r[0]))
    explained = explain(history, con, late, per)
    out.update({"console": con, "past_bound": len(late), "totals": totals(explained, per),
                "late": explained if named is None else explained[:named]})
    return out


def read_model(model):
    """The History of a model file (intervals.ModelFile): its stores, and
    its console events with the owner each left.  The owner at a store is
    the owner the console's last event before it left, as the checker
    had it."""
    h, owners = History(), {}
    for e in model.events():
        if e.name == "store":
            h.store(e.seq, e.ts)
            text = e.fields.get("text", "")
            if is_emergency(text):
                h.mark(e.seq, e.cpu, e.fields.get("caller"), text, owners)
            continue
        label = strip_how(e.owner)
        owners[e.con] = label
        h.feed_event(e.name, e.ts, e.seq, e.con, label, e.fields)
    return h


def strip_how(label):
    """A model file's owner label without its `(how)`; None for `-`."""
    if not label or label == "-":
        return None
    return label.rsplit(" (", 1)[0]


def ms(x):
    """A time in s as the reports print it."""
    return "%.3g s" % x if x >= 1 else "%.3g ms" % (x * 1e3)


def ms_signed(x):
    return "-" + ms(-x) if x < 0 else ms(x)


def describe(r):
    """One late record in words: what it is, how late, what it waited for
    (a row of a report from before `waited_for` without it)."""
    owner = r["owner_at_store"] or "none (free)"
    why = ""
    if "waited_for" in r:
        p = r["late_parts_s"]
        why = ("; waited for: %s (late by %s: stall %s, overtaken %s, own emission %s; "
               "longest silence %s, handover wait %s)" % (
                   r["waited_for"], ms(r["late_by_s"]), ms_signed(p["stall"]),
                   ms_signed(p["overtaken"]), ms_signed(p["own_emission"]),
                   ms(r["silence_s"]), ms(r["handover_wait_s"])))
    return ("seq %d cpu%s %s (%s) `%s`: %s, bound %s (%d pending)%s; before its emission (%s) "
            "%d printed (backlog %d, overtaken %d; by the thread %d, its CPU %d, other CPUs "
            "%d), its own emission %s; owner at the store %s; handover requests %d, "
            "timeouts %d, handovers %d, takeovers %d" % (
                r["seq"], r["cpu"], r["context"], r["caller"], r["text"], ms(r["delay_s"]),
                ms(r["bound_s"]), r["pending"], why, ms(r["to_emission_s"]),
                r["printed_before"], r["backlog"], r["overtaken"], r["by_thread"],
                r["by_own_cpu"], r["by_other_cpus"], ms(r["own_emission_s"]), owner,
                r["handover_requests"], r["handover_timeouts"], r["handovers"], r["takeovers"]))


def summarize_late(rep):
    """The late records of a report in one line."""
    t = rep["totals"]
    line = ("%d of %d past their bound ((pending + 1) x %s); less than a record time late "
            "%d; owner at the store: the thread %d, another context %d; with a handover "
            "request %d, a timeout %d, a takeover %d; overtaken %d; records printed before "
            "them took %s each" % (
                rep["past_bound"], rep["records"], ms(rep["per_record_s"]),
                t["less_than_a_record_time_late"], t["behind_thread"],
                t["behind_owner"] - t["behind_thread"], t["with_handover_request"],
                t["with_handover_timeout"], t["with_takeover"], t["overtaken"],
                ms(t["printed_record_time_s"]) if t["printed_record_time_s"] else "-"))
    why = t.get("waited_for")
    if why:
        line += "; waited for: " + ", ".join("%s %d" % (k, n) for k, n in why.items() if n)
    return line
