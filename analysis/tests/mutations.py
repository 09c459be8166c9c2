"""Mutation operators over a recorded real run (see test_mutations.py).

A run is three inputs: the serial log, the `trace-cmd report` text of its
trace and the trace.dat bytes.  `Run` holds them with what the operators
need to find their targets (the report's nobkl events, the serial lines
by kind); an operator takes a Run and returns a new Run with one thing
changed, chosen from the input by what it is ("the 40th record printed
once and never reprinted"), never by a line number.  Operators never edit
a Run in place: the parsed original is shared by every mutation.
"""

import re
import struct

from analysis.serial import FRAG, REC, classify, crc32_le_kernel, parse_pstress, pstress2_text

CON = "ttyS0"

_EV_RE = re.compile(r"^\s*(?P<comm>.*?)-(?P<pid>\d+)\s+\[(?P<cpu>\d+)\]\s+"
                    r"(?P<ts>\d+\.\d+): (?P<name>\w+):\s+(?P<rest>.*)$")


class Ev:
    """One event line of the report: its index in Run.report, CPU, name
    and fields (a store's text= is the rest of the line)."""

    __slots__ = ("idx", "cpu", "ts", "name", "fields")

    def __init__(self, idx, cpu, ts, name, fields):
        self.idx, self.cpu, self.ts, self.name, self.fields = idx, cpu, ts, name, fields

    def get(self, key):
        return self.fields.get(key)

    def int(self, key):
        return int(self.fields[key])


def parse_event(idx, line):
    m = _EV_RE.match(line)
    if m is None or not m.group("name").startswith("nobkl_"):
        return None
    rest = m.group("rest")
    fields = {}
    if m.group("name") == "nobkl_store":
        rest, _, text = rest.partition(" text=")
        fields["text"] = text
    for tok in rest.split():
        k, _, v = tok.partition("=")
        fields[k] = v
    return Ev(idx, int(m.group("cpu")), m.group("ts"), m.group("name"), fields)


def set_field(line, key, value):
    """line with the first ` key=...` field set to value (it must exist)."""
    new, n = re.subn(r"(?<= %s=)\S+" % re.escape(key), str(value), line, count=1)
    assert n == 1, "no field %s in %r" % (key, line)
    return new


def set_cpu(line, cpu):
    new, n = re.subn(r"\[\d{3}\]", "[%03d]" % cpu, line, count=1)
    assert n == 1
    return new


def crc_hex(payload):
    """The k= of a stressor record: the kernel's crc32_le of its payload."""
    return "%08x" % crc32_le_kernel(payload.encode("latin-1"))


