"""The lookahead of the serial alignment: the lines of the serial log
read ahead of the place the alignment has reached, and the searches in
them for a record's line (whole, joined across lines, or a damaged
copy).

A Lookahead owns the log's reader (serial.SerialReader, typed lines)
and the lines read from it and not taken yet, oldest first; the
alignment (serialcheck.SerialChecker) reads and takes lines only
through it, by their index from the first line not taken.

Invariants:
  * nothing is taken by a search: it returns an index into the
    lookahead, and the caller takes the lines (`take()`, `consume()`);
  * a search looks at most WINDOW lines ahead (the post-trace search
    a few times that), so memory stays bounded; only `scan_for()`, for
    the sync, reads on to the end of the log, and it goes back to
    where it started when it finds nothing.
"""

from collections import deque

from .pstress import MULTILINE_MAX, parse_pstress, pstress_damaged_copy
from .serial import SerialReader, REC, OTHER
from .serial_diff import one_edit

WINDOW = 400


class Lookahead:
    """The lines read ahead on the serial log at `path`: `buf` those read
    and not taken, oldest first; `reader` the place after them."""

    def __init__(self, path):
        self.reader = SerialReader(path)
        self.buf = deque()

    # ------------------------------------------------------------ reading
    def past_other(self, i):
        """(j, line): the first lookahead line from i on that is not
        foreign output (OTHER), looking at most up to index 40; line is
        None when the log ends first."""
        sl = self.get(i)
        while sl is not None and sl.kind == OTHER and i < 40:
            i += 1
            sl = self.get(i)
        return i, sl

    def get(self, i):
        """i-th line of the lookahead (reading more as needed) or None."""
        while len(self.buf) <= i:
            sl = self.reader.next()
            if sl is None:
                return None
            self.buf.append(sl)
        return self.buf[i]

    def __len__(self):
        """How many lines are read ahead and not taken."""
        return len(self.buf)

    def consume(self, n):
        for _ in range(n):
            self.buf.popleft()

    def take(self):
        """The next line, taken: the first read ahead, else the next on
        the log; None at its end."""
        return self.buf.popleft() if self.buf else self.reader.next()

    def tell(self):
        """Where the first line not taken is on the log (as the reader's
        tell())."""
        return (self.buf[0].offset, self.buf[0].lineno - 1) if self.buf else self.reader.tell()

    def reread(self, start, at):
        """Go back to `start` (of tell()) and yield the lines from there
        up to the one at `at`; that one is then the first read ahead."""
        self.buf.clear()
        self.reader.seek(start)
        while True:
            pos = self.reader.tell()
            sl = self.reader.next()
            if sl is None or pos[0] == at[0]:
                if sl is not None:
                    self.buf.append(sl)
                return
            yield sl

    @property
    def lineno(self):
        """The number of the last line read from the log."""
        return self.reader.lineno

    def close(self):
        self.buf.clear()
        self.reader.close()

    # ------------------------------------------------------------ searches
    def scan_for(self, first, most):
        """The lines from the first not taken on up to the first complete
        line `first`, as (position, line), at most `most` of them; None
        when the rest of the log has no such line.  Nothing is taken."""
        back = deque(maxlen=most)
        for sl in self.buf:
            back.append(((sl.offset, sl.lineno - 1), sl))
            if sl.kind == REC and sl.text == first:
                return back
        r = self.reader
        rest = r.tell()
        while True:
            pos = r.tell()
            sl = r.next()
            if sl is None:
                r.seek(rest)
                return None
            back.append((pos, sl))
            if sl.kind == REC and sl.text == first:
                return back

    def whole_copy_end(self, i, text):
        """The lookahead index of the last line of a complete copy of
        `text` whose first line is at i (the trace joins the lines of a
        multi-line record with blanks), or None."""
        sl = self.get(i)
        if text is None or sl is None or sl.kind != REC or not text.startswith(sl.text):
            return None
        acc = sl.text
        while acc != text:
            nx = self.get(i + 1)
            if nx is None or nx.kind != REC or not text.startswith(acc + " " + nx.text):
                return None
            acc += " " + nx.text
            i += 1
        return i

    def search(self, first, limit, passed_over=None):
        """Index in the lookahead of the complete line for `first`, or
        None; `first` None: any complete kernel line but those that
        `passed_over(line)` says to pass over."""
        i = 0
        while i < limit:
            sl = self.get(i)
            if sl is None:
                return None
            if sl.kind == REC and (first is None or sl.text == first):
                if first is None and passed_over is not None and passed_over(sl):
                    i += 1
                    continue
                return i
            i += 1
        return None

    def search_joined(self, text):
        """(first, last) lookahead indices of two or more consecutive
        complete lines whose texts joined by blanks equal `text`, or
        None."""
        for i in range(WINDOW):
            if self.get(i) is None:
                return None
            j = self.whole_copy_end(i, text)
            if j is not None and j > i:
                return i, j
        return None

    def find_corrupt_joined(self, text, known):
        """(first, last) lookahead indices of two or more consecutive
        complete lines whose texts joined by blanks are `text` with one
        byte inserted, lost or changed (a damaged copy of a multi-line
        record; a line break inserted is a blank more), or None.  A run
        that is a stored record's text (one of `known`) is that
        record."""
        n = len(text)
        for i in range(WINDOW):
            sl = self.get(i)
            if sl is None:
                return None
            if sl.kind != REC:
                continue
            acc, j = sl.text, i
            # the first line is the text's start or one byte off it, so
            # one of its halves is in place (a cheap test: this search
            # runs for every record not found on the log)
            m = len(acc)
            h = m // 2
            if not text.startswith(acc[:h]) and \
                    not any(text.startswith(acc[h:], h + d) for d in (-1, 0, 1)):
                continue
            while len(acc) < n + 1:
                nx = self.get(j + 1)
                if nx is None or nx.kind != REC:
                    break
                acc += " " + nx.text
                j += 1
                if one_edit(text, acc) and acc not in known:
                    return i, j
        return None

    def find_corrupt(self, first, known):
        """Index in the lines read ahead (no more are read) of a damaged
        copy of the line `first`, or None; a line that is the text of
        another stored record (one of `known`) is that record."""
        if first is None:
            return None
        p = parse_pstress(first)
        for i in range(min(len(self.buf), WINDOW)):
            sl = self.buf[i]
            if sl.kind != REC:
                continue
            if p is not None and p[0] is not None:
                q = parse_pstress(sl.text)
                if q is not None and q[0] == p[0] and q[1] == p[1]:
                    return i
                if q is not None and pstress_damaged_copy(first, sl.text):
                    return i
            elif sl.text[:24] == first[:24] and len(first) >= 24:
                return i
        # One byte inserted, lost or replaced anywhere (stray bytes of an
        # owner that lost the console: "x=hardir6q", "pstressd", "ABCDElF")
        # (a line that is exactly another stored record is that record)
        n = len(first)
        for i in range(min(len(self.buf), WINDOW)):
            sl = self.buf[i]
            if sl.kind == REC and abs(len(sl.text) - n) <= 1 and one_edit(first, sl.text) \
                    and sl.text not in known:
                return i
        # A few bytes inserted or lost anywhere (a stressor record with a
        # stray byte in its payload does not even parse any more): a line
        # of about the same length that is nearly the same text.  Only on
        # this rare path, so difflib's cost does not matter.
        from difflib import SequenceMatcher
        n = len(first)
        if n < 16:
            return None
        # the same record, not a neighbour: a stressor record's header up
        # to its n= (payloads are rotations of one alphabet and look alike)
        j = first.find(" l=") if first.startswith("pstress ") else -1
        head = first[:j + 1] if j > 0 else first[:8]
        for i in range(min(len(self.buf), WINDOW)):
            sl = self.buf[i]
            if sl.kind != REC or abs(len(sl.text) - n) > 8 or not sl.text.startswith(head) \
                    or sl.text in known:
                continue
            sm = SequenceMatcher(None, first, sl.text, autojunk=False)
            if sm.real_quick_ratio() >= 0.95 and sm.quick_ratio() >= 0.95 and \
                    sm.ratio() >= 0.95:
                return i
        return None

    def search_one_off(self, first, limit):
        """Index in the lookahead of a complete line one byte off `first`
        (a byte inserted, lost or changed), or None."""
        for i in range(limit):
            sl = self.get(i)
            if sl is None:
                return None
            if sl.kind == REC and one_edit(first, sl.text):
                return i
        return None

    def join_continued(self, sl):
        """(text, lines) of a stressor record whose first line is sl and
        whose further lines follow it in the lookahead (the multiline
        shape; its lines joined by blanks, as the trace joins them), and
        how many further lines it has; (sl.text, 0) for anything else.
        The record's checksum decides where it ends."""
        if sl.kind != REC or not sl.text.startswith("pstress v=2 ") or \
                parse_pstress(sl.text)[2]:
            return sl.text, 0
        acc = sl.text
        for i in range(MULTILINE_MAX - 1):
            nx = self.get(i)
            if nx is None or nx.kind != REC or nx.text.startswith("pstress v="):
                break
            acc += " " + nx.text
            if parse_pstress(acc)[2]:
                return acc, i + 1
        return sl.text, 0
