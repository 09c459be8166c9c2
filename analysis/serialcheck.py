"""End-to-end check of the serial log against the trace.

The trace tells, in order, every emission attempt of the serial console
(seq, dropped count, how it ended) and the stored text of each seq
(`nobkl_store`).  The serial log must show, in the same order:

  * for a committed attempt: `** N printk messages dropped **` when
    dropped > 0, then the complete line `[  sec.usec] <stored text>`
    (optionally prefixed by the context letter `A`/`T`);
  * for an attempt that lost ownership: nothing, a prefix of that line,
    or even the whole line (lost before the commit) - the reprint follows;
  * nothing else that looks like a kernel line.

Lines are matched by their text after the timestamp.  Lines that do not
look like kernel output (user space writing to the same UART) are counted
and ignored.  The reader looks ahead a bounded window, so memory stays
small; the first match (sync) may scan from the start of the log.
"""

from collections import deque

from .serial import SerialReader, REC, DROPPED, FRAG, OTHER, GARBLED, parse_pstress

WINDOW = 400
PRESYNC = 200           # non-stressor records held before the first sync
PRODUCER_WINDOW = 256   # a producer's records may be stored slightly out of n order


class SerialChecker:
    def __init__(self, path, analyzer):
        self.path = path
        self.an = analyzer
        self.reader = SerialReader(path)
        self.buf = deque()
        self.synced = False
        self.presync = []
        self.fed_commits = 0
        self.sync_failures = 0
        self.gave_up = None
        self.interrupted = []     # interrupted attempts since the last committed match
        self.used = set()         # ids of those whose cut line was seen
        self.notice_used = set()  # ids of those whose dropped notice was seen
        self.orphan_notices = []  # dropped counts of committed records missing on the log
        self.sync_notice = None   # the dropped notice right before the line synced on
        self.early = {}           # seq -> line number (seen before its turn)
        self.producers = {}       # producer -> [low, max, seen]
        self.expected = {}        # producer -> (attempted, stored) from stats.txt
        self.refused = {}         # producer -> records printk() refused
        self.stats = {
            "lines_before_trace": 0, "matched": 0, "partial_lines": 0,
            "reprinted_full_lines": 0, "dropped_lines": 0, "foreign_lines": 0,
            "stressor_records": 0, "unchecked_text": 0, "post_trace_matched": 0,
            "lines_after_trace": 0, "dropped_notices_checked": 0,
        }

    # ------------------------------------------------------------ reading
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
        self._forget_interrupted()
        self.producers = {}

    # ------------------------------------------------------------ helpers
    def _violate(self, rule, att, msg, sl=None):
        con = self.an.consoles.get(att.con) if att is not None else None
        extra = {}
        if sl is not None:
            extra["serial_line"] = sl.lineno
            extra["serial_text"] = sl.raw[:200]
        if att is not None:
            extra["emit_line"] = att.lineno
            extra["emit_ts"] = att.ts
        v = self.an.violate(rule, con, msg, seq=att.seq if att is not None else None,
                            cpus=(att.ctx.cpu,) if att is not None else (),
                            ctxs=(att.ctx.label(),) if att is not None else (),
                            ev=_FakeEv(att) if att is not None else None, extra=extra)
        return v

    def _corrupt(self, att, msg, sl=None):
        """A line of att's emission is corrupted.  Documented only when a
        panic context took the console over from an owner inside its
        unsafe section and that owner had not noticed yet: it may still
        have written the byte of that section (see docs/analysis.md)."""
        if att is not None and att.stray_ok:
            self.stats["stray_after_unsafe_takeover"] = \
                self.stats.get("stray_after_unsafe_takeover", 0) + 1
            return None
        return self._violate("serial-corrupt", att, msg, sl)

    def _is_partial_of(self, sl, text):
        if sl.kind == FRAG:
            return True
        if sl.kind != REC:
            return False
        if text is None:
            return True
        return text.startswith(sl.text)

    # ------------------------------------------------------------ attempts
    def attempt(self, att):
        if att.outcome == "commit":
            self.fed_commits += 1
        if self.gave_up:
            return
        if self.synced and att.outcome == "commit" and att.text is not None and not att.dropped:
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
        if not self.synced and self.presync:
            # held back in order with the committed records before the sync
            self.presync.append(att)
            return
        self.interrupted.append(att)
        if not self.synced:
            return
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
        notice = None
        if sl.kind == DROPPED and att.dropped:
            notice = sl
            i += 1
            sl = self._get(i)
            while sl is not None and sl.kind == OTHER and i < 40:
                i += 1
                sl = self._get(i)
            if sl is None:
                self._count_skipped(i)
                return
        if self._is_partial_of(sl, att.text) and not self._is_next_committed_line(sl, att):
            first = att.text.split("\n", 1)[0] if att.text else None
            if sl.kind == REC and first is not None and sl.text == first:
                # A complete copy is this attempt's output only when the
                # reprint's copy (or cut line) follows; else the attempt
                # wrote nothing (lost at its first console_can_proceed())
                # and the line is the reprint's. The reprint's copy may
                # carry the attempt's last byte, the stray LF of its line
                # end (a copy one byte off).
                j = i + 1
                nxt = self._get(j)
                while nxt is not None and nxt.kind in (OTHER, DROPPED) and j < i + 40:
                    j += 1
                    nxt = self._get(j)
                if nxt is None or not (self._is_partial_of(nxt, att.text) or
                                       (nxt.kind == REC and _one_edit(first, nxt.text))):
                    return
                self.stats["reprinted_full_lines"] += 1
            else:
                self.stats["partial_lines"] += 1
            if not allowed:
                self._violate("serial-partial", att, "partial/repeated line for seq %d on the "
                              "serial log, but the trace shows no lost ownership (attempt ended: %s)"
                              % (att.seq, att.outcome), sl)
            if notice is not None:
                self.notice_used.add(id(att))
                self._check_notice(att, notice)
            self._count_skipped(i)
            self._consume(1)
            self.used.add(id(att))

    def _is_next_committed_line(self, sl, att):
        # A complete line that is exactly a *different* stored record.
        if sl.kind != REC:
            return False
        s = self.an.text_to_seq.get(sl.text)
        return s is not None and s != att.seq

    def _next_record_line(self, i):
        """Text of the first record line from lookahead position i on,
        past foreign lines, or None."""
        while i < 40:
            sl = self._get(i)
            if sl is None:
                return None
            if sl.kind == REC:
                return sl.text
            if sl.kind != OTHER:
                return None
            i += 1
        return None

    def _count_skipped(self, n):
        for _ in range(n):
            sl = self.buf.popleft()
            if sl.kind == OTHER:
                self.stats["foreign_lines"] += 1
            elif sl.kind == DROPPED:
                self.stats["dropped_lines"] += 1

    def _committed(self, att):
        if not self.synced:
            # Sync on a record whose text is known and unique (a stressor
            # record); hold the first few others back (with the interrupted
            # attempts between them, in order), they are not checked.
            if att.text is None:
                if self.presync:
                    self.presync.append(att)
                else:
                    self.stats["unchecked_before_sync"] = \
                        self.stats.get("unchecked_before_sync", 0) + 1
                return
            if not att.text.startswith("pstress ") and len(self.presync) < PRESYNC:
                self.presync.append(att)
                return
            if self.presync and not att.text.startswith("pstress "):
                # no stressor record soon: sync on the first held record
                held, self.presync = self.presync + [att], []
                self._replay(held)
                return
            self.stats["unchecked_before_sync"] = (
                self.stats.get("unchecked_before_sync", 0) +
                sum(1 for h in self.presync if h.outcome == "commit"))
            # interrupted attempts of the record synced on stay known
            self.interrupted = [h for h in self.presync if h.outcome != "commit"]
            self.presync = []
        self._committed_synced(att)

    def _replay(self, held):
        """Check attempts held back before the sync, in their order."""
        for h in held:
            if self.gave_up:
                break
            if h.outcome == "commit":
                self._committed_synced(h)
            else:
                self._interrupted(h, allowed=h.outcome in ("lost", "handover", "open"))

    def _committed_synced(self, att):
        text = att.text
        lines = text.split("\n") if text is not None else None
        first = lines[0] if lines is not None else None
        limit = WINDOW if self.synced else None
        found = self._search(first, limit)
        if found is None and self.synced and text is not None and " " in text:
            # a multi-line record: the trace joins its lines with blanks
            j = self._search_joined(text)
            if j is not None:
                i, last = j
                self._skip_checked(i, att)
                sl = self.buf.popleft()
                for _ in range(last - i):
                    self.buf.popleft()
                self.stats["multi_line_records"] = self.stats.get("multi_line_records", 0) + 1
                self._after_match(att, sl, corrupt=False)
                return
        if found is None:
            if att.seq in self.early:
                ln = self.early.pop(att.seq)
                self._account(first)
                self._violate("serial-order", att, "seq %d appeared on the serial log at line %d, "
                              "before records that precede it" % (att.seq, ln))
                return
            if not self.synced:
                self.sync_failures += 1
                self._violate("serial-missing", att, "committed record seq %d (%r) not found on "
                              "the serial log" % (att.seq, (first or "")[:80]))
                if self.sync_failures >= 3:
                    self.gave_up = "serial log matches none of the first committed records"
                return
            # corrupted copy?
            k = self._find_corrupt(first)
            if k is not None:
                sl = self.buf[k]
                self._skip_checked(k, att)
                self._consume(1)
                self._corrupt(att, "seq %d printed corrupted" % att.seq, sl)
                self._after_match(att, sl, corrupt=True)
                return
            self._account(first)
            self._violate("serial-missing", att, "committed record seq %d (%r) is not on the "
                          "serial log (searched %d lines)" % (att.seq, (first or "")[:80], WINDOW))
            orphans = self.orphan_notices
            self._forget_interrupted()
            if att.dropped:
                # its notice may be there without the record: not a second fault
                orphans.append(att.dropped)
            self.orphan_notices = orphans
            return
        k = found
        if not self.synced:
            # everything before the first match predates the trace
            self.stats["lines_before_trace"] += k
            self._consume(k)
            self.synced = True
            k = 0
            if any(a.seq == att.seq for a in self.interrupted) and \
                    self._next_record_line(1) == first:
                # the interrupted attempt wrote the whole line (it lost
                # the console in its last byte) and this is the reprint
                self.buf.popleft()
                self.stats["reprinted_full_lines"] += 1
            self._forget_interrupted()
            if self.sync_notice is not None:
                # the notice before the line synced on is checked with it
                self.buf.appendleft(self.sync_notice)
                self.stats["lines_before_trace"] -= 1
                k = 1
        self._skip_checked(k, att)
        sl = self.buf.popleft()
        # multi-line records
        if lines is not None and len(lines) > 1:
            for want in lines[1:]:
                nxt = self._get(0)
                if nxt is None or nxt.kind != REC or nxt.text != want:
                    why = ("multi-line record seq %d: continuation line %r missing or "
                           "different" % (att.seq, want[:60]))
                    self._corrupt(att, why, nxt)
                    break
                self.buf.popleft()
        self._after_match(att, sl, corrupt=False)

    def _forget_interrupted(self):
        """A committed record was placed: the interrupted attempts before
        it and the notices they explain are done with."""
        self.interrupted = []
        self.used = set()
        self.notice_used = set()
        self.orphan_notices = []

    def _after_match(self, att, sl, corrupt):
        self.stats["matched"] += 1
        self._forget_interrupted()
        text = att.text if att.text is not None else sl.text
        if att.text is None:
            self.stats["unchecked_text"] += 1
        if sl.ctx == GARBLED and not corrupt:
            self._corrupt(att, "seq %d printed with a garbled "
                               "`[  sec.usec]` prefix" % att.seq if att.seq is not None else
                               "record printed with a garbled prefix", sl)
        # a corrupted line counts for its producer as the stored record
        p = parse_pstress(att.text if corrupt and att.text else sl.text)
        if p is None:
            return
        self.stats["stressor_records"] += 1
        prod, n, ok, why = p
        if not ok and not corrupt:
            self._corrupt(att, "stressor record seq %d: %s" % (att.seq, why), sl)
        if prod is None:
            return
        pt = self.producers.get(prod)
        if pt is None:
            # low, max, seen >= low; a producer of the stressor's stats
            # starts at n=0 (its first record is traced), others where seen
            low = 0 if prod in self.expected else n
            pt = self.producers[prod] = [low, n, set()]
        low, mx, seen = pt
        if n < low or n in seen:
            self.stats["producer_repeats"] = self.stats.get("producer_repeats", 0) + 1
            return
        seen.add(n)
        if n > mx:
            pt[1] = n
        self._advance(prod, pt, att, sl, final=False)

    def _advance(self, prod, pt, att, sl, final):
        """Move the producer's low mark over seen or dropped numbers; a
        number the producer has left behind by more than the reorder
        window (or at the end) is a gap."""
        low, mx, seen = pt
        acc = self.an.dropped_producer.get(prod)
        while low <= mx:
            if low in seen:
                seen.discard(low)
            elif acc and low in acc:
                acc.discard(low)
            elif final or mx - low > PRODUCER_WINDOW:
                first = low
                while low <= mx and low not in seen and not (acc and low in acc) and \
                        (final or mx - low > PRODUCER_WINDOW):
                    low += 1
                gap = low - first
                budget = self.refused.get(prod, 0)
                if budget:
                    # printk() refused that many of this producer's records
                    # (stats: attempted > stored): not a console loss
                    use = min(budget, gap)
                    self.refused[prod] = budget - use
                    self.stats["refused_by_printk"] = self.stats.get("refused_by_printk", 0) + use
                    gap -= use
                if gap > 0:
                    self._violate("producer-gap", att, "producer r=%d c=%d x=%s: n=%d..%d never "
                                  "appeared on the serial log (not counted as dropped; producer "
                                  "reached n=%d)" % (prod + (first, low - 1, mx)), sl)
                continue
            else:
                break
            low += 1
        pt[0] = low

    def _account(self, text):
        """A record already reported missing/out of order: do not report
        its producer number again as a gap."""
        p = parse_pstress(text) if text else None
        if p is not None and p[0] is not None:
            self.an.dropped_producer.setdefault(p[0], set()).add(p[1])

    def _search(self, first, limit):
        """Index in the lookahead of the complete line for `first`
        (None text = any complete kernel line), or None."""
        if limit is not None:
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
        # sync: scan the whole remaining log without keeping it (but the
        # dropped notice right before the line found, which is its own)
        notice = None
        for i, sl in enumerate(self.buf):
            if sl.kind == REC and (first is None or sl.text == first):
                self.sync_notice = notice
                return i
            if sl.kind != OTHER:
                notice = sl if sl.kind == DROPPED else None
        pos = self.reader.tell()
        saved = len(self.buf)
        skipped = 0
        while True:
            sl = self.reader.next()
            if sl is None:
                self.reader.seek(pos)
                return None
            if sl.kind == REC and (first is None or sl.text == first):
                self.stats["lines_before_trace"] += saved + skipped
                self.buf.clear()
                self.buf.append(sl)
                self.sync_notice = notice
                return 0
            if sl.kind != OTHER:
                notice = sl if sl.kind == DROPPED else None
            skipped += 1

    def _search_joined(self, text):
        """(first, last) lookahead indices of consecutive complete lines
        whose texts joined by blanks equal `text`, or None."""
        n = len(text)
        for i in range(WINDOW):
            sl = self._get(i)
            if sl is None:
                return None
            if sl.kind != REC:
                continue
            t = sl.text
            if len(t) >= n or not text.startswith(t) or text[len(t)] != " ":
                continue
            acc = t
            j = i + 1
            while True:
                nx = self._get(j)
                if nx is None or nx.kind != REC:
                    break
                cand = acc + " " + nx.text
                if cand == text:
                    return i, j
                if not text.startswith(cand + " "):
                    break
                acc = cand
                j += 1
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

    def _skip_checked(self, k, att):
        """Lines before the match of att: classify; report unexplained ones."""
        notices = []        # dropped notices before att's own, in order
        trailing = None     # the notice right before att's line (foreign lines aside)
        garbled = None      # a foreign line there that looks like a cut notice
        for _ in range(k):
            sl = self.buf.popleft()
            if sl.kind == OTHER:
                self.stats["foreign_lines"] += 1
                if "messages dropped" in sl.text:
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
            garbled = None
            # each interrupted attempt explains at most one cut/repeated line
            avail = [a for a in self.interrupted if id(a) not in self.used and
                     a.outcome in ("lost", "handover", "open")]
            ok_partial = [a for a in avail if self._is_partial_of(sl, a.text)]
            if sl.kind == FRAG or (sl.kind == REC and att.text is not None and
                                   att.text.startswith(sl.text)):
                self.stats["partial_lines"] += 1
                excuse = ok_partial or avail
                if not excuse:
                    self._violate("serial-partial", att, "partial line before seq %d but the trace "
                                  "shows no (further) lost ownership before it" % att.seq, sl)
                else:
                    self.used.add(id(excuse[0]))
                continue
            if ok_partial:
                self.stats["partial_lines"] += 1
                self.used.add(id(ok_partial[0]))
                continue
            bad = [a for a in self.interrupted if a.outcome == "abandoned" and
                   self._is_partial_of(sl, a.text)]
            if bad:
                self.stats["partial_lines"] += 1
                self._violate("serial-partial", att, "partial/repeated line of seq %d but that "
                              "attempt did not lose ownership" % bad[0].seq, sl)
                continue
            s = self.an.text_to_seq.get(sl.text)
            if s is not None and s > att.seq:
                self.early[s] = sl.lineno
                if len(self.early) > 10000:
                    self.early.pop(next(iter(self.early)))
                continue
            self._violate("serial-extra", att, "kernel line on the serial log that no emission "
                          "explains (before seq %d)" % att.seq, sl)
        for sl in notices:
            self._explain_notice(att, sl)
        self._check_own_notice(att, trailing, garbled)

    # ------------------------------------------------------------ dropped notices
    # serial-dropped: a `** N printk messages dropped **` line is printed by
    # the emission of the record after the skipped ones, in one write with
    # it (cons_print_dropped()): N is the emission's `dropped`.  So a
    # committed record with dropped > 0 has exactly that notice right
    # before its line, one with dropped = 0 has none, and any other notice
    # is that of an interrupted attempt with the same count (each explains
    # one) or of a record missing on the log (already reported).

    def _check_own_notice(self, att, trailing, garbled):
        """att's line was found; trailing: the notice right before it."""
        if trailing is None:
            if not att.dropped:
                return
            if garbled is not None:
                self._corrupt(att, "dropped notice of seq %d (dropped=%d) garbled"
                              % (att.seq, att.dropped), garbled)
                return
            self._violate("serial-dropped", att, "seq %d was emitted with dropped=%d but no "
                          "`** %d printk messages dropped **` line precedes it"
                          % (att.seq, att.dropped, att.dropped))
            return
        if att.dropped:
            self._check_notice(att, trailing)
        else:
            self._explain_notice(att, trailing)

    def _check_notice(self, att, sl):
        """sl is the notice printed by attempt att."""
        n = int(sl.text)
        if n == att.dropped:
            self.stats["dropped_notices_checked"] += 1
            return
        self._violate("serial-dropped", att, "`** %d printk messages dropped **` before seq %d, "
                      "but its emission had dropped=%d" % (n, att.seq, att.dropped), sl)

    def _explain_notice(self, att, sl):
        """A notice before att's own: an interrupted attempt's or a
        missing record's, else one no emission printed."""
        n = int(sl.text)
        for a in self.interrupted:
            if a.dropped == n and id(a) not in self.notice_used:
                self.notice_used.add(id(a))
                self.stats["dropped_notices_checked"] += 1
                return
        if n in self.orphan_notices:
            self.orphan_notices.remove(n)
            return
        self._violate("serial-dropped", att, "`** %d printk messages dropped **` before seq %d "
                      "that no emission printed (seq %d: dropped=%d)"
                      % (n, att.seq, att.seq, att.dropped), sl)

    # ------------------------------------------------------------ end
    def finish(self, post_records, check_post=True):
        """post_records: [(seq, text, store_ts)] stored but not committed by
        the serial console when the trace ended; they must follow."""
        if not self.synced and self.presync and not self.gave_up:
            held, self.presync = self.presync, []
            self._replay(held)
        if self.gave_up or not self.synced:
            return
        credit = 0
        for seq, text, ts in post_records:
            if not check_post:
                break
            first = text.split("\n", 1)[0]
            k = self._search(first, WINDOW * 4)
            att = _PostAtt(self.an.serial_console, seq, ts)
            if k is None:
                if credit <= 0:
                    # records the ringbuffer overwrote after the trace ended:
                    # a dropped notice must come before the next printed one
                    for i in range(min(len(self.buf), 50)):
                        if self.buf[i].kind == DROPPED:
                            credit = int(self.buf[i].text)
                            self._skip_post(i + 1)
                            break
                        if self.buf[i].kind == REC:
                            break
                if credit > 0:
                    credit -= 1
                    self.stats["post_trace_dropped"] = self.stats.get("post_trace_dropped", 0) + 1
                    self._account(first)
                    continue
                self._account(first)
                self._violate("serial-missing", att, "record seq %d stored at %.6f (after the "
                              "serial console's last traced commit) is not on the serial log: %r"
                              % (seq, ts, first[:80]))
                continue
            credit = 0
            self._skip_post(k)
            sl = self.buf.popleft()
            self.stats["post_trace_matched"] += 1
            att.text = text
            self._after_match(att, sl, corrupt=False)
        if check_post and self.expected and self.an.pstress_printable:
            # every record the stressor stored (stats.txt) up to its last n
            for prod, (attempted, stored) in self.expected.items():
                if attempted <= 0:
                    continue
                pt = self.producers.get(prod)
                if pt is None:
                    pt = self.producers[prod] = [0, -1, set()]
                if attempted - 1 > pt[1]:
                    pt[1] = attempted - 1
        if check_post:
            for prod, pt in list(self.producers.items()):
                if pt[2] or pt[0] <= pt[1]:
                    self._advance(prod, pt, _PostAtt(self.an.serial_console, None, None),
                                  None, final=True)
        self.stats["lines_after_trace"] += len(self.buf) + self.reader.count_rest()
        self.buf.clear()
        self.reader.close()

    def _skip_post(self, k):
        for _ in range(k):
            sl = self.buf.popleft()
            if sl.kind == OTHER:
                self.stats["foreign_lines"] += 1
            elif sl.kind == DROPPED:
                self.stats["dropped_lines"] += 1
            else:
                self.stats["partial_lines"] += 1

    def set_expected(self, expected):
        self.expected = dict(expected)
        self.refused = {p: a - st for p, (a, st) in self.expected.items() if a > st}

    def summary(self):
        d = dict(self.stats)
        d["synced"] = self.synced or self.stats["matched"] > 0
        d["gave_up"] = self.gave_up
        d["producers"] = len(self.producers)
        d["lines_read"] = self.reader.lineno
        return d


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


class _FakeEv:
    """Stands for the emission event of an attempt in violation reports."""

    def __init__(self, att):
        self.ts = att.ts
        self.lineno = att.lineno
        self.cpu = att.ctx.cpu
        self.name = "nobkl_emit"
        self.fields = {"con": att.con, "seq": str(att.seq)}


class _PostCtx:
    cpu = None

    def label(self):
        return "after-trace"


class _PostAtt:
    def __init__(self, con, seq, ts):
        self.con = con
        self.seq = seq
        self.ts = ts
        self.lineno = None
        self.ctx = _PostCtx()
        self.text = None
        self.dropped = 0
        self.outcome = "post"
