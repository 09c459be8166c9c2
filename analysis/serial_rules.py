"""The serial rules: units over the placements of the serial alignment
(serialcheck.py), registered in the one rule registry (rules.py,
docs/analysis.md "The rules").

The alignment sets every serial line, or its absence, against the
attempt of the serial console it belongs to, or a place before or after
the traced attempts, and says what it found as a Placement of a kind
(PLACEMENTS: what each kind means and the facts it carries).  Each kind
is a fact of the registry; the alignment hands a placement to the units
that consume its kind (SERIAL_UNITS), in registration order.

Invariants (test_registry.py):
  * a unit is a function of (the alignment, a placement): it judges the
    placement and reports a broken rule through the alignment's
    violate(), which puts it on the place the placement is about
    (blame());
  * a unit changes no state, of the alignment or anything else, and
    calls no other unit: what it needs is in the placement;
  * every kind has at least one unit, and every unit consumes kinds of
    PLACEMENTS only.
What a placement is about, the places outside the traced attempts
(StoredAfter, Blame), is defined here with the kinds, since the units
read it as the alignment makes it.  The tolerance of the serial rules
(the stray byte of an unsafe panic takeover) is the alignment's to
grant, as the model grants the trace's.
"""

from collections import namedtuple

from .pstress import producer_name
from .rules import consumers, unit


# A placement: what the alignment found for one record or line.
#   kind: one of PLACEMENTS, about: the traced attempt (or a Blame,
#   StoredAfter), sl: the serial line (None: not on the log), facts:
#   what the kind's units need, as PLACEMENTS says
Placement = namedtuple("Placement", "kind about sl facts")

MISSING = "placement:missing"
LATE_LINE = "placement:late-line"
EARLY_COPY = "placement:early-copy"
REPEAT = "placement:repeat"
FORGED = "placement:forged"
UNPLACED = "placement:unplaced"
STRAY_NOTICE = "placement:stray-notice"
ABOVE_LOGLEVEL = "placement:above-loglevel"
INTERRUPTED_LINE = "placement:interrupted-line"
CUT_LINE = "placement:cut-line"
CORRUPT = "placement:corrupt"
REPEATED_LINE = "placement:repeated-line"
EARLY_LINE = "placement:early-line"
UNEXPLAINED_LINE = "placement:unexplained-line"
NO_NOTICE = "placement:no-notice"
WRONG_NOTICE = "placement:wrong-notice"
POST_MISSING = "placement:post-missing"
POST_NO_NOTICE = "placement:post-no-notice"
POST_NOTICE = "placement:post-notice"
NO_REPLAY_MARKER = "placement:no-replay-marker"
STRAY_REPLAY_MARKER = "placement:stray-replay-marker"
WRITER_ORDER = "ledger:writer-order"
PRODUCER_GAP = "ledger:gap"
# the kinds and their facts (the facts of the registry, rules.FACTS)
PLACEMENTS = {
    MISSING: "a committed record whose line is not on the log; facts: (the "
             "record's first line, the lines searched in its turn)",
    LATE_LINE: "the line of a committed record found after its turn; facts: the "
               "lines looked at in its turn",
    EARLY_COPY: "the line of a record in its turn that was also on the log before; "
                "facts: (that line's number, an interrupted attempt of the record "
                "whose cut line was not seen explains it)",
    REPEAT: "a stressor identity on the log again; facts: (producer, n, the same "
            "crc, where the other copy is)",
    FORGED: "a stressor record its run never made; facts: (producer, n, stats.txt's "
            "(attempted, stored) of the producer or None)",
    UNPLACED: "a stressor record seen before its turn whose turn never came; facts: "
              "(producer, n)",
    STRAY_NOTICE: "a dropped notice before a record's own that no interrupted attempt "
                  "and no missing record printed; facts: (its count, the record's "
                  "dropped count as a message says it)",
    ABOVE_LOGLEVEL: "a committed emission with output of a record stored at a level not "
                    "below the console loglevel; facts: (its level, the console loglevel)",
    INTERRUPTED_LINE: "the cut or whole line an attempt that did not commit printed, in "
                      "its turn; facts: whether the attempt lost ownership (or is open)",
    CUT_LINE: "a cut or repeated line before a record's line; facts: the interrupted "
              "attempt it is taken for (None: none that lost ownership is left)",
    CORRUPT: "a line of a record's emission (or its dropped notice) that is not what was "
             "stored, no stray byte of an unsafe takeover explains; facts: what is "
             "wrong, as a message says it",
    REPEATED_LINE: "a non-stressor line with the time stamp and text of another placed; "
                   "facts: whether the copy placed follows it (the place synced at)",
    EARLY_LINE: "a record's line seen before the records that precede it, not in its "
                "turn; facts: that line's number",
    UNEXPLAINED_LINE: "a kernel line before a record's line that no emission explains; "
                      "facts: None",
    NO_NOTICE: "a record printed with no dropped notice before it, whose emission "
               "dropped records (or, where the console prints a suppressed record's notice "
               "alone, such a record's notice not before the next line placed); facts: (the "
               "count due, the record's dropped count as a message says it)",
    WRONG_NOTICE: "a record's dropped notice whose count is not its emission's; facts: "
                  "(its count, the record's dropped count as a message says it)",
    POST_MISSING: "a record stored after the last traced commit whose line is not on "
                  "the log, and no dropped notice covers it; facts: its first line",
    POST_NO_NOTICE: "the first record printed after the trace with no dropped notice "
                    "before it, where records below the console loglevel carried a "
                    "count; facts: that count",
    POST_NOTICE: "a dropped notice before a record stored after the last traced commit "
                 "whose count is below the records missing before it or above the seqs "
                 "since the last one printed; facts: (its count, the records missing, "
                 "the seqs since the last one printed or None, the carried count or None)",
    NO_REPLAY_MARKER: "a committed replay (console_output.replays(): the emission's "
                      "replay flag where the model traces one, else Attempt.reprint: the "
                      "console's previous attempt was of the same record and did not commit) "
                      "whose line has no replay marker before it, on a log held to the marker; "
                      "facts: None",
    STRAY_REPLAY_MARKER: "a replay marker line before a record's that neither the record's "
                         "reprint nor an interrupted reprint of another attempt printed; "
                         "facts: whether it is right before the record (its own place)",
    # what the producer ledger (producers.py) finds, handed on as it is
    WRITER_ORDER: "a version 2 record below its writer's highest n so far; facts: "
                  "the ledger's message",
    PRODUCER_GAP: "a gap in a producer's numbers; facts: the ledger's message",
}


