"""The verdict is one fold over a table of judgements (fold.py): the
precedence of the outcomes, the reasons, and the analysis' table
(verdict.py) that api.analyse() folds."""

import itertools
from types import SimpleNamespace

import pytest

from analysis import fold as f
from analysis import verdict
from analysis.fold import FAIL, INCOMPLETE, PASS, Judged, Judgement

# every kind of outcome a judgement can give, strongest first (fold()'s
# docstring): what a pair of them folds to is the one listed first
STRONGEST_FIRST = (
    ("firm incomplete", Judged(INCOMPLETE, ["no order"], firm=True)),
    ("firm fail", Judged(FAIL, ["proven violation"], firm=True)),
    ("incomplete", Judged(INCOMPLETE, ["lost events"])),
    ("fail", Judged(FAIL, ["violation"])),
    ("pass", Judged(PASS)),
)


@pytest.mark.parametrize("a, b", list(itertools.combinations(range(len(STRONGEST_FIRST)), 2)),
                         ids=lambda i: STRONGEST_FIRST[i][0])
def test_of_two_outcomes_the_stronger_is_the_verdict_in_either_order(a, b):
    (na, ja), (nb, jb) = STRONGEST_FIRST[a], STRONGEST_FIRST[b]
    for judged in ([(na, ja), (nb, jb)], [(nb, jb), (na, ja)]):
        outcome, reasons = f.fold(judged)
        assert outcome == ja.outcome, (na, nb)
        assert reasons == [r for _, j in judged for r in j.reasons]


@pytest.mark.parametrize("name, j", STRONGEST_FIRST, ids=[n for n, _ in STRONGEST_FIRST])
def test_one_judgement_is_its_own_verdict(name, j):
    assert f.fold([(name, j)]) == (j.outcome, j.reasons)
    assert f.fold([(name, j), (name, j)])[0] == j.outcome


def test_the_cases_the_precedence_is_for():
    # a violation on input that lost events is not proven: incomplete
    assert f.fold([("trace", Judged(INCOMPLETE, ["lost"])),
                   ("rules", Judged(FAIL, ["v"]))])[0] == INCOMPLETE
    # ... unless it happens before every loss: fail
    assert f.fold([("trace", Judged(INCOMPLETE, ["lost"])),
                   ("rules", Judged(FAIL, ["v"], firm=True))])[0] == FAIL
    # nothing orders the events: not even a proven violation stands
    assert f.fold([("order", Judged(INCOMPLETE, ["no chain"], firm=True)),
                   ("rules", Judged(FAIL, ["v"], firm=True))])[0] == INCOMPLETE
    # ... and no pass either
    assert f.fold([("order", Judged(INCOMPLETE, ["no chain"], firm=True)),
                   ("rules", Judged(PASS))])[0] == INCOMPLETE
    # a violation on input read in full fails, proven or not
    assert f.fold([("trace", Judged(PASS)), ("rules", Judged(FAIL, ["v"]))])[0] == FAIL


def test_the_reasons_are_every_judgements_in_the_tables_order():
    judged = [("a", Judged(FAIL, ["a1", "a2"])), ("b", Judged(PASS)),
              ("c", Judged(INCOMPLETE, ["c1"], firm=True)), ("d", Judged(INCOMPLETE, ["d1"]))]
    assert f.fold(judged) == (INCOMPLETE, ["a1", "a2", "c1", "d1"])


def test_a_pass_is_never_firm_and_an_outcome_is_one_of_three():
    assert Judged(PASS, firm=True).firm is False
    assert f.fold([("x", Judged(PASS, firm=True)), ("y", Judged(FAIL, ["v"]))])[0] == FAIL
    with pytest.raises(ValueError):
        Judged("error")
    with pytest.raises(ValueError):
        f.fold([])


def test_judge_asks_every_judgement_in_order_and_wants_a_judged():
    asked = []

    def says(name, j):
        return Judgement(name, lambda r: asked.append((name, r)) or j)
    table = (says("one", f.PASSED), says("two", Judged(FAIL, ["x"])))
    assert f.judge(table, 7) == [("one", f.PASSED), ("two", Judged(FAIL, ["x"]))]
    assert asked == [("one", 7), ("two", 7)]
    with pytest.raises(TypeError, match="'bad'"):
        f.judge((Judgement("bad", lambda r: ("fail", [])),), None)


