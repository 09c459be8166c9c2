"""The rules the analysis checks, and the units that judge them: one
registry (docs/analysis.md, "The rules").

A rule (Rule, RULE_TABLE) is an id, its scope (what it is checked
over), its invariant in one sentence and the models of the console
design it applies to (MODELS).  A unit is a function that judges
one kind of fact and raises one or more rules; it registers itself
where it is defined, with `@unit(rule ids, consumes=facts)`, its
docstring is its invariant.  The table and the units are the one
registry: a rule's `checked_by` is the units registered for it, and
`python3 -m analysis rules` prints it all (`--json` every column and
unit).

The registry also dispatches.  An ownership model tells each fact it
sees (facts.py: a typed value of one kind) to one sink, Dispatch,
which hands it to the units that consume that kind and apply to the
model, in registration order; a unit of a model's fact returns the
Violation it raises (or None) and the sink reports it.  The serial
alignment hands its placements to the units of their kind
(serial_rules.SERIAL_UNITS, consumers()); those report through the
alignment.

Invariants of the registry (test_rules.py, test_registry.py):
  * every rule has at least one unit, every unit raises only the
    rules it names, and no other function raises a rule;
  * a unit consumes only facts of FACTS, and applies only to models
    of the rules it raises; every fact has a unit;
  * units never call each other and change no state: what one would
    share with another is a fact the model tells both.
The tolerances the model grants against these rules are in
tolerances.py; the model tells each it grants to Dispatch as a fact
(facts.ToleranceGranted), which no unit consumes: Dispatch hands it to
the counter (tolerances.Tally).
"""

import importlib
from collections import namedtuple

from . import facts

TRACE = "console (trace)"
SERIAL = "serial log"
PRODUCERS = "stressor producers (serial log)"
STRESSOR = "stressor end line (serial log, dmesg.txt)"
FRAGMENTS = "stressor records in fragments (trace stores)"

# the console designs the rules are written for
RFC_61 = "rfc-6.1"
NBCON_612 = "nbcon-6.12"
MODELS = {
    RFC_61: "the nobkl consoles of the RFC \"printk: A new approach\" (2022), "
            "ported to Linux 6.1 (patches/6.1/)",
    NBCON_612: "mainline's nbcon consoles of Linux 6.12 with the trace events of "
               "patches/6.12/ (model_nbcon.py)",
}
BOTH = (RFC_61, NBCON_612)

# What the units consume: the facts the stages hand them.
FACTS = {
    # the typed facts of the ownership models (facts.py)
    **{k: cls.__doc__ for k, cls in facts.KINDS.items()},
    # the serial alignment (serialcheck.SerialChecker): placements
    # (serial_rules.PLACEMENTS says what each carries, serial_rules.py has their units)
    "placement:missing": "a committed record whose line is not on the log",
    "placement:late-line": "the line of a committed record found after its turn",
    "placement:early-copy": "a record's line in its turn that was also on the log before",
    "placement:repeat": "a stressor identity on the log again",
    "placement:forged": "a stressor record its run never made (stats.txt)",
    "placement:unplaced": "a stressor record seen before its turn, whose turn never came",
    "placement:stray-notice": "a dropped notice no emission printed",
    "placement:above-loglevel": "a record printed that was stored at a level not below "
                                "the console loglevel",
    "placement:interrupted-line": "the line an attempt that did not commit printed",
    "placement:cut-line": "a cut or repeated line before a record's, with the interrupted "
                          "attempt it is taken for",
    "placement:corrupt": "a line of a record's emission that is not what was stored",
    "placement:repeated-line": "a non-stressor line with the time stamp and text of another",
    "placement:early-line": "a record's line seen before the records that precede it",
    "placement:unexplained-line": "a kernel line that no emission explains",
    "placement:no-notice": "a record printed without the dropped notice its emission owes",
    "placement:wrong-notice": "a record's dropped notice with another count than its "
                              "emission's",
    "placement:post-missing": "a record stored after the last traced commit, not on the "
                              "log and not covered by a dropped notice",
    "placement:post-no-notice": "the first record printed after the trace without the "
                                "notice of a carried dropped count",
    "placement:post-notice": "a dropped notice after the trace whose count is out of its "
                             "bounds",
    "placement:no-replay-marker": "a reprint's line without the replay marker in front of "
                                  "it, on a log that has the marker",
    "placement:stray-replay-marker": "a replay marker line that no reprint printed",
    # what the producer ledger (producers.py) finds on the stressor records
    "ledger:writer-order": "a record below its writer's highest n so far",
    "ledger:gap": "a gap in a producer's numbers",
    # what the stores show of the stressor's records in fragments (cont_fragments.py)
    "cont:damaged": "a stored fragment that does not prove itself (payload, crc)",
    "cont:repeat": "a fragment stored again",
    "cont:out-of-order": "a fragment stored after a later fragment of its writer",
    "cont:missing": "fragments never stored, beyond printk()'s refusals (stats.txt)",
    # the stressor's own view
    "end-line": "the stressor's end banners and result lines (serial log, dmesg.txt)",
}


