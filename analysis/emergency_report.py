"""The report of the emergency records against the RFC's bound, from the
facts the sweep collected (emergency_bound.History): the bound and delay
of each record, the bench's figures, and what each late record waited
for.

The bound of a record is (pending + 1) * record time (emergency_bound.py
defines both); a record is late when its delay, from its store to the
console's first commit of it, exceeds its bound.

Invariants:
- every figure is a function of the History's facts alone: the bench's
  functions (record_time(), delay_rows(), delay_summary()) run the same
  sweep over its dicts as the analysis does over its event stream, and
  a model file's events give the report the checker's stream gave
  (read_model());
- the explanation of a record past its bound uses only what lies between
  its store and its first commit on that console: the records committed
  before its own emission (stored before it: the backlog the bound
  counts; after it, with a lower seq: records that overtook it), who
  printed them (the printer thread, a context on its own CPU, one on
  another CPU), the console's owner when it was stored, and the handover
  requests, timeouts, handovers and hostile takeovers in its wait;
- the parts of a late record's lateness sum to delay - bound exactly,
  and each late record is put down to exactly one of WAITED_FOR.

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

evaluate() gives the report of one console, every late record in it;
describe() and summarize_late() put it in words for the text verdict and
the bench.  The JSON verdict keeps the NAMED furthest past their bound
of each console (named_only()): it is printed with --json and copied
whole into the harness's verdict.json, and a long run has thousands of
late records.  Every one goes to the late file next to analysis.json
(write_late(), LATE_FILE: JSON Lines, a header naming the consoles and
their counts, then one late record a line with its console, each
console's furthest past its bound first), written to a .tmp file and
renamed at the end, so that a reader never sees half of one.
"""

import heapq
import json
import os

from .emergency_bound import CHANGES, COMMIT, STORE, History, is_emergency, is_thread

NAMED = 20                    # late records the JSON verdict names per console
LATE_FILE = "emergency-late.jsonl"
LATE_FORMAT = "printk-nobkl-stress emergency records past their bound"
LATE_VERSION = 1
# the parts of a late record's lateness, in the order that breaks a tie
PARTS = ("stall", "overtaken", "own_emission")
# what a late record waited for (the design comment defines each)
WAITED_FOR = ("overtaken", "own_emission", "handover_wait", "not_printing",
              "printer_thread", "backlog")


