"""The serial console log, console.log (docs/interfaces.md section 2): the
one reader of it.

A kernel line on the log is the console's marker (A: printed atomically,
T: by the printer thread; none on early lines and on a legacy console),
the record's time stamp `[  sec.usec]`, with CONFIG_PRINTK_CALLER the
caller `[    T1]`, a blank and the text; the UART driver ends it with
`\\r\\n`:

    A[    5.861777] text

Everything that reads the log reads it here, as typed lines
(ConsoleLine): lines(path) one after the other, ConsoleLog(path) as a
cursor that can go back (tell(), seek()); parse() types one line that a
reader cut or joined itself; contains(path, text) says whether the
log holds a text anywhere, without typing a line.  LINE_RE is the one
pattern of the prefix.
What a module does with a damaged line (a stray byte in the prefix, a
line cut by another, a notice glued to one) stays in that module, on
the typed lines it reads here.
"""

import io
import locale
import lzma
import re
from collections import namedtuple

# marker, stamp, caller, the blank and the text of a kernel line
STAMP = r"\[\s*(\d+\.\d+)\]"
LINE_RE = re.compile(r"([AT]?)%s(\[\s*[TC]\d+\])?( ?)(.*)" % STAMP, re.S)

ConsoleLine = namedtuple("ConsoleLine", "lineno marker stamp caller glued text raw offset end")
ConsoleLine.__doc__ = """One line of the log.

lineno  its number (from 1)
marker  "A" or "T" of a kernel line, else ""
stamp   the time stamp of a kernel line as printed, without the blanks
        ("5.861777"); None: no kernel line
caller  the caller field as printed (`[    T1]`), or None
glued   the text follows the prefix without the blank (a stray byte
        there: no kernel line as the kernel prints it)
text    what follows the prefix and its blank; the whole line without one
raw     the line without its line end
offset  where the line starts in the file (bytes)
end     the line end as read: "\\r\\n", "\\n", "" for a last line without
"""
_new = tuple.__new__


def parse(raw, lineno=0, offset=0, end=""):
    """The typed line of `raw` (a line without its end)."""
    c0 = raw[:1]
    if c0 == "[" or (c0 in ("A", "T") and raw[1:2] == "["):
        # the common line, `A[  sec.usec] text`, without the regex (its
        # \d is a decimal digit, and so is what isdecimal() takes)
        i = raw.find("] ")
        st = 1 if c0 == "[" else 2
        if i > 0 and raw[i - 7:i - 6] == "." and raw[i - 6:i].isdecimal() and \
                raw[st:i - 7].lstrip(" ").isdecimal() and raw[i + 2:i + 3] != "[":
            return _new(ConsoleLine, (lineno, "" if c0 == "[" else c0, raw[st:i].lstrip(" "),
                                      None, False, raw[i + 2:], raw, offset, end))
        m = LINE_RE.match(raw)
        if m is not None:
            marker, stamp, caller, blank, text = m.groups()
            return _new(ConsoleLine, (lineno, marker, stamp, caller, not blank and text != "",
                                      text, raw, offset, end))
    return _new(ConsoleLine, (lineno, "", None, None, False, raw, raw, offset, end))


def find_stamp(s):
    """The time stamp of the first kernel line prefix anywhere in `s`
    (after user space output, or a line cut by it), or None."""
    m = LINE_RE.search(s)
    return m.group(2) if m is not None else None


def open_log(path):
    """The log as a binary file.  A log compressed with xz (`.xz`) is
    decompressed into memory first: rewinding an xz stream means
    decompressing it again from its start."""
    if str(path).endswith(".xz"):
        with lzma.open(path) as f:
            return io.BytesIO(f.read())
    return open(path, "rb")


def _codec(encoding):
    """None: the locale's, as open() in text mode has it."""
    return encoding or locale.getpreferredencoding(False)


class ConsoleLog:
    """A cursor over the log: next() is the next typed line (None at the
    end); tell() and seek() go back to a line, or into one (a reader
    that cut a line reads the rest of it as a line of its own, with the
    same number).  Lines end at LF; the CRs before it are the line end
    too.  Decoded as latin-1 unless told: one character a byte."""

    def __init__(self, path, encoding="latin-1", errors="strict"):
        self.path = path
        self.fh = open_log(path)
        self.encoding = _codec(encoding)
        self.errors = errors
        self.lineno = 0
        self.off = 0
        self.eof = False

    def next(self):
        off = self.off
        b = self.fh.readline()
        if not b:
            self.eof = True
            return None
        self.off = off + len(b)
        self.lineno += 1
        s = b.rstrip(b"\r\n")
        return parse(s.decode(self.encoding, self.errors), self.lineno, off,
                     b[len(s):].decode("latin-1"))

    def __iter__(self):
        return iter(self.next, None)

    def count_rest(self):
        """Number of lines left (read without typing them)."""
        n = 0
        for _ in self.fh:
            n += 1
        self.eof = True
        self.lineno += n
        return n

    def tell(self):
        return (self.off, self.lineno)

    def seek(self, pos):
        """Back (or on) to `pos` of tell(): the next line read starts at
        byte pos[0] and is numbered pos[1] + 1."""
        self.fh.seek(pos[0])
        self.off = pos[0]
        self.lineno = pos[1]
        self.eof = False

    def close(self):
        self.fh.close()


def contains(path, text, chunk=1 << 20):
    """The log at `path` holds `text` (a str of latin-1 characters)
    anywhere: read in chunks, not as lines, a block's end kept for a
    text that spans two."""
    want = text.encode("latin-1")
    tail = b""
    with open_log(path) as f:
        while True:
            block = f.read(chunk)
            if not block:
                return False
            if want in tail + block:
                return True
            tail = block[-len(want):]


def lines(path, encoding="latin-1", errors="strict"):
    """The typed lines of the log at `path`, in order."""
    log = ConsoleLog(path, encoding, errors)
    try:
        yield from log
    finally:
        log.close()
