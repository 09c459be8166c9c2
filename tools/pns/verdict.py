"""The verdict of a run, from what the guest left and never from its own
opinion: console.log (splats, markers), the scenario's exit code, the
trace analysis, dmesg against the console; and the facts only the run
could measure (run.json), so that `recheck` judges any old results
directory again with today's analysis.
"""

import json
import re
import subprocess
import sys
from pathlib import Path

from . import consolelog
from .common import REPO, HarnessError, say, step
from .scenario import Scenario


# What a run measured about itself and cannot measure again: the verdict
# is rebuilt from these and the files the guest left (recheck).
RUN_FACTS = "run.json"
FACT_KEYS = ("scenario", "hung", "qemu_rc", "elapsed_s", "boot_hangs")


def write_run_facts(res, sc, hung, qemu_rc, elapsed, boot_hangs, duration):
    """Write run.json: the facts of the boot the verdict depends on."""
    facts = {"scenario": sc.name, "hung": hung, "qemu_rc": qemu_rc,
             "elapsed_s": round(elapsed, 1), "boot_hangs": list(boot_hangs),
             "duration_s": duration}
    (Path(res) / RUN_FACTS).write_text(json.dumps(facts, indent=1) + "\n")
    return facts


def read_run_facts(res):
    """The run facts of a results directory: run.json, or the same fields
    of verdict.json for a directory written before run.json existed."""
    res = Path(res)
    for name in (RUN_FACTS, "verdict.json"):
        try:
            facts = json.loads((res / name).read_text())
        except FileNotFoundError:
            continue
        except (OSError, ValueError) as e:
            raise HarnessError(f"{res / name}: unreadable ({e})")
        missing = [k for k in FACT_KEYS if k not in facts]
        if missing:
            raise HarnessError(f"{res / name}: no {', '.join(missing)}")
        return {k: facts[k] for k in FACT_KEYS}
    raise HarnessError(f"{res}: neither {RUN_FACTS} nor verdict.json: not a results directory")


def facts_for_judge(facts):
    return {"hung": facts["hung"], "qemu_rc": facts["qemu_rc"],
            "elapsed": facts["elapsed_s"], "boot_hangs": facts["boot_hangs"]}


def results_dirs(paths):
    """Expand the arguments of recheck: a results directory stands for
    itself, any other directory for the results directories inside it."""
    out = []
    for p in map(Path, paths):
        if not p.is_dir():
            raise HarnessError(f"{p}: no such directory")
        if (p / RUN_FACTS).exists() or (p / "verdict.json").exists():
            out.append(p)
            continue
        inner = sorted(q for q in p.iterdir() if q.is_dir() and not q.is_symlink()
                       and ((q / RUN_FACTS).exists() or (q / "verdict.json").exists()))
        if not inner:
            raise HarnessError(f"{p}: not a results directory and holds none")
        out += inner
    return out


def recheck(paths):
    """Judge results directories again with today's analysis and
    scenario expectations, from what each run left; rewrite verdict.json
    and print a table of old and new verdicts.  Returns the exit code:
    0 all pass, 1 some fail, 2 some directory could not be judged."""
    rows, worst = [], 0
    for res in results_dirs(paths):
        try:
            old = json.loads((res / "verdict.json").read_text()).get("verdict", "-")
        except (OSError, ValueError):
            old = "-"
        try:
            facts = read_run_facts(res)
            with step(f"recheck {res}"):
                v = judge(res, Scenario.load(facts["scenario"]), **facts_for_judge(facts))
        except HarnessError as e:
            say(f"[recheck] {res}: {e}")
            rows.append((res.name, "?", old, "unusable", "-", str(e)))
            worst = 2
            continue
        print_verdict(v)
        ana = v.get("analysis") or {}
        first = (v["problems"] or [""])[0]
        rows.append((res.name, v["scenario"], old, v["verdict"],
                     ana.get("verdict", "-"), first))
        if v["verdict"] != "pass":
            worst = max(worst, 1)
    say(format_table(("results", "scenario", "was", "now", "analysis", "first problem"), rows))
    return worst


