"""Every record once and in its turn, for the serial alignment: the
stressor identities on the log (the producer ledger, producers.py, keeps
them), the lines seen before or after their record's turn, and the
lines outside the traced emissions (before the sync, after the trace).

Invariants:
  * a stressor identity is noted once, with the crc of its first copy;
    another copy is a repeat (serial-partial) or, with another crc or
    one stats.txt says its run never made, a forgery (serial-extra);
  * a record not found in its turn is not missing until its line shows
    up later (`late`: out of order) or the log ends (`_settle_late()`);
  * at most EARLY_MAX lines wait for their turn and RECENT non-stressor
    lines are remembered to know a repeat of one.
"""

from .producers import crc_field
from .pstress import parse_pstress
from .serial import REC, DROPPED, FRAG, OTHER, REPLAY
from .serial_diff import stamp
from .serial_lookahead import WINDOW
from .serial_rules import AFTER_TRACE, BEFORE_TRACE, EARLY_COPY, FORGED, LATE_LINE, MISSING, \
    PRODUCER_GAP, REPEAT, REPEATED_LINE, UNEXPLAINED_LINE, UNPLACED, WRITER_ORDER

EARLY_MAX = 10000       # complete lines kept waiting for their record's turn
RECENT = 4096           # non-stressor lines remembered to know a repeat of one