class StoredAfter:
    """A record stored after the serial console's last traced commit,
    checked on the log as a committed attempt is (serial_after's
    _place_post())."""

    __slots__ = ("seq", "ts", "text", "stray_ok")

    def __init__(self, seq, ts, text):
        self.seq = seq
        self.ts = ts              # when it was stored
        self.text = text
        # no traced takeover can have put a byte into it; a cut line
        # before it may have (serial_after's _post_corrupt())
        self.stray_ok = ()


class Blame(namedtuple("Blame", "seq ts line cpu context")):
    """What a serial violation is placed on in the trace: the emission
    attempt of the record at fault (its seq; the time, trace line and CPU
    of its emission; its context), or, outside the traced emissions, the
    context "before-trace" or "after-trace" and, for a record stored
    after the serial console's last traced commit, its seq and the time
    it was stored."""

    __slots__ = ()

    def shown(self, con):
        """The emission as the verdict shows a violation's event
        (Analyzer.fmt_event() of a nobkl_emit with its seq)."""
        return "line %s %s %s nobkl_emit %s seq=%s" % (
            self.line, "%.6f" % self.ts if self.ts is not None else "-",
            "[%03d]" % self.cpu if self.cpu is not None else "[---]", con, self.seq)


BEFORE_TRACE = Blame(None, None, None, None, "before-trace")
AFTER_TRACE = Blame(None, None, None, None, "after-trace")


def blame(about):
    """The Blame of what a placement is about (a traced attempt, a
    StoredAfter record or a Blame)."""
    if isinstance(about, Blame):
        return about
    if isinstance(about, StoredAfter):
        return Blame(about.seq, about.ts, None, None, "after-trace")
    return Blame(about.seq, about.ts, about.lineno, about.ctx.cpu, about.ctx.label())


# ------------------------------------------------------------ the units, by rule

@unit("serial-missing", consumes=MISSING)
def missing_line(sc, p):
    """Every record the serial console emitted and committed is on the
    log as a complete line."""
    first, searched = p.facts
    sc.violate("serial-missing", p.about, "committed record seq %d (%r) is not on the "
               "serial log (searched %d lines)" % (p.about.seq, (first or "")[:80], searched))


@unit("serial-missing", consumes=POST_MISSING)
def missing_after_trace(sc, p):
    """Records stored after the serial console's last traced commit are
    on the log, unless a dropped notice before the next one printed
    covers them (overwritten after the trace ended)."""
    sc.violate("serial-missing", p.about, "record seq %d stored at %.6f (after the serial "
               "console's last traced commit) is not on the serial log: %r"
               % (p.about.seq, p.about.ts, p.facts[:80]))


@unit("serial-corrupt", consumes=CORRUPT)
def line_corrupted(sc, p):
    """A complete line equals the stored text of its record, and a
    stressor record has its length and crc (the stray byte of an unsafe
    takeover is tolerated before it gets here)."""
    sc.violate("serial-corrupt", p.about, p.facts, p.sl)