def format_table(head, rows):
    """A plain text table, one column per field, the last one free."""
    rows = [tuple(str(c) for c in r) for r in rows]
    widths = [max(len(r[i]) for r in rows + [head]) for i in range(len(head) - 1)]
    fmt = "  ".join(f"{{:{w}}}" for w in widths) + "  {}"
    return "\n".join(fmt.format(*r).rstrip() for r in [head] + rows)


def judge(res, sc, hung, qemu_rc, elapsed, boot_hangs=()):
    """Write verdict.json for a finished (or killed) run."""
    res = Path(res)
    lines = consolelog.read_lines(res / "console.log")
    splats, examples = consolelog.scan(lines)
    booted = any("pns: init ok" in ln for ln in lines)
    end = [ln for ln in lines if f"pns: scenario {sc.name} end rc=" in ln]
    rc_file = res / "scenario.rc"
    if rc_file.exists():
        scenario_rc = int(rc_file.read_text().strip() or -1)
    elif end:
        scenario_rc = int(re.search(r"rc=(-?\d+)", end[-1]).group(1))
    else:
        scenario_rc = None
    finished = scenario_rc is not None
    problems = []
    if not booted:
        problems.append("the guest never reached /init")
    if hung:
        where = " (CPU state: guest-state.txt)" if (res / "guest-state.txt").exists() else ""
        problems.append(f"hung: killed after {elapsed:.0f}s{where}")
    if sc.expect_end == "finish":
        if booted and not finished and not hung:
            problems.append("the scenario did not finish")
        if finished and scenario_rc != 0:
            problems.append(f"the scenario exited with {scenario_rc}")
    elif booted and not finished and not hung and not splats.get("panic"):
        # the guest ended on its own (-no-reboot turns any reset into
        # QEMU's exit) without the panic it waits for: a triple fault, or
        # a panic whose output never reached the console
        problems.append(f"the guest ended after {elapsed:.0f}s (QEMU exit status {qemu_rc}) "
                        f"before the scenario's panic, with no panic on the console")
    for cls in sc.expect_splat:
        if splats.get(cls, 0) == 0:
            problems.append(f"expected a {cls} splat, saw none")
    for cls, n in sorted(splats.items()):
        if cls not in sc.expect_splat:
            problems.append(f"{n} {cls} splat(s), first: {examples[cls]}")
    analysis = analyse(res)
    bootlog = check_bootlog(res, analysis)
    if bootlog and not bootlog["ok"]:
        for what in ("missing", "out_of_order"):
            if bootlog[what]:
                problems.append(f"boot log: {len(bootlog[what])} dmesg record(s) "
                                f"{what.replace('_', ' ')} on the console, first: "
                                f"{bootlog[what][0]}")
    notes = [f"boot attempt {h['attempt']} hung before /init (killed after "
             f"{h['after_s']}s, last console line: {h['last_console_line'][:100]!r}; "
             f"kept in {h['dir']}/); booted again" for h in boot_hangs]
    problems += expected_handoffs(sc, analysis, notes)
    problems += kmemleak_scanned(res, sc, lines, finished and not hung, notes)
    if booted:
        problems += checkers_active(res, lines)
    if sc.expect_rule:
        # A deliberately broken kernel: the analysis must catch that rule.
        found = (analysis or {}).get("violations_by_rule", {}).get(sc.expect_rule, 0)
        if found:
            notes.append(f"the analysis caught the expected rule {sc.expect_rule} "
                         f"({found} violation(s))")
        else:
            problems.append(f"the analysis did not report the expected rule "
                            f"{sc.expect_rule} (verdict: {(analysis or {}).get('verdict')})")
    elif analysis and analysis.get("verdict") != "pass":
        why = "; ".join(analysis.get("reasons") or [str(analysis.get("error", ""))])
        if not series_applied(res):
            # A plain 6.1 kernel has no nobkl tracepoints to analyse.
            notes.append(f"analysis not applicable without the patch series: {why}")
        elif run_source(res).get("console") == "legacy":
            notes.append(f"analysis not applicable without a NOBKL console "
                         f"(CONSOLE=legacy): {why}")
        else:
            problems.append(f"analysis verdict: {analysis.get('verdict')} ({why})")
    verdict = {
        "scenario": sc.name,
        "verdict": "fail" if problems else "pass",
        "problems": problems,
        "notes": notes,
        "booted": booted,
        "finished": finished,
        "scenario_rc": scenario_rc,
        "hung": hung,
        "boot_hangs": list(boot_hangs),
        "qemu_rc": qemu_rc,
        "elapsed_s": round(elapsed, 1),
        "splats": splats,
        "splat_examples": examples,
        "expected_splats": sc.expect_splat,
        "bootlog": bootlog,
        "analysis": analysis,
        "results": str(res),
    }
    (res / "verdict.json").write_text(json.dumps(verdict, indent=1) + "\n")
    return verdict


