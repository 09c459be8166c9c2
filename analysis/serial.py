"""Serial console log (interfaces.md section 2): its lines, each of a kind,
as the matcher reads them.  The stressor records in them are pstress.py's."""

import re
from collections import namedtuple

from .consolelog import STAMP, ConsoleLog, parse
from .pstress import parse_pstress, pstress_uncut

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
                if pstress_uncut(text):
                    # joining could only make the payload too long
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