class Rule(namedtuple("Rule", "id scope invariant models")):
    """A row of the table; checked_by: the units registered for it."""
    __slots__ = ()

    @property
    def checked_by(self):
        return tuple(u.name for u in units(self.id))


RULE_TABLE = (
    # trace side, per console
    Rule("no-loss", TRACE,
        "every seq from the first to the last emitted is committed; skipped seqs "
        "are covered by the dropped count of the next emission",
        BOTH),
    Rule("dropped-count", TRACE,
        "the dropped count of an emission is exactly the number of seqs it skips "
        "since the console's last commit (a reprint after a takeover shows the "
        "same count again)",
        BOTH),
    Rule("duplicate", TRACE,
        "a record is emitted/committed again only after the earlier attempt lost "
        "ownership (handover or takeover) before its commit",
        BOTH),
    Rule("one-owner", TRACE,
        "at most one owner at a time: acquire of an owned console only as "
        "handover or hostile takeover; no emission/commit/release by a context "
        "that never owned or already released it",
        BOTH),
    Rule("after-loss", TRACE,
        "no emission, commit, grant or release by a context after it lost "
        "ownership (taken over / handed over) until it re-acquires",
        BOTH),
    Rule("takeover-prio", TRACE,
        "a hostile takeover comes only from a strictly higher priority than the "
        "owner's",
        BOTH),
    Rule("unsafe-takeover", TRACE,
        "an owner inside its unsafe section is taken over only by the final flush "
        "of a panic (after the other CPUs are stopped), whose acquire marks the "
        "console for good (unsafe_takeover=1); kernels without the mark are not "
        "checked",
        BOTH),
    Rule("panic-protect", TRACE,
        "nothing takes a console away from a panic-priority owner on another CPU "
        "(hostile, or a handover in the middle of its record; its release may "
        "hand over to a waiter)",
        BOTH),
    Rule("handover-target", TRACE,
        "a handover goes to the waiter that requested it: grant to_cpu/to_prio "
        "matches a pending request, a handover acquire matches a grant",
        BOTH),
    Rule("thread-takeover", TRACE,
        "the printer thread (thread=1) never takes over: never how=hostile, never "
        "a handover it did not request",
        BOTH),
    Rule("handover-request", TRACE,
        "a handover is requested only from an owner on another CPU with a lower "
        "priority than the waiter's, of a console not marked by an unsafe takeover "
        "(the owner's unsafe bit is not in the traced word; a free console needs no "
        "request)",
        (NBCON_612,)),
    Rule("replay", TRACE,
        "an emission carries the replay marker (replay=1) exactly when it is of the "
        "seq a previous owner was assigned and lost before its commit",
        (NBCON_612,)),
    # end to end, serial log
    Rule("serial-missing", SERIAL,
        "every record the serial console emitted and committed (and every record "
        "stored after the trace ended) appears complete on the serial log",
        BOTH),
    Rule("serial-corrupt", SERIAL,
        "a complete line equals the stored record text; stressor records have the "
        "right length and crc",
        BOTH),
    Rule("serial-order", SERIAL,
        "records appear on the serial log in seq order",
        BOTH),
    Rule("serial-partial", SERIAL,
        "a partial or repeated line only where the trace shows an interrupted "
        "attempt (lost ownership) that is reprinted; no other second copy of a "
        "record anywhere on the log (also before its turn, before or after the "
        "trace)",
        BOTH),
    Rule("serial-extra", SERIAL,
        "no kernel line on the serial log that no emission explains, and no "
        "stressor record the stressor did not make (an identity again with "
        "another crc, or not made according to stats.txt)",
        BOTH),
    Rule("serial-dropped", SERIAL,
        "a `** N printk messages dropped **` line right before a record exactly "
        "when N > 0, N its emission's dropped plus, on 6.1, those of the records "
        "below the console loglevel committed since the last one printed (on 6.12 "
        "such a record prints its own notice alone), and nowhere else",
        BOTH),
    Rule("serial-replay", SERIAL,
        "a record printed again after the console was taken or handed over in the "
        "middle of it has `** replaying previous printk message **` right before "
        "it (before its dropped notice), and no other line has one; on 6.12 where "
        "the emission's replay flag says; a 6.1 log without any marker (a kernel "
        "before it) is not checked for missing ones",
        BOTH),
    Rule("producer-gap", PRODUCERS,
        "stressor producer numbers n have no gaps on the serial log except for "
        "records the console dropped (counted) or printk() refused (stats.txt)",
        BOTH),
    Rule("producer-order", PRODUCERS,
        "the records of one stressor writer (a version 2 producer: run, cpu, ctx, "
        "writer) get their seqs, and reach the serial log, in n order",
        BOTH),
    Rule("cont-fragments", FRAGMENTS,
        "every fragment of a stressor record printed with KERN_CONT is stored exactly "
        "once, in its writer's order, joined to the record before it or as a record of its "
        "own, none lost except those printk() refused (stats.txt)",
        BOTH),
    # the stressor's own view of its run
    Rule("stressor-selfcheck", STRESSOR,
        "every stressor run's end line says SUCCESS: printk() stored or refused "
        "every record the module attempted, served every NMI it sent, accounted "
        "for every takeover it injected and saw every producer run",
        BOTH),
)