def expected_handoffs(sc, analysis, notes):
    """The hand-offs the scenario stages (pns-expect-handoff), each seen
    in the trace (the analysis' `handoffs` counts); one that ends in
    `reprinted` with the interrupted record printed again by the new
    owner.  Returns the problems."""
    if not sc.expect_handoffs:
        return []
    seen = (analysis or {}).get("handoffs")
    if seen is None:
        return [f"no trace analysis to show the expected hand-offs "
                f"({'; '.join(sc.expect_handoffs)})"]
    problems = []
    for want in sc.expect_handoffs:
        key, what = want, "taken"
        if want.endswith(" reprinted"):
            key, what = want[:-len(" reprinted")], "reprinted"
        c = seen.get(key) or {}
        if c.get(what, 0):
            ctx = ", ".join(f"{k} {n}" for k, n in (c.get("by_ctx") or {}).items())
            notes.append(f"the trace shows {key}: taken {c['taken']}"
                         f"{f' (from {ctx})' if ctx else ''}, in the middle of a record "
                         f"{c['interrupted']}, that record reprinted {c['reprinted']}")
        else:
            whose = " whose new owner reprinted the interrupted record" \
                if what == "reprinted" else ""
            problems.append(f"the trace shows no {key} hand-off{whose} ({key}: "
                            f"{c or 'none'}; seen: {', '.join(sorted(seen)) or 'no hand-off'})")
    return problems


KMEMLEAK_DONE = re.compile(r"pns: kmemleak scan done: .*")

# A checker in the run's kernel.config -> the line its kernel prints when
# it is on: a checker that is built in but not running passes any kernel
# (KCSAN without KCSAN_EARLY_ENABLE watches nothing until told to).
CHECKER_ON = {
    "CONFIG_KASAN": "kasan: KernelAddressSanitizer initialized",
    "CONFIG_KCSAN": "kcsan: enabled early",
    "CONFIG_DEBUG_KMEMLEAK": "kmemleak: Kernel memory leak detector initialized",
}


def run_config(res):
    """The run's kernel.config as CONFIG_X -> value ({} without one)."""
    from .kernel import parse_config
    try:
        return parse_config((Path(res) / "kernel.config").read_text())
    except OSError:
        return {}


def checkers_active(res, lines):
    """The dynamic checkers the run's kernel has, each seen switched on in
    the console log of a guest that booted.  Returns the problems."""
    config = run_config(res)
    return [f"{opt} kernel, but the console never shows {line!r}: the checker was off"
            for opt, line in CHECKER_ON.items()
            if config.get(opt) == "y" and not any(line in ln for ln in lines)]


