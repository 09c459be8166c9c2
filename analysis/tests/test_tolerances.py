"""A tolerance the ownership model grants is a fact (facts.ToleranceGranted)
told to its one sink like every other; the dispatcher hands it to one
consumer (tolerances.Tally), which counts it in the row's counter of the
verdict.  The model counts none itself."""

import copy
import re

import pytest

from analysis import facts, rules
from analysis.checker import MODELS, Analyzer
from analysis.facts import ToleranceGranted
from analysis.model import Console
from analysis.tests.test_registry import _model_source
from analysis.tests.test_rules import base, run
from analysis.tolerances import COUNTS_KEY, TOLERANCES, Tally


def test_tally_counts_each_granted_tolerance_once_in_its_rows_counter():
    counts = copy.deepcopy(Analyzer().counts)
    before = copy.deepcopy(counts)
    tally = Tally(counts)
    con = Console("ttyS0")
    for name in ("stale-emit", "suppressed-record", "stale-emit"):
        assert tally(ToleranceGranted(con, name, None)) is None
    assert (counts["stale_emits"], counts["suppressed_records"]) == (2, 1)
    assert {k for k in counts if counts[k] != before[k]} == {"stale_emits",
                                                              "suppressed_records"}


def test_tally_refuses_a_tolerance_that_is_no_row_of_the_checkers_counts():
    tally = Tally(copy.deepcopy(Analyzer().counts))
    # no row at all; a serial row, which the serial alignment counts
    for name in ("no-such-tolerance", "full-line-of-interrupted-attempt"):
        with pytest.raises(KeyError):
            tally(ToleranceGranted(None, name, None))


def test_the_checker_starts_every_counter_the_tally_counts_in():
    counts = Analyzer().counts
    assert all(counts[key] == 0 for key in COUNTS_KEY.values())


def test_dispatch_hands_a_granted_tolerance_to_the_counter_and_to_no_unit():
    """A tolerance raises no rule: no unit consumes it, it is no kind
    of the registry's facts, and the dispatcher reports nothing for
    it."""
    granted, reported = [], []
    dispatch = rules.Dispatch(rules.RFC_61, lambda con, v: reported.append(v),
                              granted.append)
    fact = ToleranceGranted(Console("ttyS0"), "stale-emit", None)
    dispatch(fact)
    assert (granted, reported) == ([fact], [])
    assert fact.kind not in facts.KINDS and fact.kind not in rules.FACTS
    assert not any(fact.kind in u.consumes for u in rules.units())


@pytest.mark.parametrize("model", sorted(MODELS))
def test_the_model_grants_rows_of_the_table_and_counts_none(model):
    src = _model_source(MODELS[model])
    granted = set(re.findall(r'self\.grant\(con, "([a-z0-9-]+)"', src))
    assert granted and granted <= set(COUNTS_KEY)
    for t in TOLERANCES:
        assert '"%s"' % t.counter.rpartition(".")[2] not in src, t.name


def two_tolerances():
    """A release traced after the next direct acquire, then an emission
    of the old owner traced after the takeover that ended it: one grant
    of release-after-next-acquire and one of stale-emit."""
    t, T, s = base(3)
    X = t.ctx(1, ctx="hardirq")
    E = t.ctx(2, prio="emergency")
    t.acquire(T)
    t.print_rec(T, s[0])
    t.acquire(X)                  # the state word was already free
    t.release(T)                  # T's release traced late
    t.print_rec(X, s[1])
    t.take_over(E, X, [s[2]])
    t.emit(X, s[2])               # traced after the takeover
    t.lost(X, owner=E)            # noticed before the first byte
    return t


COUNTERS = ("releases_traced_after_next_acquire", "stale_emits")


def test_a_granted_tolerance_reaches_the_verdict_through_the_fact(tmp_path, monkeypatch):
    told = []
    count = Tally.__call__

    def spy(self, fact):
        told.append((fact.con.name, fact.name, fact.ev.name))
        count(self, fact)

    monkeypatch.setattr(Tally, "__call__", spy)
    v = run(tmp_path, two_tolerances())
    assert v["verdict"] == "pass", v["violations"]
    assert told == [("ttyS0", "release-after-next-acquire", "nobkl_acquire"),
                    ("ttyS0", "stale-emit", "nobkl_emit")]
    assert [v["counts"][k] for k in COUNTERS] == [1, 1]


def test_a_tolerance_is_counted_by_its_fact_alone(tmp_path, monkeypatch):
    """The counter that does not see the fact does not move: nobody
    else counts the tolerance."""
    monkeypatch.setattr(Tally, "__call__", lambda self, fact: None)
    v = run(tmp_path, two_tolerances())
    assert v["verdict"] == "pass", v["violations"]
    assert [v["counts"][k] for k in COUNTERS] == [0, 0]
