"""The RFC's headline claim, measured: printk() callers stop paying for a
slow console, and emergency output still gets out at once.

One benchmark compares runs of the same workload on the same kernel and
the same emulated UART timing that differ only in how the console is
driven (tools/pns/bench.py makes them, ROUNDS rounds of the three modes
interleaved, each run in <mode>-<round>/):

  nobkl    the NOBKL console (printer thread, atomic emergency output)
  legacy   the same UART registered the old way (console_lock, printing
           from the printk() caller)
  floor    no console output at all (the records are below the console
           loglevel): what printk() costs without any console

Per run it reads what the run left: the stressor's printk() latency
histograms per context (stats.txt, docs/stressor.md: log-linear, 32
buckets per power of two, so a percentile read off the middle of its
bucket is within 1/64 (1.6 %) of the true one; stats of the stressor
before had log2 buckets, read as before: a figure is its bucket's upper
bound, within a factor of two), the serial log (records and bytes that
reached the console, `** N printk messages dropped **`) and, where there
is one, the trace analysis (store-to-console delay of emergency
records, handovers, takeovers).  Every figure says how many samples it
rests on, and a context with fewer than MIN_SAMPLES calls in a run is
flagged; ratios are of figures of the same round, never against a fixed
number, and the report gives the median and the range of each figure and
each ratio over the rounds.
"""

import json
import math
import os
import re
import statistics
from fractions import Fraction

from . import consolelog, emergency_bound, intervals
from .serial import parse_pstress

MODES = ("nobkl", "legacy", "floor")
CONTEXTS = ("task", "hardirq", "nmi", "emerg", "panic")
# The latency figures of a context: (key, name, quantile; None: max_ns)
FIGURES = (("p50_ns", "p50", Fraction(1, 2)), ("p99_ns", "p99", Fraction(99, 100)),
           ("p99_9_ns", "p99.9", Fraction(999, 1000)), ("max_ns", "max", None))
# Ratios within a round: (key, numerator mode, denominator mode), of
# these figures (the max is one call: no ratio)
RATIOS = (("legacy_over_nobkl", "legacy", "nobkl"), ("nobkl_over_floor", "nobkl", "floor"))
RATIO_FIGURES = ("p50_ns", "p99_ns", "p99_9_ns")
# calls per context and run below which the report flags the figures
MIN_SAMPLES = 2000
# emergency records past their bound that the report names (all runs)
NAMED_LATE = emergency_bound.NAMED


class Hist:
    """One histogram of the stressor's stats: buckets [(lower, upper,
    count)] in ns (upper exclusive), its count and max_ns (None in stats
    lines without one).  `fmt` says how a figure is read off a bucket:
    "loglin" at the middle of the durations the bucket holds (within
    1/(2 sub) of each of them: 1.6 % with sub=32), "log2" at its upper
    bound (the old stats: within a factor of two)."""

    def __init__(self, buckets, count, max_ns, fmt):
        self.buckets = sorted(buckets)
        self.count, self.max_ns, self.fmt = count, max_ns, fmt

    def __eq__(self, other):
        return isinstance(other, Hist) and vars(self) == vars(other)

    def __repr__(self):
        return "Hist(%r, %r, %r, %r)" % (self.buckets, self.count, self.max_ns, self.fmt)

    def value(self, lo, hi):
        """The figure a bucket [lo, hi) gives (never above max_ns)."""
        v = hi if self.fmt == "log2" else lo + (hi - 1 - lo) / 2.0
        return min(v, self.max_ns) if self.max_ns is not None and self.fmt != "log2" else v

    def quantile(self, q):
        """The q-th quantile (nearest rank: the ceil(q n)-th fastest call),
        read off its bucket; None for an empty histogram."""
        if not self.count:
            return None
        rank, seen = max(1, math.ceil(q * self.count)), 0
        for lo, hi, n in self.buckets:
            seen += n
            if seen >= rank:
                return self.value(lo, hi)
        raise AssertionError("buckets add up to count")

    def maximum(self):
        """max_ns, or (old lines without it) the top bucket's upper bound."""
        if self.max_ns is not None:
            return self.max_ns
        return self.buckets[-1][1] if self.buckets else None

    @staticmethod
    def pool(hists):
        """The histograms of several runs as one (their calls together)."""
        counts = {}
        for h in hists:
            for lo, hi, n in h.buckets:
                counts[(lo, hi)] = counts.get((lo, hi), 0) + n
        maxes = [h.max_ns for h in hists if h.max_ns is not None]
        return Hist([(lo, hi, n) for (lo, hi), n in counts.items()],
                    sum(h.count for h in hists), max(maxes) if maxes else None,
                    hists[0].fmt if hists else "loglin")


