"""A serial line set against a record's text: the same but for one
byte (inserted, lost or changed), the stray byte that makes the
difference, a damaged copy, the time stamp a copy shares.

Pure functions of strings (and of serial.SerialLine's fields): they
judge nothing, the serial alignment decides what a difference means.
"""

from .pstress import parse_pstress
from .serial import REC, GARBLED, classify


def stamp(raw):
    """The `sec.usec` of a serial line's prefix (a copy of a line has the
    same; another record with the same text has not, normally)."""
    i = raw.find("[")
    j = raw.find("]", i + 1)
    return raw[i + 1:j].strip() if 0 <= i < j else None


PSTRESS_CTXS = ("task", "hardirq", "nmi", "emerg", "panic")    # interfaces.md section 3


def damaged_in_trace(stored, line):
    """The stored text of a record is damaged in the trace, not its line
    on the log: the line is a valid stressor record (its checksum holds,
    so the stressor made it and the console printed it whole), the stored
    text is none (or names no context of the stressor), and the two
    differ in one byte (what one flipped bit of trace.dat does, e.g.
    `c=3` -> `c53` or `x=task` -> `x=taqk` in the header, where the
    reader's own record check cannot look).  The console prints what the
    ringbuffer holds; it cannot turn a damaged text into a valid record."""
    if len(stored) != len(line) or sum(a != b for a, b in zip(stored, line)) != 1:
        return False
    p = parse_pstress(line)
    if p is None or not p[2]:
        return False
    q = parse_pstress(stored)
    # a version 1 checksum does not cover the header: a stored `x=taqk`
    # is a valid record, but of no context the stressor has
    return q is None or not q[2] or q[0][2] not in PSTRESS_CTXS


def may_be_multi_line(text):
    """text, as the trace stores a record (the lines of a multi-line one
    joined by blanks), may be of several lines: it has a blank, and it is
    no stressor record of one line (nine blanks in version 2, eight when
    cut at the line limit before its ` k=`, seven in version 1; a line
    break in the payload is one more, interfaces.md section 3).  Most
    records are stressor records of one line: this spares them the
    search for a damaged copy across lines."""
    if text is None or " " not in text:
        return False
    one_line = 9 if text[-11:-8] == " k=" else 8
    return not (text[:8] == "pstress " and text.count(" ") <= one_line)


def inserted_byte(want, got):
    """The byte `got` has more than `want` when it is `want` with one
    byte inserted, else None."""
    if want is None or got is None or len(got) != len(want) + 1:
        return None
    i = 0
    n = len(want)
    while i < n and want[i] == got[i]:
        i += 1
    return got[i] if got[i + 1:] == want[i:] else None


def prefix_stray(sl):
    """The byte in or before the `[  sec.usec]` prefix of a line read as
    garbled (serial.GARBLED) whose removal leaves a well-formed kernel
    line of the same text, else None."""
    raw = sl.raw
    for i in range(len(raw) - len(sl.text)):
        kind, ctx, text = classify(raw[:i] + raw[i + 1:])
        if kind == REC and ctx != GARBLED and text == sl.text:
            return raw[i]
    return None


def line_stray(want, sl):
    """The one byte by which the serial line sl is the line `want` (a
    record's text) with a byte inserted, in its text or its prefix, else
    None (no line, another damage, or more)."""
    if sl is None or sl.kind != REC or want is None:
        return None
    if sl.ctx == GARBLED:
        return prefix_stray(sl) if sl.text == want else None
    return inserted_byte(want, sl.text)


def valid_without_one_byte(text):
    """The byte whose removal makes `text` a valid stressor record, or
    None."""
    for i in range(len(text)):
        p = parse_pstress(text[:i] + text[i + 1:])
        if p is not None and p[2]:
            return text[i]
    return None


def near_copy(want, text):
    """text may be a damaged copy of the line want: the same first 24
    characters, or one character changed (what _find_corrupt() takes
    first)."""
    return (len(want) >= 24 and text[:24] == want[:24]) or one_edit(want, text)


def one_edit(a, b):
    """b is a with one character inserted, deleted or replaced (a != b)."""
    if a == b:
        return False
    i = 0
    m = min(len(a), len(b))
    while i < m and a[i] == b[i]:
        i += 1
    if len(b) == len(a) + 1:
        return b[:i] + b[i + 1:] == a
    if len(a) == len(b) + 1:
        return a[:i] + a[i + 1:] == b
    return len(a) == len(b) and a[i + 1:] == b[i + 1:]
