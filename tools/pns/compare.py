"""make compare: the same scenarios on both kernel targets, one table.

Design: a comparison is a list of runs, each read once from its results
directory into a row of figures (read_run), never analysed again:
verdict.json (the verdict, the splats), the analysis' analysis.json
(counts, latencies, serial counters, violations by rule) and the
intervals file next to it (the longest ownership in interrupt context).
A figure the files do not hold is None, shown as n/a, never 0.
`make compare` makes the runs (run_all: each scenario of COMPARE once on
each target, through runner.run_scenario as `make run` does, one guest
at a time; a scenario the target's kernel cannot run is refused there,
runner.ScenarioRefused, and kept as such); `compare --from DIR...`
reads runs already there.  Either way pair() orders the runs by scenario
and target, with an empty row for a target without a run of the
scenario, and markdown() makes the one table from COLUMNS, the one
place that says what a column shows.
"""

import datetime
import gzip
import json
from pathlib import Path

from analysis.intervals import ROWS, VERDICT_NAME, ModelFileError, read_results

from . import target
from .common import HarnessError, say, setting, settings_env
from .scenario import parse_list
from .verdict import read_run_facts, results_dirs

NA = "n/a"
TARGETS = tuple(t.name for t in target.TARGETS)
# the contexts whose ownership keeps interrupts (or the NMI) waiting
IRQ_CTXS = ("hardirq", "nmi", "softirq")
INTERVAL = {name: i for i, name in enumerate(ROWS["I"])}


# -- reading a results directory ---------------------------------------

def read_json(path):
    """A JSON file, gzip's when its name ends in .gz; None when absent or
    unreadable."""
    try:
        opener = gzip.open if str(path).endswith(".gz") else open
        with opener(path, "rt") as f:
            return json.load(f)
    except (OSError, ValueError, EOFError):
        return None


def dig(d, *keys):
    """d[k1][k2]...; None where a level is missing or not a dict."""
    for k in keys:
        if not isinstance(d, dict):
            return None
        d = d.get(k)
    return d


def run_target(res):
    """The kernel target a run was made for: source.json's `target`; a
    source.json without one is of the first target (written before
    there were targets); without source.json, None."""
    src = read_json(Path(res) / "source.json")
    return src.get("target", TARGETS[0]) if isinstance(src, dict) else None


def run_scenario_name(res, verdict):
    """The scenario of a run: verdict.json's, else run.json's."""
    if isinstance(verdict, dict) and verdict.get("scenario"):
        return verdict["scenario"]
    try:
        return read_run_facts(res)["scenario"]
    except HarnessError:
        return Path(res).name


def read_analysis(res, verdict):
    """The analysis' verdict dict: analysis.json (or a kept
    analysis.json.gz), else the copy in verdict.json; None for a run
    without a trace analysis."""
    for name in (VERDICT_NAME, VERDICT_NAME + ".gz"):
        a = read_json(Path(res) / name)
        if a is not None:
            return a
    return dig(verdict, "analysis")


def longest_irq_ownership(res):
    """The longest interval in which one context in interrupt or NMI
    context owned a console, from the analysis' intervals file:
    {"irq_intervals": n, "longest": None or {"seconds", "ctx", "cpu",
    "con", "end"}}; None (and why) when the file cannot be read."""
    try:
        _verdict, model = read_results(str(res))
    except ModelFileError as e:
        return None, str(e)
    col, n, best = INTERVAL, 0, None
    for row in model.intervals():
        if row[col["ctx"]] not in IRQ_CTXS or row[col["t0"]] is None \
                or row[col["t1"]] is None:
            continue
        n += 1
        seconds = row[col["t1"]] - row[col["t0"]]
        if best is None or seconds > best["seconds"]:
            best = {"seconds": round(seconds, 6), "ctx": row[col["ctx"]],
                    "cpu": row[col["cpu"]], "con": row[col["con"]], "end": row[col["end"]]}
    return {"irq_intervals": n, "longest": best}, None


def hostile_safe(counts):
    """Hostile takeovers from an owner outside an unsafe section: the
    6.12 model counts them (`hostile_safe`); on 6.1 the hostile ones
    less those while unsafe; None without counts."""
    if "hostile_safe" in counts:
        return counts["hostile_safe"]
    hostile = dig(counts, "takeovers", "hostile")
    unsafe = dig(counts, "takeovers", "hostile_while_unsafe")
    return None if hostile is None or unsafe is None else hostile - unsafe


def analysis_figures(analysis):
    """The figures of the table that the analysis computed (None for
    each it did not: an analysis that crashed or stopped on its input
    has no counts, and its empty violations are no finding either)."""
    counts = dig(analysis, "counts") or {}
    violations = dig(analysis, "violations_by_rule") if counts else None
    return {
        "records": counts.get("records"),
        "printed": counts.get("commits"),
        "hostile_safe": hostile_safe(counts),
        "hostile_unsafe": dig(counts, "takeovers", "hostile_while_unsafe"),
        "handovers": dig(counts, "takeovers", "handover"),
        "direct": dig(counts, "takeovers", "direct"),
        "handover_requests": dig(counts, "handovers", "requests"),
        "handover_timeouts": dig(counts, "handovers", "timeouts"),
        "reprints": counts.get("reprints"),
        "replay_markers": dig(analysis, "serial", "replay_markers"),
        "dropped": counts.get("dropped_records"),
        "emergency_delay_us": dig(analysis, "latency", "emergency_store_to_console"),
        "violations": ({r: n for r, n in violations.items() if n}
                       if isinstance(violations, dict) else None),
    }