def _loglin_buckets(items, sub, overflow, max_ns):
    """(lower, upper, n) of a log-linear line's lower:n items: 1 ns wide
    below 2 sub, 2^(floor(log2 lower) - log2 sub) from there, the bucket
    at overflow up to max_ns (ps_hist_bucket() in lib-printk-stress)."""
    if sub < 1 or sub & (sub - 1):
        raise ValueError("sub=%d is not a power of two" % sub)
    out = []
    for lo, n in items:
        if lo >= overflow:
            hi = max(lo, max_ns or lo) + 1
        else:
            width = 1 if lo < 2 * sub else 1 << (lo.bit_length() - sub.bit_length())
            if lo % width:
                raise ValueError("%d is no bucket's lower bound (sub=%d)" % (lo, sub))
            hi = lo + width
        out.append((lo, hi, n))
    return out


# A histogram line of the stressor's stats (docs/stressor.md): its name,
# labels, count, max_ns, then the log-linear buckets or the old log2 ones.
_HIST = re.compile(r"^(latency|latency_cpu|nmi_time|takeover_time)((?: \w+=\w+)*?)"
                   r" count=(\d+)(?: max_ns=(\d+))?"
                   r"(?: sub=(\d+) overflow_ns=(\d+) buckets:| log2_ns:)(.*)$")


def parse_hist_line(line):
    """(name, {label: value}, Hist) of one histogram line of stats, or
    None for another line.  ValueError for a damaged one: buckets that do
    not add up to its count, or a bucket that is not one."""
    m = _HIST.match(line.strip())
    if not m:
        return None
    name, labels, count, max_ns, sub, overflow, rest = m.groups()
    labels = dict(t.split("=", 1) for t in labels.split())
    try:
        items = [tuple(int(x) for x in it.split(":")) for it in rest.split()]
        if any(len(it) != 2 for it in items):
            raise ValueError("a bucket is not <bucket>:<count>")
        max_ns = None if max_ns is None else int(max_ns)
        if sub is None:
            fmt = "log2"
            buckets = [(2 ** b if b else 0, 2 ** (b + 1), n) for b, n in items]
        else:
            fmt = "loglin"
            buckets = _loglin_buckets(items, int(sub), int(overflow), max_ns)
    except ValueError as e:
        raise ValueError("%s %s: %s" % (name, " ".join("%s=%s" % kv for kv in labels.items()),
                                        e)) from None
    total = sum(n for _, _, n in buckets)
    if total != int(count):
        raise ValueError("%s %s: buckets add up to %d, count says %s" % (
            name, " ".join("%s=%s" % kv for kv in labels.items()), total, count))
    return name, labels, Hist(buckets, total, max_ns, fmt)


def read_latency(stats_path):
    """{ctx: Hist} of the `latency ctx=` lines of a stressor stats.txt
    (the per-CPU lines are not read).  ValueError naming the file for a
    damaged histogram line."""
    hists = {}
    with open(stats_path) as f:
        for line in f:
            try:
                parsed = parse_hist_line(line)
            except ValueError as e:
                raise ValueError("%s: %s" % (stats_path, e)) from None
            if parsed and parsed[0] == "latency":
                hists[parsed[1]["ctx"]] = parsed[2]
    return hists


def latency_figures(hists):
    """{ctx: {"samples": n, "p50_ns": .., "p99_ns": .., "p99_9_ns": ..,
    "max_ns": .., "bound": ..}} of the contexts with calls."""
    out = {}
    for ctx in CONTEXTS:
        h = hists.get(ctx)
        if not h or not h.count:
            continue
        f = {"samples": h.count, "bound": "x2" if h.fmt == "log2" else "1.6%"}
        for key, _, q in FIGURES:
            f[key] = h.maximum() if q is None else h.quantile(q)
        out[ctx] = f
    return out


_DROP = re.compile(r"\*\* (\d+) printk messages dropped \*\*")


def console_output(log_path):
    """What reached the console: complete stressor records and their
    bytes, the records the console said it dropped, and the span of the
    stressor records' timestamps (s; when they were stored, not printed)."""
    records = nbytes = dropped = 0
    first = last = None
    for line in consolelog.lines(log_path):
        m = _DROP.search(line.raw)
        if m:
            dropped += int(m.group(1))
            continue
        # a stressor record on a line of its own, as the kernel prints it
        if line.stamp is None or line.caller is not None or line.glued or \
                not line.text.startswith("pstress "):
            continue
        rec = parse_pstress(line.text)
        if rec is None or not rec[2]:
            continue
        records += 1
        nbytes += len(line.raw) + len(line.end)
        ts = float(line.stamp)
        first = ts if first is None else first
        last = ts
    span = (last - first) if first is not None else 0.0
    return {"records": records, "bytes": nbytes, "dropped": dropped, "span_s": span}


