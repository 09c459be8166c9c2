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

What the console prints around a record differs by the console design
(context marks, which notice a record below the console loglevel
prints, where the replay marker belongs): the model's row of
console_output.OUTPUT, `output`, which the alignment reads and never
the model's name (use_output(): the output it starts with, then the
row of each model the checker applies, which api.py passes on).

Lines are matched by their text after the timestamp.  Lines that do not
look like kernel output (user space writing to the same UART) are counted
and ignored.

Invariants:
  * the alignment judges nothing: what it finds for a record or a line,
    as expected or not, is a Placement (serial_rules.PLACEMENTS) handed
    to the units of its kind (`_judge()`); only they report, through
    `violate()`, on a Blame: the traced emission attempt of the record at
    fault, or the place outside the traced emissions (before or after
    the trace), which goes to the `report` callable spelled out
    (api.py hands it `Analyzer.violate(at=...)`): no trace event is
    made up for it;
  * it does not know the checker: what it reads of the trace's side is
    `records` (Records), and the checker hands it its attempts and
    trace loss through callables api.py registers (attempt_ended(),
    resync(), use_output());
  * it grants the one tolerance of the serial rules, the stray byte of
    an unsafe panic takeover (`_corrupt()`, `_stray_byte_line()`), as
    the model grants the trace's, and counts it;
  * memory stays bounded: a lookahead of WINDOW lines, and at most
    EARLY_MAX, RECENT and CARRIED_MAX of what it remembers; only the
    first match (sync) may scan from the start of the log.

