"""The serial log after the trace, for the serial alignment: the
records stored in the trace that the serial console had not committed
when it ended, which follow on the log in seq order, and the rest of
the log after them.

Invariants: a run of those records missing is covered by the dropped
notice before the next one printed, whose count is bounded below by the
records missing and above by the seqs between (serial-dropped); a line
one byte off is corrupt unless a cut line before it left the one stray
byte of an unsafe takeover; after the records, only stressor records
can be judged, by their identity (serial_identities' `_untraced_line()`).
"""

from .model import StrayByte
from .pstress import first_line
from .serial import REC, DROPPED
from .serial_diff import line_stray
from .serial_identities import EARLY_MAX
from .serial_lookahead import WINDOW
from .serial_rules import StoredAfter, EARLY_LINE, POST_MISSING, POST_NO_NOTICE, POST_NOTICE


class AfterTrace:
    """SerialChecker's log after the trace (a class of it: the state is the checker's)."""
    def _place_post(self, post_records):
        """Records stored in the trace that the serial console had not
        committed when it ended follow on the log, in seq order.  A run of
        them that is not there was overwritten after the trace ended: a
        dropped notice before the next one printed covers it.  A notice
        there counts at least the records missing since the last one
        printed, and at most the seqs between the two (serial-dropped);
        the first one also what records below the console loglevel
        carried over in the trace, and must be there if they did."""
        con = self.records.serial_state()
        prev = con.next_seq - 1 if con is not None and con.next_seq is not None else None
        carry = self.counts.carry   # None: unknown, no bound above
        credit = 0
        missing = 0          # records not on the log since the last one printed
        notices = []         # dropped counts of the notices since then
        for seq, text, ts in post_records:
            first = first_line(text)
            k = self.look.search(first, WINDOW * 4)
            att = StoredAfter(seq, ts, text)
            if text[:12] == "pstress v=2 ":
                self._writer_order(text, seq, att, None)
            if k is None and first in self.post_early:
                self._judge(EARLY_LINE, att, None, self.post_early.pop(first))
                continue
            corrupt = False
            if k is None and first in self.records.text_to_seq:
                k = self.look.search_one_off(first, WINDOW * 4)
                corrupt = k is not None
            if k is None:
                if credit <= 0 and not notices:
                    n = self._notice_ahead()
                    if n is not None:
                        credit = n - (carry or 0)
                        notices.append(n)
                missing += 1
                self.producers.account(first)
                if credit > 0:
                    credit -= 1
                    self.stats["post_trace_dropped"] = self.stats.get("post_trace_dropped", 0) + 1
                    continue
                self._judge(POST_MISSING, att, None, first)
                continue
            notices += self._skip_post(k)
            if carry and not notices:
                self._judge(POST_NO_NOTICE, att, None, carry)
            for n in notices:
                if n < max(missing + (carry or 0), 1) or \
                        (prev is not None and carry is not None and n > seq - prev - 1 + carry):
                    self._judge(POST_NOTICE, att, None, (n, missing, None if prev is None
                                                         else seq - prev - 1, carry))
                else:
                    self.stats["dropped_notices_checked"] += 1
            credit, missing, notices, prev, carry = 0, 0, [], seq, 0
            sl = self.look.take()
            self.stats["post_trace_matched"] += 1
            if corrupt:
                self._post_corrupt(att, sl)
            self._consume_continued(sl, text)
            self._after_match(att, sl, corrupt=corrupt, text=text)

    def _post_corrupt(self, att, sl):
        """A record after the trace printed one byte off.  After the trace
        no takeover is seen, but a cut line before it there is an owner
        that lost the console mid-line, the panic flush's unsafe takeover
        at the end of a run: it may have left its one stray byte
        (stray-byte-after-unsafe-panic-takeover), once."""
        cut = StrayByte(None, None, None) if self.post_cut_lines > 0 else None
        att.stray_ok = (cut,) if cut is not None else ()
        self._corrupt(att, "seq %d (stored after the serial console's last traced commit) "
                           "printed one byte off" % att.seq, sl, line_stray(att.text, sl))
        if cut is not None and cut.spent:
            self.post_cut_lines -= 1

    def _notice_ahead(self):
        """The count of a dropped notice before the next complete line (the
        lines up to it consumed), or None."""
        for i in range(min(len(self.look), 50)):
            sl = self.look.get(i)
            if sl.kind == DROPPED:
                self._skip_post(i)
                self.look.take()
                self.stats["dropped_lines"] += 1
                return int(sl.text)
            if sl.kind == REC:
                return None
        return None

    def _skip_post(self, k):
        """Consume k lines after the last traced commit; returns the counts
        of the dropped notices among them."""
        notices = []
        for _ in range(k):
            sl = self.look.take()
            if sl.kind == DROPPED:
                self.stats["dropped_lines"] += 1
                notices.append(int(sl.text))
            else:
                if sl.kind == REC:
                    # it may be the line of a later record: out of order
                    self.post_early[sl.text] = sl.lineno
                    if len(self.post_early) > EARLY_MAX:
                        del self.post_early[next(iter(self.post_early))]
                self._untraced_line(sl, "post")
        return notices

    def _check_tail(self):
        """The rest of the log, after the last line the trace placed."""
        while True:
            sl = self.look.take()
            if sl is None:
                break
            text, more = self.look.join_continued(sl)
            self.look.consume(more)
            self.stats["lines_after_trace"] += 1 + more
            self._untraced_line(sl, "after", text)
