"""Boot log end to end: every record dmesg shows must be on the console.

The trace only covers what happens while trace-cmd records; the boot log
does not have that. This check compares the kernel's own view of its log
(`dmesg`, saved by a scenario as dmesg.txt) with the serial console:
every dmesg line must appear complete on the console, in the same order.
A line that a takeover cut short may stand before its reprint (the partial
line is a prefix of the full one); a full line printed twice is counted
as a repeat for the trace analysis to judge, and so is a line with one
byte inserted, lost or replaced (in its text or its time stamp) of a
record the trace stored (its `nobkl_store` is in the trace: the trace
analysis tells a documented stray byte from a corruption).  Whether the
trace stored a record is the analysis' export `trace.stored_lines_crc32`
(`stored_lines()` writes it, `stored_in_trace()` reads it), never the
record's time stamp against the trace's: the two come from different
CPUs' clocks.
"""

import re
import zlib

from . import consolelog
from .serial import OTHER, REC, foreign_head, line_kind
from .serial_diff import one_edit

_LEVEL = re.compile(r"^<(\d+)>")


def _stamped(line):
    """(timestamp, text) of a typed line with a time stamp and no marker,
    the text as it follows the stamp: with the caller in front of it and
    without the blank between (the dmesg side's text has it so)."""
    text = line.text
    if line.caller is not None:
        text = line.caller + ("" if line.glued else " ") + text
    return line.stamp, text


def dmesg_records(lines, console_loglevel=8):
    """(timestamp, text, line) of each dmesg line that the console shows.

    With `dmesg -r` each line starts with its syslog prefix `<N>`; only
    records whose level (N & 7) is below the console loglevel are printed
    on a console, so only those are expected there.
    """
    out = []
    for line in lines:
        line = line.rstrip("\r\n")
        lv = _LEVEL.match(line)
        if lv:
            line = line[lv.end():]
            if int(lv.group(1)) & 7 >= console_loglevel:
                continue
        p = consolelog.parse(line)
        if p.stamp is not None and not p.marker:
            ts, text = _stamped(p)
            out.append((ts, text.rstrip(), line))
    return out


def console_records(lines):
    """(timestamp, text, lineno) of each console line that is a record.
    `lines`: strings (a line end is dropped), or typed lines
    (consolelog.ConsoleLine)."""
    out = []
    for no, line in enumerate(lines, 1):
        if type(line) is str:
            line = consolelog.parse(line.rstrip("\r\n").rstrip("\r"), no)
        no = line.lineno
        kind = line_kind(line)[0]
        head = foreign_head(line.raw) if kind == OTHER else None
        if head is not None:
            # user space output before it on the same line
            line, kind = consolelog.parse(line.raw[head:], no), REC
        if kind != REC:
            continue
        if line.stamp is None:
            # a garbled prefix: the time stamp may follow more than one
            # marker (`TA[  1.0] text`: the thread's line cut right
            # after its own)
            line = consolelog.parse(line.raw.lstrip("AT"), no)
        if line.stamp is not None:
            ts, text = _stamped(line)
            out.append((ts, text.rstrip(), no))
    return out


def console_lines(path):
    """The typed lines of the console log as a terminal shows them: a CR
    in a line starts another one (decoded as open() does)."""
    for line in consolelog.lines(path, encoding=None, errors="replace"):
        if "\r" not in line.raw:
            yield line
            continue
        for part in line.raw.split("\r"):
            yield consolelog.parse(part, line.lineno, line.offset)


def _corrupted_copy(ts, text, have_by_stamp, have_by_text):
    """True if the console shows the record with one byte changed: in its
    text, or in its time stamp (a stray byte there, `[    9.2672916]`,
    seen after a panic takeover of an owner inside its unsafe section)."""
    return (any(one_edit(text, other) for other in have_by_stamp.get(ts, ())) or
            any(one_edit(ts, other) for other in have_by_text.get(text, ())))


# register_console() and unregister_console() log the change themselves:
# "printk: console [ttyS0] enabled", "printk: bootconsole [ttyS0] disabled".
CONSOLE_NOTICE = re.compile(r"^printk: (?:boot)?console \[(\w+)\] (enabled|disabled)$")


def unregistered(want, console="ttyS0"):
    """The records of `want` the console could not print: from its own
    "disabled" notice, which unregister_console() stores as the console
    goes away (whether it gets printed first is the printer's luck), up
    to its next "enabled" notice (a console registered again without
    CON_PRINTBUFFER begins with the records stored after it)."""
    gone, skip = False, set()
    for i, (_ts, text, _line) in enumerate(want):
        m = CONSOLE_NOTICE.match(text)
        if m and m.group(1) == console:
            gone = m.group(2) == "disabled"
        if gone:
            skip.add(i)
    return skip


