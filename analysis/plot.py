"""`plot` subcommand: ownership timeline picture (matplotlib, Agg, PNG).

One row per (console, CPU); a bar for every ownership interval, coloured by
priority, hatched for the printer thread; handover acquires (green
triangles), hostile takeovers (red X), handover timeouts (orange dots),
violations (red vertical lines) and trace loss (grey band) are marked.

It draws what `check -o` wrote (analysis.json and intervals.jsonl,
intervals.py) and never runs the analysis."""

import os
import sys

from .intervals import read_results

PRIO_COLOR = {"none": "#bbbbbb", "normal": "#4c72b0", "emergency": "#dd8452",
              "panic": "#c44e52"}

# the window drawn around a seq: from this long before its first event
# to this long after it
SEQ_BEFORE, SEQ_AFTER = 0.0005, 0.002


def seq_time(model, seq):
    """The time of the first event of record seq, or None."""
    for e in model.events():
        if e.seq == seq:
            return e.ts
    return None


def in_window(model, start, end, max_intervals):
    """The intervals and marks inside [start, end] (None: open), at most
    max_intervals intervals and twice as many marks (violations and trace
    loss always), in the order the model emitted them."""
    data = {"intervals": [], "marks": [], "skipped": 0}

    def inside(t0, t1):
        return (start is None or t1 >= start) and (end is None or t0 <= end)
    for iv in model.intervals():
        if not inside(iv[6], iv[7]):
            continue
        if len(data["intervals"]) >= max_intervals:
            data["skipped"] += 1
            continue
        data["intervals"].append(tuple(iv))
    for m in model.marks():
        kind, ts = m[0], m[3]
        if inside(ts, ts) and (len(data["marks"]) < max_intervals * 2 or
                               kind in ("violation", "trace-loss")):
            data["marks"].append(tuple(m[:5]))
    return data


def collect(results, start=None, end=None, max_intervals=20000, seq=None):
    """The ownership intervals and marks inside [start, end], or with
    `seq` (and no start/end) around the first event of that seq
    (SEQ_BEFORE before, SEQ_AFTER after); returns (data, verdict), (None,
    None) when the seq does not occur.  intervals.ModelFileError when
    the files are not there."""
    verdict, model = read_results(results)
    seq_ts = None
    if seq is not None and start is None and end is None:
        seq_ts = seq_time(model, seq)
        if seq_ts is None:
            return None, None
        start, end = seq_ts - SEQ_BEFORE, seq_ts + SEQ_AFTER
    data = in_window(model, start, end, max_intervals)
    data["window"] = [start, end]
    data["seq_ts"] = seq_ts
    return data, verdict


def draw(data, verdict, path, title=None):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    rows = sorted({(i[0], i[1]) for i in data["intervals"]} |
                  {(m[1], m[2]) for m in data["marks"] if m[1] is not None and m[2] is not None})
    index = {r: k for k, r in enumerate(rows)}
    h = max(2.5, 0.45 * len(rows) + 1.5)
    fig, ax = plt.subplots(figsize=(14, h))
    for con, cpu, ctx, thread, prio, how, t0, t1, endhow in data["intervals"]:
        y = index[(con, cpu)]
        ax.broken_barh([(t0, max(t1 - t0, 1e-7))], (y - 0.35, 0.7),
                       facecolors=PRIO_COLOR.get(prio, "#888888"),
                       hatch="//" if thread else None, edgecolor="black", linewidth=0.2)
    xs = {"handover": ([], []), "hostile": ([], []), "timeout": ([], [])}
    for kind, con, cpu, ts, info in data["marks"]:
        if kind in xs and (con, cpu) in index:
            xs[kind][0].append(ts)
            xs[kind][1].append(index[(con, cpu)])
        elif kind == "violation":
            ax.axvline(ts, color="red", linewidth=1.0, linestyle="--")
            ax.text(ts, len(rows) - 0.4, " " + str(info), color="red", fontsize=7,
                    rotation=90, va="top")
        elif kind == "trace-loss":
            ax.axvline(ts, color="grey", linewidth=3, alpha=0.5)
    ax.scatter(*xs["handover"], marker=">", color="green", s=30, zorder=3, label="handover")
    ax.scatter(*xs["hostile"], marker="X", color="red", s=40, zorder=3, label="hostile takeover")
    ax.scatter(*xs["timeout"], marker="o", color="orange", s=20, zorder=3, label="handover timeout")
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels(["%s cpu%d" % r for r in rows])
    ax.set_ylim(-0.8, max(len(rows) - 0.2, 0.8))
    ax.ticklabel_format(axis="x", useOffset=False)
    ax.set_xlabel("trace time [s]")
    handles = [Patch(facecolor=c, label=p) for p, c in PRIO_COLOR.items() if p != "none"]
    handles.append(Patch(facecolor="white", edgecolor="black", hatch="//", label="printer thread"))
    h2, _ = ax.get_legend_handles_labels()
    ax.legend(handles=handles + h2, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8)
    vtxt = verdict["verdict"].upper() if verdict else "?"
    t = title or "console ownership timeline - verdict %s" % vtxt
    if data["skipped"]:
        t += " (%d intervals not drawn; use --start/--end)" % data["skipped"]
    ax.set_title(t, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def run_plot(a):
    """Exit 0, or 1 when the seq does not occur in the trace;
    intervals.ModelFileError when the files are not there."""
    data, verdict = collect(a.results, a.start, a.end, a.max_intervals, a.seq)
    out = a.output
    if out is None:
        base = a.results if os.path.isdir(a.results) else os.path.dirname(a.results)
        out = os.path.join(base or ".", "timeline.png")
    if data is None:
        sys.stderr.write("analysis plot: seq %d does not occur in the trace\n" % a.seq)
        return 1
    draw(data, verdict, out)
    print("wrote %s (%d intervals, %d marks)" % (out, len(data["intervals"]), len(data["marks"])))
    return 0
