"""What the console of each model prints on the serial log around a
record: the one table the serial alignment reads per model
(docs/analysis.md, "The serial log by model").

Both designs print a record as `[  sec.usec] text` (the UART ends it
with `\\r\\n`) and put the `** replaying previous printk message **`
and `** N printk messages dropped **` lines in front of it, in that
order and in the same write; where they differ is a column here, never
a test of the model's name in the alignment:

marks             the context marks a kernel line may start with.  The
                  6.1 series marks a line printed atomically `A` and one
                  of the printer thread `T` (early lines have none);
                  6.12 marks nothing (record_print_text()), so a mark
                  there is a byte that does not belong to the line.
carries_dropped   a record below the console loglevel carries its
                  emission's dropped count over to the notice of the
                  next record printed (6.1: cons_emit_record() keeps it
                  in con->dropped), so a notice says the sum.  Without
                  it a notice says its own emission's count alone.
suppressed_prefix a record below the console loglevel whose emission
                  drops records or replays prints its notice and marker
                  lines alone, without its own line (6.12:
                  console_prepend_dropped() and console_prepend_replay()
                  fill the empty output buffer of a suppressed record;
                  `nbcon_emit len` counts every byte handed to the
                  driver, those lines too, so such an emission has len >
                  0).  Without it such a record prints nothing (len=0)
                  and any line of it is one the console must not print.
marker_from_flag  the replay marker is on the log exactly where the
                  emission's own replay flag says the kernel prepended
                  it (6.12: `nbcon_emit replay=`, the kernel's decision,
                  whose agreement with the ownership history is the
                  trace rule `replay`'s business); every kernel of the
                  model prints it.  Without it (6.1 traces no flag) the
                  marker belongs where the model sees a reprint, and a
                  log without any marker is from a kernel before it.

Invariant: a model that runs the serial alignment has a row here
(test_serial612.py checks every model of rules.MODELS has one).
"""

from collections import namedtuple

from .rules import NBCON_612, RFC_61

ConsoleOutput = namedtuple("ConsoleOutput",
                           "marks carries_dropped suppressed_prefix marker_from_flag")

OUTPUT = {
    RFC_61: ConsoleOutput(marks=frozenset(("", "A", "T")), carries_dropped=True,
                          suppressed_prefix=False, marker_from_flag=False),
    NBCON_612: ConsoleOutput(marks=frozenset(("",)), carries_dropped=False,
                             suppressed_prefix=True, marker_from_flag=True),
}


def replays(output, att):
    """The emission attempt att put the replay marker in front of its
    record (by `output`'s marker_from_flag)."""
    return att.replay if output.marker_from_flag else att.reprint