class Run:
    """The inputs of one run.  serial: lines without their end (eol),
    report: lines of `trace-cmd report`, dat: trace.dat bytes, stats:
    stats.txt text (with printk.txt it goes into every results dir);
    report_eol: the report's last line ends in a newline."""

    def __init__(self, serial, eol, report, dat, stats, printk, report_eol=True):
        self.serial, self.eol, self.report, self.dat = serial, eol, report, dat
        self.stats, self.printk, self.report_eol = stats, printk, report_eol
        self._events = None
        self._kinds = None
        self._cache = {}

    @classmethod
    def load(cls, serial_bytes, report_text, dat, stats, printk):
        text = serial_bytes.decode("latin-1")
        eol = "\r\n" if "\r\n" in text else "\n"
        assert text.endswith(eol)
        serial = text[:-len(eol)].split(eol)
        report = report_text.split("\n")
        if report[-1] == "":
            report.pop()
        return cls(serial, eol, report, dat, stats, printk)

    def replace(self, **kw):
        """A new Run with some inputs replaced (the others are shared:
        operators build new lists, they never edit one)."""
        d = dict(serial=self.serial, eol=self.eol, report=self.report, dat=self.dat,
                 stats=self.stats, printk=self.printk, report_eol=self.report_eol)
        d.update(kw)
        return Run(**d)

    def serial_bytes(self):
        return (self.eol.join(self.serial) + self.eol).encode("latin-1")

    def report_text(self):
        return "\n".join(self.report) + ("\n" if self.report_eol else "")

    # ------------------------------------------------------------ the trace
    @property
    def events(self):
        if self._events is None:
            self._events = [e for e in (parse_event(i, ln) for i, ln in enumerate(self.report))
                            if e is not None]
        return self._events

    def event_at(self, idx):
        """The event of report line idx, or None."""
        by_idx = self._cached("by_idx", lambda: {e.idx: e for e in self.events})
        return by_idx.get(idx)

    def console_events(self, name=None):
        return [e for e in self.events if e.get("con") == CON and
                (name is None or e.name == name)]

    def _cached(self, key, fn):
        # a Run is never edited (operators make new ones): what is
        # derived from it holds
        if key not in self._cache:
            self._cache[key] = fn()
        return self._cache[key]

    def store_texts(self):
        return self._cached("texts", lambda: {e.int("seq"): e.get("text") for e in self.events
                                              if e.name == "nobkl_store"})

    def emits_per_seq(self):
        n = {}
        for e in self.console_events("nobkl_emit"):
            n[e.int("seq")] = n.get(e.int("seq"), 0) + 1
        return n

    def committed_seqs(self):
        return [e.int("seq") for e in self.console_events("nobkl_commit")]

    # ------------------------------------------------------------ the serial log
    @property
    def kinds(self):
        """classify() of every serial line: (kind, ctx, text)."""
        if self._kinds is None:
            self._kinds = [classify(ln) for ln in self.serial]
        return self._kinds

    def serial_index(self, text):
        """Indices of the complete serial lines whose text is `text`."""
        return [i for i, k in enumerate(self.kinds) if k[0] == REC and k[2] == text]

    def plain_records(self):
        """[(serial index, seq)] of the stressor records the trace shows
        emitted once and committed, that are on the serial log exactly
        once as a valid complete line: records whose every copy is
        accounted for, the safe targets of a mutation.  In serial order."""
        return self._cached("plain", self._plain_records)

    def _plain_records(self):
        texts = self.store_texts()
        emits = self.emits_per_seq()
        seq_of = {}
        for s in self.committed_seqs():
            t = texts.get(s)
            if t is not None and t.startswith("pstress ") and emits.get(s) == 1:
                seq_of[t] = s
        count = {}
        for k in self.kinds:
            if k[0] == REC:
                count[k[2]] = count.get(k[2], 0) + 1
        out = []
        for i, k in enumerate(self.kinds):
            if k[0] == REC and count[k[2]] == 1 and k[2] in seq_of:
                p = parse_pstress(k[2])
                if p is not None and p[2]:
                    out.append((i, seq_of[k[2]]))
        return out

    def cut_lines(self):
        """Indices of the serial lines that are cut copies of a stored
        record: a proper prefix of its text (what an attempt that lost
        the console leaves), or a kernel line cut inside its prefix."""
        texts = set(self.store_texts().values())
        by_head = {}
        for t in texts:
            by_head.setdefault(t[:12], []).append(t)
        out = []
        for i, k in enumerate(self.kinds):
            if k[0] == FRAG:
                out.append(i)
            elif k[0] == REC and k[2] not in texts and k[2] and \
                    any(t.startswith(k[2]) for t in
                        (by_head.get(k[2][:12], ()) if len(k[2]) >= 12 else texts)):
                out.append(i)
        return out

    def plain(self, n):
        """The n-th plain record (serial index, seq)."""
        recs = self.plain_records()
        assert len(recs) > n, "only %d plain records" % len(recs)
        return recs[n]

    def prefix_of(self, i):
        """The `A[  sec.usec] ` part of serial line i."""
        ln = self.serial[i]
        return ln[:ln.index("] ") + 2]

    def serial_line_of_seq(self, seq):
        idx = self.serial_index(self.store_texts()[seq].split("\n")[0])
        assert len(idx) == 1, "seq %d is on the serial log %d times" % (seq, len(idx))
        return idx[0]

    def first_stressor_commit(self):
        """Index in committed_seqs() of the first committed stressor record
        (where the serial check syncs)."""
        texts = self.store_texts()
        for k, s in enumerate(self.committed_seqs()):
            if (texts.get(s) or "").startswith("pstress "):
                return k
        raise AssertionError("no stressor record committed")

    # ------------------------------------------------------------ trace.dat
    def cpu_data(self):
        """[(cpu, offset, size)] of the per-CPU flyrecord data, from the
        buffer option of a version-7 trace.dat (the layout `trace-cmd dump
        --flyrecord` prints)."""
        b = self.dat
        assert b[:10] == b"\x17\x08\x44tracing" and b[10:12] == b"7\x00", "not a v7 trace.dat"
        # the BUFFER option: u16 id 3, u32 size, u64 offset, name, clock,
        # u32 page size, u32 cpus, then (u32 cpu, u64 offset, u64 size) each
        pos = 0
        while True:
            pos = b.index(b"global\x00", pos + 1)
            name_end = pos - 1
            if b[name_end] == 0:       # "" name then "global" clock
                break
        page, cpus = struct.unpack_from("<II", b, pos + 7)
        assert page == 4096 and 0 < cpus <= 64
        out = []
        p = pos + 15
        for _ in range(cpus):
            cpu, off, size = struct.unpack_from("<IQQ", b, p)
            assert off + size <= len(b), "cpu %d data beyond the file" % cpu
            out.append((cpu, off, size))
            p += 20
        return out

    def chunks(self, cpu):
        """[(offset of the chunk header, compressed size, size)] of one
        CPU's compressed data: u32 count, then per chunk u32 compressed
        size, u32 size and the zstd frame."""
        _, off, size = next(c for c in self.cpu_data() if c[0] == cpu)
        n, = struct.unpack_from("<I", self.dat, off)
        out = []
        p = off + 4
        for _ in range(n):
            cs, us = struct.unpack_from("<II", self.dat, p)
            out.append((p, cs, us))
            p += 8 + cs
        assert p == off + size + 4, "the chunks do not end where the CPU's data ends"
        return out


