"""Stressor records in fragments, as printk() stored them (the
cont-fragments rule).

With its `cont` shape the stressor prints every other record of a
producer in 2 to 4 fragments, the first with printk(), the others with
KERN_CONT as pr_cont() does (docs/stressor.md; the text is
docs/interfaces.md section 3):

  pscont v=1 r=<run> c=<cpu> x=<ctx> w=<writer> n=<n> f=<i>/<count> l=<len> <payload> k=<crc>;

printk() appends a KERN_CONT fragment to the last record stored when
that one has the fragment's caller id and is not finalized yet (6.1 and
6.12 alike); a record reserved in between finalizes it, and the fragment
then begins a record of its own.  Which of the two happens is the
kernel's timing, so both are accepted; a stored record may hold the
fragments of one record, of part of it, or of several producers'.
Whatever the timing:

  * every fragment is stored exactly once (a repeat is a violation);
  * a producer's fragments are stored in the order its single writer
    printed them, record by record and index by index: a fragment's
    place is (seq of the stored record that holds it, its offset in
    that record's text), and it comes after every earlier fragment of
    its producer (one stored later is out of order);
  * none is missing, except as many as printk() refused (stats.txt's
    `cont` lines; which ones is not known, so that many of the first
    missing), and except where the trace did not see them: from each
    producer's first fragment in the trace on, or from n=0 f=0 when the
    trace stored the run's start banner; up to its last fragment in
    the trace, or to the end of its last record (to stats.txt's
    `records`, with it) when the trace stored the run's end banner;
    nothing is claimed missing after trace loss;
  * every fragment proves itself: its payload is the one its header
    generates and k= is the crc of all before it (a fragment that does
    not is damaged, as printk() must store the text it was given).

The input is the trace's stores (nobkl_store with the record's text; a
continuation stores the record again, extended, so the longest text of
a seq is the record's).  What the console printed of them is the serial
rules' business: they hold every printed line to the stored text.

`Fragments` follows the stores and hands what it finds (a `Finding`) to
the units of this module, which only judge: the stage places, the units
report (as serialcheck.py and serial_rules.py divide the work).  The
stores are taken in seq order, each once its seq is WINDOW below the
highest stored (a continuation comes right after its record, and the
trace lists the stores of the CPUs by their clocks); so the state is
one position per producer and the fragments found missing.
"""

import re
from collections import namedtuple

from .rules import consumers, unit
from .pstress import crc32_le_kernel, producer_name, pstress2_payload

TAG = "pscont "
VERSION = 1
MIN_FRAGMENTS = 2      # fragments of record n: MIN_FRAGMENTS + n % SPREAD
SPREAD = 3
WINDOW = 20000         # a store is taken once its seq is this far below the highest
MISSING_MAX = 100000   # missing fragments followed at most per producer

_FRAG_RE = re.compile(
    r"pscont v=1 r=([0-9]+) c=([0-9]+) x=([A-Za-z_][A-Za-z0-9_]*) w=([A-Za-z_][A-Za-z0-9_]*) "
    r"n=([0-9]+) f=([0-9]+)/([0-9]+) l=([0-9]+) ([0-9A-Za-z]*) k=([0-9a-f]{8});")
_BANNER_RE = re.compile(r"printk_stress: (start|end) run=([0-9]+) ")

# A fragment found in a stored record: its producer (run, cpu, ctx,
# writer), record n, index i of count, and its place: the stored
# record's seq, the offset in its text, and at = (ts, trace line, cpu)
# of the store that holds it
Fragment = namedtuple("Fragment", "prod n i count seq offset at")

# What the stage hands the units: kind (a fact of the registry),
# the fragment it is about (for `missing`, the producer's last in the
# trace, or one with only the producer when there is none), and the
# details of the kind:
#   cont:damaged      text: the damaged fragment's text
#   cont:repeat       last: the producer's last fragment before it
#   cont:out-of-order last: the later fragment stored before it
#   cont:missing      gap: [(n, i), ...] the fragments never stored
Finding = namedtuple("Finding", "kind frag text last gap")