The alignment is one object, SerialChecker: its state is set up here
(__init__ says what each part is), with the ways in and out
(attempt_ended(), attempt(), suppressed(), resync(), finish(); violate(),
_judge(); the summary).
It owns a Lookahead (serial_lookahead.py: the lines read ahead of the
place on the log, and the searches in them), through which alone it
reads the log, and DroppedCounts (serial_notices.py: what each
attempt's dropped notice must say).  Its stages are classes of their
own modules, each the methods of one job over its state:

  serial_sync.py        finding the place on the log (the sync), and the
                        attempts held until then;
  serial_place.py       each attempt's lines placed in its turn, with
                        the lines before them, and the stray byte granted;
  serial_notices.py     the dropped notices and the replay markers;
  serial_identities.py  every record once and in its turn: stressor
                        identities, lines before or after their turn,
                        lines outside the trace;
  serial_after.py       the log after the serial console's last traced
                        commit.
They share the lookahead and the interrupted attempts since the last
committed record; as classes of one object they need no state handed
from one to the other.  What a line is to a record's text (one byte
off, a damaged copy, the stray byte) is serial_diff.py's functions.
"""

from .console_output import replays
from .consolelog import contains
from .producers import Producers
from .serial import REC, REPLAY_TEXT
from .serial_after import AfterTrace
from .serial_identities import Identities
from .serial_lookahead import Lookahead
from .serial_notices import DroppedCounts, Notices
from .serial_place import Placing
from .serial_rules import SERIAL_UNITS, Placement, blame, ABOVE_LOGLEVEL
from .serial_sync import Sync


class Records:
    """What the alignment reads of the trace's side, and all of it (the
    caller builds it: api.SerialRecords over the checker):

      text_to_seq        stored text -> seq, of the records still stored
      level(seq)         the level a record was stored at (None: not stored)
      serial_console     the name of the console the log belongs to
      serial_state()     that console's state (model.Console), or None
      console_loglevel   records at this level or above are not printed
      pstress_printable  some stressor record was stored below it
      loss_seen          the trace lost events
      dropped_producer   producer -> set of n the serial console dropped
                         (the model adds to it; the ledger reads it)

    This class only names them; the alignment is never handed the checker."""


class SerialChecker(Placing, Sync, Notices, Identities, AfterTrace):
    """The serial log at `path` aligned with the serial console's
    emission attempts, handed to it as the trace ends them.  `records`
    (Records) is what it reads of the trace's side, `report` how the
    units report (the checker's violate()), `output` the console
    output of the model it starts with (use_output())."""

    def __init__(self, path, records, report, output):
        self.path = path
        self.records = records
        self.report = report
        self.look = Lookahead(path)    # the lines read ahead on the log
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
        self.prefix_only = []     # committed emissions that printed only their notice and
                                  # marker, since the last record placed (_prefix_only())
        self.prefix_held = set()  # ids of those among the attempts held before the sync
        self.log_has_marker = contains(path, REPLAY_TEXT)
        self.orphan_notices = []  # dropped counts of committed records missing on the log
        self.use_output(output)
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
        self.producers = Producers(self.stats, records.dropped_producer)

    def use_output(self, output):
        """What the console of the checker's model prints around a record
        (console_output.ConsoleOutput): set before the first attempt."""
        self.output = output
        self.look.reader.marks = output.marks
        self.counts = DroppedCounts(output.carries_dropped)  # what each notice must say
        # the kernel prints a replay marker before a reprint: held to it
        # where the trace tells where one is, or the log has one (a
        # kernel before the marker prints none, and is not held to it)
        self.replay_contract = output.marker_from_flag or self.log_has_marker

    def resync(self):
        self.synced = False
        self.presync = []
        self.prefix_only = []
        self.prefix_held = set()
        self.counts.lost()
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
            return self.report(rule, None, msg, extra=extra)
        b = blame(about)
        extra["emit_line"] = b.line
        extra["emit_ts"] = b.ts
        con = self.records.serial_console
        return self.report(rule, self.records.serial_state(), msg, seq=b.seq,
                               cpus=(b.cpu,), ctxs=(b.context,), extra=extra,
                               at=(b.ts, b.line, b.cpu, b.shown(con)))

    def _judge(self, kind, about, sl, facts):
        """Hand a placement to the serial rules' units that consume its
        kind (the registry's, SERIAL_UNITS)."""
        p = Placement(kind, about, sl, facts)
        for judge in SERIAL_UNITS[kind]:
            judge(self, p)

    # ------------------------------------------------------------ attempts
    def attempt_ended(self, att):
        """An emission attempt of the serial console as the trace ended
        it: one that wrote nothing (len=0) is a suppressed record when
        committed, and nothing otherwise; any other is placed."""
        if att.len == 0:
            if att.outcome == "commit":
                self.suppressed(att)
        else:
            self.attempt(att)

    def suppressed(self, att):
        """att: a committed emission (len=0) of a record below the console
        loglevel.  Nothing was written: the records dropped in front of it
        go into the notice of the next record printed (cons_emit_record()
        carries them over in con->dropped)."""
        self.counts.suppressed(att)

    def attempt(self, att):
        """An emission attempt of the serial console, as the trace ended
        it, placed on the log in its turn (a committed record printed
        that was stored at a level not below the console loglevel is
        placed as such first)."""
        self.counts.emitted(att)
        prefix_only = False
        if att.outcome == "commit":
            self.fed_commits += 1
            text = att.text
            if text is not None and text[:12] == "pstress v=2 ":
                self._writer_order(text, att.seq, att, None)
            level = self.records.level(att.seq)
            loglevel = self.records.console_loglevel
            if level is not None and level >= loglevel:
                # the console prints only records below its loglevel: a
                # suppressed one is committed with len=0 (or without an
                # emission) and never reaches this checker, unless its
                # console prints its notice and marker alone
                prefix_only = self.output.suppressed_prefix and \
                    (att.dropped > 0 or replays(self.output, att))
                if not prefix_only:
                    self._judge(ABOVE_LOGLEVEL, att, None, (level, loglevel))
        if self.gave_up:
            return
        if prefix_only:
            self._prefix_only(att)
            return
        if self.synced and att.outcome == "commit" and att.text is not None and \
                self.counts.owed(att) == (0, True) and not replays(self.output, att) and \
                not self.prefix_only:
            # fast path: the expected line is next
            sl = self.look.get(0)
            if sl is not None and sl.text == att.text and sl.kind == REC:
                self.look.take()
                self._after_match(att, sl, False)
                return
        if att.outcome == "commit":
            self._committed(att)
        elif att.outcome == "open":
            self._interrupted(att, allowed=True)
        else:
            self._interrupted(att, allowed=att.outcome in ("lost", "handover"))

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
            self.look.close()
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
        self.look.close()

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
                       % (self.stats["unchecked_text"], self.records.serial_console))
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
        d["lines_read"] = self.look.lineno
        return d
