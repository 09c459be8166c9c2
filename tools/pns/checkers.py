"""The checker kernels (KASAN with kmemleak, KCSAN) and the soak.

`make checkers` runs SCENARIO (default storm) on each kernel of CHECKERS:
the variant's kernel (debug: lockdep, atomic-sleep checks, full
preemption) plus the checker's fragments from tools/configs/checkers/,
each built in its own directory (debug-x86_64+kasan+kmemleak, ...), so
the variant's own kernel is never reconfigured.  KASAN and kmemleak share
one kernel; KCSAN excludes KASAN and has its own.  The table gives, per
kernel and run, the verdict, the splats by class, the records, the
takeovers by kind and the handovers from each verdict.json.

`make soak` repeats one scenario (default `soak`: every context, hostile
takeovers, stuck owners, stress-ng load, traced) in fresh guests until
SOAK seconds have gone, each run judged like any other, and adds up
records, takeovers by kind, handovers and splats over the runs; the
totals go to RESULTS/soak-summary-TIME.json (next to the
runs' own soak-TIME directories).
"""

import datetime
import json
import os
import time
from pathlib import Path

from .common import HarnessError, say, setting, setting_int
from .verdict import format_table

FRAGMENTS = Path("tools/configs/checkers")

# checker kernel -> the fragments it adds to the variant (merge order)
CHECKERS = {
    "kasan+kmemleak": ("kasan.config", "kmemleak.config"),
    "kcsan": ("kcsan.config",),
}


# BOOT_TIMEOUT and GRACE for the checker kernels when not set
CHECKER_BOOT_TIMEOUT = 300
CHECKER_GRACE = 300


def fragments(name):
    """The fragment paths (relative to the repository) of a checker kernel."""
    if name not in CHECKERS:
        raise HarnessError(f"unknown checker kernel {name!r}; have: {', '.join(CHECKERS)}")
    return [str(FRAGMENTS / f) for f in CHECKERS[name]]


def counts(v):
    """What a run's verdict says about the load: records, takeovers by
    kind, handovers, splats ({} parts when the run has no analysis)."""
    c = (v.get("analysis") or {}).get("counts") or {}
    tk = c.get("takeovers") or {}
    ho = c.get("handovers") or {}
    return {
        "records": c.get("records", 0),
        "takeovers": {k: tk.get(k, 0) for k in ("direct", "handover", "hostile")},
        "hostile_by_prio": dict(tk.get("hostile_by_prio") or {}),
        "hostile_from_nmi": tk.get("hostile_from_nmi", 0),
        "hostile_while_unsafe": tk.get("hostile_while_unsafe", 0),
        "handovers": {k: ho.get(k, 0) for k in ("requests", "grants", "completed",
                                                "timeouts")},
        "splats": dict(v.get("splats") or {}),
        "analysed": bool(c),
    }


def add(total, one):
    """Add the counts of one run to a total (both from counts())."""
    for k in ("records", "hostile_from_nmi", "hostile_while_unsafe"):
        total[k] = total.get(k, 0) + one[k]
    for k in ("takeovers", "hostile_by_prio", "handovers", "splats"):
        d = total.setdefault(k, {})
        for kk, n in one[k].items():
            d[kk] = d.get(kk, 0) + n
    return total


def _kv(d):
    return ",".join(f"{k}={n}" for k, n in sorted(d.items())) or "0"


def describe(c):
    """Records, takeovers and handovers of counts() as table cells."""
    tk, ho = c["takeovers"], c["handovers"]
    prio = _kv(c["hostile_by_prio"]) if c["hostile_by_prio"] else "-"
    return (c["records"],
            f"direct {tk['direct']}, handover {tk['handover']}, hostile {tk['hostile']} "
            f"(by prio {prio}; from nmi {c['hostile_from_nmi']}, "
            f"unsafe {c['hostile_while_unsafe']})",
            f"requests {ho['requests']}, grants {ho['grants']}, "
            f"completed {ho['completed']}, timeouts {ho['timeouts']}")


HEAD = ("kernel", "scenario", "verdict", "splats", "records", "takeovers",
        "handovers", "results")


