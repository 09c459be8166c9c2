"""The producer ledger: the stressor's records per producer, as the
serial log shows them (the producer-gap and producer-order rules).

The stressor numbers each producer's records n = 0, 1, 2, ... and tags
each with a checksum (interfaces.md section 3).  `Producers` owns, for
the serial alignment (serialcheck.py), everything it knows per producer:

  * the ledger: which numbers are on the log, with the crc of the copy
    seen first (`ProducerLog`);
  * what stats.txt says each producer attempted and stored, and so what
    printk() refused;
  * per version 2 writer, the highest n seen so far in trace order
    (`order`) and on the log before the trace (`order_before`).

Invariants: a number is entered once, with the crc of its first copy
(a second copy is the caller's business: a repeat or a forgery); the
ledger only grows; the numbers the console dropped or that were already
reported (serial-missing, serial-order) are in the analyzer's
`dropped_producer`, which `account()` adds to, and are never a gap.
This module judges (a gap, a writer out of order) and returns what it
found; the serial checker reports it, with the line and attempt it is
about.
"""

from array import array

from .pstress import parse_pstress, producer_name, pstress_id


class Producers:
    def __init__(self, stats, dropped):
        # stats: the serial checker's counters (shared: one summary);
        # dropped: Analyzer.dropped_producer, producer -> set of n
        self.stats = stats
        self.dropped = dropped
        self.ledger = {}          # producer -> ProducerLog: its records on the log
        self.order = {}           # writer -> (highest n, its seq) in trace order, then after it
        self.order_before = {}    # writer -> highest n on the log before the trace
        self.expected_run = None
        self.stats_mismatch = None    # why stats.txt is not this run's
        self.expected = {}        # producer -> (attempted, stored) from stats.txt
        self.refused = {}         # producer -> records printk() refused

    def set_expected(self, expected):
        self.expected = dict(expected)
        self.expected_run = next(iter(self.expected))[0] if self.expected else None
        self.refused = {p: a - st for p, (a, st) in self.expected.items() if a > st}

    def log(self, prod, n):
        """prod's ProducerLog (made on its first record, n)."""
        pl = self.ledger.get(prod)
        if pl is None:
            pl = self.ledger[prod] = ProducerLog(0 if prod in self.expected else n)
        return pl

    def first_crc(self, prod, n):
        """crc of (prod, n)'s copy on the log, or None."""
        pl = self.ledger.get(prod)
        return pl.crc(n) if pl is not None else None

    def place(self, prod, n, crc):
        """Note (prod, n) placed by the trace; returns the crc of the copy
        noted before (None: this is the first)."""
        return self.log(prod, n).place(n, crc)

    def note(self, prod, n, crc):
        """(prod, n) is on the log: noted unless it is already."""
        pl = self.log(prod, n)
        if pl.crc(n) is None:
            pl.add(n, crc)

    def note_text(self, text):
        """A stressor record placed out of order: on the log all the same."""
        p = parse_pstress(text) if text else None
        if p is not None and p[0] is not None:
            self.note(p[0], p[1], crc_field(text))

    def account(self, text):
        """A record already reported missing/out of order: do not report
        its producer number again as a gap."""
        p = parse_pstress(text) if text else None
        if p is not None and p[0] is not None:
            self.dropped.setdefault(p[0], set()).add(p[1])

    def never_produced(self, prod, n):
        """stats.txt of the run says the stressor never made (prod, n)."""
        if prod[0] != self.expected_run:
            return False
        exp = self.expected.get(prod)
        return exp is None or n >= exp[0]

    def highs(self):
        """producer -> highest n on the log so far."""
        return {p: pl.high for p, pl in self.ledger.items()}

    # producer-order: a version 2 producer (run, cpu, ctx, writer) has a
    # single writer, which prints its records one after the other, so
    # they get their seqs, and the console prints them, in n order
    # (interfaces.md section 3).  Checked in the order the trace tells:
    # the serial console's commits (seq order, whatever the log shows:
    # its order is serial-order's) and then the records stored after its
    # last traced commit; and, for lines no traced record explains, in
    # the log's order.  A reprint after lost ownership is one commit; a
    # seq committed twice (the 32-bit race) is not a step back.  Version
    # 1 producers could have several writers: not checked.

    def writer_order(self, text, seq, before=False):
        """The message of a producer-order violation by the record `text`
        (seq None: a line of the log no traced record explains; `before`:
        one before the trace, checked on its own), or None."""
        p = pstress_id(text)
        if p is None or len(p[0]) != 4:
            return None
        prod, n = p
        self.stats["writer_order_checked"] += 1
        last = self.order_before if before else self.order
        prev = last.get(prod)
        if prev is None or n > prev[0]:
            last[prod] = (n, seq)
            return None
        if n == prev[0] and (seq is None or seq == prev[1]):
            return None
        if seq is not None and prev[1] is not None:
            return ("writer %s: n=%d got seq %d after n=%d got seq %d: one writer prints its "
                    "records one after the other, in n order"
                    % (producer_name(prod), n, seq, prev[0], prev[1]))
        return ("writer %s: n=%d on the serial log after n=%d (outside the trace): one "
                "writer prints its records one after the other, in n order"
                % (producer_name(prod), n, prev[0]))

    def check_stats_run(self):
        """stats.txt must be of the run on the log: with no stressor
        record of its run there but records of others, it is another run's
        and says nothing about this one (not used; incomplete)."""
        if not self.expected or not self.ledger:
            return
        runs = {p[0] for p in self.ledger}
        if self.expected_run in runs:
            return
        self.stats_mismatch = ("stats.txt is of stressor run %d, but the stressor records on the "
                               "serial log are of run %s: stats.txt not used"
                               % (self.expected_run, ",".join(map(str, sorted(runs)))))
        self.expected = {}
        self.refused = {}

    def gaps(self, full, printable, covered=None):
        """producer-gap: the messages of the gaps, in producer order.  The
        stressor numbers each producer's records n = 0, 1, 2, ... without
        a gap (interfaces.md section 3), so every number it made is on the
        serial log - once: that is the identity rules' business - unless
        the console dropped it (a dropped count covers its seq), it was
        reported already (serial-missing), or printk() refused it
        (stats.txt: attempted > stored; which ones is not known, so that
        many of the first missing numbers).  The trace's data-less records
        bound nothing here: a refused printk() leaves two when both of its
        reservations got a descriptor, and none once the descriptor ring
        is full up to a record still reserved.
        Checked from n = 0 for a producer of stats.txt, else from its
        lowest n on the log, up to attempted - 1 (stats.txt) when the whole
        run was checked (`full`: the records stored after the last traced
        commit were checked too) and the stressor's records were
        printable, else up to its highest n on the log; and when the trace
        ended before the run, only up to the highest n placed while the
        trace covered the log (`covered`: producer -> that n).  Not after
        trace loss (the caller's: the dropped counts of the lost part are
        unknown)."""
        use_stats = full and bool(self.expected) and printable
        prods = set(self.ledger)
        if use_stats:
            prods.update(p for p, (attempted, _) in self.expected.items() if attempted > 0)
        dropped = self.dropped
        found = []
        for prod in sorted(prods):
            pl = self.ledger.get(prod)
            exp = self.expected.get(prod)
            lo = 0 if exp is not None else pl.low
            hi = pl.high if pl is not None else -1
            if use_stats and exp is not None:
                hi = max(hi, exp[0] - 1)
            if covered is not None:
                hi = min(hi, covered.get(prod, -1))
            if hi < lo:
                continue
            acc = dropped.get(prod, ())
            budget = self.refused.get(prod, 0)
            gaps = []
            for n in (pl.unseen(lo, hi) if pl is not None else range(lo, hi + 1)):
                if n in acc:
                    continue
                if budget:
                    budget -= 1
                    self.stats["refused_by_printk"] = self.stats.get("refused_by_printk", 0) + 1
                    continue
                if gaps and gaps[-1][1] == n - 1:
                    gaps[-1][1] = n
                else:
                    gaps.append([n, n])
            for a, b in gaps:
                found.append("producer %s: n=%d..%d never appeared on the serial log (not "
                             "counted as dropped; producer reached n=%s)"
                             % (producer_name(prod), a, b,
                                pl.high if pl is not None else "none on the log"))
        return found


