"""An ownership model is handed what model_io.py names, and nothing
else: what it reads of the trace (TraceState) and its sinks (Sinks),
never the checker."""

import copy
import re

import pytest

from analysis.checker import MODELS, Analyzer
from analysis.model import Console
from analysis.model_io import Sinks, TraceState
from analysis.model_rfc import RfcModel
from analysis.tests.test_registry import _model_source
from analysis.tests.tracebuilder import Trace
from analysis.traceparse import Event, parse_lines


@pytest.mark.parametrize("model", sorted(MODELS))
def test_a_model_reads_and_tells_only_what_model_io_names(model):
    src = _model_source(MODELS[model])
    assert "self.host" not in src and "checker" not in re.findall(r"import (\w+)", src)
    read = set(re.findall(r"self\.trace\.(\w+)", src))
    told = set(re.findall(r"self\.sinks\.(\w+)", src))
    assert read and read <= set(TraceState._fields)
    assert told and told <= set(Sinks._fields)


def test_the_checker_hands_its_model_the_interface_not_itself():
    an = Analyzer()
    assert type(an.model.trace) is TraceState and type(an.model.sinks) is Sinks
    assert all(v is not an for v in vars(an.model).values())


def test_a_model_runs_on_a_trace_state_and_sinks_of_its_own():
    """Driven without the checker: the model reads what it is handed and
    tells its sinks what it saw."""
    t = Trace()
    T = t.ctx(cpu=0, thread=1)
    seq = t.store("a record")
    t.acquire(T)
    t.emit(T, seq)
    t.commit(T, seq)
    t.release(T)
    events = [e for e in parse_lines(t.report().splitlines(True)) if type(e) is Event]
    calls, facts = [], []

    def sink(name):
        return lambda *args: calls.append((name,) + args)

    trace = TraceState(arch32=False, console_loglevel=7, store={seq: (100.0, "a record", 4)},
                       chain_notes={}, first_stored=lambda: seq, loss_seen=lambda: False,
                       serial_console=lambda: "ttyS0", causal_order=lambda: False,
                       not_before_loss=lambda ev: False)
    sinks = Sinks(tell=facts.append, anomaly=sink("anomaly"), late_damage=sink("late_damage"),
                  keep_stamp=sink("keep_stamp"), emitted=sink("emitted"),
                  attempt_ended=sink("attempt_ended"), records_passed=sink("records_passed"),
                  dropped_producer={})
    consoles = {"ttyS0": Console("ttyS0")}
    # the verdict's counters as the checker starts them
    counts = copy.deepcopy(Analyzer().counts)
    m = RfcModel(trace, sinks, consoles, counts)
    for ev in events:
        if ev.name in m.HANDLERS:
            con = consoles[ev.fields["con"]]
            assert not m.history(con, ev)
            m.HANDLERS[ev.name](m, con, ev)
            m.applied(con, ev)
            m.transition_seen(con, ev)
    m.finish(events[-1].ts)
    assert [c[0] for c in calls] == ["emitted", "attempt_ended", "records_passed"]
    assert calls[0][1] == calls[2][1] == seq and calls[1][1].outcome == "commit"
    assert {f.kind for f in facts} == {"acquire", "commit"}
