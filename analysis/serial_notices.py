"""The dropped notices and replay markers of the serial alignment: the
`** N printk messages dropped **` and `** replaying previous printk
message **` lines set against the attempts that printed them.

A committed record's own notice and marker are the lines right before
its line; any other is that of an interrupted attempt since the last
committed record (each explains one: `notice_used`, `marker_used`), or
a notice of a committed record missing on the log (`orphan_notices`),
else no emission printed it.

Where the console design lets a record below the console loglevel
print its notice and marker alone (console_output.py,
`suppressed_prefix`), those lines explain notices and markers before
the next record placed, and are owed by then (`prefix_only`).

Invariants: the count a notice must say is the attempt's dropped count,
plus, where the model carries it (console_output.py,
`carries_dropped`), what the records below the console loglevel
carried over (DroppedCounts, which the alignment keeps as `counts`), a
lower bound only before the trace's first printed record committed; a
missing marker is a violation only on a log that has the marker at all,
or of a model whose trace tells where it is (`replay_contract`); a
prefix-only emission is settled (its lines seen, or owed) when the next
record's line is placed, never later.
"""

from .console_output import replays
from .serial import garbled_notice_strays
from .serial_diff import inserted_byte
from .serial_rules import NO_NOTICE, NO_REPLAY_MARKER, STRAY_NOTICE, STRAY_REPLAY_MARKER, \
    WRONG_NOTICE

CARRIED_MAX = 256       # attempts remembered with a carried dropped count


class DroppedCounts:
    """The count each emission attempt's dropped notice must say: the
    attempt's own dropped count, plus the dropped counts of the records
    below the console loglevel committed since the last record printed
    (suppressed: no output; cons_emit_record() carries their count over
    in con->dropped, and the next notice printed adds it).

    `carry` is what is carried now: None while unknown (no printed
    record committed in the trace yet, or events lost since), else a
    count; each attempt is given the carry it was emitted with, the
    latest CARRIED_MAX of those with a carry remembered.

    A model that carries nothing (`carries` False: 6.12's nbcon never
    leaves a count in con->dropped, console_output.py) has carry 0 for
    good: every notice says its own emission's count, exactly."""

    def __init__(self, carries=True):
        self.carries = carries
        self.carry = None if carries else 0
        self.carried = {}         # id -> (attempt, carry it was given)

    def suppressed(self, att):
        """att: a committed emission (len=0) of a record below the
        console loglevel: its dropped count is carried over."""
        if self.carry is not None and self.carries:
            self.carry += att.dropped

    def emitted(self, att):
        """att: an emission attempt with output, as the trace ended it:
        it owes the carry; a committed one printed its notice with it,
        which cleared the carry."""
        carry = self.carry
        if carry != 0:
            self.carried[id(att)] = (att, carry)
            if len(self.carried) > CARRIED_MAX:
                self.carried.pop(next(iter(self.carried)))
        if att.outcome == "commit":
            self.carry = 0

    def lost(self):
        """Trace events were lost: they may have carried a count."""
        if self.carries:
            self.carry = None

    def owed(self, att):
        """(N, exact) for att's notice: N its count, at least N if not exact."""
        e = self.carried.get(id(att))
        if e is None or e[0] is not att:
            return att.dropped, True
        if e[1] is None:
            return att.dropped, False
        return att.dropped + e[1], True

    def fits(self, att, n):
        """A notice of n records is one att may have printed."""
        want, exact = self.owed(att)
        return n == want or (not exact and n > want)

    def text(self, att):
        """att's dropped count, as a message says it."""
        want, exact = self.owed(att)
        if want == att.dropped:
            return "dropped=%d" % att.dropped
        return "dropped=%d after records below the console loglevel that carried %d" \
            % (att.dropped, want - att.dropped)