_EV = re.compile(r"\[(\d+)\]\s+(\d+\.\d+): nobkl_(store|commit):\s+(?:con=\S+ )?seq=(\d+)"
                 r"(?:.*? text=(.*))?")


def report_lines(trace_dat, trace_cmd="trace-cmd"):
    """The `trace-cmd report` lines of a trace.dat, or [] without one."""
    import subprocess
    if not os.path.exists(trace_dat):
        return []
    proc = subprocess.run([trace_cmd, "report", "-i", trace_dat], capture_output=True,
                          text=True, errors="replace")
    return proc.stdout.splitlines()


class ConsoleTrace:
    """What the trace says about records and the console: each record's
    store (time, text) and when the NOBKL console finished printing it
    (its first commit of the seq).  The legacy console of 6.1 traces no
    output time (its printk:console event fires when the record is
    stored), so its figures here are left out."""

    def __init__(self, lines):
        self.stored, self.committed = {}, {}
        for line in lines:
            m = _EV.search(line)
            if not m:
                continue
            ts, kind, seq = float(m.group(2)), m.group(3), int(m.group(4))
            if kind == "store":
                self.stored[seq] = (ts, m.group(5) or "")
            elif seq not in self.committed:
                self.committed[seq] = ts

    def record_time(self):
        """The console's time per record while it is busy: from printing
        one record to printing the next where the next was already stored
        when the first was printed.  None when the trace does not tell."""
        return emergency_bound.record_time({s: ts for s, (ts, _) in self.stored.items()},
                                           self.committed)

    def throughput(self):
        """Records and bytes per second while the console is busy."""
        per = self.record_time()
        texts = [self.stored[s][1] for s in self.committed if s in self.stored]
        if not per or not texts:
            return None
        mean_len = sum(len(t) + 17 for t in texts) / len(texts)   # "[  sec.usec] " + LF
        return {"record_s": per, "records_per_s": 1.0 / per,
                "bytes_per_s": mean_len / per, "samples": len(texts)}

    def emergency_rows(self):
        """([(seq, delay, bound, pending)], time per record) of the records
        stored in emergency sections (stressor records x=emerg) that the
        console committed: each one's store-to-console delay against the
        time the console needed for the records pending when it was
        stored (stored before it, not yet printed) plus itself
        (emergency_bound.py); times in s.  None without the NOBKL
        console's commits."""
        per = self.record_time()
        if not self.committed or not per:
            return None
        marked = [s for s, (_, text) in self.stored.items() if emergency_bound.is_emergency(text)]
        stored = {s: ts for s, (ts, _) in self.stored.items()}
        return emergency_bound.delay_rows(stored, self.committed, marked, per), per

    def emergency_delays(self):
        """The figures of emergency_rows() (emergency_bound.delay_summary());
        None without such records or without the NOBKL console's
        commits."""
        got = self.emergency_rows()
        return emergency_bound.delay_summary(*got) if got else None


def serial_console(analysis):
    """The console the serial log holds, as the run's analysis named it."""
    cons = analysis.get("consoles") or {}
    return next((n for n, c in cons.items() if c.get("serial")), next(iter(cons), None))


def past_bound(res, analysis):
    """The emergency records of a run past the RFC's bound, every one
    explained (emergency_bound.evaluate()), from the model file the run's
    analysis wrote next to analysis.json: the analysis does not run
    again.  A run without one (or of an analysis before the model file)
    gives what its analysis.json says, if anything."""
    con = serial_console(analysis)
    try:
        _, model = intervals.read_results(res)
    except intervals.ModelFileError:
        return ((analysis.get("latency") or {}).get("emergency_past_bound") or {}).get(con)
    return emergency_bound.evaluate(emergency_bound.read_model(model), con) if con else None


