"""`bench` subcommand: analysis speed on a (synthetic or real) run.

    python3 -m analysis bench [--events 1000000] [--dir RESULTS] [--keep]

Without --dir it generates a synthetic run (trace.txt + console.log) of
--events events.  It times `check` (trace read + all rules + serial) and
prints lines/s.  With a trace.dat in --dir it also times a bare
`trace-cmd report > /dev/null` and prints the ratio analysis/trace-cmd
(wall, and CPU as `ratio_cpu`), which is what `make bench` reports.
--reader picks the trace reader; --both-readers also times the text reader
(`trace-cmd report` parsed) on the same run for comparison.

--repeat N runs N rounds, each timing every reader and then trace-cmd
report, and reports medians (the ratios are of medians; `ratio_best` is
best against best) and every round: the machines are shared, and a single
pair of timings can be off by a third.  Each reader's `peak_rss_mb` is
that of one more check in a child process, run before the rounds
(trace-cmd included for the text reader), next to its ratio;
`trace_cmd_report_peak_rss_mb` that of the bare report."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

from .api import analyse
from .report_source import find_trace_cmd
from .traceparse import InputError


def _rss_mb():
    try:
        import resource
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    except Exception:
        return None


def _children_cpu():
    try:
        import resource
        r = resource.getrusage(resource.RUSAGE_CHILDREN)
        return r.ru_utime + r.ru_stime
    except Exception:
        return 0.0


def _median(xs):
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


def _time_analysis(d, reader, no_serial, order=None):
    """(verdict, wall s, CPU s) of one full check."""
    t = time.time()
    c = time.process_time()
    ch = _children_cpu()
    v, _ = analyse(d, no_serial=no_serial, reader=reader, order=order)
    wall = time.time() - t
    # the text reader's trace-cmd child counts as analysis CPU too
    return v, wall, time.process_time() - c + (_children_cpu() - ch)


def _time_report(exe, dat):
    """(wall s, CPU s) of a bare `trace-cmd report > /dev/null`."""
    t = time.time()
    ch = _children_cpu()
    subprocess.run([exe, "report", "-i", dat], stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, check=False)
    return time.time() - t, _children_cpu() - ch


def _run_peak_rss(cmd, cwd=None):
    """Run cmd (output discarded); its peak RSS in MB, its own children
    (the text reader's trace-cmd) included.  Linux counts the memory a
    child had before its exec() too, which is this process's: measure
    before this process has grown (before the timed rounds)."""
    p = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, _, ru = os.wait4(p.pid, 0)
    p.returncode = 0          # reaped here; keep Popen from waiting again
    return round(ru.ru_maxrss / 1024.0, 1)


def _peak_rss(d, reader, no_serial, order=None):
    """Peak RSS (MB) of one check of d in a child process: the rounds run
    in this process, whose peak is the largest of all of them."""
    cmd = [sys.executable, "-m", "analysis", "check", d, "-q"]
    if reader:
        cmd += ["--reader", reader]
    if no_serial:
        cmd.append("--no-serial")
    if order:
        cmd += ["--order", order]
    return _run_peak_rss(cmd, cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _ratio(a, b):
    return round(a / b, 2) if b else None


def _summary(v, walls, cpus, report):
    """The numbers of one reader: medians of the rounds, every round, and
    the ratios to trace-cmd report (medians; and best against best)."""
    lines = v["trace"]["lines"]
    wall, cpu = _median(walls), _median(cpus)
    r = {
        "reader": v["inputs"]["read_with"].split()[0],
        "lines": lines, "nobkl_events": v["trace"]["nobkl_events"],
        "verdict": v["verdict"], "analysis_s": round(wall, 3),
        "analysis_s_rounds": [round(x, 3) for x in walls],
        "lines_per_s": int(lines / wall) if wall > 0 else None,
        "analysis_cpu_s": round(cpu, 3),
        "lines_per_cpu_s": int(lines / cpu) if cpu > 0 else None,
    }
    if report:
        r["ratio_analysis_to_trace_cmd"] = _ratio(wall, _median(report[0]))
        r["ratio_best"] = _ratio(min(walls), min(report[0]))
        r["ratio_cpu"] = _ratio(cpu, _median(report[1]))
    return r


def main_bench(a):
    tmp = None
    d = a.dir
    # a synthetic run has no state words: judged by its clocks, so that
    # the whole analysis is timed, as for a run with the chain
    order = None
    if d is None:
        order = "timestamps"
        from .synth import generate
        tmp = d = tempfile.mkdtemp(prefix="analysis-bench-")
        t = time.time()
        generate(d, events=a.events, seed=a.seed)
        gen_s = time.time() - t
    else:
        gen_s = None
    try:
        readers = [a.reader] if a.reader else [None]
        if a.both_readers:
            readers = ["libtracecmd", "text"]
        dat = os.path.join(d, "trace.dat")
        exe = None
        res = {"dir": d, "rounds": a.repeat}
        if os.path.exists(dat):
            try:
                exe = find_trace_cmd(a.trace_cmd)
            except InputError as e:
                res["trace_cmd_report_s"] = str(e)
        # Rounds interleave every reader with trace-cmd report, so a
        # change of the (shared) machine's load hits all of them alike.
        runs = {i: ([], [], None) for i in range(len(readers))}
        report = ([], []) if exe else None
        rss = [_peak_rss(d, reader, a.no_serial, order) for reader in readers]
        report_rss = _run_peak_rss([exe, "report", "-i", dat]) if exe else None
        for _ in range(max(1, a.repeat)):
            for i, reader in enumerate(readers):
                v, wall, cpu = _time_analysis(d, reader, a.no_serial, order)
                runs[i][0].append(wall)
                runs[i][1].append(cpu)
                runs[i] = (runs[i][0], runs[i][1], v)
            if exe:
                wall, cpu = _time_report(exe, dat)
                report[0].append(wall)
                report[1].append(cpu)
        for i, reader in enumerate(readers):
            walls, cpus, v = runs[i]
            r = _summary(v, walls, cpus, report)
            r["peak_rss_mb"] = rss[i]
            if i == 0:
                res.update(r)
            else:
                res["with_%s_reader" % reader] = r
        res["max_rss_mb"] = _rss_mb()
        res["generate_s"] = round(gen_s, 3) if gen_s else None
        if report:
            res["trace_cmd_report_s"] = round(_median(report[0]), 3)
            res["trace_cmd_report_s_rounds"] = [round(x, 3) for x in report[0]]
            res["trace_cmd_report_cpu_s"] = round(_median(report[1]), 3)
            res["trace_cmd_report_peak_rss_mb"] = report_rss
        print(json.dumps(res, indent=1))
        return 0
    finally:
        if tmp and not a.keep:
            shutil.rmtree(tmp, ignore_errors=True)
