"""The verdict of a run, from what the guest left and never from its own
opinion: console.log (splats, markers), the scenario's exit code, the
trace analysis, dmesg against the console; and the facts only the run
could measure (run.json), so that `recheck` judges any old results
directory again with today's analysis.

judge() collects what the run left once (Run: the console log and its
splats, how the scenario ended, the analysis' verdict, which the
analysis folds from its own table, and the boot log check), asks every
judgement of JUDGEMENTS about it and decides the verdict of what they
said (analysis/fold.py, decide(), as the analysis decides its own): the
run fails when one of them fails, with every judgement's problems in
the table's order; then writes verdict.json, with the table as judged.
"""

import json
import re
import subprocess
import sys
from pathlib import Path

from analysis.emergency_report import LATE_FILE
from analysis.fold import FAIL, PASSED, Judged, Judgement, decide, judge as judge_all
from analysis.intervals import FILE_NAME as MODEL_NAME, NAMES as MODEL_NAMES, VERDICT_NAME

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


class Run:
    """What a finished (or killed) run left, collected once for the
    judgements: the console log and its splats, how the guest and the
    scenario ended, the analysis' verdict and the boot log check; the
    judgements add their notes to `notes`."""

    def __init__(self, res, sc, hung, qemu_rc, elapsed, boot_hangs):
        self.res, self.sc, self.hung, self.qemu_rc, self.elapsed = res, sc, hung, qemu_rc, elapsed
        self.boot_hangs = list(boot_hangs)
        self.lines = consolelog.read_lines(res / "console.log")
        self.splats, self.examples = consolelog.scan(self.lines)
        self.booted = any("pns: init ok" in ln for ln in self.lines)
        end = [ln for ln in self.lines if f"pns: scenario {sc.name} end rc=" in ln]
        rc_file = res / "scenario.rc"
        if rc_file.exists():
            self.scenario_rc = int(rc_file.read_text().strip() or -1)
        elif end:
            self.scenario_rc = int(re.search(r"rc=(-?\d+)", end[-1]).group(1))
        else:
            self.scenario_rc = None
        self.finished = self.scenario_rc is not None
        self.analysis = analyse(res)
        self.bootlog = check_bootlog(res, self.analysis)
        self.notes = [f"boot attempt {h['attempt']} hung before /init (killed after "
                      f"{h['after_s']}s, last console line: "
                      f"{h['last_console_line'][:100]!r}; kept in {h['dir']}/); booted again"
                      for h in self.boot_hangs]


def failed_if(problems):
    """A judgement's Judged: fail with the problems, pass without any."""
    return Judged(FAIL, problems) if problems else PASSED


def judge_boot(run):
    return failed_if([] if run.booted else ["the guest never reached /init"])


def judge_hang(run):
    if not run.hung:
        return PASSED
    where = " (CPU state: guest-state.txt)" if (run.res / "guest-state.txt").exists() else ""
    return failed_if([f"hung: killed after {run.elapsed:.0f}s{where}"])


def judge_end(run):
    """The scenario ended as it says it ends: it finished with rc 0, or
    the guest panicked on the console (expect_end panic)."""
    problems = []
    if run.sc.expect_end == "finish":
        if run.booted and not run.finished and not run.hung:
            problems.append("the scenario did not finish")
        if run.finished and run.scenario_rc != 0:
            problems.append(f"the scenario exited with {run.scenario_rc}")
    elif run.booted and not run.finished and not run.hung and not run.splats.get("panic"):
        # the guest ended on its own (-no-reboot turns any reset into
        # QEMU's exit) without the panic it waits for: a triple fault, or
        # a panic whose output never reached the console
        problems.append(f"the guest ended after {run.elapsed:.0f}s (QEMU exit status "
                        f"{run.qemu_rc}) before the scenario's panic, with no panic on the "
                        f"console")
    return failed_if(problems)


def judge_splats(run):
    """Every splat the scenario expects, and no other."""
    problems = [f"expected a {cls} splat, saw none"
                for cls in run.sc.expect_splat if run.splats.get(cls, 0) == 0]
    problems += [f"{n} {cls} splat(s), first: {run.examples[cls]}"
                 for cls, n in sorted(run.splats.items()) if cls not in run.sc.expect_splat]
    return failed_if(problems)


def judge_bootlog(run):
    """Every dmesg record on the console, in order (check_bootlog())."""
    problems = []
    if run.bootlog and not run.bootlog["ok"]:
        for what in ("missing", "out_of_order"):
            if run.bootlog[what]:
                problems.append(f"boot log: {len(run.bootlog[what])} dmesg record(s) "
                                f"{what.replace('_', ' ')} on the console, first: "
                                f"{run.bootlog[what][0]}")
    return failed_if(problems)


def judge_handoffs(run):
    return failed_if(expected_handoffs(run.sc, run.analysis, run.notes))


def judge_kmemleak(run):
    return failed_if(kmemleak_scanned(run.res, run.sc, run.lines,
                                      run.finished and not run.hung, run.notes))


def judge_checkers(run):
    return failed_if(checkers_active(run.res, run.lines) if run.booted else [])


