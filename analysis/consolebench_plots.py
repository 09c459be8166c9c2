"""The console benchmark's pictures: the latency CDFs per context
(latency-cdf.png) and each emergency record's delay against its bound
(emergency-bound.png).  Each returns False when it cannot draw
(matplotlib missing, nothing to draw).
"""

import math

from .consolebench_hist import CONTEXTS, Hist
from .consolebench_runs import MODES



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
