"""Placing in turn, the core of the serial alignment: each attempt of
the serial console, in the order the trace ended them, set against the
next lines of the serial log.

A committed record's line is searched for in the lookahead
(`_committed_synced()`): whole, as the lines of a multi-line record, or
a damaged copy; the lines before it are placed on the way
(`_place_skipped()`: cut or repeated lines of the interrupted attempts
since the last committed record, lines of later records, notices and
markers).  An attempt that did not commit may have printed a cut or
whole line next (`_interrupted()`).  A record placed is then counted
and its stressor identity noted (`_after_match()`).

Invariants:
  * each interrupted attempt explains at most one cut or repeated line
    (`used`), and is forgotten once a committed record is placed
    (`_forget_interrupted()`);
  * the one tolerance of the serial rules is granted here
    (`_corrupt()`, `_spend()`, `_stray_byte_line()`): one stray byte of
    an unsafe victim, once per victim, counted; anything else wrong with
    a line is a CORRUPT placement.
"""

from .console_output import replays
from .producers import crc_field
from .pstress import PRINTK_TRUNC_MSG, parse_pstress
from .serial import REC, DROPPED, FRAG, OTHER, GARBLED, REPLAY, is_garbled_notice
from .serial_diff import damaged_in_trace, inserted_byte, line_stray, may_be_multi_line, \
    one_edit, prefix_stray, valid_without_one_byte
from .serial_identities import EARLY_MAX
from .serial_lookahead import WINDOW
from .serial_rules import CORRUPT, CUT_LINE, EARLY_LINE, INTERRUPTED_LINE