@unit("serial-order", consumes=LATE_LINE)
def line_after_its_turn(sc, p):
    """Records appear in seq order: a record's line is not beyond the
    lines looked at in its turn."""
    sc.violate("serial-order", p.about, "seq %d appeared on the serial log at line %d, after "
               "records that follow it (beyond the %d lines looked at in its turn)"
               % (p.about.seq, p.sl.lineno, p.facts), p.sl)


@unit("serial-order", consumes=EARLY_LINE)
def line_before_its_turn(sc, p):
    """Records appear in seq order: a record's line does not come before
    the records that precede it."""
    sc.violate("serial-order", p.about, "%s appeared on the serial log at line %d, before "
               "records that precede it" % (_record(p.about), p.facts))


@unit("serial-partial", consumes=EARLY_COPY)
def copy_before_its_turn(sc, p):
    """A complete copy of a record before its turn is a repeated line,
    unless an interrupted attempt of that record explains it."""
    lineno, excused = p.facts
    if excused:
        return
    sc.violate("serial-partial", p.about, "seq %d is on the serial log twice: a complete copy "
               "at line %d, before its turn, and in its turn" % (p.about.seq, lineno), p.sl)


@unit("serial-partial", "serial-extra", consumes=REPEAT)
def identity_again(sc, p):
    """The stressor makes each record (run, cpu, ctx, n) once: the same
    identity again with the same crc is a repeated line (serial-partial),
    with another crc a record the stressor did not make (serial-extra)."""
    prod, n, same, where = p.facts
    ident = "%s n=%d" % (producer_name(prod), n)
    if same:
        sc.violate("serial-partial", p.about, "stressor record %s is on the serial log twice "
                   "(the other copy %s)" % (ident, where), p.sl)
    else:
        sc.violate("serial-extra", p.about, "two different stressor records %s on the serial "
                   "log (the other %s): the stressor makes each n once" % (ident, where), p.sl)


@unit("serial-partial", consumes=INTERRUPTED_LINE)
def interrupted_line_lost_ownership(sc, p):
    """A partial or repeated line only for an attempt that lost ownership
    (followed by the full reprint)."""
    if p.facts:
        return
    sc.violate("serial-partial", p.about, "partial/repeated line for seq %d on the serial log, "
               "but the trace shows no lost ownership (attempt ended: %s)"
               % (p.about.seq, p.about.outcome), p.sl)


@unit("serial-partial", consumes=CUT_LINE)
def cut_line_explained(sc, p):
    """A cut or repeated line before a record's is that of an interrupted
    attempt since the last record placed that lost ownership, each such
    attempt explaining at most one."""
    att = p.facts
    if att is None:
        sc.violate("serial-partial", p.about, "partial line before seq %d but the trace shows "
                   "no (further) lost ownership before it" % p.about.seq, p.sl)
    elif att.outcome == "abandoned":
        sc.violate("serial-partial", p.about, "partial/repeated line of seq %d but that "
                   "attempt did not lose ownership" % att.seq, p.sl)


@unit("serial-partial", consumes=REPEATED_LINE)
def line_again(sc, p):
    """Each line is on the log once: a line with the time stamp and text
    of another placed is a repeated line."""
    if p.facts:
        sc.violate("serial-partial", p.about, "repeated line: a copy of a record that the trace "
                   "placed right after it (same time stamp and text)", p.sl)
    else:
        sc.violate("serial-partial", p.about, "repeated line before seq %d: the same line (time "
                   "stamp and text) was printed before" % p.about.seq, p.sl)


@unit("serial-extra", consumes=FORGED)
def never_made(sc, p):
    """No stressor record that stats.txt says its run never made: its
    producer is in the run and its n below what the producer attempted."""
    prod, n, exp = p.facts
    sc.violate("serial-extra", p.about, "stressor record %s n=%d that the stressor "
               "never made (stats.txt: %s)" % (producer_name(prod), n,
                                               "this producer attempted %d" % exp[0] if exp
                                               else "no such producer in run %d" % prod[0]),
               p.sl)


@unit("serial-extra", consumes=UNPLACED)
def printed_by_no_emission(sc, p):
    """No stressor record on the log that no emission printed."""
    prod, n = p.facts
    sc.violate("serial-extra", p.about, "stressor record %s n=%d on the serial log "
               "that no emission printed" % (producer_name(prod), n), p.sl)


@unit("serial-extra", consumes=ABOVE_LOGLEVEL)
def printed_above_loglevel(sc, p):
    """The console prints only records below its loglevel: one stored at
    a level not below it is committed without output (len=0)."""
    level, loglevel = p.facts
    sc.violate("serial-extra", p.about, "seq %d stored at level %d, not below the console "
               "loglevel %d, was printed (emitted with len=%d)"
               % (p.about.seq, level, loglevel, p.about.len))


