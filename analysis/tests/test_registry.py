"""The one rule registry (analysis/rules.py): every rule the docs and
the verdict know has units, each unit declares what it raises, consumes
and applies to, the model dispatches through it, and units never call
each other."""

import ast
import inspect
import json
import os
import re
import textwrap

import pytest

from analysis import facts, rules, selfcheck, serial_rules, trace_rules
from analysis.rules import FACTS, MODELS, RULE_IDS, RULE_TABLE, units

DOC = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "analysis.md")


def test_every_documented_rule_is_in_the_registry_with_units():
    """The rule ids of docs/analysis.md's table are the registry's, and
    each has at least one unit."""
    doc = open(DOC).read()
    documented = re.findall(r"^\| `([a-z]+(?:-[a-z]+)*)` \| ", doc[doc.index("## The rules"):
                                                                 doc.index("### Trace completeness")],
                            re.M)
    assert documented == list(RULE_IDS)
    for r in RULE_TABLE:
        assert units(r.id), r.id


def test_every_unit_declares_rules_facts_models_and_invariant():
    for u in units():
        assert u.rules and all(r in RULE_IDS for r in u.rules), u.name
        assert u.consumes and all(f in FACTS for f in u.consumes), u.name
        assert u.models and all(m in MODELS for m in u.models), u.name
        assert u.invariant, u.name
    # every fact is consumed by some unit: none is declared for nothing
    assert {f for u in units() for f in u.consumes} == set(FACTS)


def test_registration_refuses_what_the_table_does_not_know():
    with pytest.raises(KeyError):
        rules.unit("no-such-rule", consumes="skip")(lambda: None)
    with pytest.raises(ValueError):
        rules.unit("no-loss", consumes="no-such-fact")(lambda: None)
    with pytest.raises(ValueError):
        rules.unit("no-loss", consumes="skip", models=("mainline-6.12",))(lambda: None)
    with pytest.raises(ValueError):
        rules.unit("no-loss", consumes="skip")(trace_rules.no_loss_skip)


def test_checked_by_is_the_units_and_trace_units_are_a_view_of_them():
    for r in RULE_TABLE:
        assert r.checked_by == tuple(u.name for u in units(r.id))
    assert trace_rules.UNITS == {
        r: tuple(u.fn for u in units(r) if u.name.startswith("trace_rules."))
        for r in RULE_IDS if any(u.name.startswith("trace_rules.") for u in units(r))}


def test_the_model_dispatches_takeovers_to_their_consumers():
    assert trace_rules.ON_HOSTILE == (trace_rules.takeover_prio,
                                      trace_rules.panic_protect_hostile)
    assert trace_rules.ON_HANDOVER == (trace_rules.panic_protect_handover,)
    for fact, fns in (("takeover", trace_rules.ON_HOSTILE),
                      ("handover-takeover", trace_rules.ON_HANDOVER)):
        assert fns == tuple(u.fn for u in units() if fact in u.consumes)


def _calls(fn):
    """The names a function calls directly."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            out.add(f.id if isinstance(f, ast.Name) else
                    f.attr if isinstance(f, ast.Attribute) else None)
    return out


def test_trace_units_call_no_other_unit_and_change_no_model_state():
    """A trace unit only judges: it calls no unit (the model hands each
    one its fact) and assigns no attribute of the model's objects."""
    names = {u.fn.__name__ for u in units() if u.name.startswith("trace_rules.")}
    for u in units():
        if not u.name.startswith("trace_rules."):
            continue
        assert not (_calls(u.fn) & (names - {u.fn.__name__})), u.name
        tree = ast.parse(inspect.getsource(u.fn))
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign):
                assert not any(isinstance(t, ast.Attribute) for t in node.targets), u.name


# The serial units that call another unit (a matcher step that judged
# on the way): none are left, every serial unit is a function over a
# placement; the list may only shrink.
SERIAL_CALLS_LEFT = {}


def test_serial_units_call_no_other_unit_but_the_known_ones():
    names = {u.fn.__name__ for u in units() if u.name.startswith("serial_rules.")}
    for u in units():
        if u.name.startswith("serial_rules."):
            n = u.fn.__name__
            assert _calls(u.fn) & (names - {n}) <= SERIAL_CALLS_LEFT.get(n, set()), u.name


def test_rules_command_prints_the_registry():
    from analysis.tests.test_cli import cli
    rc, out, err = cli("rules")
    assert rc == 0
    row = next(ln for ln in out.splitlines() if ln.startswith("no-loss "))
    assert "facts: skip, first-emission, commit" in row
    rc, out, err = cli("rules", "--json")
    rows = json.loads(out)
    assert [r["id"] for r in rows] == list(RULE_IDS)
    for r in rows:
        assert [u["name"] for u in r["units"]] == r["checked_by"]
        assert all(u["consumes"] and u["invariant"] for u in r["units"])