def run_figures(res):
    """The figures of one benchmark run (a results directory); besides
    them (not in bench.json) the histograms (`hists`) and each emergency
    record's (seq, delay, bound, pending) (`emergency_rows`), for the
    pictures."""
    res = str(res)
    hists = read_latency(os.path.join(res, "stats.txt"))
    fig = {"results": res, "hists": hists, "latency": latency_figures(hists)}
    if os.path.exists(os.path.join(res, "console.log")):
        fig["console"] = console_output(os.path.join(res, "console.log"))
    try:
        with open(os.path.join(res, "verdict.json")) as f:
            analysis = json.load(f).get("analysis") or {}
    except (OSError, ValueError):
        analysis = {}
    if fig.get("console", {}).get("records"):
        # Without output (the floor) there is nothing the console printed.
        trace = ConsoleTrace(report_lines(os.path.join(res, "trace.dat")))
        rows, per = trace.emergency_rows() or ([], None)
        for name, value in (("throughput", trace.throughput()),
                            ("emergency_delay", emergency_bound.delay_summary(rows, per)),
                            ("emergency_rows", rows)):
            if value:
                fig[name] = value
        late = past_bound(res, analysis)
        if late:
            fig["emergency_past_bound"] = late
    if analysis.get("counts"):
        c = analysis["counts"]
        fig["analysis"] = {
            "verdict": analysis.get("verdict"),
            "takeovers": c["takeovers"], "handovers": c["handovers"],
            "store_to_commit": (analysis.get("latency") or {}).get("store_to_commit"),
            "handover_wait": (analysis.get("latency") or {}).get("handover_wait"),
        }
    return fig


def _lat(figs, mode, ctx):
    return ((figs.get(mode) or {}).get("latency") or {}).get(ctx) or {}


def compare(figs):
    """The ratios of one round's figures per context ({ctx: {"legacy_over_
    nobkl_p99": r, ...}}, RATIOS of RATIO_FIGURES): how much the NOBKL
    console saves its callers (legacy / nobkl) and what it still costs
    them over no console at all (nobkl / floor)."""
    out = {}
    for ctx in CONTEXTS:
        row = {}
        for name, num, den in RATIOS:
            a, b = _lat(figs, num, ctx), _lat(figs, den, ctx)
            for key in RATIO_FIGURES:
                if a.get(key) and b.get(key):
                    row["%s_%s" % (name, key[:-3])] = a[key] / b[key]
        if row:
            out[ctx] = row
    return out


def spread(values):
    """Median, min and max of the values that are there (None: that round
    had none), and how many; None without any."""
    vals = [v for v in values if v is not None]
    if not vals:
        return None
    return {"median": statistics.median(vals), "min": min(vals), "max": max(vals),
            "rounds": len(vals)}


def summarize(rounds):
    """Over rounds ([{"round": r, "modes": {mode: figures}}]): each
    latency figure's and sample count's spread per context and mode, each
    ratio's spread per context (of the ratios within each round), and the
    runs with fewer than MIN_SAMPLES calls of a context that the benchmark
    has ([(ctx, mode, round, calls)])."""
    ratios = [compare(r["modes"]) for r in rounds]
    lat, rat, low = {}, {}, []
    for ctx in CONTEXTS:
        per = {m: [_lat(r["modes"], m, ctx) for r in rounds] for m in MODES}
        if not any(f for fs in per.values() for f in fs):
            continue
        lat[ctx] = {m: {k: spread(f.get(k) for f in fs) for k in ("samples",) + tuple(
            key for key, _, _ in FIGURES)} for m, fs in per.items() if any(fs)}
        low += [(ctx, m, r["round"], f.get("samples", 0)) for m in MODES
                for r, f in zip(rounds, per[m]) if m in r["modes"]
                and f.get("samples", 0) < MIN_SAMPLES]
        keys = sorted({k for x in ratios for k in x.get(ctx, {})})
        if keys:
            rat[ctx] = {k: spread(x.get(ctx, {}).get(k) for x in ratios) for k in keys}
    return {"latency": lat, "ratios": rat, "low_samples": low,
            "rounds": [{"round": r["round"], "ratios": x} for r, x in zip(rounds, ratios)]}


def _ns(v):
    if v is None:
        return "-"
    for unit, div in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if v >= div:
            return "%.3g %s" % (v / div, unit)
    return "%d ns" % v


def _cell(s, fmt=_ns):
    """A spread as `median (min-max)`, the unit once when both ends share
    it; `-` without values."""
    if not s:
        return "-"
    if s["min"] == s["max"]:
        return fmt(s["median"])
    lo, hi = fmt(s["min"]), fmt(s["max"])
    if lo.count(" ") == hi.count(" ") == 1 and lo.split()[1] == hi.split()[1]:
        lo = lo.split()[0]
    return "%s (%s-%s)" % (fmt(s["median"]), lo, hi)