def fragment_count(n):
    """The number of fragments of record n (docs/interfaces.md section 3)."""
    return MIN_FRAGMENTS + n % SPREAD


def fragment_text(run, cpu, ctx, writer, n, i, length=16):
    """Fragment i of record n as the stressor prints it (with its ';',
    without the newline that ends the last one)."""
    header = "pscont v=%d r=%d c=%d x=%s w=%s n=%d f=%d/%d l=%d " % (
        VERSION, run, cpu, ctx, writer, n, i, fragment_count(n), length)
    body = header + pstress2_payload(header, length)
    return "%s k=%08x;" % (body, crc32_le_kernel(body.encode("latin-1")))


def parse(text, seq=None, at=None):
    """The fragments in a stored record's text, in order: a Fragment
    for each that proves itself, and (offset, text, why) for each
    `pscont ` that does not (damaged).  Text between fragments is
    another caller's and is passed over."""
    out = []
    pos = text.find(TAG)
    while pos >= 0:
        m = _FRAG_RE.match(text, pos)
        why = _damage(m)
        if why is None:
            r, c, x, w, n, i, count = m.group(1, 2, 3, 4, 5, 6, 7)
            out.append(Fragment((int(r), int(c), x, w), int(n), int(i), int(count),
                                seq, pos, at))
            pos = text.find(TAG, m.end())
        else:
            end = m.end() if m is not None else text.find(";", pos) + 1 or len(text)
            out.append((pos, text[pos:end], why))
            pos = text.find(TAG, pos + len(TAG))
    return out


def _damage(m):
    """Why the fragment `m` matched is not one the stressor printed, or
    None: its count is its record's, its index below it, its payload the
    one its header generates and its crc right."""
    if m is None:
        return "no fragment in the documented format"
    n, i, count, length = (int(g) for g in m.group(5, 6, 7, 8))
    if length != len(m.group(9)):
        return "l=%d but the payload has %d characters" % (length, len(m.group(9)))
    if count != fragment_count(n) or i >= count:
        return "f=%d/%d is no fragment of record n=%d" % (i, count, n)
    header_end = m.start(9)
    header = m.string[m.start():header_end]
    if m.group(9) != pstress2_payload(header, length):
        return "the payload is not the one its header generates"
    body = m.string[m.start():m.end(9)]
    if "%08x" % crc32_le_kernel(body.encode("latin-1")) != m.group(10):
        return "crc mismatch"
    return None


def _next(n, i):
    """The fragment after fragment i of record n."""
    return (n, i + 1) if i + 1 < fragment_count(n) else (n + 1, 0)


class Producer:
    """Where one producer's fragments have got to: the next one due
    (None before its first, when the trace did not store its run's
    start banner), its last one placed, and those found missing, (n, i)
    in order (the first MISSING_MAX)."""

    __slots__ = ("due", "last", "missing")

    def __init__(self):
        self.due = None
        self.last = None
        self.missing = []


