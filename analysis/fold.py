"""A verdict is one fold over a table of judgements.

A judgement is a name and a function from the collected results of a
run to what it judged (Judged): an outcome, pass, fail or incomplete,
and the reasons for it.  judge() asks every judgement of a table in the
table's order; fold() makes the verdict of what they said, by the
precedence its docstring states, with every judgement's reasons in the
table's order; decide() is the one place that turns what they said
into a verdict: the outcome, the reasons, the exit code, which follows
from the outcome alone (EXIT), and the table as judged, which the
verdict files list as `judgements`.

The analysis' table is in verdict.py (the order, the trace, the rules,
the serial log, the stressor's end line); the run's, whose last
judgement takes the analysis' verdict, in tools/pns/verdict.py (boot,
hang, the scenario's end, splats, boot log, expectations).  Every row
of the run's table is a pass or a fail, so its fold is the same
precedence with two ranks used.  docs/analysis.md ("How the verdict is
decided") documents both tables and the precedence.  Nothing else
decides a verdict: input the analysis cannot read at all has no
results to judge, and is the one judgement that says so
(verdict.error_verdict()).
"""

from collections import namedtuple

PASS, FAIL, INCOMPLETE = "pass", "fail", "incomplete"
OUTCOMES = (PASS, FAIL, INCOMPLETE)

EXIT_PASS, EXIT_FAIL, EXIT_UNUSABLE = 0, 1, 2
EXIT = {PASS: EXIT_PASS, FAIL: EXIT_FAIL, INCOMPLETE: EXIT_UNUSABLE}

# one row of a table: judge(results) -> Judged
Judgement = namedtuple("Judgement", "name judge")


class Judged(namedtuple("Judged", "outcome reasons firm")):
    """What one judgement said: its outcome (OUTCOMES), the reasons for
    it (lines, in the order the verdict lists them) and whether the
    outcome is firm: a firm fail is a violation proven whatever the
    input lost, a firm incomplete one that leaves nothing proven (see
    fold()).  A pass is never firm."""
    __slots__ = ()

    def __new__(cls, outcome, reasons=(), firm=False):
        if outcome not in OUTCOMES:
            raise ValueError("outcome %r is not one of %s" % (outcome, ", ".join(OUTCOMES)))
        return super().__new__(cls, outcome, list(reasons), bool(firm) and outcome != PASS)


PASSED = Judged(PASS)

# fold()'s precedence: the higher rank wins
_RANK = {(PASS, False): 0, (FAIL, False): 1, (INCOMPLETE, False): 2,
         (FAIL, True): 3, (INCOMPLETE, True): 4}


def judge(table, results):
    """[(name, Judged)]: what every judgement of `table` says of
    `results`, in the table's order."""
    out = []
    for j in table:
        said = j.judge(results)
        if not isinstance(said, Judged):
            raise TypeError("judgement %r returned %r, not a Judged" % (j.name, said))
        out.append((j.name, said))
    return out


def fold(judged):
    """The verdict of [(name, Judged)]: (outcome, reasons).

    The outcome is the strongest one said, strongest first:
      1. incomplete, firm: nothing orders the events, so no violation,
         and no pass, is proven;
      2. fail, firm: a violation proven the kernel's, whatever part of
         the input was lost;
      3. incomplete: part of the input was not read or not checked, and
         a violation, where there is one, is not proven before that;
      4. fail: a violation, on input read and checked in full;
      5. pass: every judgement passed.
    So an incomplete beats a fail unless the fail is firm, and a firm
    incomplete beats everything.  The reasons are every judgement's, in
    the table's order, whatever it decided.  A verdict needs at least
    one judgement."""
    if not judged:
        raise ValueError("no judgement to fold")
    best = max(judged, key=lambda nj: _RANK[nj[1].outcome, nj[1].firm])
    return best[1].outcome, [r for _, j in judged for r in j.reasons]


# what decide() makes of a table's judgements: the outcome fold() chose,
# every judgement's reasons in the table's order, the exit code of the
# outcome, and the table as judged (rows())
Verdict = namedtuple("Verdict", "outcome reasons exit_code judgements")


def rows(judged):
    """[(name, Judged)] as the verdict files list it (`judgements`): one
    dict a judgement, in the table's order, with what it said."""
    return [{"judgement": name, "outcome": j.outcome, "firm": j.firm, "reasons": list(j.reasons)}
            for name, j in judged]


def decide(judged):
    """The Verdict of [(name, Judged)] (see fold())."""
    outcome, reasons = fold(judged)
    return Verdict(outcome, reasons, EXIT[outcome], rows(judged))