def test_every_placement_kind_is_a_fact_with_units_that_only_judge():
    """Serial alignment hands each placement to the units of its kind:
    every kind is a fact of the registry and has a unit; those units are
    functions over the placement that report and change nothing."""
    assert set(serial_rules.PLACEMENTS) <= set(FACTS)
    for kind, fns in serial_rules.SERIAL_UNITS.items():
        assert fns == tuple(u.fn for u in units() if kind in u.consumes), kind
        assert fns, kind
        for fn in fns:
            tree = ast.parse(inspect.getsource(fn))
            for node in ast.walk(tree):
                assert not isinstance(node, (ast.Assign, ast.AugAssign)) or not any(
                    isinstance(t, (ast.Attribute, ast.Subscript))
                    for t in getattr(node, "targets", [getattr(node, "target", None)])), \
                    fn.__name__
            calls = _calls(fn) - {"_violate", "producer_name"}
            assert not (calls & {u.fn.__name__ for u in units()}), fn.__name__


def _model_source(cls):
    """The source of an ownership model: the modules of the classes its
    class is made of, and each method it takes from another model."""
    mods = []
    for k in cls.__mro__:
        m = inspect.getmodule(k)
        if m.__name__.startswith("analysis.") and m not in mods:
            mods.append(m)
    src = [inspect.getsource(m) for m in mods]
    for v in vars(cls).values():
        if inspect.isfunction(v) and inspect.getmodule(v) not in mods:
            src.append(textwrap.dedent(inspect.getsource(v)))
    return "\n".join(src)


# event fields that are spelled like a rule id (nbcon_emit replay=)
FIELDS_NAMED_LIKE_RULES = {"replay"}


@pytest.mark.parametrize("name", ["model_rfc", "model_nbcon"])
def test_the_model_tells_only_facts_with_units_and_judges_nothing(name):
    """The ownership model of a kernel (model_rfc.py and the modules its
    class is made of; model_nbcon.py and the methods it shares with the
    RFC model) tells every fact it sees to its one sink (tell(), the
    registry's rules.Dispatch), which hands it to the units of that
    model: each fact it makes is one of facts.py with units for its
    model, and every fact with units for the model is one it makes; it
    calls no unit and no judge(), reports no violation and names no
    rule."""
    import importlib
    mod = importlib.import_module("analysis." + name)
    cls = {"model_rfc": "RfcModel", "model_nbcon": "NbconModel"}[name]
    src = _model_source(getattr(mod, cls))
    told = {kind for kind, c in facts.KINDS.items() if re.search(r"\b%s\(" % c.__name__, src)}
    assert told and told <= set(FACTS)
    dispatch = rules.Dispatch(mod.MODEL, None, None)
    for fact in told:
        assert dispatch.units[fact], fact
        assert all(mod.MODEL in u.models for u in units() if fact in u.consumes), fact
    names = {u.fn.__name__ for u in units()}
    for node in ast.walk(ast.parse(src)):
        if isinstance(node, ast.Call):
            f = node.func
            assert getattr(f, "attr", getattr(f, "id", None)) not in \
                names | {"violate", "judge"}
    assert not any('"%s"' % r in src for r in RULE_IDS if r not in FIELDS_NAMED_LIKE_RULES)
    # every fact the registry dispatches for the model is one it tells
    assert {f for f, fns in dispatch.units.items() if fns} == told


def test_every_trace_unit_returns_what_it_raises():
    """A unit of a model's fact takes the fact alone and reports nothing
    itself: it returns the Violation it raises (the dispatcher reports
    it)."""
    for u in units():
        if not set(u.consumes) & set(facts.KINDS):
            continue
        assert set(u.consumes) <= set(facts.KINDS), u.name
        assert len(inspect.signature(u.fn).parameters) == 1, u.name
        assert "violate" not in _calls(u.fn), u.name


def test_the_serial_alignment_places_and_judges_nothing():
    """serialcheck.SerialChecker only aligns: none of its methods reports
    a violation (violate() is the units' way out), calls a unit, or is
    one; what it finds goes to the units as placements (_judge())."""
    from analysis import serialcheck
    unit_names = {u.fn.__name__ for u in units()}
    assert not any(u.name.startswith("serialcheck.") for u in units())
    for name, fn in vars(serialcheck.SerialChecker).items():
        if not callable(fn) or name == "violate":
            continue
        calls = _calls(fn)
        assert "violate" not in calls, name
        assert not (calls & unit_names), name


def test_no_stage_of_the_serial_alignment_judges():
    """The stages of the serial alignment in modules of their own (the
    classes SerialChecker is made of, the lookahead, the text
    comparisons) judge nothing either: no function of theirs reports a
    violation or calls a unit, and none is one."""
    import importlib
    from analysis import serialcheck
    unit_names = {u.fn.__name__ for u in units()}
    stages = {c.__module__ for c in serialcheck.SerialChecker.__mro__[1:-1]}
    assert len(stages) >= 5 and "analysis.serialcheck" not in stages
    for name in sorted(stages | {"analysis.serial_lookahead", "analysis.serial_diff"}):
        mod = importlib.import_module(name)
        assert not any(u.fn.__module__ == name for u in units()), name
        for node in ast.walk(ast.parse(inspect.getsource(mod))):
            if isinstance(node, ast.Call):
                f = node.func
                called = f.id if isinstance(f, ast.Name) else getattr(f, "attr", None)
                assert called not in unit_names | {"violate"}, (name, called)