# How many of the records stored last the analysis exports: a dmesg saved
# after the trace holds at most the ringbuffer's descriptors, 4096 for
# the 128 KiB ring (LOG_BUF_SHIFT 17) of the kernels built here.
STORED_TAIL = 8192


def line_crc(text):
    """The CRC-32 of a record's line as dmesg and the console show it
    after the time stamp and the caller, without trailing blanks: 8 hex
    digits."""
    return "%08x" % zlib.crc32(text.rstrip().encode("utf-8", "surrogatepass"))


def stored_lines(texts):
    """The export of the texts of stored records (`trace.stored_lines_crc32`):
    the sorted CRC-32s (line_crc()) of each line of each text, blank
    separated.  A record of several lines is shown a line a stamp."""
    return " ".join(sorted({line_crc(ln) for text in texts for ln in text.split("\n")}))


class StoredLines:
    """`text in stored`: the trace holds the nobkl_store of a record
    with that line (of the exported CRC-32s, stored_lines())."""

    def __init__(self, crcs):
        self.crcs = frozenset(crcs.split())

    def __contains__(self, text):
        return line_crc(text) in self.crcs


def stored_in_trace(analysis):
    """The records the trace stored (StoredLines) from the analysis'
    verdict dict, or None: only an analysis that judged the trace
    (`pass` or `fail`) against the serial log judges a corrupted line,
    and an analysis of before the export tells nothing."""
    if not analysis or analysis.get("verdict") not in ("pass", "fail"):
        return None
    if not (analysis.get("serial") or {}).get("synced"):
        return None
    crcs = (analysis.get("trace") or {}).get("stored_lines_crc32")
    return StoredLines(crcs) if crcs is not None else None


def check_bootlog(dmesg_lines, console_lines, console_loglevel=8, stored=None):
    """Compare dmesg with the console; returns a dict with the findings.

    `missing`: dmesg records never seen complete on the console, but for
    those stored while the console was unregistered (`unregistered()`,
    counted as `while_unregistered`).
    `out_of_order`: records seen only before one that dmesg puts earlier.
    `corrupted_in_trace`: records seen only with one byte changed whose
    store the trace holds: `text in stored` for the record's text after
    its stamp and caller (StoredLines, or a set of texts; None: no trace
    judges them); the others count as missing.  dmesg shows no seq, so
    the record is known by its text only.
    """
    want = dmesg_records(dmesg_lines, console_loglevel)
    have = console_records(console_lines)
    index = {}
    for pos, (ts, text, _no) in enumerate(have):
        index.setdefault((ts, text), []).append(pos)
    have_by_stamp, have_by_text = {}, {}
    for ts, text, _no in have:
        have_by_stamp.setdefault(ts, []).append(text)
        have_by_text.setdefault(text, []).append(ts)
    missing, out_of_order, corrupted = [], [], []
    matched = 0
    cursor = -1
    used = set()
    excused = unregistered(want)
    while_unregistered = 0
    for i, (ts, text, line) in enumerate(want):
        unused = [p for p in index.get((ts, text), ()) if p not in used]
        if not unused and i in excused:
            while_unregistered += 1
            continue
        if not unused:
            if (stored is not None and consolelog.parse(line).text.rstrip() in stored and
                    _corrupted_copy(ts, text, have_by_stamp, have_by_text)):
                corrupted.append(line)
            else:
                missing.append(line)
            continue
        after = [p for p in unused if p > cursor]
        if not after:
            out_of_order.append(line)
            used.add(unused[0])
            continue
        matched += 1
        cursor = after[0]
        used.add(cursor)
    expected = {}
    for ts, text, _line in want:
        expected[(ts, text)] = expected.get((ts, text), 0) + 1
    repeats = sum(max(0, len(index[k]) - n) for k, n in expected.items() if k in index)
    by_stamp = {}
    for ts, text, _line in want:
        by_stamp.setdefault(ts, []).append(text)
    partial = sum(1 for ts, text, _no in have
                  if text not in by_stamp.get(ts, ())
                  and any(w.startswith(text) for w in by_stamp.get(ts, ())))
    return {
        "dmesg_records": len(want),
        "console_records": len(have),
        "matched": matched,
        "missing": missing,
        "while_unregistered": while_unregistered,
        "out_of_order": out_of_order,
        "corrupted_in_trace": corrupted,
        "partial_lines": partial,
        "repeats": repeats,
        "ok": not missing and not out_of_order,
    }


def console_loglevel(printk_path):
    """The first field of /proc/sys/kernel/printk, saved by the scenario."""
    try:
        with open(printk_path) as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 8   # unknown: expect every record


def check_files(dmesg_path, console_path, printk_path=None, stored=None):
    level = console_loglevel(printk_path) if printk_path else 8
    with open(dmesg_path, errors="replace") as d:
        result = check_bootlog(d.readlines(), console_lines(console_path), level, stored)
    result["console_loglevel"] = level
    return result
