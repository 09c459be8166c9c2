"""make bench: the console benchmark of the RFC's claim, then the
analysis speed.

Console benchmark (BENCH=console): the same workload (bench_console_load in
workloads/lib/common.sh), kernel and emulated UART timing (the bench
scenarios' 115200 baud, or BAUD) with the NOBKL console, with the same UART as
a legacy console (CONSOLE=legacy: console=ttyS0 without the NOBKL
earlycon), and with the records below the console loglevel (the floor),
ROUNDS rounds of the three interleaved (nobkl, legacy, floor, nobkl, ...:
a host whose load drifts hits every mode alike), each run in
results/bench-console-TIME/<mode>-<round>/; analysis/consolebench.py turns
what the runs left into the comparison (ratios within a round, the median
and range of each figure and ratio over the rounds): bench.md, bench.json,
latency-cdf.png and emergency-bound.png in results/bench-console-TIME/.

Analysis speed (BENCH=analysis): a long printk_stress run (scenario
bench-trace) produces a large trace.dat: the requirement is measured on
over a million events, so the bench runs it for DURATION_S seconds unless
DURATION says otherwise (the scenario's own 40 s give only about 210 000
records; 200 s gave 1.9 million on the shared 2-CPU VM).  `python3 -m
analysis bench --both-readers` then times the full check with the
libtracecmd reader and with the text reader against a bare `trace-cmd
report` of the same trace, in the same run, REPEAT rounds interleaved, so
the ratio (of the medians) means something on a shared, noisy machine.
"""

import json
import os
import platform
import subprocess
import sys

from . import runner
from .common import REPO, HarnessError, say, setting, setting_int, settings_env
from .scenario import Scenario, byte_time_ns

DURATION_S = 200
MIN_RECORDS = 1000000
# The guest records into its tmpfs: trace-cmd's per-CPU files of a 200 s
# run on a quiet host did not fit next to the 128 MB of trace buffers in
# 1 GB (trace-cmd died, no trace.dat), so the bench guest gets more.
MEM_MB = 3072
# After the run the guest writes and copies its trace.dat (about 1 GB
# for 200 s on a quiet host): the 60 s the other scenarios are allowed
# for that cut a bench's copy short, which a killed guest leaves truncated.
GRACE_S = 900
# rounds of timings (the machine is shared: one pair can be off by a third)
REPEAT = 3


def bench():
    """The benchmarks BENCH names (all, console or analysis)."""
    what = setting("BENCH")
    if what not in ("all", "console", "analysis"):
        raise HarnessError(f"BENCH={what}: use all, console or analysis")
    rc = 0
    if what in ("all", "console"):
        rc |= console_bench()
    if what in ("all", "analysis"):
        rc |= analysis_bench()
    return rc


# mode -> (scenario, settings that differ)
CONSOLE_MODES = {
    "nobkl": ("bench-console", {"CONSOLE": "nobkl"}),
    "legacy": ("bench-console", {"CONSOLE": "legacy"}),
    "floor": ("bench-floor", {"CONSOLE": "nobkl"}),
}


def machine():
    """The machine in one line: CPU model, CPUs, load when the bench began."""
    model = "?"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    load = ", ".join("%.1f" % x for x in os.getloadavg())
    return (f"{platform.node()}: {model}, {os.cpu_count()} CPUs, host load {load}; "
            f"guests under QEMU TCG, {setting('CPUS', '4')} vCPUs")


def uart_line():
    """The emulated line of the console bench, in words."""
    baud = runner.line_baud(Scenario.load(CONSOLE_MODES["nobkl"][0]))
    if not baud:
        return "instant (no byte time)"
    return (f"{baud} baud emulated: byte_delay_ns={byte_time_ns(baud)} "
            f"on the path that prints")