def kmemleak_scanned(res, sc, lines, finished, notes):
    """On a kernel with kmemleak (the run's kernel.config), a run that
    finished must end with the guest's scan (kmemleak_scan in
    workloads/lib/common.sh): kmemleak prints nothing by itself, so a scan
    that did not run would pass a leaking kernel.  The scan's report is
    judged by the splat scan (class kmemleak).  Returns the problems."""
    config = run_config(res)
    if config.get("CONFIG_DEBUG_KMEMLEAK") != "y" or sc.expect_end != "finish" \
            or not finished:
        return []
    done = [m.group(0) for m in map(KMEMLEAK_DONE.search, lines) if m]
    if not done:
        return ["kmemleak kernel, but no scan at the end of the run "
                "(no 'pns: kmemleak scan done' on the console)"]
    notes.append(done[-1].removeprefix("pns: "))
    return []


def check_bootlog(res, analysis=None):
    """Compare the guest's dmesg.txt (when a scenario saved one) with the
    console: every record the kernel logged must have reached the console.
    Records corrupted by a byte whose store the trace holds are left to
    the analysis (`analysis`: its verdict dict; bootlog.stored_in_trace())."""
    if not (res / "dmesg.txt").exists() or not (res / "console.log").exists():
        return None
    try:
        from analysis.bootlog import check_files, stored_in_trace
    except ImportError:
        return None
    return check_files(res / "dmesg.txt", res / "console.log", res / "printk.txt",
                       stored_in_trace(analysis))


def run_source(res):
    """source.json of a results directory ({} when unreadable)."""
    try:
        return json.loads((Path(res) / "source.json").read_text())
    except (OSError, ValueError):
        return {}


def series_applied(res):
    """True when the run's kernel had patches applied (see source.json)."""
    src = run_source(res)
    # unknown: do not excuse a missing analysis
    return bool(src["series"]) if "series" in src else True


def analyse(res):
    """Run the timeline analysis on a results directory when it can.

    It runs as its own process (`python3 -m analysis check --json`): the
    analysis reads trace.dat through libtracecmd, and a crash in the
    library must not take the harness and the verdict down with it."""
    if not (res / "trace.dat").exists() or not (REPO / "analysis").is_dir():
        return None
    proc = subprocess.run([sys.executable, "-m", "analysis", "check", "--json", str(res)],
                          cwd=REPO, capture_output=True, text=True)
    try:
        return json.loads(proc.stdout)
    except ValueError:
        why = (f"killed by signal {-proc.returncode}" if proc.returncode < 0
               else f"exit {proc.returncode}")
        last = (proc.stderr.strip().splitlines() or [""])[-1]
        return {"verdict": "error", "error": f"the analysis crashed ({why}): {last}"}


def analysis_headline(analysis):
    """The analysis' own headline lines for a run that has one."""
    if not analysis or "counts" not in analysis and not analysis.get("error"):
        return []
    from analysis.report import headline
    try:
        return headline(analysis)
    except (KeyError, TypeError):
        # A verdict.json of an older analysis: its problems say enough.
        return []


def print_verdict(v):
    say(f"[verdict] {v['scenario']}: {v['verdict'].upper()}  "
        f"(booted={v['booted']} finished={v['finished']} hung={v['hung']} "
        f"splats={v['splats'] or 'none'})")
    for p in v["problems"]:
        say(f"[verdict]   - {p}")
    for line in analysis_headline(v.get("analysis")):
        say(f"[verdict] {line}")
    for n in v.get("notes", []):
        say(f"[verdict]   note: {n}")
    say(f"[verdict] results: {v['results']}")
    if (v.get("analysis") or {}).get("counts"):
        py = "/usr/bin/python3 -m analysis"
        first = (v["analysis"].get("violations") or [{}])[0].get("seq")
        around = f" --seq {first}" if first is not None else ""
        say(f"[verdict] timeline picture: {py} plot {v['results']}{around} -o timeline.png; "
            f"events around a record: {py} timeline {v['results']} --seq N")