def run_row(scenario, tgt, results=None, verdict=None, analysis=None,
            irq=(None, "no trace analysis"), refused=None):
    """One run's row of figures (the one place that names them): from
    its verdict.json and the analysis' files, or (`refused`: the options
    the kernel lacks; no `results`: not among the runs) a run that did
    not happen, every figure None."""
    return {
        "scenario": scenario,
        "target": tgt,
        "results": results,
        "refused": refused,
        "verdict": dig(verdict, "verdict"),
        "problems": dig(verdict, "problems") or [],
        "analysis_verdict": dig(analysis, "verdict"),
        "analysis_reasons": dig(analysis, "reasons")
        or ([analysis["error"]] if dig(analysis, "error") else []),
        **analysis_figures(analysis),
        "irq_owner": irq[0],
        "irq_owner_na": irq[1],
        "splats": dig(verdict, "splats"),
    }


def read_run(res):
    """The row of a run, from the files its run and analysis left in
    `res`."""
    res = Path(res)
    verdict = read_json(res / "verdict.json")
    analysis = read_analysis(res, verdict)
    irq = longest_irq_ownership(res) if analysis else (None, "no trace analysis")
    return run_row(run_scenario_name(res, verdict), run_target(res), str(res), verdict,
                   analysis, irq)


# -- the table ----------------------------------------------------------

def num(x):
    return NA if x is None else str(x)


def nums(*xs):
    return " / ".join(num(x) for x in xs)


def counted(d):
    """{"warning": 1} as `warning=1`; {} as `none`; None as n/a."""
    if d is None:
        return NA
    return ", ".join(f"{k}={n}" for k, n in sorted(d.items())) or "none"


def ms(us):
    return NA if us is None else f"{us / 1000:.3f}"


def verdict_cell(r):
    """The run's verdict, with the analysis' when that did not pass."""
    if r["refused"] is not None:
        return f"{NA}: needs {', '.join(r['refused'])}"
    if r["verdict"] is None:
        return f"{NA}: no run" if r["results"] is None else f"{NA}: no verdict.json"
    if r["analysis_verdict"] is None:
        return f"{r['verdict']} (no trace analysis)"
    if r["analysis_verdict"] != "pass":
        return f"{r['verdict']} (analysis: {r['analysis_verdict']})"
    return r["verdict"]


def delay_cell(r):
    """p50 / p99 / max of the emergency records' store-to-console delay
    in ms, with the records it rests on and those never printed."""
    d = r["emergency_delay_us"]
    if not isinstance(d, dict):
        return NA
    figures = [d.get(k) for k in ("p50", "p99", "max")]
    cell = NA if figures == [None] * 3 else " / ".join(map(ms, figures)) + " ms"
    if d.get("count") is not None:
        unprinted = d.get("not_committed")
        cell += f" (n={d['count']}" + (f", {unprinted} not printed)" if unprinted else ")")
    return cell


def irq_cell(r):
    """The longest ownership in interrupt or NMI context; `>=` when the
    trace ended before the owner released the console."""
    o = r["irq_owner"]
    if o is None:
        return NA
    b = o["longest"]
    if b is None:
        return "none"
    cut = ">= " if b["end"] == "trace end" else ""
    return f"{cut}{b['seconds'] * 1000:.3f} ms ({b['ctx']}, cpu {b['cpu']})"


# (header, cell): the table's columns, in order
COLUMNS = (
    ("scenario", lambda r: r["scenario"]),
    ("kernel", lambda r: num(r["target"])),
    ("verdict", verdict_cell),
    ("records stored / printed", lambda r: nums(r["records"], r["printed"])),
    ("takeovers hostile safe / hostile unsafe / handover / direct",
     lambda r: nums(r["hostile_safe"], r["hostile_unsafe"], r["handovers"], r["direct"])),
    ("handover requests / timeouts",
     lambda r: nums(r["handover_requests"], r["handover_timeouts"])),
    ("reprints / replay markers", lambda r: nums(r["reprints"], r["replay_markers"])),
    ("dropped", lambda r: num(r["dropped"])),
    ("emergency store-to-console p50 / p99 / max", delay_cell),
    ("longest irq/NMI owner", irq_cell),
    ("violations", lambda r: counted(r["violations"])),
    ("splats", lambda r: counted(r["splats"])),
)


def cells(r):
    return [cell(r) for _head, cell in COLUMNS]


