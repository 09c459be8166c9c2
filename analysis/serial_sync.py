"""The sync of the serial alignment: finding the place on the serial
log where the trace's first printed record is, and placing the
attempts held back until then.

Before the sync, attempts are held in order (`presync`); the sync
places them behind the line found, then the alignment goes on in step
with the log (`synced`).  What the log has before that place is
outside the trace (serial_identities' `_untraced_line()`).

Invariants:
  * every held attempt is checked as if the alignment had been in step
    with the log all along (`_replay()` places them in order);
  * no more than PRESYNC non-stressor records are held before a sync
    is tried, and BACK lines are kept behind the line found;
  * a log on which SYNC_TRIES held records are nowhere is not this
    trace's: the alignment gives up (`gave_up`: incomplete), it blames
    nothing on the kernel.
"""

from collections import deque

from .pstress import first_line
from .serial import REC, DROPPED, OTHER, REPLAY
from .serial_diff import near_copy, stamp
from .serial_rules import BEFORE_TRACE, REPEATED_LINE

PRESYNC = 200           # non-stressor records held before the first sync
BACK = 2000             # lines looked at behind the first match for the held records
SYNC_TRIES = 3          # records not on the log at all before it is taken as foreign


class Sync:
    """SerialChecker's sync (a class of it: the state is the checker's)."""
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

    def _next_anchor(self):
        """Index in presync of the first held commit with a text that was
        not looked for in vain yet, or None."""
        for i, h in enumerate(self.presync):
            if h.outcome == "commit" and h.text is not None and id(h) not in self.failed_anchors \
                    and id(h) not in self.prefix_held:
                return i
        return None

    def _sync(self, anchor_i):
        if anchor_i is None:
            return
        held = self.presync
        anchor = held[anchor_i]
        start = self.look.tell()
        back = self.look.scan_for(first_line(anchor.text), BACK)
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
        near = deque(maxlen=BACK)
        for sl in self.look.reread(start, at):
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
            if (stamp(sl.raw), sl.text) in self.recent:
                self._judge(REPEATED_LINE, BEFORE_TRACE, sl, True)

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
            if h.text is None or id(h) in self.prefix_held:
                # no line of its own (a prefix-only emission: its notice
                # is taken before the next record's, in its turn)
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
                                          near_copy(want, back[j][1].text)):
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
                            % (SYNC_TRIES, self.records.serial_console, anchor.text[:60]))
            self.presync = []

    def _replay(self, held):
        """Check attempts held back before the sync, in their order. The
        store may have forgotten their records by now: their texts stay
        known for as long as the replay runs."""
        self.held_text_to_seq = {h.text: h.seq for h in held
                                 if h.outcome == "commit" and h.text is not None}
        try:
            for h in held:
                if id(h) in self.prefix_held:
                    self.prefix_only.append(h)
                elif h.outcome == "commit":
                    self._committed_synced(h)
                else:
                    self._interrupted(h, allowed=h.outcome in ("lost", "handover", "open"))
        finally:
            self.held_text_to_seq = {}
            self.prefix_held = set()