def row(kernel_name, v):
    c = counts(v)
    return (kernel_name, v["scenario"], v["verdict"], _kv(c["splats"])) + describe(c) \
        + (Path(v["results"]).name,)


class _Env:
    """Set environment variables (the settings) for a block, then restore."""

    def __init__(self, **values):
        self.values, self.old = values, {}

    def __enter__(self):
        for k, val in self.values.items():
            self.old[k] = os.environ.get(k)
            os.environ[k] = val

    def __exit__(self, *exc):
        for k, val in self.old.items():
            if val is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = val


def run_checkers(names=None, scenarios=None):
    """SCENARIO on each checker kernel (CHECKERS); the table of what each
    run found.  Returns 0 when every run passed, else 1."""
    from . import runner
    from .scenario import parse_list
    if setting("ARCH") != "x86_64":
        raise HarnessError("make checkers is x86_64 only: 6.1 has KASAN and KCSAN "
                           "on x86 for 64-bit only")
    names = (names or setting("CHECKERS")).split()
    for n in names:
        fragments(n)        # a typo fails before the first build
    todo = parse_list(scenarios or setting("SCENARIO"))
    user = setting("EXTRA_FRAGMENTS").split()
    rows, failed = [], 0
    # Instrumented kernels boot and run slower under TCG: more time before
    # a run counts as hung, unless the settings say otherwise.
    slow = dict(BOOT_TIMEOUT=setting("BOOT_TIMEOUT", str(CHECKER_BOOT_TIMEOUT)),
                GRACE=setting("GRACE", str(CHECKER_GRACE)))
    for name in names:
        with _Env(EXTRA_FRAGMENTS=" ".join(user + fragments(name)), **slow):
            for i, sc in enumerate(todo, 1):
                say(f"[checkers] {name}: {i}/{len(todo)} {sc}")
                v = runner.run_scenario(sc)
                failed += v["verdict"] != "pass"
                rows.append(row(name, v))
    say(format_table(HEAD, rows))
    say(f"[checkers] {len(rows) - failed} of {len(rows)} passed")
    return 1 if failed else 0


def soak(seconds=None, scenario=None):
    """Runs of `scenario` in fresh guests until `seconds` have gone (the
    last run starts before then), each judged on its own, and the totals.
    Returns 0 when every run passed, else 1."""
    from . import runner
    from .scenario import Scenario
    seconds = seconds if seconds is not None else setting_int("SOAK", lo=1)
    sc = Scenario.load(scenario or "soak")
    runner.build_all(sc)
    start, runs, rows, total = time.monotonic(), [], [], {}
    kname = runner.kernel.build_name(*runner.kernel_settings(sc))
    while time.monotonic() - start < seconds:
        left = seconds - (time.monotonic() - start)
        say(f"[soak] run {len(runs) + 1}: {sc.name} on {kname}, {left:.0f}s of "
            f"{seconds}s left")
        v = runner.run_scenario(sc.name, build=False)
        c = counts(v)
        add(total, c)
        runs.append({"results": v["results"], "verdict": v["verdict"],
                     "problems": v["problems"], **c})
        rows.append(row(kname, v))
    passed = sum(r["verdict"] == "pass" for r in runs)
    summary = {"scenario": sc.name, "kernel": kname, "seconds": seconds,
               "elapsed_s": round(time.monotonic() - start, 1), "runs": len(runs),
               "passed": passed, "verdict": "pass" if passed == len(runs) else "fail",
               "totals": total, "per_run": runs}
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    out = Path(setting("RESULTS")) / f"soak-summary-{stamp}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(summary, indent=1) + "\n")
    say(format_table(HEAD, rows))
    records, tk, ho = describe({**total, "analysed": True})
    say(f"[soak] {sc.name} on {kname}: {len(runs)} runs in {summary['elapsed_s']:.0f}s, "
        f"{passed} passed; verdict {summary['verdict'].upper()}")
    say(f"[soak] totals: records {records}; takeovers {tk}; handovers {ho}; "
        f"splats {_kv(total.get('splats', {}))}")
    say(f"[soak] summary: {out}")
    return 0 if summary["verdict"] == "pass" else 1