def crc_field(text):
    """The k= field of a stressor record's text, as a number (None when
    it has none that parses)."""
    j = text.find(" k=")
    try:
        return int(text[j + 3:j + 11], 16) if j > 0 else None
    except ValueError:
        return None


class ProducerLog:
    """The numbers n of one stressor producer on the serial log and the
    crc (k=) of each one's copy: a second copy of a number is a repeat
    (same crc) or a record the stressor never made (another crc).  Dense
    arrays from the first number on (a producer's numbers are), a dict
    for numbers far from them."""

    __slots__ = ("base", "state", "crcs", "far", "low", "high")
    FAR = 1 << 20

    def __init__(self, base):
        self.base = base
        self.state = bytearray()      # 1: on the log
        self.crcs = array("I")
        self.far = {}
        self.low = None
        self.high = None

    def crc(self, n):
        """crc of n's copy on the log (-1 for none that parses), or None."""
        i = n - self.base
        if 0 <= i < len(self.state):
            return self.crcs[i] if self.state[i] else None
        return self.far.get(n)

    def place(self, n, crc):
        """Note n's copy unless one is noted already; returns the crc of
        that one (None: this is the first)."""
        i = n - self.base
        state = self.state
        if 0 <= i < len(state) and crc is not None:
            if state[i]:
                return self.crcs[i]
            state[i] = 1
            self.crcs[i] = crc
            if n > self.high:
                self.high = n
            elif n < self.low:
                self.low = n
            return None
        first = self.crc(n)
        if first is None:
            self.add(n, crc)
        return first

    def add(self, n, crc):
        crc = -1 if crc is None else crc
        i = n - self.base
        if 0 <= i < len(self.state) + self.FAR and crc >= 0:
            if i >= len(self.state):
                # grow by at least half: one record at a time is the usual
                grow = max(i + 1 - len(self.state), len(self.state) // 2, 64)
                self.state.extend(bytes(grow))
                self.crcs.extend(array("I", bytes(4 * grow)))
            self.state[i] = 1
            self.crcs[i] = crc
        else:
            self.far[n] = crc
        if self.low is None or n < self.low:
            self.low = n
        if self.high is None or n > self.high:
            self.high = n

    def unseen(self, lo, hi):
        """The numbers lo..hi not on the log, in order."""
        far = self.far
        base, state = self.base, self.state
        for n in range(lo, min(hi + 1, base)):
            if n not in far:
                yield n
        i = max(lo - base, 0)
        end = min(hi - base + 1, len(state))
        while i < end:
            j = state.find(0, i, end)
            if j < 0:
                break
            if j + base not in far:
                yield j + base
            i = j + 1
        for n in range(max(lo, base + len(state)), hi + 1):
            if n not in far:
                yield n