def judge_analysis(run):
    """The trace analysis' verdict (its own fold, analysis/verdict.py):
    on a deliberately broken kernel it caught the scenario's rule;
    otherwise it passed, or does not apply (a kernel without the
    series, a legacy console).  An incomplete analysis fails the run."""
    analysis, sc = run.analysis, run.sc
    if sc.expect_rule:
        found = (analysis or {}).get("violations_by_rule", {}).get(sc.expect_rule, 0)
        if found:
            run.notes.append(f"the analysis caught the expected rule {sc.expect_rule} "
                             f"({found} violation(s))")
            return PASSED
        return failed_if([f"the analysis did not report the expected rule "
                          f"{sc.expect_rule} (verdict: {(analysis or {}).get('verdict')})"])
    if not analysis or analysis.get("verdict") == "pass":
        return PASSED
    why = "; ".join(analysis.get("reasons") or [str(analysis.get("error", ""))])
    if not series_applied(run.res):
        # A plain 6.1 kernel has no nobkl tracepoints to analyse.
        run.notes.append(f"analysis not applicable without the patch series: {why}")
        return PASSED
    if run_source(run.res).get("console") == "legacy":
        run.notes.append(f"analysis not applicable without a NOBKL console "
                         f"(CONSOLE=legacy): {why}")
        return PASSED
    return failed_if([f"analysis verdict: {analysis.get('verdict')} ({why})"])


# The run's verdict: one fold (analysis/fold.py) of these judgements, in
# this order (the order of the problems and of verdict.json's
# judgements); every outcome is pass or fail: a run proves its case or
# fails, so judge_analysis() fails an incomplete analysis
JUDGEMENTS = (
    Judgement("booted", judge_boot),
    Judgement("hang", judge_hang),
    Judgement("scenario end", judge_end),
    Judgement("splats", judge_splats),
    Judgement("boot log", judge_bootlog),
    Judgement("hand-offs", judge_handoffs),
    Judgement("kmemleak scan", judge_kmemleak),
    Judgement("checkers on", judge_checkers),
    Judgement("analysis", judge_analysis),
)


def judge(res, sc, hung, qemu_rc, elapsed, boot_hangs=()):
    """Write verdict.json for a finished (or killed) run: the fold of
    JUDGEMENTS over what it left."""
    res = Path(res)
    run = Run(res, sc, hung, qemu_rc, elapsed, boot_hangs)
    decided = decide(judge_all(JUDGEMENTS, run))
    verdict = {
        "scenario": sc.name,
        "verdict": decided.outcome,
        "exit_code": decided.exit_code,
        "problems": decided.reasons,
        "judgements": decided.judgements,
        "notes": run.notes,
        "booted": run.booted,
        "finished": run.finished,
        "scenario_rc": run.scenario_rc,
        "hung": hung,
        "boot_hangs": list(boot_hangs),
        "qemu_rc": qemu_rc,
        "elapsed_s": round(elapsed, 1),
        "splats": run.splats,
        "splat_examples": run.examples,
        "expected_splats": sc.expect_splat,
        "bootlog": run.bootlog,
        "analysis": run.analysis,
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


# What the analysis writes next to verdict.json (`check -o --gzip`): its
# verdict, the dict verdict.json holds under "analysis", and the model's
# intervals, marks and events, which `analysis plot`, `analysis
# timeline` and the console benchmark read (they never run the analysis
# again).  The intervals file is gzip's: about 100 bytes an event plain,
# 24 compressed (a 10 s stress run of 50,742 events: 5,244,000 bytes
# plain, 1,199,800 gzip; the 200 s run of make bench has over a million
# events).
ANALYSIS_FILE = VERDICT_NAME


def analyse(res):
    """Run the timeline analysis on a results directory when it can, and
    leave its files there (ANALYSIS_FILE and the intervals file, as
    `check -o` writes them), so that plot and timeline work on every run
    the harness judged, and so does recheck's judgement.

    It runs as its own process (`python3 -m analysis check --json -o
    RES/analysis.json --gzip`): the analysis reads trace.dat through
    libtracecmd, and a crash in the library must not take the harness and
    the verdict down with it."""
    if not (res / "trace.dat").exists() or not (REPO / "analysis").is_dir():
        return None
    proc = subprocess.run([sys.executable, "-m", "analysis", "check", "--json", "--gzip",
                           "-o", str(res / ANALYSIS_FILE), str(res)],
                          cwd=REPO, capture_output=True, text=True)
    try:
        return json.loads(proc.stdout)
    except ValueError:
        why = (f"killed by signal {-proc.returncode}" if proc.returncode < 0
               else f"exit {proc.returncode}")
        last = (proc.stderr.strip().splitlines() or [""])[-1]
        crashed = {"verdict": "error", "error": f"the analysis crashed ({why}): {last}"}
        write_crashed(res, crashed)
        return crashed


def write_crashed(res, crashed):
    """After a crash of the analysis: no intervals file nor late file (nor
    half of one, nor one of an earlier judgement), and analysis.json says
    what the verdict says, so that plot and timeline name the crash."""
    for p in [res / n for n in MODEL_NAMES + (LATE_FILE,)] \
            + list(res.glob(f"{MODEL_NAME}*.tmp")) + list(res.glob(f"{LATE_FILE}*.tmp")) \
            + [res / f"{ANALYSIS_FILE}.tmp"]:
        try:
            p.unlink()
        except FileNotFoundError:
            pass
        except OSError as e:
            say(f"[verdict] cannot remove {p}: {e}")
    try:
        (res / ANALYSIS_FILE).write_text(json.dumps(crashed, indent=1) + "\n")
    except OSError as e:
        say(f"[verdict] cannot write {res / ANALYSIS_FILE}: {e}")


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
    if (v.get("analysis") or {}).get("counts") and v["analysis"].get("model_file"):
        # both read what the harness's analysis wrote (analyse())
        py = "/usr/bin/python3 -m analysis"
        first = (v["analysis"].get("violations") or [{}])[0].get("seq")
        around = f" --seq {first}" if first is not None else ""
        say(f"[verdict] timeline picture: {py} plot {v['results']}{around} -o timeline.png; "
            f"events around a record: {py} timeline {v['results']} --seq N")


