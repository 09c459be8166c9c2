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

from analysis.pstress import crc32_le_kernel, parse_pstress, pstress2_text
from analysis.serial import FRAG, REC, classify

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
    report_eol: the report's last line ends in a newline; arch32: the
    trace's state words are 32-bit ones (None: a trace without them, or
    of 64-bit)."""

    def __init__(self, serial, eol, report, dat, stats, printk, report_eol=True, arch32=None):
        self.serial, self.eol, self.report, self.dat = serial, eol, report, dat
        self.stats, self.printk, self.report_eol = stats, printk, report_eol
        self.arch32 = arch32
        self._events = None
        self._kinds = None
        self._cache = {}

    @classmethod
    def load(cls, serial_bytes, report_text, dat, stats, printk, arch32=None):
        text = serial_bytes.decode("latin-1")
        eol = "\r\n" if "\r\n" in text else "\n"
        assert text.endswith(eol)
        serial = text[:-len(eol)].split(eol)
        report = report_text.split("\n")
        if report[-1] == "":
            report.pop()
        return cls(serial, eol, report, dat, stats, printk, arch32=arch32)

    def replace(self, **kw):
        """A new Run with some inputs replaced (the others are shared:
        operators build new lists, they never edit one)."""
        d = dict(serial=self.serial, eol=self.eol, report=self.report, dat=self.dat,
                 stats=self.stats, printk=self.printk, report_eol=self.report_eol,
                 arch32=self.arch32)
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


def stressor_line(prefix, run_id, cpu, ctx, n, payload, writer=None):
    """A serial line of a valid stressor record (length and crc right):
    of format version 2 when the writer is given, else of version 1."""
    if writer is not None:
        text = pstress2_text(run_id, cpu, ctx, writer, n, len(payload), payload=payload)
    else:
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


# ---------------------------------------------------------------- state words
# A trace with the transition fields (`old_state`/`new_state`,
# docs/interfaces.md section 1) is ordered by the chain of its console's
# state word: every transition replaces the word the one before it
# installed.  An operator that adds or removes a transition, or changes
# what a word says, must keep that chain whole where the mutation is
# about something else, or the verdict is the chain break.  The state
# bits are the whole word on 32-bit (Run.arch32), the high half of it on
# 64-bit, whose low half is the console's seq (next record to print).
WORD_FIELDS = {"locked": (2, 1), "thread": (4, 1), "cur_prio": (5, 3), "req_prio": (7, 3),
               "cpu": (9, 0x1ffff), "trans": (27, 0x1f)}
PRIOS = ("none", "normal", "emergency", "panic")


def _word_base(run):
    assert run.arch32 is not None, "a run without state words"
    return 0 if run.arch32 else 32


def word_get(run, word, key):
    shift, mask = WORD_FIELDS[key]
    return int(word) >> (shift + _word_base(run)) & mask


def word_set(run, word, **bits):
    """The decimal text of `word` with some state bits set (a prio by its
    name or number)."""
    w, base = int(word), _word_base(run)
    for k, v in bits.items():
        if k.endswith("_prio") and isinstance(v, str):
            v = PRIOS.index(v)
        shift, mask = WORD_FIELDS[k]
        assert 0 <= v <= mask, (k, v)
        w = w & ~(mask << (shift + base)) | (v << (shift + base))
    return str(w)


def word_trans(run, word, delta):
    """`word` with its transition count moved by delta (modulo 32)."""
    return word_set(run, word, trans=(word_get(run, word, "trans") + delta) % 32)


def word_owner(run, word):
    """(locked, cpu, cur_prio, thread) of a word: the owner it names."""
    return tuple(word_get(run, word, k) for k in ("locked", "cpu", "cur_prio", "thread"))


def has_words(e):
    """e carries a state word (a transition, or a handover acquire)."""
    return e.get("old_state") not in (None, "0")


def is_transition(e):
    """e reports a transition of its console's state word."""
    return has_words(e) and e.get("how") != "handover"


def successor(run, ev):
    """The transition that replaced the word ev installed: the first one
    listed after ev whose old state is that word (None: the trace ends
    first)."""
    w = ev.get("new_state")
    return next((e for e in run.console_events() if e.idx > ev.idx and is_transition(e) and
                 e.get("old_state") == w), None)


def decoded_fields(run, e, word):
    """The fields of event e that decode `word`, the word it replaced:
    an acquire's prev_*, a waiter's owner_*."""
    if e.name == "nobkl_acquire" and e.get("how") != "handover":
        return {"prev_locked": word_get(run, word, "locked"),
                "prev_thread": word_get(run, word, "thread"),
                "prev_prio": PRIOS[word_get(run, word, "cur_prio")],
                "prev_cpu": word_get(run, word, "cpu")}
    if e.name in ("nobkl_handover_request", "nobkl_handover_timeout"):
        return {"owner_cpu": word_get(run, word, "cpu"),
                "owner_prio": PRIOS[word_get(run, word, "cur_prio")]}
    return {}