def median_low(xs):
    """The element at len/2 of the sorted values (the bench's median)."""
    xs = sorted(xs)
    return xs[len(xs) // 2] if xs else None


def record_time_of(console):
    """A Console's record time: the median of its busy gaps (None
    without one)."""
    return median_low(console.gaps)


def _batch(stored, committed, marked=()):
    """A History of one console "c" from the bench's dicts: stored {seq:
    ts}, committed {seq: first commit ts}, the marked seqs; fed in time
    order, so that it holds no events."""
    h = History(window=0)
    marked = set(marked)
    stores = sorted((ts, STORE, s) for s, ts in stored.items())
    commits = sorted((ts, COMMIT, s) for s, ts in committed.items())
    for ts, order, s in heapq.merge(stores, commits):
        if order == STORE:
            h.store(s, ts)
            if s in marked:
                h.mark(s, None, None, "", {})
        else:
            h.commit("c", s, ts, None)
    h.flush()
    return h


def record_time(stored, committed):
    """The console's time per record while it is busy: from one record's
    first commit to the next seq's, where the next was already stored at
    the first one's commit.  stored {seq: ts}, committed {seq: first
    commit ts}; None when the trace does not tell."""
    h = _batch(stored, committed)
    return record_time_of(h.consoles["c"]) if "c" in h.consoles else None


def pending_of(m, name):
    """The records of lower seq stored at or before m's store that console
    name had not committed by then."""
    w = m.at.get(name)
    return m.stored_below - (w.closed_below if w is not None else 0)


def pending_counts(stored, committed, seqs):
    """{seq: pending} for each of seqs: the records of lower seq stored at
    or before its store and not committed by then."""
    h = _batch(stored, committed, seqs)
    return {s: pending_of(h.marked[s], "c") for s in seqs}


def rows_of(history, name, per):
    """[(seq, delay, bound, pending)] of the marked records console name
    committed, in seq order."""
    out = []
    for s in sorted(history.marked):
        m = history.marked[s]
        w = m.at.get(name)
        if w is not None and w.commit is not None:
            p = pending_of(m, name)
            out.append((s, w.commit - m.ts, (p + 1) * per, p))
    return out


def delay_rows(stored, committed, marked, per):
    """[(seq, delay, bound, pending)] of the marked records the console
    committed, in seq order; times in s."""
    return rows_of(_batch(stored, committed, [s for s in marked if s in stored]), "c", per)


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


def explain(m, name, row, per):
    """The dict of a late row (seq, delay, bound, pending) of emergency
    record m on console name: what it waited for."""
    s, delay, bound, pending = row
    w = m.at[name]
    te = w.emit if w.emit is not None else w.commit
    # the wait before its emission holds time (and the sweep saw its
    # emission after its store: not so for events beyond the window)
    inside = te > m.ts and w.at_emit is not None
    # a console first seen after its store: counted from nothing
    start = w.start or (0, 0, 0, 0, (0,) * len(CHANGES))
    end = w.at_emit if inside else start + (0,)
    printed, thread, own, asked = (end[i] - start[i] for i in range(4))
    overtaken = end[5]
    changes = [b - a for a, b in zip(start[4], w.at_commit[4])]
    owner = m.owners.get(name)
    out = {"seq": s, "cpu": m.cpu, "context": context(m.caller), "caller": m.caller,
           "text": m.text, "delay_s": delay, "bound_s": bound, "pending": pending,
           "printed_before": printed, "backlog": printed - overtaken, "overtaken": overtaken,
           "by_thread": thread, "by_own_cpu": own, "by_other_cpus": printed - thread - own,
           "to_emission_s": te - m.ts, "own_emission_s": w.commit - te,
           "owner_at_store": owner, "owner_prio": owner.rsplit("/", 1)[-1] if owner else None}
    for k, n in zip(CHANGES, changes):
        out[k + "s"] = n
    out["text_id"] = m.text_id
    out["silence_s"] = w.silence if inside else te - m.ts
    out["handover_wait_s"] = asked
    out["late_by_s"] = delay - bound
    out["late_parts_s"], out["waited_for"] = waited_for(out, per)
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
    history.flush()
    c = history.consoles.get(con)
    if c is None or not history.marked:
        return None
    per = record_time_of(c)
    if not per:
        return None
    rows = rows_of(history, con, per)
    out = delay_summary(rows, per)
    if out is None:
        return None
    late = sorted((r for r in rows if r[1] > r[2]), key=lambda r: (r[2] - r[1], r[0]))
    explained = [explain(history.marked[r[0]], con, r, per) for r in late]
    out.update({"console": con, "past_bound": len(late), "totals": totals(explained, per),
                "late": explained if named is None else explained[:named],
                "events_beyond_window": history.beyond_window})
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


def named_only(reports, named=NAMED):
    """{console: report} as the JSON verdict holds them: each report's
    `named` furthest late records (`past_bound` counts them all)."""
    return {con: dict(rep, late=rep["late"][:named]) for con, rep in reports.items()}


def write_late(path, reports):
    """Every late record of reports ({console: evaluate()}) to path, as
    the design comment says; returns what analysis.json says of the file
    (`emergency_late_file`)."""
    counts = {con: len(rep["late"]) for con, rep in sorted(reports.items())}
    tmp = "%s.%d.tmp" % (path, os.getpid())
    with open(tmp, "w") as f:
        f.write(json.dumps({"format": LATE_FORMAT, "version": LATE_VERSION,
                            "consoles": counts}) + "\n")
        for con in counts:
            for row in reports[con]["late"]:
                f.write(json.dumps(dict(console=con, **row)) + "\n")
    os.replace(tmp, path)
    return {"name": os.path.basename(path), "format_version": LATE_VERSION,
            "records": sum(counts.values())}


def read_late(path):
    """{console: [late record, ...]} of a late file, in its order;
    ValueError for a file of another format or version, or cut short."""
    with open(path) as f:
        header = json.loads(f.readline() or "null")
        if not isinstance(header, dict) or header.get("format") != LATE_FORMAT or \
                header.get("version") != LATE_VERSION:
            raise ValueError("%s is not a late file of version %d" % (path, LATE_VERSION))
        out = {con: [] for con in header["consoles"]}
        for line in f:
            row = json.loads(line)
            out[row.pop("console")].append(row)
    if {con: len(rows) for con, rows in out.items()} != header["consoles"]:
        raise ValueError("%s is cut short" % path)
    return out
