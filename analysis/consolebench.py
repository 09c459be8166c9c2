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
is one, what the run's trace analysis wrote (analysis.json and the
intervals file next to it: the records' stores and the console's
commits, for the throughput and the store-to-console delay of emergency
records; handovers, takeovers).  It never runs the analysis: a run whose
files are missing or of an analysis that did not record what is read
is an error naming `make recheck RESULTS=DIR`, which writes them.

Every figure says how many samples it rests on, and a context with
fewer than MIN_SAMPLES calls in a run is flagged; ratios are of figures
of the same round, never against a fixed number, and the report gives
the median and the range of each figure and each ratio over the rounds.

The parts: consolebench_runs.py reads a run's figures (and all runs of a
benchmark directory), consolebench_hist.py the stressor's histograms,
consolebench_plots.py draws the pictures; this module compares the
modes (ratios within a round, the spread over rounds) and writes the
report.
"""

import json
import os
import statistics

from . import emergency_report
from .consolebench_hist import CONTEXTS, FIGURES, latency_figures, parse_hist_line, read_latency
from .consolebench_plots import emergency_points, plot_cdfs, plot_emergency_bound
from .consolebench_runs import (MODES, ConsoleTrace, RunFilesError, console_output,
                                load_rounds)

# The benchmark's names, from the modules of its parts: the harness
# (tools/pns/bench.py) and the tests import this module only.
__all__ = ["MODES", "CONTEXTS", "FIGURES", "MIN_SAMPLES", "read_latency", "parse_hist_line",
           "latency_figures", "console_output", "ConsoleTrace", "RunFilesError",
           "load_rounds", "compare",
           "summarize", "markdown", "emergency_points", "plot_cdfs", "plot_emergency_bound",
           "report", "main"]

# Ratios within a round: (key, numerator mode, denominator mode), of
# these figures (the max is one call: no ratio)
RATIOS = (("legacy_over_nobkl", "legacy", "nobkl"), ("nobkl_over_floor", "nobkl", "floor"))
RATIO_FIGURES = ("p50_ns", "p99_ns", "p99_9_ns")
# calls per context and run below which the report flags the figures
MIN_SAMPLES = 2000


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
    have in common, then every one of them over all runs, the furthest
    past it first, each with what it waited for."""
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
    if late:
        out += ["", "All %d, the furthest past their bound first:" % len(late), ""]
        out += ["- %s-%d %s" % (m, r, emergency_report.describe(x)) for m, r, x in late]
    return out


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
    try:
        md = report(argv[1], meta)[0]
    except RunFilesError as e:
        sys.stderr.write("consolebench: %s\n" % e)
        return 2
    sys.stdout.write(md)
    return 0


if __name__ == "__main__":
    import sys
    sys.exit(main(sys.argv))