class Fragments:
    """The stage: follows the stores, places each fragment against its
    producer's position and hands the findings to the units."""

    def __init__(self, expected=None):
        # expected: producer -> (records, refused) from stats.txt's cont lines
        self.expected = dict(expected or {})
        self.pending = {}         # seq -> (text, at): stores not taken yet
        self.taken_below = None   # seqs below it have been taken
        self.max_seq = -1
        self.producers = {}
        self.findings = []
        self.started = set()      # runs whose start banner is stored
        self.ended = set()        # runs whose end banner is stored
        self.counts = {"fragments": 0, "records": 0, "stored_records": 0, "joined": 0,
                       "split": 0, "shared_records": 0, "late_stores": 0,
                       "refused_by_printk": 0}

    # ------------------------------------------------------------ stores
    def on_store(self, st):
        """A nobkl_store (a traceparse.Store): kept when it holds a
        fragment, until its seq is taken; a banner of a run is noted."""
        text = st.text
        if TAG not in text:
            if text[:15] == "printk_stress: ":
                m = _BANNER_RE.match(text)
                if m is not None:
                    (self.started if m.group(1) == "start" else self.ended).add(int(m.group(2)))
            return
        seq = st.seq
        if self.taken_below is not None and seq < self.taken_below:
            # listed after its seq was taken: taken alone (and late)
            self.counts["late_stores"] += 1
            self.take(seq, text, (st.ts, st.lineno, st.cpu))
            return
        old = self.pending.get(seq)
        if old is None or len(text) > len(old[0]):
            self.pending[seq] = (text, (st.ts, st.lineno, st.cpu))
        if seq > self.max_seq:
            self.max_seq = seq
            if len(self.pending) > 2 * WINDOW:
                self.take_below(seq - WINDOW)

    def take_below(self, limit):
        """Take the kept stores of seqs below `limit`, in seq order."""
        for seq in sorted(s for s in self.pending if s < limit):
            text, at = self.pending.pop(seq)
            self.take(seq, text, at)
        self.taken_below = max(limit, self.taken_below or 0)

    def take(self, seq, text, at):
        """Place the fragments of one stored record."""
        records = set()
        self.counts["stored_records"] += 1
        for f in parse(text, seq, at):
            if type(f) is not Fragment:
                self.hand(Finding("cont:damaged", Fragment(None, None, None, None, seq,
                                                               f[0], at),
                                  "%s (%s)" % (f[1][:120], f[2]), None, None))
                continue
            records.add((f.prod, f.n))
            self.place(f)
        if len(records) > 1:
            self.counts["shared_records"] += 1

    def place(self, f):
        """A fragment against its producer's position."""
        self.counts["fragments"] += 1
        if f.offset:
            self.counts["joined"] += 1
        elif f.i:
            self.counts["split"] += 1
        p = self.producers.get(f.prod)
        if p is None:
            p = self.producers[f.prod] = Producer()
            if f.prod[0] in self.started:
                p.due = (0, 0)
        key = (f.n, f.i)
        if p.due is None or key == p.due:
            pass
        elif key > p.due:
            self.note_missing(p, p.due, key)
        elif key in p.missing:
            p.missing.remove(key)
            self.hand(Finding("cont:out-of-order", f, None, p.last, None))
            return
        else:
            self.hand(Finding("cont:repeat", f, None, p.last, None))
            return
        if not f.i:
            self.counts["records"] += 1
        p.due = _next(f.n, f.i)
        p.last = f

    def note_missing(self, p, frm, to):
        """The fragments from `frm` up to (not including) `to` did not
        come in their turn: missing, unless one comes later (then it is
        out of order)."""
        n, i = frm
        while (n, i) < to:
            if len(p.missing) < MISSING_MAX:
                p.missing.append((n, i))
            n, i = _next(n, i)

    def hand(self, finding):
        """Keep a finding for the units of its kind: finish() hands them
        over once it knows whether the trace lost events."""
        self.findings.append(finding)

    # ------------------------------------------------------------ end
    def finish(self, an, loss_seen=False):
        """End of the trace: take the stores left, settle each
        producer's end, and hand every finding to its units (missing
        fragments only without trace loss)."""
        self.take_below(self.max_seq + 1)
        for prod in sorted(set(self.producers) | set(self.expected)):
            self.settle_end(prod)
        for fd in self.findings:
            if fd.kind == "cont:missing" and loss_seen:
                continue
            for judge in consumers(fd.kind, "cont_fragments"):
                judge(an, fd)

    def settle_end(self, prod):
        """The fragments of a producer due after its last one: missing
        when the trace stored its run's end banner (up to stats.txt's
        records, else to the end of its last record); then its missing
        fragments beyond printk()'s refusals are findings."""
        p = self.producers.get(prod)
        records, refused = self.expected.get(prod, (None, 0))
        if p is None:
            if prod[0] not in self.started or prod[0] not in self.ended or not records:
                return
            p = self.producers[prod] = Producer()
            p.due = (0, 0)
        if prod[0] in self.ended and p.due is not None:
            end = (records, 0) if records is not None else \
                (p.due[0] + 1, 0) if p.due[1] else p.due
            if p.due < end:
                self.note_missing(p, p.due, end)
        budget = refused
        gap = []
        for key in p.missing:
            if budget:
                budget -= 1
                self.counts["refused_by_printk"] += 1
                continue
            gap.append(key)
        if gap:
            about = p.last or Fragment(prod, None, None, None, None, None, None)
            self.hand(Finding("cont:missing", about, None, None, gap))

    def summary(self):
        """The figures of verdict.json's `cont_fragments`: fragments and
        records in fragments found, stored records holding them, those
        joined to the stored record before them (`joined`) and those of
        index > 0 that began a stored record (`split`), stored records
        with fragments of more than one record (`shared_records`),
        missing fragments granted as printk()'s refusals, and stores
        listed after their seq was taken."""
        return dict(self.counts, producers=len(self.producers))


