"""Serial alignment: the serial log set against the serial console's
emission attempts in the trace.  It yields placements; the serial rules
that judge them (and the producer ledger's findings, producers.py) are
the units of serial_rules.py.

The trace tells, in order, every emission attempt of the serial console
(seq, dropped count, how it ended) and the stored text of each seq
(`nobkl_store`).  The serial log is expected to show, in the same order:

  * for a committed attempt: `** N printk messages dropped **` when
    dropped > 0, then the complete line `[  sec.usec] <stored text>`
    (optionally prefixed by the context letter `A`/`T`);
  * for an attempt that lost ownership: nothing, a prefix of that line,
    or even the whole line (lost before the commit) - the reprint follows;
  * nothing else that looks like a kernel line.

Before the trace's first record and after its last, the log is placed
by what it shows itself: stressor records by their identity (the
producer ledger keeps every identity, crc and number), against
stats.txt.

Lines are matched by their text after the timestamp.  Lines that do not
look like kernel output (user space writing to the same UART) are counted
and ignored.

Invariants:
  * the alignment judges nothing: what it finds for a record or a line,
    as expected or not, is a Placement (serial_rules.PLACEMENTS) handed
    to the units of its kind (`_judge()`); only they report, through
    `violate()`, on a Blame: the traced emission attempt of the record at
    fault, or the place outside the traced emissions (before or after
    the trace), which goes to the analyzer spelled out
    (`Analyzer.violate(at=...)`): no trace event is made up for it;
  * it grants the one tolerance of the serial rules, the stray byte of
    an unsafe panic takeover (`_corrupt()`, `_stray_byte_line()`), as
    the model grants the trace's, and counts it;
  * memory stays bounded: a lookahead of WINDOW lines, and at most
    EARLY_MAX, RECENT and CARRIED_MAX of what it remembers; only the
    first match (sync) may scan from the start of the log.

Over 500 lines, for a reason: the sync, the placing of whole, cut,
multi-line and damaged copies, and of the dropped notices, share the
lookahead and the interrupted attempts since the last committed record;
apart, each would need that state handed to it.
"""

from collections import deque

from .model import StrayByte
from .producers import Producers, crc_field
from .serial import SerialReader, REC, DROPPED, FRAG, OTHER, GARBLED, MULTILINE_MAX, \
    PRINTK_TRUNC_MSG, REPLAY, REPLAY_TEXT, classify, first_line, garbled_notice_strays, \
    is_garbled_notice, parse_pstress, pstress_damaged_copy
from .serial_rules import SERIAL_UNITS, Placement, StoredAfter, blame, AFTER_TRACE, \
    BEFORE_TRACE, ABOVE_LOGLEVEL, CORRUPT, CUT_LINE, EARLY_COPY, EARLY_LINE, FORGED, \
    INTERRUPTED_LINE, LATE_LINE, MISSING, NO_NOTICE, POST_MISSING, POST_NO_NOTICE, \
    POST_NOTICE, PRODUCER_GAP, REPEAT, REPEATED_LINE, STRAY_NOTICE, UNEXPLAINED_LINE, \
    UNPLACED, WRITER_ORDER, WRONG_NOTICE, NO_REPLAY_MARKER, STRAY_REPLAY_MARKER

WINDOW = 400
PRESYNC = 200           # non-stressor records held before the first sync
BACK = 2000             # lines looked at behind the first match for the held records
SYNC_TRIES = 3          # records not on the log at all before it is taken as foreign
EARLY_MAX = 10000       # complete lines kept waiting for their record's turn
RECENT = 4096           # non-stressor lines remembered to know a repeat of one
CARRIED_MAX = 256       # attempts remembered with a carried dropped count