RULES = {r.id: r.invariant for r in RULE_TABLE}
RULE_IDS = tuple(RULES)


def rules_of(model):
    """{id: invariant} of the rules that apply to `model`, in table order:
    what a verdict of that model lists."""
    return {r.id: r.invariant for r in RULE_TABLE if model in r.models}
_BY_ID = {r.id: r for r in RULE_TABLE}

# A registered unit.
#   name: module.function or module.Class.method (the module without its
#   package), rules: the rule ids it raises, consumes: the facts it
#   judges, models: those it applies to, invariant: its docstring, fn: it
Unit = namedtuple("Unit", "name rules consumes models invariant fn")

# the units in the order they were registered (their modules' order)
_UNITS = []
# the modules that define units, loaded before the registry is read
UNIT_MODULES = ("trace_rules", "nbcon_rules", "serial_rules", "selfcheck", "cont_fragments")


def unit(*rule_ids, consumes, models=None):
    """Register the decorated function as a unit raising `rule_ids`,
    judging the facts `consumes` (their kinds, or the fact classes of
    facts.py); `models` (default: those of its rules) must be models of
    each of its rules.  The function is returned as it is: registering
    costs nothing when it runs."""
    if isinstance(consumes, (str, type)):
        consumes = (consumes,)
    consumes = tuple(getattr(f, "kind", f) for f in consumes)

    def register(fn):
        name = "%s.%s" % (fn.__module__.rpartition(".")[2], fn.__qualname__)
        rules = tuple(_BY_ID[r] for r in rule_ids)   # KeyError: no such rule
        unknown = [f for f in consumes if f not in FACTS]
        if unknown:
            raise ValueError("%s consumes unknown facts %s" % (name, unknown))
        ms = tuple(models) if models is not None else rules[0].models
        if any(m not in r.models for r in rules for m in ms):
            raise ValueError("%s applies to models its rules do not" % name)
        if any(u.name == name for u in _UNITS):
            raise ValueError("%s registered twice" % name)
        _UNITS.append(Unit(name, tuple(rule_ids), consumes, ms, _doc(fn), fn))
        return fn
    return register


def _doc(fn):
    """A unit's invariant: its docstring as one paragraph."""
    return " ".join((fn.__doc__ or "").split())


def units(rule=None):
    """The registered units (of `rule`), in registration order; loads
    the modules that define them first."""
    for m in UNIT_MODULES:
        importlib.import_module("." + m, __package__)
    return tuple(u for u in _UNITS if rule is None or rule in u.rules)


def consumers(fact, module, model=None):
    """The functions of the units of `module` registered so far that
    consume `fact` (and apply to `model`, when given), in registration
    order: a module's view of its own units, asked for once they are
    all defined (serial_rules.SERIAL_UNITS)."""
    return tuple(u.fn for u in _UNITS
                 if fact in u.consumes and u.name.split(".")[0] == module and
                 (model is None or model in u.models))


# What a unit of a model's fact (facts.py) raises: a broken rule, with
# the message and the place of the violation (Violations.violate()'s
# arguments; the console is the fact's).
Violation = namedtuple("Violation", "rule msg seq cpus ctxs ev extra",
                       defaults=(None, (), (), None, None))


class Dispatch:
    """The one sink of a model's facts: calling it with a fact hands the
    fact to the units that consume its kind for `model`, in
    registration order, and reports each Violation one returns through
    `report(console, violation)`, at once (the checker's event in hand
    is the fact's).  A granted tolerance (facts.ToleranceGranted) is no
    rule's: it goes to `granted` alone (tolerances.Tally, the counter
    of the checker's counts), which returns nothing to report.  The
    table is read from the registry once, not per fact."""

    def __init__(self, model, report, granted):
        units()
        self.units = {k: tuple(u.fn for u in _UNITS if k in u.consumes and model in u.models)
                      for k in facts.KINDS}
        self.report = report
        # who takes each kind: the units, and the counter of tolerances
        self.consumers = dict(self.units)
        self.consumers[facts.ToleranceGranted.kind] = (granted,)

    def __call__(self, fact):
        for fn in self.consumers[fact.kind]:
            v = fn(fact)
            if v is not None:
                self.report(fact.con, v)


def checked_by(rule, module):
    """The names of the functions of `module` (trace_rules, serial_rules,
    selfcheck) that raise `rule`, in registration order."""
    prefix = module + "."
    return tuple(f[len(prefix):] for f in _BY_ID[rule].checked_by if f.startswith(prefix))