def _where(f):
    """How a message names a fragment and its place."""
    return "fragment f=%d/%d of record n=%d of %s (seq %d)" % (
        f.i, f.count, f.n, producer_name(f.prod), f.seq)


def _place(f):
    """violate()'s place of a finding about fragment `f`: the store that
    holds it (none for a producer with no fragment in the trace)."""
    if f.at is None:
        return {"seq": None}
    return {"seq": f.seq, "at": (f.at[0], f.at[1], f.at[2], "nobkl_store seq=%d" % f.seq)}


@unit("cont-fragments", consumes="cont:damaged")
def damaged(an, fd):
    """A fragment stored as the stressor printed it proves itself: its
    payload is the one its header generates and its crc is right."""
    msg = "stored record seq %d: a damaged fragment at offset %d: %s" % (
        fd.frag.seq, fd.frag.offset, fd.text)
    an.violate("cont-fragments", None, msg, **_place(fd.frag))


@unit("cont-fragments", consumes="cont:repeat")
def repeat(an, fd):
    """Every fragment is stored once: printk() joins a KERN_CONT fragment
    to the record before it or stores it as a record of its own, never
    both."""
    last = fd.last
    msg = "%s stored again: its producer's fragments had reached f=%d/%d of n=%d (seq %d)" % (
        _where(fd.frag), last.i, last.count, last.n, last.seq)
    an.violate("cont-fragments", None, msg, **_place(fd.frag))


@unit("cont-fragments", consumes="cont:out-of-order")
def out_of_order(an, fd):
    """A producer's fragments are stored in the order its single writer
    printed them, record by record, index by index."""
    last = fd.last
    msg = ("%s stored after f=%d/%d of n=%d (seq %d) of the same writer: one writer prints "
           "its fragments one after the other"
           % (_where(fd.frag), last.i, last.count, last.n, last.seq))
    an.violate("cont-fragments", None, msg, **_place(fd.frag))


@unit("cont-fragments", consumes="cont:missing")
def missing(an, fd):
    """Every fragment the stressor passed to printk() is stored, except
    those printk() refused (stats.txt) and those outside the trace."""
    gap = fd.gap
    shown = ", ".join("n=%d f=%d" % k for k in gap[:8]) + (" ..." if len(gap) > 8 else "")
    msg = "%d fragment(s) of %s never stored (beyond printk()'s refusals): %s" % (
        len(gap), producer_name(fd.frag.prod), shown)
    an.violate("cont-fragments", None, msg, **_place(fd.frag))


def read_expected(path):
    """stats.txt's `cont` lines: {(run, cpu, ctx, writer): (records,
    refused)}; {} without the file or such lines.  The file's other
    lines are api.read_stressor_stats()'s business."""
    try:
        with open(path, "rb") as fh:
            lines = fh.read().decode("ascii", "replace").splitlines()
    except OSError:
        return {}
    if not lines or not lines[0].startswith("run="):
        return {}
    head = dict(t.split("=", 1) for t in lines[0].split() if "=" in t)
    if not head.get("run", "").isdigit():
        return {}
    run = int(head["run"])
    out = {}
    for ln in lines[1:]:
        if not ln.startswith("cont "):
            continue
        kv = dict(t.split("=", 1) for t in ln.split()[1:] if "=" in t)
        try:
            out[(run, int(kv["cpu"]), kv["ctx"], kv["writer"])] = (int(kv["records"]),
                                                                  int(kv["refused"]))
        except (KeyError, ValueError):
            continue
    return out
