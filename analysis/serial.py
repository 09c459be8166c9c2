"""Serial console log (interfaces.md section 2) and stressor records (section 3)."""

import re
import zlib
from collections import namedtuple

from .consolelog import STAMP, ConsoleLog, parse

# kinds of serial lines
REC = "rec"        # [  sec.usec] text   (a kernel record line, maybe cut)
DROPPED = "drop"   # ** N printk messages dropped **
REPLAY = "replay"  # ** replaying previous printk message ** (a reprint follows)
FRAG = "frag"      # the start of an owner's output cut inside its prefix, or
                   # inside the dropped notice it wrote in front of the record
OTHER = "other"    # anything else (user space output on the same UART, ...)

SerialLine = namedtuple("SerialLine", "lineno kind ctx text raw offset")
_new_line = tuple.__new__

# the notice of printk's dropped records, after the marker or the prefix
_NOTICE_RE = re.compile(r"\*\* (\d+) printk messages dropped \*\*$")
# the line in front of a record a new owner prints again after a
# takeover or handover inside it (interfaces.md section 2)
REPLAY_TEXT = "** replaying previous printk message **"
_REPLAY_RE = re.compile(r"[AT]?\*\* replaying previous printk message \*\*$")
_FRAG_RE = re.compile(r"^[AT]?\[[\s\d.]*$|^[AT]$")
_NOTICE_HEAD_RE = re.compile(r"^[AT]?\*(?:\*(?: (\d+(?: (.*))?)?)?)?$")
NOTICE_REST = "printk messages dropped **"


def cut_notice(line):
    """True when the line is a dropped notice cut before its end (`** 1
    printk messages drop`, or after its first byte: `*`): the owner that
    wrote it lost the console there, and the taker's replay marker or
    its own notice follows on the same line."""
    m = _NOTICE_HEAD_RE.match(line)
    return m is not None and NOTICE_REST[:-1].startswith(m.group(2) or "")
# a notice at the end of a line that starts with something else: the
# line of an owner that lost the console mid-line had no end, so the
# taker's notice was written right after it (`TA** 41 printk messages
# dropped **`, the thread cut after its context mark); the same for the
# replay marker, which a taker writes before its notice
_GLUED_DROP_RE = re.compile(r"[AT]?\*\* (?:\d+ printk messages dropped|"
                            r"replaying previous printk message) \*\*$")
# A stray byte may also sit next to the dot: `A[   17e.348681]`, be
# the `]` that ends an interrupted owner's own prefix: `A[    9.33]0815]`,
# come right after the prefix: `A[   11.062476]6 pstress ...`,
# or be the `[` of its prefix: `A[    7[.451658]`
_GARBLED_RE = re.compile(r"^[^\[]{0,2}?([AT]?)\[(?=[^\]]*\d\D?\.\D?\d)"
                         r"(?:[^\]\[]{6,20}|[^\]\[]{3,18}\][^\]\[]{1,17}"
                         r"|[^\]\[]{1,12}\[[^\]\[]{1,12})\][^ \[]? (.*)$",
                         re.S)
# where a kernel line starts inside a longer line (after user space output)
_KERNEL_START_RE = re.compile(r"[AT]?%s(?<=\.\d{6}\]) " % STAMP)
GARBLED = "?"      # ctx of a REC line with a garbled prefix

PSTRESS_RE = re.compile(
    r"^pstress r=(\d+) c=(\d+) x=(\w+) n=(\d+) l=(\d+) k=([0-9a-f]{8}) (\S*)$")


def crc32_le_kernel(data):
    """Linux crc32_le(~0, data, len) without final inversion."""
    return zlib.crc32(data) ^ 0xFFFFFFFF


# a well-formed stressor record (ASCII numbers, identifier and crc): one
# regex match instead of parse_pstress()'s split and field tests (it runs
# for every record matched on the serial log)
_PSTRESS_OK_RE = re.compile(r"pstress r=([0-9]+) c=([0-9]+) x=([A-Za-z_][A-Za-z0-9_]*) "
                            r"n=([0-9]+) l=([0-9]+) k=([0-9a-f]{8}) ([^ ]*)\Z", re.S)