def flip(dat, pos, bit):
    b = bytearray(dat)
    b[pos] ^= 1 << bit
    return bytes(b)


# ---------------------------------------------------------------- serial log
def serial_edit(run, fn):
    lines = list(run.serial)
    fn(lines)
    return run.replace(serial=lines)


def drop_serial_line(run, i):
    return serial_edit(run, lambda ls: ls.pop(i))


def insert_serial_lines(run, i, new):
    def ins(ls):
        ls[i:i] = new
    return serial_edit(run, ins)


def replace_serial_line(run, i, new):
    def rep(ls):
        ls[i] = new
    return serial_edit(run, rep)


def stressor_line(prefix, run_id, cpu, ctx, n, payload):
    """A serial line of a valid stressor record (length and crc right)."""
    text = "pstress r=%d c=%d x=%s n=%d l=%d k=%s %s" % (
        run_id, cpu, ctx, n, len(payload), crc_hex(payload), payload)
    assert parse_pstress(text)[2], text
    return prefix + text


# ---------------------------------------------------------------- report text
def report_edit(run, fn):
    lines = list(run.report)
    fn(lines)
    return run.replace(report=lines)


def nth_console_event(run, name, n, pred=None):
    evs = [e for e in run.console_events(name) if pred is None or pred(e)]
    assert len(evs) > n, "only %d %s events" % (len(evs), name)
    return evs[n]


def plain_seq_events(run, n):
    """(emit, commit) events of the n-th plain record (serial order)."""
    _, seq = run.plain(n)
    emit = next(e for e in run.console_events("nobkl_emit") if e.int("seq") == seq)
    commit = next(e for e in run.console_events("nobkl_commit") if e.int("seq") == seq)
    return emit, commit


def next_console_event(run, after_idx):
    return next(e for e in run.console_events() if e.idx > after_idx)


def owner_run_of_plain_records(run, start, count):
    """count consecutive seqs printed back to back by one owner (emit,
    commit, emit, commit, ... with no other console event between them),
    all plain records, starting at or after the start-th plain record,
    followed by one more such emission of the same owner.  Returns the
    list of (emit, commit) pairs, the last one being the record after."""
    plain = {s for _, s in run.plain_records()}
    start_seq = run.plain(start)[1]
    evs = run.console_events()
    for k, e in enumerate(evs):
        if e.name != "nobkl_emit" or e.int("seq") < start_seq:
            continue
        pairs = []
        j = k
        while j + 1 < len(evs) and len(pairs) < count + 1:
            a, b = evs[j], evs[j + 1]
            if a.name != "nobkl_emit" or b.name != "nobkl_commit" or \
                    a.int("seq") != b.int("seq") or a.cpu != b.cpu or \
                    a.int("seq") not in plain or \
                    (pairs and a.int("seq") != pairs[-1][0].int("seq") + 1):
                break
            pairs.append((a, b))
            j += 2
        if len(pairs) == count + 1:
            return pairs
    raise AssertionError("no owner printing %d plain records back to back" % (count + 1))


