"""`plot` subcommand: ownership timeline picture (matplotlib, Agg, PNG).

One row per (console, CPU); a bar for every ownership interval, coloured by
priority, hatched for the printer thread; handover acquires (green
triangles), hostile takeovers (red X), handover timeouts (orange dots),
violations (red vertical lines) and trace loss (grey band) are marked."""

import os
import sys

from .api import analyse

PRIO_COLOR = {"none": "#bbbbbb", "normal": "#4c72b0", "emergency": "#dd8452",
              "panic": "#c44e52"}


# before the seq is found, intervals and marks that end this long before
# the latest one are let go (the window drawn is 2.5 ms; the chain puts
# events later than listed by well under this)
SEQ_SLACK = 1.0


def collect(results, kw, start=None, end=None, max_intervals=20000, seq=None):
    """One run of the analysis: the ownership intervals and marks the model
    emits inside [start, end], or with `seq` (and no start/end) around the
    first event of that seq (0.5 ms before, 2 ms after); returns (data,
    verdict), (None, None) when the seq does not occur."""
    from collections import deque
    data = {"intervals": [], "marks": [], "skipped": 0, "seq_ts": None}
    window = [start, end]
    by_seq = seq is not None and start is None and end is None
    # by_seq: kept until the seq's time is known, then filtered
    pending = {"intervals": deque(), "marks": deque(), "latest": None}

    def inside(t0, t1):
        if window[0] is not None and t1 < window[0]:
            return False
        if window[1] is not None and t0 > window[1]:
            return False
        return True

    def keep(kind, item, t1):
        if pending["latest"] is None or t1 > pending["latest"]:
            pending["latest"] = t1
        q = pending[kind]
        q.append((t1, item))
        while q and q[0][0] < pending["latest"] - SEQ_SLACK:
            q.popleft()

    def add_interval(item):
        if not inside(item[6], item[7]):
            return
        if len(data["intervals"]) >= max_intervals:
            data["skipped"] += 1
            return
        data["intervals"].append(item)

    def add_mark(item):
        kind, ts = item[0], item[3]
        if not inside(ts, ts):
            return
        if len(data["marks"]) < max_intervals * 2 or kind in ("violation", "trace-loss"):
            data["marks"].append(item)

    class Facts:
        def interval(self, con, cpu, ctx, thread, prio, how, t0, t1, endhow):
            item = (con, cpu, ctx, thread, prio, how, t0, t1, endhow)
            if by_seq and data["seq_ts"] is None:
                keep("intervals", item, t1)
            else:
                add_interval(item)

        def mark(self, kind, con, cpu, ts, info, line=None):
            item = (kind, con, cpu, ts, info)
            if by_seq and data["seq_ts"] is None:
                keep("marks", item, ts)
            else:
                add_mark(item)

    def on_event(ev, con):
        if data["seq_ts"] is None and ev.fields.get("seq") == str(seq):
            data["seq_ts"] = ev.ts
            window[0] = ev.ts - 0.0005
            window[1] = ev.ts + 0.002
            for _, item in pending["intervals"]:
                add_interval(item)
            for _, item in pending["marks"]:
                add_mark(item)
            pending["intervals"].clear()
            pending["marks"].clear()

    verdict, _ = analyse(results, facts=Facts(), on_event=on_event if by_seq else None, **kw)
    if by_seq and data["seq_ts"] is None:
        return None, None
    data["window"] = window
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


def run_plot(a, kw):
    out = a.output
    if out is None:
        base = a.results if a.results and os.path.isdir(a.results) else "."
        out = os.path.join(base, "timeline.png")
    data, verdict = collect(a.results, kw, a.start, a.end, a.max_intervals, a.seq)
    if data is None:
        sys.stderr.write("analysis plot: seq %d does not occur in the trace\n" % a.seq)
        return 1
    draw(data, verdict, out)
    print("wrote %s (%d intervals, %d marks)" % (out, len(data["intervals"]), len(data["marks"])))
    return 0