@unit("serial-extra", consumes=UNEXPLAINED_LINE)
def line_no_emission_explains(sc, p):
    """No kernel-format line on the log that no emission explains."""
    sc.violate("serial-extra", p.about, "kernel line on the serial log that no emission "
               "explains (before seq %d)" % p.about.seq, p.sl)


@unit("serial-dropped", consumes=STRAY_NOTICE)
def notice_nobody_printed(sc, p):
    """A dropped notice is printed by an emission: its record's, an
    interrupted attempt's, or that of a committed record missing on the
    log."""
    n, dropped = p.facts
    sc.violate("serial-dropped", p.about, "`** %d printk messages dropped **` before seq %d "
               "that no emission printed (seq %d: %s)"
               % (n, p.about.seq, p.about.seq, dropped), p.sl)


@unit("serial-dropped", consumes=NO_NOTICE)
def notice_missing(sc, p):
    """A record whose emission dropped records (with what those below
    the console loglevel carried over) has its dropped notice right
    before its line."""
    want, dropped = p.facts
    sc.violate("serial-dropped", p.about, "seq %d was emitted with %s but no `** %d printk "
               "messages dropped **` line precedes it" % (p.about.seq, dropped, want))


@unit("serial-dropped", consumes=WRONG_NOTICE)
def notice_count_wrong(sc, p):
    """A record's dropped notice says the count of its emission (plus
    what the records below the console loglevel carried over)."""
    n, dropped = p.facts
    sc.violate("serial-dropped", p.about, "`** %d printk messages dropped **` before seq %d, "
               "but its emission had %s" % (n, p.about.seq, dropped), p.sl)


@unit("serial-dropped", consumes=POST_NO_NOTICE)
def carried_count_unprinted_after_trace(sc, p):
    """The first record printed after the trace, when records below the
    console loglevel carried a dropped count, has a dropped notice
    before it."""
    sc.violate("serial-dropped", p.about, "seq %d (stored after the serial console's last "
               "traced commit) is the first record printed after records below the console "
               "loglevel that carried a dropped count of %d, but no `** %d printk messages "
               "dropped **` line precedes it" % (p.about.seq, p.facts, p.facts))


@unit("serial-dropped", consumes=POST_NOTICE)
def notice_count_after_trace(sc, p):
    """A dropped notice before a record stored after the last traced
    commit counts at least the records missing since the last one
    printed and at most the seqs between the two (with what records
    below the console loglevel carried over)."""
    n, missing, since, carry = p.facts
    sc.violate("serial-dropped", p.about, "`** %d printk messages dropped **` before seq %d "
               "(stored after the serial console's last traced commit): %d record(s) before it "
               "missing, %s seq(s) since the last one printed, %s carried by records below the "
               "console loglevel" % (n, p.about.seq, missing, "?" if since is None else since,
                                     "?" if carry is None else carry))


@unit("serial-replay", consumes=NO_REPLAY_MARKER)
def reprint_without_marker(sc, p):
    """A record printed again after the console was taken or handed over
    in the middle of it has the replay marker line right before it
    (before its dropped notice), on a log whose kernel prints the marker."""
    sc.violate("serial-replay", p.about, "seq %d was printed again after its previous attempt "
               "lost the console, but no `** replaying previous printk message **` line "
               "precedes it" % p.about.seq)


@unit("serial-replay", consumes=STRAY_REPLAY_MARKER)
def marker_without_reprint(sc, p):
    """A replay marker line is printed only by a reprint: right before the
    reprinted record's line, or by an interrupted attempt that was itself
    a reprint."""
    where = "right before" if p.facts else "before"
    sc.violate("serial-replay", p.about, "`** replaying previous printk message **` %s seq "
               "%d, which is no reprint, and no interrupted reprint printed it"
               % (where, p.about.seq), p.sl)


@unit("producer-order", consumes=WRITER_ORDER)
def writer_out_of_order(sc, p):
    """The records of one stressor writer reach the ringbuffer, and so
    the console, in n order (judged by the producer ledger)."""
    sc.violate("producer-order", p.about, p.facts, p.sl)


@unit("producer-gap", consumes=PRODUCER_GAP)
def producer_gap(sc, p):
    """Every stressor producer shows all its numbers on the log, less
    those the console dropped or printk() refused (judged by the
    producer ledger)."""
    sc.violate("producer-gap", p.about, p.facts)


def _record(about):
    """A record as the messages name it: its seq, and where it was
    stored when that was after the serial console's last traced commit."""
    if isinstance(about, StoredAfter):
        return "seq %d (stored after the serial console's last traced commit)" % about.seq
    return "seq %d" % about.seq


# the units of each placement kind, in registration order
SERIAL_UNITS = {kind: consumers(kind, "serial_rules") for kind in PLACEMENTS}
