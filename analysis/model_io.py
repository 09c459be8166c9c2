"""What an ownership model (model_rfc.py, model_nbcon.py) is handed by
the checker that drives it, and all of it: what it reads of the trace
(TraceState) and where what it sees goes (Sinks).  A model is built as

    Model(trace, sinks, consoles, counts, recorder)

with `consoles` (name -> model.Console: the checker creates a console
at its first event, the model keeps its state), `counts` (the
verdict's counters of what it saw; not the tolerances it grants,
which it tells as facts) and `recorder` (the ownership intervals and
marks, intervals.Recorder, or None).

Invariants:
  * the model never holds the checker: it reads and tells only what
    is named here, so another kernel's model plugs in knowing this
    module and not the checker, and the checker's state stays its own;
  * the checker owns everything named here and builds both when it
    takes a model (checker.Analyzer.use_model()), before the first
    event reaches that model;
  * what is fixed for the run is a value; what the trace changes as it
    goes on is a callable, read when the model asks and never copied
    (a copy would be stale after the next item);
  * the dicts are the checker's own and never replaced, so the model
    may keep them; of TraceState the model writes nothing but the
    ordering notes it acts on, which it takes out of chain_notes;
  * a sink returns nothing the model acts on: what the model decides
    is decided by the events, never by where its findings went.

These classes only name the parts; their values are the checker's.
"""

from collections import namedtuple


class TraceState(namedtuple("TraceState", "arch32 console_loglevel store chain_notes "
                                          "first_stored loss_seen serial_console "
                                          "causal_order not_before_loss")):
    """What the model reads of the trace:

      arch32             the kernel is 32-bit (the seq is outside the
                         console's state word)
      console_loglevel   records at this level or above are not printed
      store              seq -> (ts, text, level): the record window, the
                         records stored and not yet passed by every
                         console
      chain_notes        trace line -> the ordering stage's note on that
                         event (ordering.py); the model takes out a note
                         it acts on
      first_stored()     the lowest seq stored in the trace before any
                         trace loss (None: none yet)
      loss_seen()        the trace lost events
      serial_console()   the name of the console the serial log belongs
                         to (None: no console seen yet)
      causal_order()     the events come in the order of their consoles'
                         transition chains, not by their timestamps
      not_before_loss(ev)  event ev is not proven to have happened
                         before every trace loss so far
    """
    __slots__ = ()


class Sinks(namedtuple("Sinks", "tell anomaly late_damage keep_stamp emitted "
                                "attempt_ended records_passed dropped_producer")):
    """Where what the model sees goes:

      tell(fact)         a fact (facts.py) to the units that judge it, a
                         tolerance granted (facts.ToleranceGranted) to
                         its counter (rules.Dispatch, the model's one
                         sink of facts)
      anomaly(con, msg)  something odd on console con that breaks no rule
      late_damage(con, ev, why)  ev, applied earlier, is found damaged
                         now: trace loss at ev
      keep_stamp(ev)     the model keeps ev to report on later
                         (late_damage()): its happens-before stamp is
                         kept too
      emitted(seq)       a console emitted seq (the record window)
      attempt_ended(att) an emission attempt ended (att.outcome), for
                         the serial alignment
      records_passed(seq)  a console committed seq: the records every
                         console has passed may be forgotten
      dropped_producer   producer -> set of n: the stressor records the
                         serial console dropped, which the model adds to
                         and the serial alignment's ledger reads
    """
    __slots__ = ()