def _check_payload(prod, nn, want, crc, payload):
    """(producer, n, ok, reason) of a stressor record whose fields parsed."""
    pb = payload.encode("latin-1")
    if len(pb) != want:
        return (prod, nn, False, "payload length %d != l=%d" % (len(pb), want))
    got = "%08x" % (zlib.crc32(pb) ^ 0xFFFFFFFF)
    if got != crc:
        return (prod, nn, False, "crc %s != k=%s" % (got, crc))
    return (prod, nn, True, "")


# a well-formed version 2 record (interfaces.md section 3): the checksum
# covers everything before " k=", the producer names its writer; the
# payload of a multi-line record has line breaks (blanks in the trace's
# and the matcher's joined text)
_PSTRESS2_RE = re.compile(r"(pstress v=2 r=([0-9]+) c=([0-9]+) x=([A-Za-z_][A-Za-z0-9_]*) "
                          r"w=([A-Za-z_][A-Za-z0-9_]*) n=([0-9]+) l=([0-9]+) (.*)) "
                          r"k=([0-9a-f]{8})\Z", re.S)


# The longest record text printk() stores: 6.1's LOG_LINE_MAX (1024 less
# the 32 bytes of PREFIX_MAX, 48 with CONFIG_PRINTK_CALLER) less the
# terminating NUL and the two bytes of the level prefix the stressor's
# records begin with.  A longer record (the stressor's `truncate` shape)
# is cut there (interfaces.md section 3).
TEXT_MAX = (989, 973)
_PSTRESS2_HEAD_RE = re.compile(r"pstress v=2 r=([0-9]+) c=([0-9]+) x=([A-Za-z_][A-Za-z0-9_]*) "
                               r"w=([A-Za-z_][A-Za-z0-9_]*) n=([0-9]+) l=([0-9]+) ")


# What printk() puts at the end of a record it cut to fit its data ring,
# which had no room for the whole (6.1's truncate_msg(): the oldest
# record still reserved by a writer that an NMI interrupted, say).
PRINTK_TRUNC_MSG = "<truncated>"


def pstress2_truncated(text):
    """(producer, n) when `text` is a version 2 record that printk() cut:
    at the line limit (TEXT_MAX characters long), or to fit its data ring
    (followed by PRINTK_TRUNC_MSG); the text kept is the first characters
    of the record its header makes (the header seeds the payload, and the
    crc follows from both; with the `multiline` shape's line breaks when
    the text has some), which is longer; else None.  A cut record with a
    byte changed is none: the header's record does not begin with it."""
    if text.endswith(PRINTK_TRUNC_MSG):
        text = text[:-len(PRINTK_TRUNC_MSG)]
    elif len(text) not in TEXT_MAX:
        return None
    m = _PSTRESS2_HEAD_RE.match(text)
    if m is None:
        return None
    r, c, x, w, n, ln = m.groups()
    multi = " " in text[m.end():m.end() + int(ln)]     # the payload, not " k="
    full = pstress2_text(int(r), int(c), x, w, int(n), int(ln), multiline=multi)
    if multi:
        full = full.replace("\n", " ")
    if len(full) <= len(text) or not full.startswith(text):
        return None
    return (int(r), int(c), x, w), int(n)


def first_line(text):
    """The first line the console prints of a record's text: up to its
    first line break, or for a stressor record of the `multiline` shape,
    whose breaks the trace shows as blanks, up to the first blank in its
    payload."""
    if text[:12] == "pstress v=2 ":
        m = _PSTRESS2_HEAD_RE.match(text)
        if m is not None:
            j = text.find(" ", m.end())
            if 0 < j < m.end() + int(m.group(6)):
                return text[:j]
    return text.split("\n", 1)[0]