class SerialChecker:
    def __init__(self, path, analyzer):
        self.path = path
        self.an = analyzer
        self.reader = SerialReader(path)
        self.buf = deque()
        self.synced = False
        self.presync = []
        self.held_text_to_seq = {}   # texts of the held commits, while replayed
        self.fed_commits = 0
        self.sync_failures = 0
        self.gave_up = None
        self.interrupted = []     # interrupted attempts since the last committed match
        self.used = set()         # ids of those whose cut line was seen
        self.notice_used = set()  # ids of those whose dropped notice was seen
        self.marker_used = set()  # ids of those whose replay marker was seen
        # the kernel prints a replay marker before a reprint: the log has one
        # (a kernel before the marker prints none, and is not held to it)
        self.replay_contract = _has_replay_marker(path)
        self.orphan_notices = []  # dropped counts of committed records missing on the log
        # the dropped counts of the records below the console loglevel
        # committed since the last printed one, which its notice adds to
        # its own (None: no printed record committed in the trace yet)
        self.carry = None
        self.carried = {}         # id -> (attempt, carry it was given)
        self.failed_anchors = set()   # ids of held records not found anywhere on the log
        self.stray_after = ()     # the last line placed may be followed by an unsafe
                                  # victim's byte on a line of its own (_stray_byte_line())
        self.early = {}           # seq -> line number (seen before its turn)
        self.early_ids = {}       # (producer, n) -> (line, crc, att): not stored yet
        self.late = {}            # text -> committed attempt whose line was not found in its turn
        self.recent = {}          # (stamp, text) of the latest non-stressor lines placed
        self.last_id = None       # (producer, n) of the last stressor record on the log
        self.untraced_after = 0   # new stressor records after the trace: it ended early
        self.untraced_runs = set()
        self.damaged_texts = []   # seqs whose stored text the log shows damaged in the trace
        self.post_early = {}      # text -> line number: passed over after the last traced commit
        # cut lines after the last traced commit: owners interrupted
        # there, each of which may have left one stray byte in a later line
        self.post_cut_lines = 0
        self.stats = {
            "lines_before_trace": 0, "matched": 0, "partial_lines": 0,
            "reprinted_full_lines": 0, "dropped_lines": 0, "foreign_lines": 0,
            "stressor_records": 0, "unchecked_text": 0, "post_trace_matched": 0,
            "lines_after_trace": 0, "dropped_notices_checked": 0,
            "producer_repeats": 0, "stressor_records_after_trace": 0,
            "unverified_reprints_after_trace": 0, "untraced_kernel_lines": 0,
            "dropped_notices_unchecked": 0, "stressor_records_before_trace": 0,
            "writer_order_checked": 0, "truncated_records": 0, "records_cut_to_fit": 0,
            "replay_markers": 0, "replay_markers_checked": 0,
        }
        self.producers = Producers(self.stats, analyzer.dropped_producer)

    # ------------------------------------------------------------ reading
    def _past_other(self, i):
        """(j, line): the first lookahead line from i on that is not
        foreign output (OTHER), looking at most up to index 40; line is
        None when the log ends first."""
        sl = self._get(i)
        while sl is not None and sl.kind == OTHER and i < 40:
            i += 1
            sl = self._get(i)
        return i, sl

    def _get(self, i):
        """i-th line of the lookahead (reading more as needed) or None."""
        while len(self.buf) <= i:
            sl = self.reader.next()
            if sl is None:
                return None
            self.buf.append(sl)
        return self.buf[i]

    def _consume(self, n):
        for _ in range(n):
            self.buf.popleft()

    def resync(self):
        self.synced = False
        self.presync = []
        self.carry = None         # lost events may have carried a count
        self._forget_interrupted()
        self.early = {}

    # ------------------------------------------------------------ helpers
    def violate(self, rule, about, msg, sl=None):
        """Report a serial rule broken by what `about` is (a traced
        attempt, a StoredAfter record or a Blame; see Blame), seen on the
        log at line sl: how the units report (the alignment itself
        reports nothing, it places)."""
        extra = {}
        if sl is not None:
            extra["serial_line"] = sl.lineno
            extra["serial_text"] = sl.raw[:200]
        if about is None:
            return self.an.violate(rule, None, msg, extra=extra)
        b = blame(about)
        extra["emit_line"] = b.line
        extra["emit_ts"] = b.ts
        con = self.an.serial_console
        return self.an.violate(rule, self.an.consoles.get(con), msg, seq=b.seq,
                               cpus=(b.cpu,), ctxs=(b.context,), extra=extra,
                               at=(b.ts, b.line, b.cpu, b.shown(con)))

    def _judge(self, kind, about, sl, facts):
        """Hand a placement to the serial rules' units that consume its
        kind (the registry's, SERIAL_UNITS)."""
        p = Placement(kind, about, sl, facts)
        for judge in SERIAL_UNITS[kind]:
            judge(self, p)

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

    # ------------------------------------------------------------ attempts
    def suppressed(self, att):
        """att: a committed emission (len=0) of a record below the console
        loglevel.  Nothing was written: the records dropped in front of it
        go into the notice of the next record printed (cons_emit_record()
        carries them over in con->dropped)."""
        if self.carry is not None:
            self.carry += att.dropped

    def attempt(self, att):
        """An emission attempt of the serial console, as the trace ended
        it, placed on the log in its turn (a committed record printed
        that was stored at a level not below the console loglevel is
        placed as such first)."""
        carry = self.carry
        if carry != 0:
            self.carried[id(att)] = (att, carry)
            if len(self.carried) > CARRIED_MAX:
                self.carried.pop(next(iter(self.carried)))
        if att.outcome == "commit":
            self.carry = 0        # printed with its notice, which cleared the carry
            self.fed_commits += 1
            text = att.text
            if text is not None and text[:12] == "pstress v=2 ":
                self._writer_order(text, att.seq, att, None)
            st = self.an.store.get(att.seq)
            if st is not None and st[2] >= self.an.console_loglevel:
                # the console prints only records below its loglevel: a
                # suppressed one is committed with len=0 (or without an
                # emission) and never reaches this checker
                self._judge(ABOVE_LOGLEVEL, att, None, (st[2], self.an.console_loglevel))
        if self.gave_up:
            return
        if self.synced and att.outcome == "commit" and att.text is not None and \
                self._notice_of(att) == (0, True) and not att.reprint:
            # fast path: the expected line is next
            buf = self.buf
            if buf:
                sl = buf[0]
                if sl.text == att.text and sl.kind == REC:
                    buf.popleft()
                    self._after_match(att, sl, False)
                    return
            else:
                sl = self.reader.next()
                if sl is not None:
                    if sl.text == att.text and sl.kind == REC:
                        self._after_match(att, sl, False)
                        return
                    buf.append(sl)
        if att.outcome == "commit":
            self._committed(att)
        elif att.outcome == "open":
            self._interrupted(att, allowed=True)
        else:
            self._interrupted(att, allowed=att.outcome in ("lost", "handover"))

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
            sl = self._get(i)
            if sl is None:
                return
            if sl.kind == OTHER:
                i += 1
                if i > 20:
                    return
                continue
            break
        marker = None
        if sl.kind == REPLAY and att.reprint:
            # the marker this reprint printed before it was interrupted
            marker = sl
            i, sl = self._past_other(i + 1)
            if sl is None:
                return
        notice = None
        want, exact = self._notice_of(att)
        if sl.kind == DROPPED and (want or not exact):
            notice = sl
            i, sl = self._past_other(i + 1)
            if sl is None:
                self._count_skipped(i)
                return
        if self._is_partial_of(sl, att.text) and not self._is_next_committed_line(sl, att):
            last = self._whole_copy_end(i, att.text)
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
                nxt = self._get(j)
                while nxt is not None and nxt.kind in (OTHER, DROPPED, REPLAY) and j < i + 40:
                    j += 1
                    nxt = self._get(j)
                if nxt is None or not (self._is_partial_of(nxt, att.text) or
                                       (nxt.kind == REC and _one_edit(first, nxt.text) and
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
            self._consume(1)
            self.stats["partial_lines"] += self._consume_continued(sl, att.text)
            self.used.add(id(att))

    def _whole_copy_end(self, i, text):
        """The lookahead index of the last line of a complete copy of
        `text` whose first line is at i (the trace joins the lines of a
        multi-line record with blanks), or None."""
        sl = self._get(i)
        if text is None or sl is None or sl.kind != REC or not text.startswith(sl.text):
            return None
        acc = sl.text
        while acc != text:
            nx = self._get(i + 1)
            if nx is None or nx.kind != REC or not text.startswith(acc + " " + nx.text):
                return None
            acc += " " + nx.text
            i += 1
        return i

    def _consume_continued(self, sl, text):
        """After the first line sl of a record (the trace joins the lines
        of a multi-line one with blanks): consume its further lines, of
        an interrupted attempt the complete ones and a last, cut, one (cut
        inside its prefix too).  Returns how many."""
        if sl.kind != REC or text is None or text[len(sl.text):len(sl.text) + 1] != " ":
            return 0
        acc, k = sl.text, 0
        while True:
            nx = self._get(0)
            if nx is not None and nx.kind == FRAG:
                self._consume(1)
                return k + 1
            if nx is None or nx.kind != REC or not text.startswith(acc + " " + nx.text):
                return k
            acc += " " + nx.text
            self._consume(1)
            k += 1
    def _is_next_committed_line(self, sl, att):
        # A complete line that is exactly a *different* stored record.
        if sl.kind != REC:
            return False
        s = self.an.text_to_seq.get(sl.text, self.held_text_to_seq.get(sl.text))
        return s is not None and s != att.seq

    def _count_skipped(self, n):
        for _ in range(n):
            sl = self.buf.popleft()
            if sl.kind == OTHER:
                self.stats["foreign_lines"] += 1
            elif sl.kind == DROPPED:
                self.stats["dropped_lines"] += 1
            elif sl.kind == REPLAY:
                self.stats["replay_markers"] += 1

    def _committed(self, att):
        if self.synced:
            self._committed_synced(att)
            return
        if att.text is None:
            # no text to find it by: checked with the held records, or,
            # before any of them, not at all
            if any(h.outcome == "commit" for h in self.presync):
                self.presync.append(att)
            else:
                self.stats["unchecked_before_sync"] = \
                    self.stats.get("unchecked_before_sync", 0) + 1
            return
        self.presync.append(att)
        if att.text.startswith("pstress "):
            self._sync(len(self.presync) - 1)
        elif len(self.presync) >= PRESYNC:
            # no stressor record soon: sync on a held record
            self._sync(self._next_anchor())

    # ------------------------------------------------------------ sync
    # The matcher finds its place on the log (sync) by the first
    # committed record whose line it can be sure of: a stressor record
    # (its text is unique), or after PRESYNC held attempts the first held
    # record.  The attempts before it (held, in order) are placed behind
    # that line: each held record's line is the nearest one before the
    # next one's, and the matcher starts at the earliest found, so every
    # held attempt is checked as if the matcher had been there all along.
    # The log before that point is outside the trace.  A log on which
    # SYNC_TRIES held records are nowhere is not this trace's: the check
    # gives up (incomplete), it blames nothing on the kernel.

    def _next_anchor(self):
        """Index in presync of the first held commit with a text that was
        not looked for in vain yet, or None."""
        for i, h in enumerate(self.presync):
            if h.outcome == "commit" and h.text is not None and id(h) not in self.failed_anchors:
                return i
        return None

    def _sync(self, anchor_i):
        if anchor_i is None:
            return
        held = self.presync
        anchor = held[anchor_i]
        start = (self.buf[0].offset, self.buf[0].lineno - 1) if self.buf else self.reader.tell()
        back = self._scan_for(first_line(anchor.text))
        if back is None:
            self._sync_failed(anchor)
            return
        at, k = self._place_held(back, held[:anchor_i])
        # a commit without text before the first held record placed has
        # no line to be matched to (it would take that record's)
        unplaced = [h for h in held[:k] if h.outcome == "commit" and h.text is None]
        if unplaced:
            self.stats["unchecked_before_sync"] = \
                self.stats.get("unchecked_before_sync", 0) + len(unplaced)
            held = [h for i, h in enumerate(held)
                    if i >= k or not (h.outcome == "commit" and h.text is None)]
        # the log up to there is outside the trace
        self.buf.clear()
        self.reader.seek(start)
        near = deque(maxlen=BACK)
        while True:
            pos = self.reader.tell()
            sl = self.reader.next()
            if sl is None or pos[0] == at[0]:
                if sl is not None:
                    self.buf.append(sl)
                break
            self.stats["lines_before_trace"] += 1
            self._untraced_line(sl, "before")
            if sl.kind == REC:
                near.append(sl)
        self.synced = True
        self.presync = []
        self._forget_interrupted()
        self._replay(held)
        self._copies_before(near)

    def _copies_before(self, near):
        """Lines just before the place synced at that are copies (same
        time stamp and text) of the records placed there: each record's
        line was found nearest to the next one's, so an extra copy of it
        is left before."""
        for sl in near:
            if (_stamp(sl.raw), sl.text) in self.recent:
                self._judge(REPEATED_LINE, BEFORE_TRACE, sl, True)

    def _scan_for(self, first):
        """The lines from the current place on up to the first complete
        line `first`, as (position, line), at most BACK of them; None when
        the rest of the log has no such line.  Nothing is consumed."""
        back = deque(maxlen=BACK)
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

    def _place_held(self, back, before):
        """(position on the log to start the check at, index in `before`
        of the attempt placed there): the line of the earliest of the
        held attempts `before` the anchor (whose line is back's last),
        each found nearest before the next one's; with the dropped notice
        right before it, which is its own."""
        i = len(back) - 1
        k = len(before)
        for hi in range(len(before) - 1, -1, -1):
            h = before[hi]
            if h.text is None:
                continue
            if h.outcome == "commit":
                want = first_line(h.text)
                j = i - 1
                while j >= 0 and not (back[j][1].kind == REC and back[j][1].text == want):
                    j -= 1
                if j < 0:
                    # a damaged copy (checked as such from there)
                    j = i - 1
                    while j >= 0 and not (back[j][1].kind == REC and
                                          _near_copy(want, back[j][1].text)):
                        j -= 1
            else:
                # what an interrupted attempt printed, if anything, is a
                # cut or whole line of its record shortly before
                j = i - 1
                while j >= max(i - 40, 0) and not (back[j][1].kind == REC and back[j][1].text
                                                   and h.text.startswith(back[j][1].text)):
                    j -= 1
                if j < max(i - 40, 0):
                    j = -1
            if j >= 0:
                i, k = j, hi
        j = i - 1
        while j >= 0 and back[j][1].kind == OTHER:
            j -= 1
        if j >= 0 and back[j][1].kind == DROPPED:
            i = j
            j -= 1
        if j >= 0 and back[j][1].kind == REPLAY:
            i = j
        return back[i][0], k

    def _sync_failed(self, anchor):
        """The held record anchor is nowhere on the rest of the log."""
        self.sync_failures += 1
        self.failed_anchors.add(id(anchor))
        if self.sync_failures >= SYNC_TRIES:
            self.gave_up = ("none of the first %d records of console %s that the trace shows "
                            "committed (e.g. %r) is on it: the log of another run?"
                            % (SYNC_TRIES, self.an.serial_console, anchor.text[:60]))
            self.presync = []

    def _replay(self, held):
        """Check attempts held back before the sync, in their order. The
        store may have forgotten their records by now: their texts stay
        known for as long as the replay runs."""
        self.held_text_to_seq = {h.text: h.seq for h in held
                                 if h.outcome == "commit" and h.text is not None}
        try:
            for h in held:
                if h.outcome == "commit":
                    self._committed_synced(h)
                else:
                    self._interrupted(h, allowed=h.outcome in ("lost", "handover", "open"))
        finally:
            self.held_text_to_seq = {}

    def _committed_synced(self, att):
        """A committed record's line once the matcher is in step with the
        log: found within WINDOW lines, else seen before the records that
        precede it, a damaged copy, or not found (yet)."""
        text = att.text
        lines = text.split("\n") if text is not None else None
        first = lines[0] if lines is not None else None
        found = self._search(first, WINDOW)
        if found is None and text is not None and " " in text:
            # a multi-line record: the trace joins its lines with blanks
            j = self._search_joined(text)
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
            j = self._find_corrupt_joined(text) if _may_be_multi_line(text) else None
            if j is not None:
                got = [self.buf[i] for i in range(j[0], j[1] + 1)]
                stray = None
                if all(g.ctx != GARBLED for g in got):
                    stray = _inserted_byte(text, " ".join(g.text for g in got))
                sl = self._take_joined(att, *j)
                self._corrupt(att, "multi-line record seq %d printed corrupted" % att.seq, sl,
                              stray)
                self._after_match(att, sl, corrupt=True, text=text)
                return
            # corrupted copy?
            k = self._find_corrupt(first)
            if k is not None:
                sl = self.buf[k]
                self._place_skipped(k, att)
                self._consume(1)
                if _damaged_in_trace(first, sl.text):
                    self._trace_damage(att, sl)
                    self._after_match(att, sl, corrupt=False)
                    return
                self._corrupt(att, "seq %d printed corrupted" % att.seq, sl,
                              _line_stray(first, sl))
                self._after_match(att, sl, corrupt=True)
                return
            self.producers.account(first)
            self._not_found(att, first)
            orphans = self.orphan_notices
            self._forget_interrupted()
            want = self._notice_of(att)[0]
            if want:
                # its notice may be there without the record: not a second fault
                orphans.append(want)
            self.orphan_notices = orphans
            return
        k = found
        self._place_skipped(k, att)
        sl = self.buf.popleft()
        # multi-line records
        if lines is not None and len(lines) > 1:
            for want in lines[1:]:
                nxt = self._get(0)
                if nxt is None or nxt.kind != REC or nxt.text != want:
                    why = ("multi-line record seq %d: continuation line %r missing or "
                           "different" % (att.seq, want[:60]))
                    stray = _line_stray(want, nxt)
                    self._corrupt(att, why, nxt, stray)
                    if stray is not None and nxt.ctx != GARBLED:
                        # the continuation line with the stray byte: taken
                        self.buf.popleft()
                        continue
                    break
                self.buf.popleft()
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
                               "record printed with a garbled prefix", sl, _prefix_stray(sl))
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
                          _valid_without_one_byte(text) if att.text is None else None)
        elif ok and text[:12] == "pstress v=2 " and text.endswith(PRINTK_TRUNC_MSG):
            # cut by printk() to fit its data ring (serial.pstress2_truncated())
            self.stats["records_cut_to_fit"] += 1
        elif ok and text[:12] == "pstress v=2 " and text[-11:-8] != " k=":
            # cut at the line limit (serial.pstress2_truncated())
            self.stats["truncated_records"] += 1
        if prod is None:
            return
        self._placed(prod, n, crc_field(text), att, sl)

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
        if (_stamp(sl.raw), sl.text) in self.recent:
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
        if text not in self.an.text_to_seq:
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
        """att's stored text is damaged in the trace (_damaged_in_trace());
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
        recent[(_stamp(sl.raw), sl.text)] = None
        if len(recent) > RECENT:
            del recent[next(iter(recent))]

    def _check_producer_gaps(self, full, covered):
        """The producers' numbers on the whole log, from the producer
        ledger.  Not after trace loss: the dropped counts of the lost
        part are unknown."""
        if self.an.loss_seen:
            return
        for msg in self.producers.gaps(full, self.an.pstress_printable, covered):
            self._judge(PRODUCER_GAP, AFTER_TRACE, None, msg)

    def _search(self, first, limit):
        """Index in the lookahead of the complete line for `first`
        (None text = any complete kernel line), or None."""
        i = 0
        while i < limit:
            sl = self._get(i)
            if sl is None:
                return None
            if sl.kind == REC and (first is None or sl.text == first):
                if first is None and self._is_partial_interrupted(sl):
                    i += 1
                    continue
                return i
            i += 1
        return None

    def _take_joined(self, att, i, last):
        """att's multi-line record is the buffer's lines i..last: check the
        lines before it, take its lines, count it; returns its first line."""
        self._place_skipped(i, att)
        sl = self.buf.popleft()
        for _ in range(last - i):
            self.buf.popleft()
        self.stats["multi_line_records"] = self.stats.get("multi_line_records", 0) + 1
        return sl

    def _search_joined(self, text):
        """(first, last) lookahead indices of two or more consecutive
        complete lines whose texts joined by blanks equal `text`, or
        None."""
        for i in range(WINDOW):
            if self._get(i) is None:
                return None
            j = self._whole_copy_end(i, text)
            if j is not None and j > i:
                return i, j
        return None

    def _find_corrupt_joined(self, text):
        """(first, last) lookahead indices of two or more consecutive
        complete lines whose texts joined by blanks are `text` with one
        byte inserted, lost or changed (a damaged copy of a multi-line
        record; a line break inserted is a blank more), or None.  A run
        that is a stored record's text is that record."""
        n = len(text)
        known = self.an.text_to_seq
        for i in range(WINDOW):
            sl = self._get(i)
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
                nx = self._get(j + 1)
                if nx is None or nx.kind != REC:
                    break
                acc += " " + nx.text
                j += 1
                if _one_edit(text, acc) and acc not in known:
                    return i, j
        return None

    def _is_partial_interrupted(self, sl):
        for a in self.interrupted:
            if a.text is not None and a.text.startswith(sl.text):
                return True
        return False

    def _find_corrupt(self, first):
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
        known = self.an.text_to_seq
        for i in range(min(len(self.buf), WINDOW)):
            sl = self.buf[i]
            if sl.kind == REC and abs(len(sl.text) - n) <= 1 and _one_edit(first, sl.text) \
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

    def _place_skipped(self, k, att):
        """Lines before the match of att: classify and place them."""
        notices = []        # dropped notices before att's own, in order
        trailing = None     # the notice right before att's line (foreign lines aside)
        garbled = None      # a foreign line there that looks like a cut notice
        markers = []        # replay markers before att's own, in order
        own_marker = None   # the marker in front of att's notice and line
        left = k
        while left:
            sl = self.buf.popleft()
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
            text, more = self._join_continued(sl)
            if more > left:
                text, more = sl.text, 0
            self._consume(more)
            left -= more
            s = self.an.text_to_seq.get(text)
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

    # ------------------------------------------------------------ replay markers
    # serial-replay: a new owner that prints a record again, because the
    # console was taken or handed over in the middle of it, puts `**
    # replaying previous printk message **` in front of it, in one write
    # with its dropped notice and line (cons_check_replay()).  The model
    # marks such an emission Attempt.reprint (the console's previous
    # attempt was of the same seq and did not commit).  So a committed
    # reprint has the marker right before its notice and line, and any
    # other marker is that of an interrupted reprint (each explains one).
    # A missing one is a violation only on a log that has a marker at all.

    def _place_own_marker(self, att, sl):
        """att's line was found; sl: the marker right before its notice and
        line, or None."""
        if sl is None:
            if att.reprint and self.replay_contract and att.outcome == "commit":
                self._judge(NO_REPLAY_MARKER, att, None, None)
            return
        if att.reprint:
            self.stats["replay_markers_checked"] += 1
            return
        self._explain_marker(att, sl, True)

    def _explain_marker(self, att, sl, own):
        """A marker that is not att's own reprint's: an interrupted reprint
        printed it (each explains one), else nobody did.  After a takeover
        inside an unsafe section the old owner may have noted the record
        without tracing its emission: tolerated like its stray byte."""
        for a in self.interrupted:
            if a.reprint and id(a) not in self.marker_used:
                self.marker_used.add(id(a))
                self.stats["replay_markers_checked"] += 1
                return
        if any(not b.spent for b in att.stray_ok):
            return
        self._judge(STRAY_REPLAY_MARKER, att, sl, own)

    # ------------------------------------------------------------ dropped notices
    # serial-dropped: a `** N printk messages dropped **` line is printed by
    # the emission of the record after the skipped ones, in one write with
    # it (cons_print_dropped()): N is the emission's `dropped`, plus the
    # `dropped` of the records below the console loglevel committed since
    # the last record printed (suppressed: no output, their count carried
    # over).  So a committed record with N > 0 has exactly that notice
    # right before its line, one with N = 0 has none, and any other notice
    # is that of an interrupted attempt with the same count (each explains
    # one) or of a record missing on the log (already reported).  Before
    # the trace's first printed record committed, a carry from before the
    # trace may add to N: there N is a lower bound.

    def _notice_of(self, att):
        """(N, exact) for att's notice: N its count, at least N if not exact."""
        e = self.carried.get(id(att))
        if e is None or e[0] is not att:
            return att.dropped, True
        if e[1] is None:
            return att.dropped, False
        return att.dropped + e[1], True

    def _notice_fits(self, att, n):
        want, exact = self._notice_of(att)
        return n == want or (not exact and n > want)

    def _dropped_text(self, att):
        want, exact = self._notice_of(att)
        if want == att.dropped:
            return "dropped=%d" % att.dropped
        return "dropped=%d after records below the console loglevel that carried %d" \
            % (att.dropped, want - att.dropped)

    def _place_own_notice(self, att, trailing, garbled):
        """att's line was found; trailing: the notice right before it
        (garbled: a foreign line there that looks like a cut notice)."""
        want, exact = self._notice_of(att)
        if trailing is None:
            if not want:
                return
            if garbled is not None:
                self._corrupt(att, "dropped notice of seq %d (%s) garbled"
                              % (att.seq, self._dropped_text(att)), garbled,
                              self._notice_stray(att, garbled.raw))
                return
            self._judge(NO_NOTICE, att, None, (want, self._dropped_text(att)))
            return
        if want or not exact:
            self._place_notice(att, trailing)
        else:
            self._explain_notice(att, trailing)

    def _notice_stray(self, att, raw):
        """The byte inserted in the garbled notice line `raw` when that
        is att's own notice with one byte more, else None."""
        for byte, n in garbled_notice_strays(raw):
            if self._notice_fits(att, n):
                return byte
        return None

    def _place_notice(self, att, sl):
        """sl is the notice printed by attempt att.  A count with one digit
        more than att's is att's notice with a byte inserted (an unsafe
        victim's stray byte after the `1` of `** 1 printk`): corruption of
        att's line, which _corrupt() tolerates or places."""
        n = int(sl.text)
        if self._notice_fits(att, n):
            self.stats["dropped_notices_checked"] += 1
            return
        got, want = str(n), str(self._notice_of(att)[0])
        stray = _inserted_byte(want, got)
        if stray is not None:
            self._corrupt(att, "dropped notice of seq %d (%s) printed as `** %d "
                          "printk messages dropped **`" % (att.seq, self._dropped_text(att), n),
                          sl, stray)
            return
        self._judge(WRONG_NOTICE, att, sl, (n, self._dropped_text(att)))

    def _explain_notice(self, att, sl):
        """A notice before att's own: placed as an interrupted attempt's
        or a missing record's, else as one no emission printed."""
        n = int(sl.text)
        for a in self.interrupted:
            if self._notice_fits(a, n) and id(a) not in self.notice_used:
                self.notice_used.add(id(a))
                self.stats["dropped_notices_checked"] += 1
                return
        if n in self.orphan_notices:
            self.orphan_notices.remove(n)
            return
        self._judge(STRAY_NOTICE, att, sl, (n, self._dropped_text(att)))

    # ------------------------------------------------------------ end
    def finish(self, post_records, check_post=True):
        """post_records: [(seq, text, store_ts)] stored but not committed by
        the serial console when the trace ended; they must follow."""
        while not self.synced and not self.gave_up and self.presync:
            i = self._next_anchor()
            if i is None:
                break
            self._sync(i)
        if self.gave_up or not self.synced:
            self._settle_late()
            self.reader.close()
            return
        if check_post:
            self._place_post(post_records)
        # when the trace ended before the stressor run, gaps count only up
        # to what it placed
        covered = self.producers.highs()
        self._check_tail()
        for e in list(self.early_ids.values()):
            self._unplaced(*e)
        self.early_ids = {}
        self._settle_late()
        self.producers.check_stats_run()
        self._check_producer_gaps(check_post, covered if self.untraced_after else None)
        self.buf.clear()
        self.reader.close()

    def _place_post(self, post_records):
        """Records stored in the trace that the serial console had not
        committed when it ended follow on the log, in seq order.  A run of
        them that is not there was overwritten after the trace ended: a
        dropped notice before the next one printed covers it.  A notice
        there counts at least the records missing since the last one
        printed, and at most the seqs between the two (serial-dropped);
        the first one also what records below the console loglevel
        carried over in the trace, and must be there if they did."""
        con = self.an.consoles.get(self.an.serial_console)
        prev = con.next_seq - 1 if con is not None and con.next_seq is not None else None
        carry = self.carry   # None: unknown, no bound above
        credit = 0
        missing = 0          # records not on the log since the last one printed
        notices = []         # dropped counts of the notices since then
        for seq, text, ts in post_records:
            first = first_line(text)
            k = self._search(first, WINDOW * 4)
            att = StoredAfter(seq, ts, text)
            if text[:12] == "pstress v=2 ":
                self._writer_order(text, seq, att, None)
            if k is None and first in self.post_early:
                self._judge(EARLY_LINE, att, None, self.post_early.pop(first))
                continue
            corrupt = False
            if k is None and first in self.an.text_to_seq:
                k = self._search_one_off(first, WINDOW * 4)
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
            sl = self.buf.popleft()
            self.stats["post_trace_matched"] += 1
            if corrupt:
                self._post_corrupt(att, sl)
            self._consume_continued(sl, text)
            self._after_match(att, sl, corrupt=corrupt, text=text)

    def _search_one_off(self, first, limit):
        """Index in the lookahead of a complete line one byte off `first`
        (a byte inserted, lost or changed), or None."""
        for i in range(limit):
            sl = self._get(i)
            if sl is None:
                return None
            if sl.kind == REC and _one_edit(first, sl.text):
                return i
        return None

    def _post_corrupt(self, att, sl):
        """A record after the trace printed one byte off.  After the trace
        no takeover is seen, but a cut line before it there is an owner
        that lost the console mid-line, the panic flush's unsafe takeover
        at the end of a run: it may have left its one stray byte
        (stray-byte-after-unsafe-panic-takeover), once."""
        cut = StrayByte(None, None, None) if self.post_cut_lines > 0 else None
        att.stray_ok = (cut,) if cut is not None else ()
        self._corrupt(att, "seq %d (stored after the serial console's last traced commit) "
                           "printed one byte off" % att.seq, sl, _line_stray(att.text, sl))
        if cut is not None and cut.spent:
            self.post_cut_lines -= 1

    def _notice_ahead(self):
        """The count of a dropped notice before the next complete line (the
        lines up to it consumed), or None."""
        for i in range(min(len(self.buf), 50)):
            sl = self.buf[i]
            if sl.kind == DROPPED:
                self._skip_post(i)
                self.buf.popleft()
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
            sl = self.buf.popleft()
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
        buf = self.buf
        while True:
            sl = buf.popleft() if buf else self.reader.next()
            if sl is None:
                break
            text, more = self._join_continued(sl)
            self._consume(more)
            self.stats["lines_after_trace"] += 1 + more
            self._untraced_line(sl, "after", text)

    def _join_continued(self, sl):
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
            nx = self._get(i)
            if nx is None or nx.kind != REC or nx.text.startswith("pstress v="):
                break
            acc += " " + nx.text
            if parse_pstress(acc)[2]:
                return acc, i + 1
        return sl.text, 0

    def incomplete_reasons(self):
        """Why the serial log could not be checked in full (the verdict is
        then incomplete, not a kernel violation)."""
        why = []
        if self.gave_up:
            why.append("serial log not checked: " + self.gave_up)
        if self.producers.stats_mismatch:
            why.append(self.producers.stats_mismatch)
        if self.damaged_texts:
            why.append("the trace's stored text of %d record(s) is damaged (first: seq %d): the "
                       "serial log shows a valid stressor record there, one byte off it"
                       % (len(self.damaged_texts), self.damaged_texts[0]))
        if self.stats["unchecked_text"]:
            why.append("%d committed record(s) of console %s matched to a serial line without "
                       "their stored text to compare it with (no nobkl_store of their seq in "
                       "the trace): those lines are not checked"
                       % (self.stats["unchecked_text"], self.an.serial_console))
        if self.untraced_after:
            why.append("the trace ended before the stressor run did: %d stressor record(s) of "
                       "run %s on the serial log after the trace's end were never stored in it"
                       % (self.untraced_after, ",".join(map(str, sorted(self.untraced_runs)))))
        return why

    def set_expected(self, expected):
        self.producers.set_expected(expected)

    def summary(self):
        d = dict(self.stats)
        d["synced"] = self.synced or self.stats["matched"] > 0
        d["gave_up"] = self.gave_up
        d["producers"] = len(self.producers.ledger)
        d["lines_read"] = self.reader.lineno
        return d