class ReportEdit:
    """Field edits of report lines (several per line), lines dropped or
    inserted; done() makes the new Run."""

    def __init__(self, run):
        self.run, self.lines, self.drop, self.after = run, {}, set(), {}

    def line(self, e):
        return self.lines.get(e.idx, self.run.report[e.idx])

    def set(self, e, **fields):
        ln = self.line(e)
        for k, v in fields.items():
            ln = set_field(ln, k, v)
        self.lines[e.idx] = ln

    def insert_after(self, e, line):
        self.after.setdefault(e.idx, []).append(line)

    def done(self):
        out = []
        for i, ln in enumerate(self.run.report):
            if i not in self.drop:
                out.append(self.lines.get(i, ln))
            out.extend(self.after.get(i, ()))
        return self.run.replace(report=out)


def _shift_trans_after(run, ed, idx, delta):
    """Every state word of an event listed after report line idx moved
    by delta transitions."""
    for e in run.console_events():
        if e.idx > idx and has_words(e):
            ed.set(e, old_state=word_trans(run, ed_field(ed, e, "old_state"), delta),
                   new_state=word_trans(run, ed_field(ed, e, "new_state"), delta))


def ed_field(ed, e, key):
    """Field `key` of event e as edited so far."""
    m = re.search(r"(?<= %s=)\S+" % re.escape(key), ed.line(e))
    return m.group(0)


def _done(run, ed, own):
    return ed.done() if own else ed


def drop_transition(run, ev, ed=None, keep=None):
    """run without the event of transition ev, its chain whole: the
    transition that replaced ev's word replaces ev's old word instead
    (with the fields that decode it), a handover acquire that saw ev's
    word saw the old one, and every word listed after ev is one
    transition earlier.  A release removed: the next acquire finds the
    console locked by the owner; a 64-bit commit removed: the console's
    seq stays where it was.  keep: a line that takes ev's place (an
    event that reports no transition).  With `ed` (a ReportEdit) the
    edits are added to it and it is returned, else the new Run."""
    assert is_transition(ev), ev.name
    succ = successor(run, ev)
    assert succ is not None, "no transition replaced the word of line %d" % ev.idx
    own = ed is None
    ed = ed or ReportEdit(run)
    if keep is None:
        ed.drop.add(ev.idx)
    else:
        ed.lines[ev.idx] = keep
    _shift_trans_after(run, ed, ev.idx, -1)
    old, new = ev.get("old_state"), ev.get("new_state")
    for e in run.console_events():
        if ev.idx < e.idx < succ.idx and e.get("how") == "handover" and \
                e.get("old_state") == new:
            ed.set(e, old_state=old, new_state=old)
    ed.set(succ, old_state=old, **decoded_fields(run, succ, old))
    return _done(run, ed, own)


def repeat_transition(run, ev, ed=None):
    """run with the event of transition ev listed twice: the copy right
    after it replaces the word ev installed with the same word one
    transition later (a 64-bit commit of the same seq again), every word
    listed after it one transition later too."""
    assert is_transition(ev), ev.name
    own = ed is None
    ed = ed or ReportEdit(run)
    _shift_trans_after(run, ed, ev.idx, +1)
    new = ev.get("new_state")
    ed.insert_after(ev, set_field(set_field(run.report[ev.idx], "old_state", new),
                                  "new_state", word_trans(run, new, +1)))
    return _done(run, ed, own)


def restate(run, ev, ed=None, **bits):
    """run with the state bits `bits` set in the words of one owner from
    the word transition ev installed on: in every word that names that
    owner until a transition installs one that names another (or none),
    in the handover acquires that saw one, in the fields that decode
    them, and in the owner a loss or a waiter's timeout without a
    transition names while they last.  Returns (the new Run, or `ed`
    with the edits added; the transition that ended the owner's words,
    or None)."""
    own = ed is None
    ed = ed or ReportEdit(run)
    owner = word_owner(run, ev.get("new_state"))
    cpu, prio = owner[1], PRIOS[owner[2]]
    named = {}
    if "cpu" in bits:
        named["owner_cpu"] = bits["cpu"]
    if "cur_prio" in bits:
        v = bits["cur_prio"]
        named["owner_prio"] = v if isinstance(v, str) else PRIOS[v]
    cur, end = ev, None
    while True:
        w = cur.get("new_state")
        nw = word_set(run, w, **bits)
        ed.set(cur, new_state=nw)
        nxt = successor(run, cur)
        for e in run.console_events():
            if cur.idx < e.idx and (nxt is None or e.idx < nxt.idx):
                if e.get("how") == "handover" and e.get("old_state") == w:
                    ed.set(e, old_state=nw, new_state=nw)
                elif named and not has_words(e) and e.get("owner_cpu") == str(cpu) and \
                        e.get("owner_prio") == prio:
                    ed.set(e, **named)
        if nxt is None:
            break
        ed.set(nxt, old_state=nw, **decoded_fields(run, nxt, nw))
        if word_owner(run, nxt.get("new_state")) != owner:
            end = nxt
            break
        cur = nxt
    return _done(run, ed, own), end


def shift_word_seqs(run, above, delta, ed=None):
    """run with the seq in every 64-bit state word above `above` moved by
    delta (the records after `above` numbered anew)."""
    assert run.arch32 is False
    own = ed is None
    ed = ed or ReportEdit(run)
    for e in run.console_events():
        if has_words(e) and e.idx not in ed.drop:
            f = {}
            for k in ("old_state", "new_state"):
                w = int(ed_field(ed, e, k))
                if w & 0xffffffff > above:
                    f[k] = w + delta
            if f:
                ed.set(e, **f)
    return _done(run, ed, own)


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