def _parse_pstress2(text):
    """(producer, n, ok, reason) of a version 2 record text; producer =
    (run, cpu, ctx, writer).  A record cut at the line limit is a valid
    record (pstress2_truncated())."""
    m = _PSTRESS2_RE.match(text)
    if m is None:
        cut = pstress2_truncated(text)
        if cut is not None:
            return (cut[0], cut[1], True, "")
        return (None, None, False, "malformed stressor record")
    body, r, c, x, w, n, ln, payload, k = m.groups()
    prod, nn = (int(r), int(c), x, w), int(n)
    if len(payload) != int(ln):
        return (prod, nn, False, "payload length %d != l=%s" % (len(payload), ln))
    if " " in payload:
        body = body[:len(body) - len(payload)] + payload.replace(" ", "\n")
    got = "%08x" % (zlib.crc32(body.encode("latin-1")) ^ 0xFFFFFFFF)
    if got != k:
        return (prod, nn, False, "crc %s != k=%s" % (got, k))
    return (prod, nn, True, "")


PSTRESS_ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def pstress2_payload(header, length):
    """The payload the stressor generates after a version 2 `header`
    (the text up to and including the blank after `l=<len>`): xorshift32
    seeded with the header's crc (interfaces.md section 3)."""
    state = crc32_le_kernel(header.encode("latin-1")) | 1
    out = []
    for _ in range(length):
        state ^= (state << 13) & 0xFFFFFFFF
        state ^= state >> 17
        state ^= (state << 5) & 0xFFFFFFFF
        out.append(PSTRESS_ALPHABET[state % 62])
    return "".join(out)


MULTILINE_MAX = 4      # lines of a record of the stressor's `multiline` shape, at most


