"""The RFC's headline claim, measured: printk() callers stop paying for a
slow console, and emergency output still gets out at once.

One benchmark compares runs of the same workload on the same kernel and
the same emulated UART timing that differ only in how the console is
driven (tools/pns/bench.py makes them):

  nobkl    the NOBKL console (printer thread, atomic emergency output)
  legacy   the same UART registered the old way (console_lock, printing
           from the printk() caller)
  floor    no console output at all (the records are below the console
           loglevel): what printk() costs without any console

Per run it reads what the run left: the stressor's printk() latency
histograms per context (stats.txt, log2 buckets: bucket b counts calls
that took [2^b, 2^(b+1)) ns, bucket 0 also the calls the guest clock
could not resolve), the serial log (records and bytes that reached the
console, `** N printk messages dropped **`) and, where there is one, the
trace analysis (store-to-console delay of emergency records, handovers,
takeovers).  Every figure says how many samples it rests on; ratios are
of figures of the same benchmark, never against a fixed number.
"""

import json
import os
import re

from . import consolelog
from .serial import parse_pstress

MODES = ("nobkl", "legacy", "floor")
CONTEXTS = ("task", "hardirq", "nmi", "emerg", "panic")
PERCENTILES = (50, 99, 100)

# the stressor's stats (docs/stressor.md); max_ns since the histograms
# have a maximum; the per-CPU lines (latency_cpu) are not read
_LAT = re.compile(r"^latency ctx=(\w+) count=(\d+)(?: max_ns=\d+)? log2_ns:(.*)$")


def read_latency(stats_path):
    """{ctx: {bucket: count}} from a stressor stats.txt."""
    hists = {}
    with open(stats_path) as f:
        for line in f:
            m = _LAT.match(line.strip())
            if not m:
                continue
            h = {}
            for item in m.group(3).split():
                b, n = item.split(":")
                h[int(b)] = int(n)
            if sum(h.values()) != int(m.group(2)):
                raise ValueError("%s: latency ctx=%s: buckets add up to %d, count says %s"
                                 % (stats_path, m.group(1), sum(h.values()), m.group(2)))
            hists[m.group(1)] = h
    return hists


def percentile_ns(hist, p):
    """The upper bound in ns of the bucket holding the p-th percentile
    (p=100: of the slowest call), or None for an empty histogram.  A
    bound, not a value: the buckets are a factor of two wide."""
    total = sum(hist.values())
    if not total:
        return None
    need = total * p / 100.0
    seen = 0
    for b in sorted(hist):
        seen += hist[b]
        if seen >= need:
            return 2 ** (b + 1)
    return 2 ** (max(hist) + 1)


def latency_figures(hists):
    """{ctx: {"samples": n, "p50_ns": .., "p99_ns": .., "max_ns": ..}}."""
    out = {}
    for ctx in CONTEXTS:
        h = hists.get(ctx) or {}
        n = sum(h.values())
        if not n:
            continue
        p50, p99, pmax = (percentile_ns(h, p) for p in PERCENTILES)
        out[ctx] = {"samples": n, "p50_ns": p50, "p99_ns": p99, "max_ns": pmax}
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


def _median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2] if xs else None


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
        c, st = self.committed, self.stored
        return _median([c[s + 1] - c[s] for s in c
                        if s + 1 in c and s + 1 in st and st[s + 1][0] <= c[s]])

    def throughput(self):
        """Records and bytes per second while the console is busy."""
        per = self.record_time()
        texts = [self.stored[s][1] for s in self.committed if s in self.stored]
        if not per or not texts:
            return None
        mean_len = sum(len(t) + 17 for t in texts) / len(texts)   # "[  sec.usec] " + LF
        return {"record_s": per, "records_per_s": 1.0 / per,
                "bytes_per_s": mean_len / per, "samples": len(texts)}

    def emergency_delays(self):
        """The store-to-console delay of the records stored in emergency
        sections (stressor records x=emerg), each against the time the
        console needed for the records pending when it was stored (stored
        before it, not yet printed) plus itself.  None without such
        records or without the NOBKL console's commits."""
        per = self.record_time()
        if not self.committed or not per:
            return None
        rows = []
        for seq, (t, text) in self.stored.items():
            if " x=emerg " not in " " + text or seq not in self.committed:
                continue
            pending = sum(1 for s, (ts, _) in self.stored.items()
                          if s < seq and ts <= t and self.committed.get(s, float("inf")) > t)
            rows.append((self.committed[seq] - t, (pending + 1) * per))
        if not rows:
            return None
        delays = sorted(d for d, _ in rows)
        pick = lambda q: delays[min(len(delays) - 1, int(q * len(delays)))]  # noqa: E731
        return {"records": len(rows), "per_record_s": per,
                "p50_s": pick(0.5), "p99_s": pick(0.99), "max_s": delays[-1],
                "within_bound": sum(1 for d, bound in rows if d <= bound)}


def run_figures(res):
    """The figures of one benchmark run (a results directory)."""
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
        for name, value in (("throughput", trace.throughput()),
                            ("emergency_delay", trace.emergency_delays())):
            if value:
                fig[name] = value
    if analysis.get("counts"):
        c = analysis["counts"]
        fig["analysis"] = {
            "verdict": analysis.get("verdict"),
            "takeovers": c["takeovers"], "handovers": c["handovers"],
            "store_to_commit": (analysis.get("latency") or {}).get("store_to_commit"),
            "handover_wait": (analysis.get("latency") or {}).get("handover_wait"),
        }
    return fig