def _has_replay_marker(path, chunk=1 << 20):
    """The log has a replay marker line (serial.REPLAY_TEXT) anywhere."""
    want = REPLAY_TEXT.encode()
    tail = b""
    with open(path, "rb") as f:
        while True:
            block = f.read(chunk)
            if not block:
                return False
            if want in tail + block:
                return True
            tail = block[-len(want):]


def _stamp(raw):
    """The `sec.usec` of a serial line's prefix (a copy of a line has the
    same; another record with the same text has not, normally)."""
    i = raw.find("[")
    j = raw.find("]", i + 1)
    return raw[i + 1:j].strip() if 0 <= i < j else None


PSTRESS_CTXS = ("task", "hardirq", "nmi", "emerg", "panic")    # interfaces.md section 3


def _damaged_in_trace(stored, line):
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


def _may_be_multi_line(text):
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


def _inserted_byte(want, got):
    """The byte `got` has more than `want` when it is `want` with one
    byte inserted, else None."""
    if want is None or got is None or len(got) != len(want) + 1:
        return None
    i = 0
    n = len(want)
    while i < n and want[i] == got[i]:
        i += 1
    return got[i] if got[i + 1:] == want[i:] else None


def _prefix_stray(sl):
    """The byte in or before the `[  sec.usec]` prefix of a line read as
    garbled (serial.GARBLED) whose removal leaves a well-formed kernel
    line of the same text, else None."""
    raw = sl.raw
    for i in range(len(raw) - len(sl.text)):
        kind, ctx, text = classify(raw[:i] + raw[i + 1:])
        if kind == REC and ctx != GARBLED and text == sl.text:
            return raw[i]
    return None


def _line_stray(want, sl):
    """The one byte by which the serial line sl is the line `want` (a
    record's text) with a byte inserted, in its text or its prefix, else
    None (no line, another damage, or more)."""
    if sl is None or sl.kind != REC or want is None:
        return None
    if sl.ctx == GARBLED:
        return _prefix_stray(sl) if sl.text == want else None
    return _inserted_byte(want, sl.text)


def _valid_without_one_byte(text):
    """The byte whose removal makes `text` a valid stressor record, or
    None."""
    for i in range(len(text)):
        p = parse_pstress(text[:i] + text[i + 1:])
        if p is not None and p[2]:
            return text[i]
    return None


def _near_copy(want, text):
    """text may be a damaged copy of the line want: the same first 24
    characters, or one character changed (what _find_corrupt() takes
    first)."""
    return (len(want) >= 24 and text[:24] == want[:24]) or _one_edit(want, text)


def _one_edit(a, b):
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