def owner_events(run, acquire):
    """The console events of the context that made `acquire` (same CPU,
    prio, thread, ctx) from it up to and including its release or loss."""
    key = lambda e: (e.cpu, e.get("prio"), e.get("thread"), e.get("ctx"))
    out = []
    for e in run.console_events():
        if e.idx < acquire.idx or key(e) != key(acquire):
            continue
        out.append(e)
        if e.name in ("nobkl_release", "nobkl_lost"):
            break
    return out


# ---------------------------------------------------------------- format version 2
# The recorded run is of version 1 (before `v=`).  to_v2() rewrites it
# as the stressor prints today: every stressor record as the version 2
# record of the same run, cpu, ctx, n and payload length, named after a
# writer of that CPU; the stored texts and lengths, the emissions'
# lengths, the serial lines (cut ones cut at the same fraction) and
# stats.txt to match.  Each version 1 producer of the run was one writer
# (threads_per_cpu=1; its n reached the ringbuffer in order), so it maps
# to one version 2 producer.
V2_WRITER = {"task": "task0", "hardirq": "hardirq", "nmi": "nmi", "emerg": "hardirq",
             "panic": "nmi"}


def v1_to_v2(text):
    """The version 2 record of a version 1 record text (None: not one)."""
    p = parse_pstress(text)
    if p is None or p[0] is None or not p[2] or len(p[0]) != 3:
        return None
    (run, cpu, ctx), n = p[0], p[1]
    return pstress2_text(run, cpu, ctx, V2_WRITER[ctx], n, int(text.split(" ")[5][2:]))


def to_v2(run):
    new_text = {}
    delta = {}                       # seq -> change of the record's length
    for e in run.events:
        if e.name == "nobkl_store":
            t = e.get("text")
            if t not in new_text:
                new_text[t] = v1_to_v2(t)
            if new_text[t] is not None:
                delta[e.int("seq")] = len(new_text[t]) - len(t)
    report = list(run.report)
    for e in run.events:
        ln = report[e.idx]
        if e.name == "nobkl_store" and new_text.get(e.get("text")):
            t = e.get("text")
            ln = set_field(ln[:len(ln) - len(t)] + new_text[t], "len", len(new_text[t]))
        elif e.name == "nobkl_emit" and e.int("seq") in delta and e.int("len") > 0:
            ln = set_field(ln, "len", e.int("len") + delta[e.int("seq")])
        report[e.idx] = ln
    serial = list(run.serial)
    kinds = run.kinds
    for i, (k, ln) in enumerate(zip(kinds, serial)):
        if k[0] != REC or not k[2].startswith("pstress r=") or not ln.endswith(k[2]):
            continue
        head = ln[:len(ln) - len(k[2])]
        if new_text.get(k[2]):
            serial[i] = head + new_text[k[2]]
            continue
        # a cut line: the record whose complete line (its reprint)
        # follows, cut at the same fraction of its length
        for j in range(i + 1, min(i + 40, len(serial))):
            full = kinds[j][2]
            if kinds[j][0] == REC and full.startswith(k[2]) and new_text.get(full):
                nt = new_text[full]
                serial[i] = head + nt[:max(1, len(k[2]) * len(nt) // len(full))]
                break
    stats = []
    for ln in run.stats.split("\n"):
        if ln.startswith("producer ") and " writer=" not in ln:
            ctx = dict(t.split("=", 1) for t in ln.split()[1:])["ctx"]
            ln = ln.replace(" ctx=%s " % ctx, " ctx=%s writer=%s " % (ctx, V2_WRITER[ctx]), 1)
        stats.append(ln)
    return run.replace(report=report, serial=serial, stats="\n".join(stats))


def writer_of(text):
    """(producer, n) of a version 2 record text."""
    p = parse_pstress(text)
    return p[0], p[1]