def _samples(s):
    cell = _cell(s, lambda v: "%d" % v)
    return cell + (" **< %d**" % MIN_SAMPLES if s and s["min"] < MIN_SAMPLES else "")


def _table(title, head, rows, intro=None):
    """A markdown section: title, optional paragraph, a table; nothing
    without rows."""
    if not rows:
        return []
    out = ["", "## " + title, ""]
    if intro:
        out += [intro, ""]
    out.append("| " + " | ".join(head) + " |")
    out.append("|" + "---|" * len(head))
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return out


def _runs(rounds, what):
    """(mode, round, value) of every run that has `what`."""
    return [(m, r["round"], r["modes"][m][what]) for m in MODES for r in rounds
            if (r["modes"].get(m) or {}).get(what)]


def markdown(rounds, summary, meta):
    """The benchmark as a markdown report: the figures' median and range
    over the rounds, then what each run's console printed."""
    n = len(rounds)
    out = ["# Console benchmark: %s" % meta.get("title", ""), ""]
    for k in ("command", "machine", "kernel", "uart", "workload", "duration_s"):
        if k in meta:
            out.append("- %s: %s" % (k, meta[k]))
    out.append("- rounds: %d, the modes interleaved (%s, ...); each figure is the median "
               "(min-max) over the rounds, each ratio of figures of the same round" % (
                   n, ", ".join(MODES)))
    for r in rounds:
        for m, v in sorted((r.get("verdicts") or {}).items()):
            if v["verdict"] != "pass":
                out.append("- run %s-%d not clean: %s" % (
                    m, r["round"], "; ".join(v["problems"]) or v["verdict"]))
    lat = summary["latency"]
    bounds = {f.get("bound") for r in rounds for fig in r["modes"].values()
              for f in (fig.get("latency") or {}).values()}
    how = ("upper bounds of log2 buckets, each within a factor of two" if bounds == {"x2"}
           else "read off the middle of their buckets, each within 1.6 %" if bounds == {"1.6%"}
           else "log-linear buckets (within 1.6 %) and log2 ones (upper bounds, x2) mixed")
    out += _table("printk() caller latency",
                  ("context", "mode", "calls") + tuple(name for _, name, _ in FIGURES),
                  [(ctx, m, _samples(f["samples"])) + tuple(_cell(f[k]) for k, _, _ in FIGURES)
                   for ctx in lat for m in MODES for f in [lat[ctx].get(m)] if f],
                  "The time each printk() call took, per context; percentiles of the "
                  "stressor's histograms, %s; max the slowest call. `calls`: the calls "
                  "per run each figure rests on; **< %d** marks a context with fewer in "
                  "some run (p99.9 of 2000 calls is the third slowest)." % (how, MIN_SAMPLES))
    if summary["low_samples"]:
        out += ["", "Fewer than %d calls: %s." % (MIN_SAMPLES, ", ".join(
            "%s %s-%d (%d)" % x for x in summary["low_samples"]))]
    rat = summary["ratios"]
    out += _table("Ratios within a round",
                  ("context", "figure") + tuple("%s / %s" % (a, b) for _, a, b in RATIOS),
                  [(ctx, name) + tuple(_cell(rat[ctx].get("%s_%s" % (r, key[:-3])),
                                             lambda v: "%.3g" % v) for r, _, _ in RATIOS)
                   for ctx in rat for key, name, _ in FIGURES if key in RATIO_FIGURES
                   and any(k.endswith("_" + key[:-3]) for k in rat[ctx])])
    tp = dict(((m, r), t) for m, r, t in _runs(rounds, "throughput"))
    out += _table("Console output",
                  ("mode", "round", "records on the console", "dropped", "time per record",
                   "records/s", "bytes/s"),
                  [(m, r, c["records"], c["dropped"]) + (
                      (_ns(t["record_s"] * 1e9), "%.0f" % t["records_per_s"],
                       "%.0f" % t["bytes_per_s"]) if t else ("-", "-", "-"))
                   for m, r, c in _runs(rounds, "console") for t in [tp.get((m, r))]],
                  "Records on the serial log and dropped notices; throughput while the "
                  "console is busy, from the NOBKL console's commits in the trace (the "
                  "legacy console of 6.1 traces no output time).")
    out += _table("Emergency records: store to console",
                  ("mode", "round", "records", "time per record", "p50", "p99", "max",
                   "within the bound"),
                  [(m, r, d["records"], _ns(d["per_record_s"] * 1e9), _ns(d["p50_s"] * 1e9),
                    _ns(d["p99_s"] * 1e9), _ns(d["max_s"] * 1e9),
                    "%d of %d" % (d["within_bound"], d["records"]))
                   for m, r, d in _runs(rounds, "emergency_delay")],
                  "Each record stored in an emergency section, from its store to its "
                  "commit by the console, against the time the console needed for the "
                  "records pending when it was stored plus itself (at the run's median "
                  "time per record).")
    out += _past_bound_section(rounds)
    for m, r, a in _runs(rounds, "analysis"):
        if m != "nobkl":
            continue
        tk, ho = a["takeovers"], a["handovers"]
        out += ["", "## NOBKL console, round %d: ownership (trace analysis, verdict %s)" % (
                    r, a["verdict"]), "",
                "- takeovers: hostile %d, handover %d, direct %d" % (
                    tk["hostile"], tk["handover"], tk["direct"]),
                "- handover requests %d, granted %d, timed out %d" % (
                    ho["requests"], ho["completed"], ho["timeouts"])]
        for name in ("handover_wait", "store_to_commit"):
            d = a.get(name)
            if d and d.get("count"):
                out.append("- %s: n=%d p50 %s p99 %s max %s" % (
                    name.replace("_", " "), d["count"], _ns(d["p50"] * 1e3),
                    _ns(d["p99"] * 1e3), _ns(d["max"] * 1e3)))
    return "\n".join(out) + "\n"


