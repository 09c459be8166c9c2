"""Running the analysis and reading a verdict (check_results()'s dict)
in the tests.

Most traces the tests judge carry no console state words
(`old_state`/`new_state`): tracebuilder's `Trace()` without `chain=True`,
`synth.py`'s runs and the recorded run of `recorded.py`.  The analysis
calls such a trace `incomplete` unless asked to order its CPUs' events
by their clocks; the tests ask (`check_results()` and `analyse()` here,
`CLOCKS_ARGS` for the command line), so what they check is the rules
under that order.  A trace with the state words is ordered by its chain
all the same.  A test of the default calls `analysis.api` itself.

`violations_by_rule` names every rule, most with a count of 0; a test
states exactly which rules a run broke, and how often where the count is
fixed by its input:

    assert violated(v) == {"after-loss"}
    assert violation_counts(v) == {"after-loss": 2, "duplicate": 1}
"""

from analysis import api

# the opt-in: the events of different CPUs of a trace without the state
# words are ordered by their timestamps
BY_CLOCKS = "timestamps"
CLOCKS_ARGS = ("--order", BY_CLOCKS)


def check_results(path, **kw):
    """api.check_results(), judging a trace without state words by the
    clocks unless the test names an order."""
    kw.setdefault("order", BY_CLOCKS)
    return api.check_results(path, **kw)


def analyse(path=None, **kw):
    """api.analyse(), judging a trace without state words by the clocks
    unless the test names an order."""
    kw.setdefault("order", BY_CLOCKS)
    return api.analyse(path, **kw)


def violation_counts(v):
    """{rule: count} of the rules verdict v reports broken (count > 0)."""
    return {rule: n for rule, n in v["violations_by_rule"].items() if n}


def violated(v):
    """The set of rules verdict v reports broken."""
    return set(violation_counts(v))


def violation_messages(v):
    """(rule, message) of every violation verdict v reports: what an
    assertion on a verdict shows when it fails."""
    return [(x["rule"], x["message"]) for x in v["violations"]]
