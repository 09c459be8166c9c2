"""The stressor's latency histograms, as the console benchmark reads them.

stats.txt (docs/stressor.md, `stats`) holds one histogram line per
context and per CPU: log-linear buckets, 32 per power of two (the
stressor's older stats: log2 buckets).  Hist is one histogram and the
figures read off it; read_latency() reads the `latency ctx=` lines of a
file, latency_figures() their p50, p99, p99.9 and max per context.
"""

import math
import re
from fractions import Fraction


CONTEXTS = ("task", "hardirq", "nmi", "emerg", "panic")
# The latency figures of a context: (key, name, quantile; None: max_ns)
FIGURES = (("p50_ns", "p50", Fraction(1, 2)), ("p99_ns", "p99", Fraction(99, 100)),
           ("p99_9_ns", "p99.9", Fraction(999, 1000)), ("max_ns", "max", None))


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