def _past_bound_section(rounds):
    """Emergency records past their bound: per run how many and what they
    have in common, then the NAMED furthest past it over all runs, each
    with what it waited for; the rest counted (every one is in
    bench.json)."""
    runs = _runs(rounds, "emergency_past_bound")
    if not runs:
        return []
    out = _table("Emergency records past their bound",
                 ("mode", "round", "past the bound", "less than a record time late",
                  "owner at the store: thread / other", "handover request / timeout / takeover",
                  "overtaken", "records printed before them, each"),
                 [(m, r, "%d of %d" % (d["past_bound"], d["records"]),
                   t["less_than_a_record_time_late"],
                   "%d / %d" % (t["behind_thread"], t["behind_owner"] - t["behind_thread"]),
                   "%d / %d / %d" % (t["with_handover_request"], t["with_handover_timeout"],
                                     t["with_takeover"]), t["overtaken"],
                   _ns(t["printed_record_time_s"] * 1e9) if t["printed_record_time_s"] else "-")
                  for m, r, d in runs for t in [d["totals"]]],
                 "A record is past its bound when its delay is longer than the records "
                 "pending at its store plus itself at the run's median time per record. "
                 "What it waited for, from its store to its emission: the records the "
                 "console printed (stored before it: its backlog; after it, with a lower "
                 "seq: they overtook it), by whom (the printer thread, a context on its "
                 "own CPU, one on another), the console's owner at its store and the "
                 "handover requests, timeouts and takeovers in its wait (from the model "
                 "file of the run's trace analysis).")
    late = sorted(((m, r, x) for m, r, d in runs for x in d["late"]),
                  key=lambda e: (e[2]["bound_s"] - e[2]["delay_s"], e[0], e[1], e[2]["seq"]))
    total = sum(d["past_bound"] for _, _, d in runs)
    out += ["", "The %d furthest past their bound (of %d):" % (
        min(NAMED_LATE, len(late)), total), ""]
    out += ["- %s-%d %s" % (m, r, emergency_bound.describe(x)) for m, r, x in late[:NAMED_LATE]]
    if total > NAMED_LATE:
        out += ["", "%d more, each in bench.json (`emergency_past_bound`, `late`)." % (
            total - min(NAMED_LATE, len(late)))]
    return out


_CDF_TICKS = ((0.01, "0.01"), (0.1, "0.1"), (0.5, "p50"), (0.9, "0.9"), (0.99, "p99"),
              (0.999, "p99.9"), (0.9999, "p99.99"))


