"""Reading a verdict (check_results()'s dict) in the tests.

`violations_by_rule` names every rule, most with a count of 0; a test
states exactly which rules a run broke, and how often where the count is
fixed by its input:

    assert violated(v) == {"after-loss"}
    assert violation_counts(v) == {"after-loss": 2, "duplicate": 1}
"""


def violation_counts(v):
    """{rule: count} of the rules verdict v reports broken (count > 0)."""
    return {rule: n for rule, n in v["violations_by_rule"].items() if n}


def violated(v):
    """The set of rules verdict v reports broken."""
    return set(violation_counts(v))