def test_the_exit_code_follows_from_the_outcome():
    assert f.EXIT == {PASS: 0, FAIL: 1, INCOMPLETE: 2}
    v = verdict.error_verdict("missing trace")
    assert (v["verdict"], v["exit_code"], v["reasons"]) == (INCOMPLETE, 2, ["missing trace"])


# the analysis' table, on stand-ins for what api.analyse() collects

class Checker(SimpleNamespace):
    def genuine(self):
        return self.proven


def collected(vcount=None, proven=False, loss=False, why_unordered=(), serial_why=(),
              stressor_why=()):
    an = Checker(loss_seen=loss, bad_events=0, missing_store_count=0, time_back_count=0,
                 late_store_count=0, gave_up_full=0, vcount=dict(vcount or {}),
                 violations=[{"message": "first one"}] if vcount else [], proven=proven,
                 serial_console="ttyS0", consoles={"ttyS0": None})
    stats = SimpleNamespace(malformed=0, truncated_last_line=False, drop_count=int(loss),
                            drops=[SimpleNamespace(text="CPU:1 [LOST 3 EVENTS]")])
    sc = SimpleNamespace(incomplete_reasons=lambda: list(serial_why), fed_commits=1,
                         stats={"matched": 1})
    causal = SimpleNamespace(incomplete_reasons=lambda by_clocks: list(why_unordered))
    return verdict.Collected(an, stats, sc, (None, list(stressor_why)), causal, False)


def folded(r):
    judged = f.judge(verdict.TABLE, r)
    return f.fold(judged) + (verdict.input_complete(judged),)


def test_the_analysis_table():
    assert [j.name for j in verdict.TABLE] == ["order", "trace", "rules", "serial log",
                                               "stressor result"]
    assert set(verdict.INPUT) < {j.name for j in verdict.TABLE}
    assert folded(collected()) == (PASS, [], True)
    assert folded(collected({"duplicate": 2, "after-loss": 0})) == (
        FAIL, ["rule violations: duplicate=2; first: first one"], True)
    lost = "trace lost events (1 drop marker(s), first at CPU:1 [LOST 3 EVENTS])"
    assert folded(collected({"duplicate": 1}, loss=True)) == (
        INCOMPLETE, [lost, "rule violations: duplicate=1; first: first one"], False)
    assert folded(collected({"duplicate": 1}, proven=True, loss=True))[0] == FAIL
    # the order's reasons come first; incomplete input is still complete=False
    assert folded(collected({"duplicate": 1}, proven=True, loss=True,
                            why_unordered=["no order"])) == (
        INCOMPLETE, ["no order", lost, "rule violations: duplicate=1; first: first one"],
        False)
    # an unordered trace read in full is complete, and still not a pass
    assert folded(collected(why_unordered=["no order"])) == (INCOMPLETE, ["no order"], True)
    assert folded(collected(serial_why=["serial log not checked: x"],
                            stressor_why=["stressor run 1 ended"])) == (
        INCOMPLETE, ["serial log not checked: x", "stressor run 1 ended"], False)


def test_decide_gives_the_verdict_its_exit_code_and_the_table_as_judged():
    judged = [("order", f.PASSED), ("trace", Judged(INCOMPLETE, ["lost"])),
              ("rules", Judged(FAIL, ["v"], firm=True))]
    assert f.decide(judged) == f.Verdict(FAIL, ["lost", "v"], 1, [
        {"judgement": "order", "outcome": PASS, "firm": False, "reasons": []},
        {"judgement": "trace", "outcome": INCOMPLETE, "firm": False, "reasons": ["lost"]},
        {"judgement": "rules", "outcome": FAIL, "firm": True, "reasons": ["v"]}])
    # incomplete input beats a pass, and beats a violation it may have caused
    assert f.decide(judged[:2])[:3] == (INCOMPLETE, ["lost"], 2)
    assert f.decide([("trace", Judged(INCOMPLETE, ["lost"])),
                     ("rules", Judged(FAIL, ["v"]))])[:3] == (INCOMPLETE, ["lost", "v"], 2)
    assert f.decide([("order", f.PASSED)])[:3] == (PASS, [], 0)


def test_unusable_input_is_one_judgement_of_its_own():
    v = verdict.error_verdict("missing trace")
    assert v["judgements"] == [{"judgement": "input usable", "outcome": INCOMPLETE,
                                "firm": True, "reasons": ["missing trace"]}]
