"""Small bounded-memory helpers: log histograms for latency distributions."""

import math


class LogHist:
    """Histogram with 8 buckets per power of two (about 9 % resolution).
    Memory is O(number of occupied buckets), never O(samples)."""

    SUB = 8

    def __init__(self):
        self.n = 0
        self.sum = 0.0
        self.min = None
        self.max = None
        self.buckets = {}

    def add(self, v):
        if v < 0:
            v = 0.0
        self.n += 1
        self.sum += v
        if self.min is None or v < self.min:
            self.min = v
        if self.max is None or v > self.max:
            self.max = v
        b = -1 if v < 1.0 else int(math.log2(v) * self.SUB)
        self.buckets[b] = self.buckets.get(b, 0) + 1

    def _bucket_value(self, b):
        if b < 0:
            return 0.5
        return 2.0 ** ((b + 0.5) / self.SUB)

    def quantile(self, q):
        if not self.n:
            return None
        want = q * self.n
        acc = 0
        for b in sorted(self.buckets):
            acc += self.buckets[b]
            if acc >= want:
                v = self._bucket_value(b)
                return min(max(v, self.min), self.max)
        return self.max

    def summary(self, unit="us"):
        if not self.n:
            return {"count": 0, "unit": unit}
        r = lambda x: round(x, 3)
        return {
            "count": self.n, "unit": unit,
            "min": r(self.min), "mean": r(self.sum / self.n),
            "p50": r(self.quantile(0.5)), "p90": r(self.quantile(0.9)),
            "p99": r(self.quantile(0.99)), "max": r(self.max),
        }