class Identities:
    """SerialChecker's identities (a class of it: the state is the checker's)."""
    # ------------------------------------------------------------ identities
    # Every record is on the log once, a stressor record by its identity
    # (run, cpu, ctx, n) too, except the copies an interrupted attempt
    # printed before its reprint (matched with that attempt, never noted
    # here).  A second complete copy of the same text is a repeated line
    # (serial-partial, wherever it is: before its turn, after it, outside
    # the trace); another record with an identity already on the log, or
    # one the stressor's stats say it never made, is not the stressor's
    # (serial-extra).

    def _early_copy(self, att, sl, lineno):
        """att's record was also on the log at lineno, before the records
        that precede it."""
        excused = any(a.seq == att.seq and id(a) not in self.used for a in self.interrupted)
        self._judge(EARLY_COPY, att, sl, (lineno, excused))

    def _not_found(self, att, first):
        """att's committed record is not within WINDOW lines: missing,
        unless its line comes later (then out of order, serial-order).
        Decided when that line shows up, or at the end."""
        if first is None:
            self._missing(att, first)
            return
        self.late[first] = att
        if len(self.late) > EARLY_MAX:
            old = next(iter(self.late))
            self._missing(self.late.pop(old), old)

    def _missing(self, att, first):
        """A committed record whose line is nowhere it could be."""
        self._judge(MISSING, att, None, (first, WINDOW))

    def _settle_late(self):
        """The end of the log: the records not found in their turn that
        never showed up are missing."""
        for first, att in list(self.late.items()):
            self._missing(att, first)
        self.late = {}

    def _late_line(self, sl):
        """sl is the line of a record reported not found in its turn."""
        att = self.late.pop(sl.text)
        self.producers.note_text(sl.text)
        if sl.kind == REC and not sl.text.startswith("pstress "):
            self._remember_line(sl)
        self._judge(LATE_LINE, att, sl, WINDOW)

    def _placed(self, prod, n, crc, att, sl):
        """The trace placed this stressor record (a commit, or a record
        stored after the last traced commit): note its identity."""
        first = self.producers.place(prod, n, crc)
        where = "earlier"
        early = self.early_ids.pop((prod, n), None) if self.early_ids else None
        if first is None and early is not None:
            first, where = early[1], "at line %d, before its turn" % early[0].lineno
        if first is not None:
            self._repeat_or_forgery(att, sl, prod, n, first == crc, where)
        self.last_id = (prod, n)

    def _unexplained(self, att, sl, text):
        """A complete line before att's (`text`: a multi-line record's
        lines joined) that no interrupted attempt explains and no later
        record's turn will: a stressor record by its identity, else a
        copy of a line placed before, else a line no emission explains."""
        p = parse_pstress(text)
        if p is not None and p[0] is not None and p[2]:
            prod, n = p[0], p[1]
            crc = crc_field(text)
            first = self.producers.first_crc(prod, n)
            if first is not None:
                self._repeat_or_forgery(att, sl, prod, n, first == crc, "earlier")
                return
            if self.producers.never_produced(prod, n):
                self._forged(att, sl, prod, n)
                return
            # not stored in the trace yet: its own turn tells
            self.early_ids[(prod, n)] = (sl, crc, att)
            if len(self.early_ids) > EARLY_MAX:
                self._unplaced(*self.early_ids.pop(next(iter(self.early_ids))))
            return
        if (stamp(sl.raw), sl.text) in self.recent:
            self._judge(REPEATED_LINE, att, sl, False)
            return
        self._judge(UNEXPLAINED_LINE, att, sl, None)

    def _untraced_line(self, sl, where, text=None):
        """A line of the log that no traced emission placed: `where` is
        "before" (before the first one placed), "post" (between records
        stored after the last traced commit) or "after" (after all of
        them); `text`: the record's lines joined by blanks when sl is the
        first of a multi-line record (_join_continued()).  Only stressor
        records can be judged there, by their identity; a new one there
        (not stored in the trace) means the trace ended before the
        stressor run did."""
        if text is None:
            text = sl.text
        kind = sl.kind
        if kind == OTHER:
            self.stats["foreign_lines"] += 1
            return
        if kind == REPLAY:
            self.stats["replay_markers"] += 1
            return
        if kind == DROPPED:
            self.stats["dropped_lines"] += 1
            self.stats["dropped_notices_unchecked"] += 1
            return
        if kind == REC and self.late and text in self.late:
            self._late_line(sl)
            return
        p = parse_pstress(text) if kind == REC else None
        if kind == FRAG or (p is not None and (p[0] is None or not p[2])) or \
                (p is None and kind == REC and "pstress v=".startswith(text[:10])):
            self.stats["partial_lines"] += 1    # cut or damaged: no owner to check
            if where == "post":
                self.post_cut_lines += 1
            return
        if p is None:
            self.stats["untraced_kernel_lines"] += 1
            return
        prod, n = p[0], p[1]
        ident = (prod, n)
        crc = crc_field(text)
        first = self.producers.first_crc(prod, n)
        where_first = "earlier"
        if first is None and ident in self.early_ids:
            e = self.early_ids.pop(ident)
            first, where_first = e[1], "at line %d" % e[0].lineno
        if first is not None:
            if first == crc and self.untraced_after and ident == self.last_id and \
                    where != "before":
                # after the end of the trace nothing tells whether the
                # previous copy was an interrupted attempt's
                self.stats["unverified_reprints_after_trace"] += 1
                return
            self._repeat_or_forgery(AFTER_TRACE, sl, prod, n, first == crc, where_first)
            return
        if self.producers.never_produced(prod, n):
            self._forged(AFTER_TRACE, sl, prod, n)
            return
        self.producers.log(prod, n).add(n, crc)
        self.last_id = ident
        if len(prod) == 4 and where != "post":
            # (a line between the records stored after the last traced
            # commit is checked in seq order when its record's turn comes)
            before = where == "before"
            self._writer_order(text, None, BEFORE_TRACE if before else AFTER_TRACE, sl, before)
        if where == "before":
            self.stats["stressor_records_before_trace"] += 1
            return
        self.stats["stressor_records_after_trace"] += 1
        if text not in self.records.text_to_seq:
            self.untraced_after += 1
            self.untraced_runs.add(prod[0])

    def _writer_order(self, text, seq, att, sl, before=False):
        """A version 2 stressor record in the order the trace tells: the
        producer ledger keeps each writer's highest n."""
        msg = self.producers.writer_order(text, seq, before)
        if msg is not None:
            self._judge(WRITER_ORDER, att, sl, msg)

    def _repeat_or_forgery(self, att, sl, prod, n, same, where):
        """A stressor identity seen again (`same`: with the same crc)."""
        self.stats["producer_repeats"] += 1
        self._judge(REPEAT, att, sl, (prod, n, same, where))

    def _forged(self, att, sl, prod, n):
        """A stressor record that stats.txt says its run never made."""
        self._judge(FORGED, att, sl, (prod, n, self.producers.expected.get(prod)))

    def _trace_damage(self, att, sl):
        """att's stored text is damaged in the trace (damaged_in_trace());
        its line is the record's: no fault of the console."""
        self.stats["stored_texts_damaged"] = self.stats.get("stored_texts_damaged", 0) + 1
        if len(self.damaged_texts) < 20:
            self.damaged_texts.append(att.seq)

    def _unplaced(self, sl, crc, att):
        """A stressor record seen before its turn, whose turn never came.
        Its number is on the log all the same: no producer gap there."""
        p = parse_pstress(sl.text)
        self._judge(UNPLACED, att, sl, (p[0], p[1]))
        self.producers.note(p[0], p[1], crc)

    def _remember_line(self, sl):
        """A non-stressor line placed: a later copy of it is a repeat."""
        recent = self.recent
        recent[(stamp(sl.raw), sl.text)] = None
        if len(recent) > RECENT:
            del recent[next(iter(recent))]

    def _check_producer_gaps(self, full, covered):
        """The producers' numbers on the whole log, from the producer
        ledger.  Not after trace loss: the dropped counts of the lost
        part are unknown."""
        if self.records.loss_seen:
            return
        for msg in self.producers.gaps(full, self.records.pstress_printable, covered):
            self._judge(PRODUCER_GAP, AFTER_TRACE, None, msg)