class Placing:
    """SerialChecker's placing in turn (a class of it: the state is the checker's)."""
    def _corrupt(self, att, msg, sl=None, stray=None):
        """A line of att's emission is corrupted (`msg` says how; `stray`:
        the byte the line has more than it should, when that is all that
        is wrong with it).  The tolerance is granted here, as the model
        grants the trace's: when the final panic flush took the console
        over from an owner inside its unsafe section and that owner had
        not noticed yet, it may still have written the byte of that
        section, one byte of its own line, once (Attempt.stray_ok, see
        docs/analysis.md); anything else is a corrupt placement."""
        if stray is not None and att is not None and self._spend(att.stray_ok, stray):
            return
        self._judge(CORRUPT, att, sl, msg)

    def _spend(self, allowances, byte):
        """Grant `byte` as the stray byte of one of the unsafe victims
        (model.StrayByte) whose byte may hit the line, and spend it."""
        for b in allowances:
            if b.may_be(byte):
                b.spent = True
                self.stats["stray_after_unsafe_takeover"] = \
                    self.stats.get("stray_after_unsafe_takeover", 0) + 1
                return True
        return False

    def _is_partial_of(self, sl, text):
        if sl.kind == FRAG:
            return True
        if sl.kind != REC:
            return False
        if text is None:
            return True
        return text.startswith(sl.text)

    def _interrupted(self, att, allowed):
        """An attempt that did not commit: its line, if any, is next on
        the log, cut or whole, at most one per attempt (`allowed`: it
        lost ownership, or is open); a whole copy is the attempt's only
        when the reprint's copy follows."""
        if not self.synced:
            # held back in order with the committed records before the sync
            self.presync.append(att)
            return
        self.interrupted.append(att)
        # what this attempt printed (if anything) is next, after foreign lines
        i = 0
        while True:
            sl = self.look.get(i)
            if sl is None:
                return
            if sl.kind == OTHER:
                i += 1
                if i > 20:
                    return
                continue
            break
        marker = None
        if sl.kind == REPLAY and replays(self.output, att):
            # the marker this reprint printed before it was interrupted
            marker = sl
            i, sl = self.look.past_other(i + 1)
            if sl is None:
                return
        notice = None
        want, exact = self.counts.owed(att)
        if sl.kind == DROPPED and (want or not exact):
            notice = sl
            i, sl = self.look.past_other(i + 1)
            if sl is None:
                self._count_skipped(i)
                return
        if self._is_partial_of(sl, att.text) and not self._is_next_committed_line(sl, att):
            last = self.look.whole_copy_end(i, att.text)
            if last is not None:
                # A complete copy is this attempt's output only when the
                # reprint's copy (or cut line) follows; else the attempt
                # wrote nothing (lost at its first console_can_proceed())
                # and the line is the reprint's. The reprint's copy may
                # carry the attempt's last byte, the stray LF of its line
                # end (a copy one byte off), but a line that is another
                # stored record is that record, however alike the two are.
                first = sl.text
                j = last + 1
                nxt = self.look.get(j)
                while nxt is not None and nxt.kind in (OTHER, DROPPED, REPLAY) and j < i + 40:
                    j += 1
                    nxt = self.look.get(j)
                if nxt is None or not (self._is_partial_of(nxt, att.text) or
                                       (nxt.kind == REC and one_edit(first, nxt.text) and
                                        not self._is_next_committed_line(nxt, att))):
                    return
                self.stats["reprinted_full_lines"] += 1
            else:
                self.stats["partial_lines"] += 1
            self._judge(INTERRUPTED_LINE, att, sl, allowed)
            if marker is not None:
                self.marker_used.add(id(att))
                self.stats["replay_markers_checked"] += 1
            if notice is not None:
                self.notice_used.add(id(att))
                self._place_notice(att, notice)
            self._count_skipped(i)
            self.look.consume(1)
            self.stats["partial_lines"] += self._consume_continued(sl, att.text)
            self.used.add(id(att))

    def _consume_continued(self, sl, text):
        """After the first line sl of a record (the trace joins the lines
        of a multi-line one with blanks): consume its further lines, of
        an interrupted attempt the complete ones and a last, cut, one (cut
        inside its prefix too).  Returns how many."""
        if sl.kind != REC or text is None or text[len(sl.text):len(sl.text) + 1] != " ":
            return 0
        acc, k = sl.text, 0
        while True:
            nx = self.look.get(0)
            if nx is not None and nx.kind == FRAG:
                self.look.consume(1)
                return k + 1
            if nx is None or nx.kind != REC or not text.startswith(acc + " " + nx.text):
                return k
            acc += " " + nx.text
            self.look.consume(1)
            k += 1
    def _is_next_committed_line(self, sl, att):
        # A complete line that is exactly a *different* stored record.
        if sl.kind != REC:
            return False
        s = self.records.text_to_seq.get(sl.text, self.held_text_to_seq.get(sl.text))
        return s is not None and s != att.seq

    def _count_skipped(self, n):
        for _ in range(n):
            sl = self.look.take()
            if sl.kind == OTHER:
                self.stats["foreign_lines"] += 1
            elif sl.kind == DROPPED:
                self.stats["dropped_lines"] += 1
            elif sl.kind == REPLAY:
                self.stats["replay_markers"] += 1

    def _committed_synced(self, att):
        """A committed record's line once the matcher is in step with the
        log: found within WINDOW lines, else seen before the records that
        precede it, a damaged copy, or not found (yet)."""
        text = att.text
        lines = text.split("\n") if text is not None else None
        first = lines[0] if lines is not None else None
        found = self.look.search(first, WINDOW, self._is_partial_interrupted)
        if found is None and text is not None and " " in text:
            # a multi-line record: the trace joins its lines with blanks
            j = self.look.search_joined(text)
            if j is not None:
                sl = self._take_joined(att, *j)
                self._after_match(att, sl, corrupt=False, text=text)
                return
        if found is None:
            if att.seq in self.early:
                ln = self.early.pop(att.seq)
                self.producers.account(first)
                self.producers.note_text(first)
                self._judge(EARLY_LINE, att, None, ln)
                return
            # a multi-line record's lines with a byte changed: corrupt, as
            # a single line is (not missing, its lines unexplained)
            j = self.look.find_corrupt_joined(text, self.records.text_to_seq) \
                if may_be_multi_line(text) else None
            if j is not None:
                got = [self.look.get(i) for i in range(j[0], j[1] + 1)]
                stray = None
                if all(g.ctx != GARBLED for g in got):
                    stray = inserted_byte(text, " ".join(g.text for g in got))
                sl = self._take_joined(att, *j)
                self._corrupt(att, "multi-line record seq %d printed corrupted" % att.seq, sl,
                              stray)
                self._after_match(att, sl, corrupt=True, text=text)
                return
            # corrupted copy?
            k = self.look.find_corrupt(first, self.records.text_to_seq)
            if k is not None:
                sl = self.look.get(k)
                self._place_skipped(k, att)
                self.look.consume(1)
                if damaged_in_trace(first, sl.text):
                    self._trace_damage(att, sl)
                    self._after_match(att, sl, corrupt=False)
                    return
                self._corrupt(att, "seq %d printed corrupted" % att.seq, sl,
                              line_stray(first, sl))
                self._after_match(att, sl, corrupt=True)
                return
            self.producers.account(first)
            self._not_found(att, first)
            orphans = self.orphan_notices
            self._forget_interrupted()
            want = self.counts.owed(att)[0]
            if want:
                # its notice may be there without the record: not a second fault
                orphans.append(want)
            self.orphan_notices = orphans
            return
        k = found
        self._place_skipped(k, att)
        sl = self.look.take()
        # multi-line records
        if lines is not None and len(lines) > 1:
            for want in lines[1:]:
                nxt = self.look.get(0)
                if nxt is None or nxt.kind != REC or nxt.text != want:
                    why = ("multi-line record seq %d: continuation line %r missing or "
                           "different" % (att.seq, want[:60]))
                    stray = line_stray(want, nxt)
                    self._corrupt(att, why, nxt, stray)
                    if stray is not None and nxt.ctx != GARBLED:
                        # the continuation line with the stray byte: taken
                        self.look.take()
                        continue
                    break
                self.look.take()
        self._after_match(att, sl, corrupt=False)

    def _stray_byte_line(self, sl):
        """A line of one byte alone right after the line of an attempt
        that an unsafe victim's byte may hit (Attempt.stray_ok: a panic
        context took the console from an owner inside its unsafe
        section, and that owner has not noticed yet).  The victim writes
        its byte when it runs again, which may be after the taker ended
        its line (seen on a seed-demo run: the victim's context mark `A`
        on a line of its own between two records of the panic owner).
        The documented stray byte of the unsafe takeover, once per
        placed line; anywhere else a partial line."""
        if not self.stray_after or len(sl.raw) != 1:
            return False
        allowances, self.stray_after = self.stray_after, ()
        return self._spend(allowances, sl.raw)

    def _forget_interrupted(self):
        """A committed record was placed: the interrupted attempts before
        it and the notices they explain are done with."""
        self.interrupted = []
        self.used = set()
        self.notice_used = set()
        self.marker_used = set()
        self.orphan_notices = []

    def _after_match(self, att, sl, corrupt, text=None):
        """att's record is on the log at line sl (its first line; `text`:
        the lines of a multi-line record joined, as the trace has it)."""
        self.stats["matched"] += 1
        self.stray_after = att.stray_ok
        if self.early and att.seq in self.early:
            self._early_copy(att, sl, self.early.pop(att.seq))
        self._forget_interrupted()
        if att.text is None:
            self.stats["unchecked_text"] += 1
        if sl.ctx == GARBLED and not corrupt:
            self._corrupt(att, "seq %d printed with a garbled "
                               "`[  sec.usec]` prefix" % att.seq if att.seq is not None else
                               "record printed with a garbled prefix", sl, prefix_stray(sl))
        # a corrupted line counts for its producer as the stored record
        if text is None:
            text = att.text if corrupt and att.text else sl.text
        p = parse_pstress(text)
        if p is None:
            self._remember_line(sl)
            return
        self.stats["stressor_records"] += 1
        prod, n, ok, why = p
        if not ok and not corrupt:
            # the line is the stored text (a stray byte cannot have damaged
            # both), or there is none to compare: a stray byte in it is
            # one whose removal leaves a valid record
            self._corrupt(att, "stressor record seq %d: %s" % (att.seq, why), sl,
                          valid_without_one_byte(text) if att.text is None else None)
        elif ok and text[:12] == "pstress v=2 " and text.endswith(PRINTK_TRUNC_MSG):
            # cut by printk() to fit its data ring (pstress.pstress2_truncated())
            self.stats["records_cut_to_fit"] += 1
        elif ok and text[:12] == "pstress v=2 " and text[-11:-8] != " k=":
            # cut at the line limit (pstress.pstress2_truncated())
            self.stats["truncated_records"] += 1
        if prod is None:
            return
        self._placed(prod, n, crc_field(text), att, sl)

    def _take_joined(self, att, i, last):
        """att's multi-line record is the buffer's lines i..last: check the
        lines before it, take its lines, count it; returns its first line."""
        self._place_skipped(i, att)
        sl = self.look.take()
        for _ in range(last - i):
            self.look.take()
        self.stats["multi_line_records"] = self.stats.get("multi_line_records", 0) + 1
        return sl

    def _is_partial_interrupted(self, sl):
        for a in self.interrupted:
            if a.text is not None and a.text.startswith(sl.text):
                return True
        return False

    def _place_skipped(self, k, att):
        """Lines before the match of att: classify and place them."""
        notices = []        # dropped notices before att's own, in order
        trailing = None     # the notice right before att's line (foreign lines aside)
        garbled = None      # a foreign line there that looks like a cut notice
        markers = []        # replay markers before att's own, in order
        own_marker = None   # the marker in front of att's notice and line
        left = k
        while left:
            sl = self.look.take()
            left -= 1
            if sl.kind == REPLAY:
                self.stats["replay_markers"] += 1
                if own_marker is not None:
                    markers.append(own_marker)
                own_marker = sl
                continue
            if sl.kind == OTHER:
                self.stats["foreign_lines"] += 1
                if "messages dropped" in sl.text or is_garbled_notice(sl.text):
                    garbled = sl
                continue
            if sl.kind == DROPPED:
                self.stats["dropped_lines"] += 1
                if trailing is not None:
                    notices.append(trailing)
                trailing = sl
                continue
            if trailing is not None:
                notices.append(trailing)
                trailing = None
            if own_marker is not None:
                markers.append(own_marker)
                own_marker = None
            garbled = None
            # each interrupted attempt explains at most one cut/repeated line
            avail = [a for a in self.interrupted if id(a) not in self.used and
                     a.outcome in ("lost", "handover", "open")]
            ok_partial = [a for a in avail if self._is_partial_of(sl, a.text)]
            if sl.kind == FRAG or (sl.kind == REC and att.text is not None and
                                   att.text.startswith(sl.text)):
                excuse = ok_partial or avail
                if not excuse and self._stray_byte_line(sl):
                    continue
                self.stats["partial_lines"] += 1
                if excuse:
                    self.used.add(id(excuse[0]))
                self._judge(CUT_LINE, att, sl, excuse[0] if excuse else None)
                continue
            if ok_partial:
                self.stats["partial_lines"] += 1
                self.used.add(id(ok_partial[0]))
                self._judge(CUT_LINE, att, sl, ok_partial[0])
                continue
            bad = [a for a in self.interrupted if a.outcome == "abandoned" and
                   self._is_partial_of(sl, a.text)]
            if bad:
                self.stats["partial_lines"] += 1
                self._judge(CUT_LINE, att, sl, bad[0])
                continue
            if self.late and sl.text in self.late:
                self._late_line(sl)
                continue
            text, more = self.look.join_continued(sl)
            if more > left:
                text, more = sl.text, 0
            self.look.consume(more)
            left -= more
            s = self.records.text_to_seq.get(text)
            if s is not None and s > att.seq:
                self.early[s] = sl.lineno
                if len(self.early) > EARLY_MAX:
                    self.early.pop(next(iter(self.early)))
                continue
            self._unexplained(att, sl, text)
        for sl in notices:
            self._explain_notice(att, sl)
        self._place_own_notice(att, trailing, garbled)
        for sl in markers:
            self._explain_marker(att, sl, False)
        self._place_own_marker(att, own_marker)
        self._settle_prefix_only(att)