def markdown(rows):
    """The markdown table of the runs (pair()'s order)."""
    def line(values):
        return "| " + " | ".join(v.replace("|", "\\|") for v in values) + " |"
    return "\n".join([line([h for h, _c in COLUMNS]), line(["---"] * len(COLUMNS))]
                     + [line(cells(r)) for r in rows]) + "\n"


def notes(rows):
    """Under the table: each run's results directory, with the first
    problem of its verdict and the analysis' first reason."""
    out = []
    for r in rows:
        where = r["results"] or ("refused" if r["refused"] is not None else "no run")
        why = (r["problems"] or [""])[0]
        reason = (r["analysis_reasons"] or [""])[0]
        extra = "; ".join(x for x in (why, f"analysis: {reason}" if reason and reason
                                      not in why else "") if x)
        out.append(f"- {r['scenario']} on {num(r['target'])}: {where}"
                   + (f" ({extra})" if extra else ""))
    return "\n".join(out) + "\n"


def pair(rows):
    """The runs by scenario (first seen first), each scenario with a row
    for every target (an empty row for one without a run), then runs
    of an unknown target; several runs of a pair stay in their order."""
    order = list(dict.fromkeys(r["scenario"] for r in rows))
    tgts = TARGETS + tuple(dict.fromkeys(r["target"] for r in rows
                                         if r["target"] not in TARGETS))
    out = []
    for sc in order:
        for tgt in tgts:
            mine = [r for r in rows if r["scenario"] == sc and r["target"] == tgt]
            if mine:
                out += mine
            elif tgt in TARGETS:
                out.append(run_row(sc, tgt))
    return out


def exit_code(rows):
    """0 when every run that ran passed (refused and absent ones
    excepted), else 1."""
    ran = [r for r in rows if r["results"] is not None]
    return 0 if all(r["verdict"] == "pass" for r in ran) else 1


def report(rows, out=None, meta=None):
    """Print the table (and the runs under it); with `out`, write
    compare.md and compare.json there.  Returns the exit code."""
    rows = pair(rows)
    md = markdown(rows)
    under = notes(rows)
    say(md + "\n" + under.rstrip())
    if out is not None:
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        title = "# The same scenarios on both kernel targets\n\n"
        how = "".join(f"- {k}: {' '.join(v) if isinstance(v, list) else v}\n"
                      for k, v in (meta or {}).items())
        (out / "compare.md").write_text(title + (how + "\n" if how else "") + md + "\n"
                                        + under)
        (out / "compare.json").write_text(json.dumps(
            {**(meta or {}), "columns": [h for h, _c in COLUMNS],
             "table": [cells(r) for r in rows], "runs": rows}, indent=1) + "\n")
        say(f"[compare] table: {out / 'compare.md'}, {out / 'compare.json'}")
    return exit_code(rows)


def from_dirs(paths, out=None):
    """`compare --from DIR...`: the table of results directories already
    there (a directory of them stands for all of them)."""
    return report([read_run(d) for d in results_dirs(paths)], out)


# -- making the runs ----------------------------------------------------

def run_dir(root, scenario, tgt):
    """A fresh directory under the comparison's for one run."""
    res, n = root / f"{scenario}-{tgt}", 1
    while res.exists():
        n += 1
        res = root / f"{scenario}-{tgt}-{n}"
    return res


def run_one(root, scenario, tgt):
    """One scenario on one target, as `make run KERNEL=tgt` runs it; the
    row of figures, or the refusal of a kernel without what it needs."""
    from . import runner
    with settings_env({"KERNEL": tgt}):
        try:
            v = runner.run_scenario(scenario, results=run_dir(root, scenario, tgt))
        except runner.ScenarioRefused as e:
            say(f"[compare] {scenario} on {tgt}: refused: {e}")
            return run_row(scenario, tgt, refused=e.missing)
    return read_run(v["results"])


def run_all(text=None, out=None):
    """`make compare`: each scenario of COMPARE (or `text`) on every
    target, a scenario's runs back to back (a host whose load drifts
    meets both alike), then the table.  Returns the exit code."""
    from . import runner
    names = parse_list(text or setting("COMPARE"))
    root = Path(out) if out else runner.new_results_dir("compare", latest=False)
    todo = [(sc, tgt) for sc in names for tgt in TARGETS]
    baud = setting("BAUD") or "each scenario's"
    say(f"[compare] {len(names)} scenario(s) on {', '.join(TARGETS)}, {len(todo)} runs, "
        f"line {baud}; results in {root}")
    meta = {"command": "make compare", "scenarios": names, "targets": list(TARGETS),
            "baud": baud, "made": datetime.datetime.now().isoformat(timespec="seconds")}
    rows = []
    try:
        for i, (sc, tgt) in enumerate(todo, 1):
            say(f"[compare] {i}/{len(todo)}: {sc} on KERNEL={tgt}")
            rows.append(run_one(root, sc, tgt))
    except (HarnessError, KeyboardInterrupt):
        say(f"[compare] stopped after {len(rows)} of {len(todo)} runs; the table of those:")
        report(rows, root, {**meta, "stopped_after": len(rows)})
        raise
    return report(rows, root, meta)