def compare(figs):
    """Ratios of the p99 printk() latency per context: legacy / nobkl
    (how much the NOBKL console saves its callers) and nobkl / floor (what
    it still costs them over no console at all)."""
    out = {}
    for ctx in CONTEXTS:
        p = {m: (figs.get(m, {}).get("latency", {}).get(ctx) or {}).get("p99_ns")
             for m in MODES}
        row = {}
        if p["nobkl"] and p["legacy"]:
            row["legacy_over_nobkl_p99"] = p["legacy"] / p["nobkl"]
        if p["nobkl"] and p["floor"]:
            row["nobkl_over_floor_p99"] = p["nobkl"] / p["floor"]
        if row:
            out[ctx] = row
    return out


def _ns(v):
    if v is None:
        return "-"
    for unit, div in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if v >= div:
            return "%.3g %s" % (v / div, unit)
    return "%d ns" % v


def _table(title, head, rows, intro=None):
    """A markdown section: title, optional paragraph, a table."""
    out = ["", "## " + title, ""]
    if intro:
        out += [intro, ""]
    out.append("| " + " | ".join(head) + " |")
    out.append("|" + "---|" * len(head))
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return out


def _ratio(r, key):
    return "%.3g" % r[key] if key in r else "-"


def markdown(figs, ratios, meta):
    """The benchmark as a markdown report."""
    out = ["# Console benchmark: %s" % meta.get("title", ""), ""]
    for k in ("command", "machine", "kernel", "uart", "workload", "duration_s"):
        if k in meta:
            out.append("- %s: %s" % (k, meta[k]))
    for m, v in (meta.get("verdicts") or {}).items():
        if v["verdict"] != "pass":
            out.append("- run %s not clean: %s" % (m, "; ".join(v["problems"]) or v["verdict"]))
    mode = lambda m, what: figs.get(m, {}).get(what)  # noqa: E731
    out += _table("printk() caller latency (upper bounds of log2 buckets)",
                  ("context", "mode", "samples", "p50", "p99", "max"),
                  [(ctx, m, f["samples"], _ns(f["p50_ns"]), _ns(f["p99_ns"]), _ns(f["max_ns"]))
                   for ctx in CONTEXTS for m in MODES
                   for f in [((mode(m, "latency") or {}).get(ctx))] if f])
    out += _table("Ratios of the p99 (same benchmark)",
                  ("context", "legacy / nobkl", "nobkl / floor"),
                  [(ctx, _ratio(r, "legacy_over_nobkl_p99"), _ratio(r, "nobkl_over_floor_p99"))
                   for ctx, r in ratios.items()])
    out += _table("Console output",
                  ("mode", "records on the console", "dropped", "time per record",
                   "records/s", "bytes/s"),
                  [(m, c["records"], c["dropped"]) + (
                      (_ns(t["record_s"] * 1e9), "%.0f" % t["records_per_s"],
                       "%.0f" % t["bytes_per_s"]) if t else ("-", "-", "-"))
                   for m in MODES for c, t in [(mode(m, "console"), mode(m, "throughput"))]
                   if c],
                  "Records on the serial log and dropped notices; throughput while the "
                  "console is busy, from the NOBKL console's commits in the trace (the "
                  "legacy console of 6.1 traces no output time).")
    out += _table("Emergency records: store to console",
                  ("mode", "records", "time per record", "p50", "p99", "max",
                   "within the bound"),
                  [(m, d["records"], _ns(d["per_record_s"] * 1e9), _ns(d["p50_s"] * 1e9),
                    _ns(d["p99_s"] * 1e9), _ns(d["max_s"] * 1e9),
                    "%d of %d" % (d["within_bound"], d["records"]))
                   for m in MODES for d in [mode(m, "emergency_delay")] if d],
                  "Each record stored in an emergency section, from its store to its "
                  "commit by the console, against the time the console needed for the "
                  "records pending when it was stored plus itself (at the run's median "
                  "time per record).")
    a = mode("nobkl", "analysis")
    if a:
        tk, ho = a["takeovers"], a["handovers"]
        out += ["", "## NOBKL console: ownership (trace analysis, verdict %s)" % a["verdict"], "",
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


def plot_cdfs(figs, path):
    """One panel per context: the CDF of printk() latency of each mode
    (steps at the log2 bucket bounds).  Returns False without matplotlib."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    ctxs = [c for c in CONTEXTS if any((figs.get(m, {}).get("hists") or {}).get(c)
                                       for m in MODES)]
    fig, axes = plt.subplots(1, len(ctxs), figsize=(4.5 * len(ctxs), 3.6), squeeze=False)
    for ax, ctx in zip(axes[0], ctxs):
        for m in MODES:
            h = (figs.get(m, {}).get("hists") or {}).get(ctx)
            if not h:
                continue
            total = float(sum(h.values()))
            xs, ys, seen = [], [], 0
            for b in sorted(h):
                seen += h[b]
                xs.append(2 ** (b + 1))
                ys.append(seen / total)
            ax.step(xs, ys, where="post", label="%s (n=%d)" % (m, total))
        ax.set_xscale("log")
        ax.set_xlabel("printk() latency, ns (bucket upper bound)")
        ax.set_title(ctx)
        ax.set_ylim(0, 1.02)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    axes[0][0].set_ylabel("fraction of calls")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True