class Notices:
    """SerialChecker's notices and markers (a class of it: the state is the checker's)."""
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
            if replays(self.output, att) and self.replay_contract and att.outcome == "commit":
                self._judge(NO_REPLAY_MARKER, att, None, None)
            return
        if replays(self.output, att):
            self.stats["replay_markers_checked"] += 1
            return
        self._explain_marker(att, sl, True)

    def _explain_marker(self, att, sl, own):
        """A marker that is not att's own reprint's: a prefix-only
        emission or an interrupted reprint printed it (each explains
        one), else nobody did.  After a takeover inside an unsafe section
        the old owner may have noted the record without tracing its
        emission: tolerated like its stray byte."""
        for a in self.prefix_only + self.interrupted:
            if replays(self.output, a) and id(a) not in self.marker_used:
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

    def _place_own_notice(self, att, trailing, garbled):
        """att's line was found; trailing: the notice right before it
        (garbled: a foreign line there that looks like a cut notice)."""
        want, exact = self.counts.owed(att)
        if trailing is None:
            if not want:
                return
            if garbled is not None:
                self._corrupt(att, "dropped notice of seq %d (%s) garbled"
                              % (att.seq, self.counts.text(att)), garbled,
                              self._notice_stray(att, garbled.raw))
                return
            self._judge(NO_NOTICE, att, None, (want, self.counts.text(att)))
            return
        if want or not exact:
            self._place_notice(att, trailing)
        else:
            self._explain_notice(att, trailing)

    def _notice_stray(self, att, raw):
        """The byte inserted in the garbled notice line `raw` when that
        is att's own notice with one byte more, else None."""
        for byte, n in garbled_notice_strays(raw):
            if self.counts.fits(att, n):
                return byte
        return None

    def _place_notice(self, att, sl):
        """sl is the notice printed by attempt att.  A count with one digit
        more than att's is att's notice with a byte inserted (an unsafe
        victim's stray byte after the `1` of `** 1 printk`): corruption of
        att's line, which _corrupt() tolerates or places."""
        n = int(sl.text)
        if self.counts.fits(att, n):
            self.stats["dropped_notices_checked"] += 1
            return
        got, want = str(n), str(self.counts.owed(att)[0])
        stray = inserted_byte(want, got)
        if stray is not None:
            self._corrupt(att, "dropped notice of seq %d (%s) printed as `** %d "
                          "printk messages dropped **`" % (att.seq, self.counts.text(att), n),
                          sl, stray)
            return
        self._judge(WRONG_NOTICE, att, sl, (n, self.counts.text(att)))

    def _explain_notice(self, att, sl):
        """A notice before att's own: placed as an interrupted attempt's
        or a missing record's, else as one no emission printed."""
        n = int(sl.text)
        for a in self.prefix_only + self.interrupted:
            if self.counts.fits(a, n) and id(a) not in self.notice_used:
                self.notice_used.add(id(a))
                self.stats["dropped_notices_checked"] += 1
                return
        if n in self.orphan_notices:
            self.orphan_notices.remove(n)
            return
        self._judge(STRAY_NOTICE, att, sl, (n, self.counts.text(att)))

    # ------------------------------------------------------------ prefix-only emissions
    # A model whose console prints a suppressed record's dropped notice and
    # replay marker alone (console_output.py, `suppressed_prefix`: 6.12)
    # writes those lines where the record would be: after the line of the
    # record printed before it, before the next one's, as an interrupted
    # attempt's are.  So they explain notices and markers before the next
    # record placed (_explain_notice(), _explain_marker()), and once its
    # line is placed every one owed and not seen is missing.

    def _prefix_only(self, att):
        """att: a committed emission of a record below the console
        loglevel that printed only its notice and marker (held with the
        records before the sync, to keep their order)."""
        if not self.synced:
            self.presync.append(att)
            self.prefix_held.add(id(att))
            return
        self.prefix_only.append(att)

    def _settle_prefix_only(self, att):
        """att's line was placed: the prefix-only emissions before it owed
        their lines by now."""
        keep = []
        for p in self.prefix_only:
            if p.seq > att.seq:
                keep.append(p)
                continue
            want = self.counts.owed(p)[0]
            if want and id(p) not in self.notice_used:
                self._judge(NO_NOTICE, p, None, (want, self.counts.text(p)))
            if replays(self.output, p) and self.replay_contract and \
                    id(p) not in self.marker_used:
                self._judge(NO_REPLAY_MARKER, p, None, None)
        self.prefix_only = keep