def console_bench():
    """ROUNDS rounds of the three console modes on one workload, the modes
    interleaved; the comparison report."""
    from analysis import consolebench
    rounds = setting_int("ROUNDS", lo=1)
    duration = int(setting("DURATION", str(Scenario.load(CONSOLE_MODES["nobkl"][0]).duration)))
    root = runner.new_results_dir("bench-console")
    say(f"[bench] console: {rounds} rounds of {', '.join(CONSOLE_MODES)}, {duration} s each")
    for r in range(1, rounds + 1):
        for mode, (scenario, env) in CONSOLE_MODES.items():
            say(f"[bench] round {r}/{rounds}, console mode {mode}: scenario {scenario}")
            with settings_env(env):
                runner.run_scenario(scenario, results=root / f"{mode}-{r}")
    try:
        src = json.loads((root / f"{next(iter(CONSOLE_MODES))}-1" / "source.json").read_text())
    except (OSError, ValueError):
        src = {}
    meta = {"title": "NOBKL console against the legacy console and no console",
            "command": "make bench BENCH=console" + "".join(
                f" {k}={setting(k)}" for k in ("DURATION", "ROUNDS") if os.environ.get(k)),
            "machine": machine(),
            "kernel": f"Linux {src.get('linux_source', '?')} + "
                      f"patches/{src.get('target', '6.1')}/ ({src.get('build')})",
            "uart": uart_line(),
            "workload": "printk_stress, task + hardirq + NMI + emergency sections from "
                        "tasks, 20 records/s each on 4 CPUs, 16-byte payloads: about 2/3 "
                        "of the UART's rate (bench_console_load)",
            "duration_s": duration}
    try:
        report, runs, pictures = consolebench.report(str(root), meta)
    except consolebench.RunFilesError as e:
        raise HarnessError(f"the console benchmark's report: {e}") from None
    sys.stdout.write(report)
    say(f"[bench] results: {root / 'bench.md'}, bench.json"
        + ("".join(", " + p for p in pictures) if pictures
           else " (no pictures: matplotlib missing)"))
    verdicts = {f"{m}-{r['round']}": v for r in runs for m, v in r["verdicts"].items()}
    bad = [name for name, v in verdicts.items() if v["verdict"] != "pass"]
    if bad:
        say(f"[bench] note: runs not clean: {', '.join(bad)} (see their verdict.json); "
            f"the figures are reported anyway")
    summary = consolebench.summarize(runs)
    if summary["low_samples"]:
        say(f"[bench] note: fewer than {consolebench.MIN_SAMPLES} calls in "
            + ", ".join("%s %s-%d (%d)" % x for x in summary["low_samples"])
            + "; a longer DURATION gives more")
    got = sum(len(r["modes"]) for r in runs)
    return 0 if got == rounds * len(CONSOLE_MODES) else 1


def analysis_bench():
    res = runner.new_results_dir("bench")
    if not os.environ.get("MEM"):      # make passes MEM, empty when unset
        os.environ["MEM"] = str(MEM_MB)
    if not os.environ.get("GRACE"):
        os.environ["GRACE"] = str(GRACE_S)
    verdict = runner.run_scenario("bench-trace", results=res, duration=DURATION_S)
    if not (res / "trace.dat").exists():
        raise HarnessError(f"the bench run left no trace.dat in {res}")
    if verdict["verdict"] != "pass":
        say("[bench] note: the bench run's verdict is not pass; timing it anyway")
    say(f"[bench] timing the analysis on {res / 'trace.dat'}")
    with open(res / "bench.txt", "w") as out:
        proc = subprocess.run([sys.executable, "-m", "analysis", "bench", "--dir", str(res),
                               "--both-readers", "--repeat", str(REPEAT)],
                              cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True)
        out.write(proc.stdout)
    sys.stdout.write(proc.stdout)
    lines = ((verdict.get("analysis") or {}).get("trace") or {}).get("lines") or 0
    if lines < MIN_RECORDS:
        # the record rate depends on how loaded the host is
        say(f"[bench] note: the trace has only {lines} records (< {MIN_RECORDS}); "
            f"a longer run (make bench DURATION=400) gives more")
    say(f"[bench] results: {res / 'bench.txt'}")
    return proc.returncode
