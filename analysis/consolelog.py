"""The serial console log, console.log (docs/interfaces.md section 2).

A kernel line on it is the console's marker (A: printed atomically, T:
by the printer thread; none on early lines), the record's time stamp
and the text: `A[    5.861777] text`.
"""

import io
import lzma
import re

# a kernel line: marker, `[  sec.usec]`, the caller with
# CONFIG_PRINTK_CALLER, a blank and the text
LINE_RE = re.compile(r"^([AT]?)\[\s*(\d+\.\d+)\](?:\[\s*[TC]\d+\])?(?: (.*))?$", re.S)


def split(line):
    """(marker, text) of a kernel line, or None."""
    c0 = line[:1]
    if c0 == "[" or (c0 in ("A", "T") and line[1:2] == "["):
        # LINE_RE without the regex; its \d is a decimal digit, and so
        # is what isdecimal() takes (isdigit() would take `²` too)
        i = line.find("] ")
        st = 1 if c0 == "[" else 2
        if i > 0 and line[i - 7:i - 6] == "." and line[i - 6:i].isdecimal() and \
                line[st:i - 7].lstrip(" ").isdecimal() and line[i + 2:i + 3] != "[":
            ctx = "" if c0 == "[" else c0
            return ctx, line[i + 2:]
    m = LINE_RE.match(line)
    if m is not None:
        return m.group(1), m.group(3) or ""
    return None


def open_log(path):
    """The log as a binary file.  A log compressed with xz (`.xz`) is
    decompressed into memory first: rewinding an xz stream means
    decompressing it again from its start."""
    if path.endswith(".xz"):
        with lzma.open(path) as f:
            return io.BytesIO(f.read())
    return open(path, "rb")