def multiline_breaks(payload, n):
    """The payload of record n of the stressor's `multiline` shape: line
    breaks in place of the characters at len * i / lines, i = 1 ..
    lines - 1, lines = 1 + n % MULTILINE_MAX (none when shorter than two
    characters a line; docs/stressor.md)."""
    ln, lines = len(payload), 1 + n % MULTILINE_MAX
    if ln < 2 * lines:
        return payload
    out = list(payload)
    for i in range(1, lines):
        out[ln * i // lines] = "\n"
    return "".join(out)


def pstress2_text(run, cpu, ctx, writer, n, length=64, payload=None, multiline=False):
    """A version 2 stressor record as the stressor prints it; `payload`
    replaces the generated one (with the crc made right: a forgery);
    `multiline`: with the line breaks of the `multiline` shape (as line
    breaks; the trace shows them as blanks)."""
    header = "pstress v=2 r=%d c=%d x=%s w=%s n=%d l=%d " % (run, cpu, ctx, writer, n, length)
    body = header + (pstress2_payload(header, length) if payload is None else payload)
    if multiline:
        body = header + multiline_breaks(body[len(header):], n)
    return "%s k=%08x" % (body, crc32_le_kernel(body.encode("latin-1")))


def pstress_damaged_copy(want, text):
    """`text` is the version 2 record `want` with one field changed:
    its checksum (as printed) no longer checks out, so it is `want`
    damaged, not another record (interfaces.md section 3)."""
    if want[:12] != "pstress v=2 " or text[:12] != "pstress v=2 ":
        return False
    a, b = want.split(" "), text.split(" ")
    if len(a) != len(b) or a[-1] != b[-1] or sum(x != y for x, y in zip(a, b)) != 1:
        return False
    return not _parse_pstress2(text)[2]


def producer_name(prod):
    """`r=.. c=.. x=..[ w=..]` of a producer, as its records name it."""
    if len(prod) == 4:
        return "r=%d c=%d x=%s w=%s" % prod
    return "r=%d c=%d x=%s" % prod


def parse_pstress(text):
    """Return (producer, n, ok, reason) for a stressor record text, or None
    when the text is not a stressor record.  producer = (run, cpu, ctx,
    writer) for a version 2 record, (run, cpu, ctx) for one of version 1
    (before `v=`)."""
    if text[:12] == "pstress v=2 ":
        return _parse_pstress2(text)
    m = _PSTRESS_OK_RE.match(text)
    if m is not None:
        r, c, x, n, ln, k, payload = m.groups()
        return _check_payload((int(r), int(c), x), int(n), int(ln), k, payload)
    if not text.startswith("pstress "):
        return None
    parts = text.split(" ")
    if len(parts) == 8:
        _, r, c, x, n, ln, k, payload = parts
        if (r[:2] == "r=" and c[:2] == "c=" and x[:2] == "x=" and n[:2] == "n=" and
                ln[:2] == "l=" and k[:2] == "k=" and len(k) == 10):
            try:
                prod = (int(r[2:]), int(c[2:]), x[2:])
                nn = int(n[2:])
                want = int(ln[2:])
            except ValueError:
                prod = None
            if prod is not None and r[2:].isdigit() and c[2:].isdigit() and n[2:].isdigit() \
                    and ln[2:].isdigit() and x[2:].isidentifier():
                return _check_payload(prod, nn, want, k[2:], payload)
    m = PSTRESS_RE.match(text)
    if m is None:
        return (None, None, False, "malformed stressor record")
    run, cpu, ctx, n, ln, crc, payload = m.groups()
    prod = (int(run), int(cpu), ctx)
    pb = payload.encode("latin-1")
    if len(pb) != int(ln):
        return (prod, int(n), False, "payload length %d != l=%s" % (len(pb), ln))
    got = "%08x" % crc32_le_kernel(pb)
    if got != crc:
        return (prod, int(n), False, "crc %s != k=%s" % (got, crc))
    return (prod, int(n), True, "")


# what pstress_id() accepts, in the usual shape (version 1, version 2)
_PSTRESS_ID_RE = re.compile(r"pstress r=([0-9]+) c=([0-9]+) x=([^ ]*) n=([0-9]+) ")
_PSTRESS2_ID_RE = re.compile(r"pstress v=2 r=([0-9]+) c=([0-9]+) x=([^ ]*) w=([^ ]*) "
                             r"n=([0-9]+) ")
# "r=.. c=.. x=..[ w=..]" of a text -> its producer, for the producers
# seen: one dict lookup instead of a regex match and two int() per record
# (it runs for every dropped record, most records under stress)
_producers = {}


def pstress_id(text):
    """(producer, n) of a stressor record text without checking it (no
    crc), or None: for records that are only accounted, not printed."""
    st = 8 if text[:10] == "pstress r=" else 12 if text[:14] == "pstress v=2 r=" else 0
    if st:
        j = text.find(" n=", st + 2)
        k = text.find(" ", j + 3) if j > 0 else -1
        prod = _producers.get(text[st:j]) if k > 0 else None
        if prod is not None:
            n = text[j + 3:k]
            if n.isdecimal() and n.isascii():
                return prod, int(n)
    m = _PSTRESS_ID_RE.match(text) if st != 12 else _PSTRESS2_ID_RE.match(text)
    if m is not None:
        g = m.groups()
        prod = (int(g[0]), int(g[1])) + g[2:-1]
        if len(_producers) < 4096:
            _producers[producer_name(prod)] = prod
        return prod, int(g[-1])
    if not text.startswith("pstress "):
        return None
    parts = text.split(" ", 5)
    if len(parts) < 6:
        return None
    r, c, x, n = parts[1:5]
    if r[:2] != "r=" or c[:2] != "c=" or x[:2] != "x=" or n[:2] != "n=":
        return None
    try:
        return (int(r[2:]), int(c[2:]), x[2:]), int(n[2:])
    except ValueError:
        return None


def is_garbled_notice(text):
    """A dropped notice with one byte inserted anywhere (the stray byte
    of an owner taken over inside its unsafe section: `A** 8 printk
    mes5sages dropped **`): its count cannot be trusted."""
    if not 30 <= len(text) <= 60 or "**" not in text:
        return False
    return any(_notice(parse(text[:i] + text[i + 1:])) for i in range(len(text)))


def garbled_notice_strays(text):
    """[(byte, count)]: each byte of `text` whose removal leaves a
    dropped notice, with that notice's count (is_garbled_notice())."""
    out = []
    if 30 <= len(text) <= 60 and "**" in text:
        for i in range(len(text)):
            n = _notice(parse(text[:i] + text[i + 1:]))
            if n:
                out.append((text[i], int(n[1])))
    return out


def _notice(cl):
    """(marker, count) of a typed line that is a dropped notice: the
    notice right after the marker, or after the prefix (no caller),
    else None."""
    if cl.stamp is not None:
        if cl.caller is not None:
            return None
        m = _NOTICE_RE.match(cl.text)
        return (cl.marker, m.group(1)) if m is not None else None
    raw = cl.raw
    i = 1 if raw[:1] in ("A", "T") else 0
    m = _NOTICE_RE.match(raw, i)
    return (raw[:i], m.group(1)) if m is not None else None


def classify(line):
    """(kind, ctx_char, text) for one serial line (no trailing newline)."""
    return line_kind(parse(line))


def line_kind(cl):
    """(kind, ctx_char, text) of a typed line (consolelog.ConsoleLine)."""
    if cl.stamp is not None and not cl.glued:
        return REC, cl.marker, cl.text
    notice = _notice(cl)
    if notice is not None:
        return (DROPPED,) + notice
    line = cl.raw
    if _REPLAY_RE.match(line):
        return REPLAY, line[:1] if line[:1] in "AT" else "", ""
    m = _GARBLED_RE.match(line)
    if m is not None:
        # a kernel line whose `[  sec.usec]` prefix has a stray byte in it
        # or before it (seen on real runs: `A[   11.7o05816] pstress ...`,
        # `dA[   15.595616] ...`, `A[T   23.732383] ...`): a record
        # line, with the context marked "?" so the matcher reports it
        return REC, GARBLED, m.group(2)
    if _FRAG_RE.match(line) or cut_notice(line):
        return FRAG, line[:1] if line[:1] in "AT" else "", ""
    return OTHER, "", line


def foreign_head(line):
    """Where a kernel line starts after user space output on the same
    line (`tty-user n=58 baT[   12.348475] pstress ...`: the tty sends a
    transmit FIFO's worth at a time, and the console wrote between two):
    the index of the kernel line's start when the part before it is no
    kernel output itself (no `[`, no stressor text), else None."""
    m = _KERNEL_START_RE.search(line, 3)
    if m is None:
        return None
    head = line[:m.start()]
    if "[" in head or "pstress" in head or classify(head)[0] != OTHER:
        return None
    if classify(line[m.start():])[0] != REC:
        return None
    return m.start()


class SerialReader(ConsoleLog):
    """The lines of console.log (consolelog's typed lines) as the
    matcher takes them: each of a kind, the damaged ones mended or cut
    where they can be (a CR inside a line, user space output before a
    kernel line, a notice glued to a cut line, a record cut by a stray
    LF); with byte offsets, so a search that fails can rewind.  A
    kernel line with a context mark its console never prints (`marks`:
    console_output.py, set by the alignment) is read as garbled, so the
    mark is checked as the byte it is."""

    marks = frozenset(("", "A", "T"))

    def next(self):
        cl = ConsoleLog.next(self)
        if cl is None:
            return None
        s, off = cl.raw, cl.offset
        if "\r" in s:
            return self._line_with_cr(cl)
        kind = line_kind(cl)
        if kind[0] == OTHER:
            cut = self._cut_foreign_head(s, off)
            if cut is not None:
                s, kind = cut
        if kind[0] in (OTHER, REC) and (s.endswith(" dropped **") or
                                        s.endswith(" message **")):
            cut = self._cut_before_notice(s, off)
            if cut is not None:
                s, kind = cut
        if kind[0] in (REC, FRAG):
            joined = self._join_stray_lf(s, kind)
            if joined is not None:
                s, kind = joined
        if kind[0] == REC and kind[1] not in self.marks and kind[1] != GARBLED:
            kind = (REC, GARBLED, kind[2])
        return _new_line(SerialLine, (self.lineno,) + kind + (s, off))

    def _cut_foreign_head(self, s, off):
        """User space output cut by a kernel line: the tty sends a line
        in pieces (a transmit FIFO's worth at a time), and a console
        which writes between two pieces starts its line right after the
        first one (`tty-user n=58 baT[   12.348475] pstress ...`; the
        rest of the user's line follows on a line of its own), see
        foreign_head(): (text, kind) of the part before the kernel line,
        a foreign line, and the kernel line is read next as a line of its
        own (same line number, its byte offset inside the line). None
        when the line is not that."""
        i = foreign_head(s)
        if i is None:
            return None
        head = s[:i]
        self.seek((off + len(head), self.lineno - 1))
        return head, (OTHER, "", head)

    def _cut_before_notice(self, s, off):
        """A cut kernel line with a dropped notice glued to its end: (text,
        kind) of the cut line alone, and the notice is read next as a
        line of its own (same line number, its byte offset inside the
        line, so seek() and tell() still work).  None when the line is
        not that."""
        m = _GLUED_DROP_RE.search(s)
        if m is None or m.start() == 0:
            return None
        head = s[:m.start()]
        kind = classify(head)
        if kind[0] not in (REC, FRAG):
            return None
        self.seek((off + len(head), self.lineno - 1))
        return head, kind

    def _join_stray_lf(self, s, kind):
        """A stressor record cut in two by a stray LF, the line end of an
        interrupted owner that landed in the taker's line (seen on i386:
        `A[    8.292500] ps` / `tress r=1 ...`): when this line is a cut
        stressor record and the next one is no kernel line, and the two
        with the LF removed are a valid record, return (text, kind) of
        both as one line with the LF in it, a garbled copy of the record
        for the matcher. None (and nothing read) otherwise."""
        text = kind[2]
        if kind[0] == REC:
            if text.startswith("pstress "):
                m = _PSTRESS_OK_RE.match(text)
                if m is not None:
                    if len(m.group(7)) == int(m.group(5)):
                        # all of its payload: not cut (its crc is the
                        # matcher's business; joining could only make
                        # the payload too long)
                        return None
                elif parse_pstress(text)[2]:
                    return None
            elif not "pstress ".startswith(text):
                return None
        pos = self.tell()
        nxt = ConsoleLog.next(self)
        if nxt is not None and nxt.raw and "\r" not in nxt.raw:
            whole = s + "\n" + nxt.raw
            wkind = classify(whole)
            if line_kind(nxt)[0] == OTHER and wkind[0] == REC:
                p = parse_pstress(wkind[2].replace("\n", "", 1))
                if p is not None and p[2]:
                    return whole, wkind
        self.seek(pos)
        return None

    def _line_with_cr(self, cl):
        """Terminal noise: a CR inside the line restarts it. But one or
        two bytes after the last CR are a stray byte that came between an
        owner's '\r' and '\n' (`...ghij\r \n`): the line is kept with
        the byte appended, so it is checked as a corrupted copy. And a
        single CR that leaves no kernel line after it is itself the
        stray byte, the CR of an interrupted owner's line end
        (`A[   14.50502\r6] pstress ...`, seen on i386): the line is kept
        with the CR in it, a garbled copy of the record."""
        b = cl.raw
        head, _, tail = b.rpartition("\r")
        last = head.split("\r")[-1]
        if 0 < len(tail) <= 2 and len(last) > 8:
            s = last + tail
        else:
            s = tail or b.replace("\r", "")
        kind = classify(s)
        if kind[0] not in (REC, DROPPED, REPLAY) and b.count("\r") == 1:
            whole_kind = line_kind(cl)
            if whole_kind[0] == REC:
                s, kind = b, whole_kind
        return _new_line(SerialLine, (self.lineno,) + kind + (s, cl.offset))


def scan_serial(path, limit=2000):
    """Quick scan of the first `limit` lines: count line kinds (input
    validation: a serial log must have kernel console lines)."""
    counts = {REC: 0, DROPPED: 0, REPLAY: 0, FRAG: 0, OTHER: 0}
    r = SerialReader(path)
    try:
        n = 0
        while True:
            sl = r.next()
            if sl is None:
                break
            counts[sl.kind] += 1
            n += 1
            if limit and n >= limit:
                break
    finally:
        r.close()
    return counts