def plot_cdfs(rounds, path):
    """One panel per context, all modes in it: the CDF of printk()
    latency of each mode, its rounds' calls pooled (the spread over
    rounds is the table's), on a logit scale so that p50, p99 and p99.9
    are as far apart as they matter.  Returns False without matplotlib."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import matplotlib.ticker
    except ImportError:
        return False
    pooled = {}
    for ctx in CONTEXTS:
        for m in MODES:
            hs = [h for r in rounds for h in [((r["modes"].get(m) or {}).get("hists")
                                               or {}).get(ctx)] if h and h.count]
            if hs:
                pooled.setdefault(ctx, {})[m] = (Hist.pool(hs), len(hs))
    if not pooled:
        return False
    fig, axes = plt.subplots(1, len(pooled), figsize=(4.5 * len(pooled), 4), squeeze=False)
    for ax, (ctx, per) in zip(axes[0], pooled.items()):
        for m, (h, nr) in per.items():
            # the calls of each bucket spread evenly over it
            xs, ys, seen = [max(h.buckets[0][0], 1)], [0.0], 0
            for lo, hi, n in h.buckets:
                seen += n
                xs.append(hi)
                ys.append(seen / float(h.count))
            ax.plot(xs, ys, label="%s (%d runs, n=%d)" % (m, nr, h.count))
        top = max(h.count for h, _ in per.values())
        ax.set_xscale("log")
        ax.set_yscale("logit")
        ax.set_ylim(0.01, 1 - 0.5 / top)
        ticks = [(y, t) for y, t in _CDF_TICKS if y < 1 - 0.5 / top]
        ax.set_yticks([y for y, _ in ticks])
        ax.set_yticklabels([t for _, t in ticks])
        ax.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.set_xlabel("printk() latency, ns")
        ax.set_title(ctx)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8, loc="lower right")
    axes[0][0].set_ylabel("fraction of calls at most that long")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def emergency_points(rounds):
    """What emergency-bound.png shows: per mode with emergency records
    the console committed, its rounds pooled, {"within": [(bound, delay)],
    "beyond": [(bound, delay)], "rounds": [round numbers], "per_record_s":
    (lowest, highest) of the rounds' time per record}, times in s.
    Within: delay <= bound, as the table's `within the bound` counts."""
    out = {}
    for m in MODES:
        for r in rounds:
            fig = r["modes"].get(m) or {}
            rows = fig.get("emergency_rows")
            if not rows:
                continue
            p = out.setdefault(m, {"within": [], "beyond": [], "rounds": [], "per": []})
            for _, delay, bound, _ in rows:
                p["within" if delay <= bound else "beyond"].append((bound, delay))
            p["rounds"].append(r["round"])
            p["per"].append(fig["emergency_delay"]["per_record_s"])
    for p in out.values():
        per = p.pop("per")
        p["per_record_s"] = (min(per), max(per))
    return out


def plot_emergency_bound(rounds, path):
    """One panel per mode with emergency records (the NOBKL console: the
    legacy one of 6.1 traces no output time), its rounds pooled: each
    record's store-to-console delay against its bound (the records
    pending at its store plus itself, at its run's time per record), the
    line delay = bound, the records within and beyond it in two colours.
    Log axes when the values span a factor of ten.  Returns False
    without matplotlib or without such records."""
    points = emergency_points(rounds)
    if not points:
        return False
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import matplotlib.ticker
    except ImportError:
        return False
    fig, axes = plt.subplots(1, len(points), figsize=(5.5 * len(points), 5), squeeze=False)
    for ax, (m, p) in zip(axes[0], points.items()):
        pts = p["within"] + p["beyond"]
        n = len(pts)
        vals = [v for xy in pts for v in xy]
        lo, hi = min(vals), max(vals)
        log = lo > 0 and hi / lo >= 10
        # thousands of records on a few bounds overlap: fainter points the more
        alpha = min(0.8, max(0.2, 20 / math.sqrt(n)))
        for key, colour, what in (("within", "tab:blue", "within the bound"),
                                  ("beyond", "tab:red", "beyond the bound")):
            xy = p[key]
            if xy:
                ax.scatter([x * 1e3 for x, _ in xy], [y * 1e3 for _, y in xy], s=9,
                           alpha=alpha, color=colour, edgecolors="none",
                           label="%s: n=%d (%.0f %%)" % (what, len(xy), 100.0 * len(xy) / n))
        span = (lo * 1e3 / 1.2, hi * 1e3 * 1.2) if log else (min(0, lo) * 1e3, hi * 1e3 * 1.05)
        ax.plot(span, span, color="black", lw=1, label="delay = bound")
        if log:
            ax.set_xscale("log")
            ax.set_yscale("log")
            for axis in (ax.xaxis, ax.yaxis):
                # 1, 2, 5 x 10^k as plain numbers: ms read off without exponents
                axis.set_major_locator(matplotlib.ticker.LogLocator(subs=(1, 2, 5)))
                axis.set_major_formatter(matplotlib.ticker.FormatStrFormatter("%g"))
                axis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.set_xlim(*span)
        ax.set_ylim(*span)
        ax.set_aspect("equal")
        rs = p["rounds"]
        per = p["per_record_s"]
        ax.set_title("%s: %s, n=%d\ntime per record %s" % (
            m, "round %d" % rs[0] if len(rs) == 1 else "%d rounds pooled" % len(rs), n,
            "%.3g ms" % (per[0] * 1e3) if per[0] == per[1]
            else "%.3g-%.3g ms" % (per[0] * 1e3, per[1] * 1e3)),
            fontsize=10)
        ax.set_xlabel("bound: (records pending at its store + 1) x time per record, ms")
        ax.set_ylabel("delay: store to console, ms")
        ax.grid(True, which="both", alpha=0.3)
        leg = ax.legend(fontsize=8, loc="lower right", markerscale=2)
        for h in leg.legend_handles if hasattr(leg, "legend_handles") else leg.legendHandles:
            h.set_alpha(1)
    fig.suptitle("Emergency records: store-to-console delay against the bound", fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


_RUN_DIR = re.compile(r"(%s)(?:-(\d+))?" % "|".join(MODES))


def load_rounds(root):
    """The runs of a benchmark directory, by round: [{"round": r, "modes":
    {mode: figures}, "verdicts": {mode: {"verdict", "problems"}}}] from
    its <mode>-<round>/ (a directory of one round before rounds: <mode>/).
    A run that gave no figures (a guest that hung before the stressor
    saved its stats, a damaged histogram) is a problem of its verdict."""
    rounds = {}
    for name in sorted(os.listdir(root)):
        m = _RUN_DIR.fullmatch(name)
        if not m or not os.path.isdir(os.path.join(root, name)):
            continue
        mode, r = m.group(1), int(m.group(2) or 1)
        rd = rounds.setdefault(r, {"round": r, "modes": {}, "verdicts": {}})
        try:
            with open(os.path.join(root, name, "verdict.json")) as f:
                v = json.load(f)
            verdict = {"verdict": v.get("verdict", "?"), "problems": list(v.get("problems", []))}
        except (OSError, ValueError):
            verdict = {"verdict": "none", "problems": ["no verdict.json"]}
        try:
            rd["modes"][mode] = run_figures(os.path.join(root, name))
        except (OSError, ValueError) as e:
            verdict["problems"].append("no figures: %s" % e)
            if verdict["verdict"] == "pass":
                verdict["verdict"] = "no figures"
        rd["verdicts"][mode] = verdict
    return [rounds[r] for r in sorted(rounds)]


# What a run's figures hold for the pictures only, not in bench.json
_NOT_IN_JSON = ("hists", "emergency_rows")
# The pictures report() draws: (file name, function)
PICTURES = (("latency-cdf.png", plot_cdfs), ("emergency-bound.png", plot_emergency_bound))


def report(root, meta, rounds=None):
    """Write bench.md, bench.json (per round each run's figures and the
    ratios, and the summary over rounds) and the PICTURES it can draw
    (latency-cdf.png; emergency-bound.png where runs have emergency
    records) into the benchmark directory `root`.  Returns (the
    markdown, rounds, the file names of the pictures it drew: none
    without matplotlib)."""
    rounds = load_rounds(root) if rounds is None else rounds
    summary = summarize(rounds)
    md = markdown(rounds, summary, meta)
    with open(os.path.join(root, "bench.md"), "w") as f:
        f.write(md)
    slim = [{"round": r["round"], "verdicts": r.get("verdicts", {}),
             "modes": {m: {k: v for k, v in fig.items() if k not in _NOT_IN_JSON}
                       for m, fig in r["modes"].items()},
             "ratios": x["ratios"]} for r, x in zip(rounds, summary["rounds"])]
    with open(os.path.join(root, "bench.json"), "w") as f:
        json.dump({"meta": meta, "rounds": slim,
                   "summary": {k: summary[k] for k in ("latency", "ratios", "low_samples")}},
                  f, indent=1)
        f.write("\n")
    return md, rounds, [name for name, plot in PICTURES
                        if plot(rounds, os.path.join(root, name))]


def main(argv):
    """python3 -m analysis.consolebench DIR: the report of a benchmark
    directory again (old ones too), with the meta of its bench.json."""
    import sys
    if len(argv) != 2 or not os.path.isdir(argv[1]):
        sys.stderr.write("usage: python3 -m analysis.consolebench results/bench-console-TIME\n")
        return 2
    try:
        with open(os.path.join(argv[1], "bench.json")) as f:
            meta = json.load(f).get("meta") or {}
    except (OSError, ValueError):
        meta = {}
    md = report(argv[1], meta)[0]
    sys.stdout.write(md)
    return 0


if __name__ == "__main__":
    import sys
    sys.exit(main(sys.argv))
