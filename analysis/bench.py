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
pair of timings can be off by a third."""

import json
import os
import shutil
import subprocess
import tempfile
import time

from .api import analyse
from .traceparse import find_trace_cmd, InputError


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


def _time_analysis(d, reader, no_serial):
    """(verdict, wall s, CPU s) of one full check."""
    t = time.time()
    c = time.process_time()
    ch = _children_cpu()
    v, _ = analyse(d, no_serial=no_serial, reader=reader)
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
    if d is None:
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
        for _ in range(max(1, a.repeat)):
            for i, reader in enumerate(readers):
                v, wall, cpu = _time_analysis(d, reader, a.no_serial)
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
        print(json.dumps(res, indent=1))
        return 0
    finally:
        if tmp and not a.keep:
            shutil.rmtree(tmp, ignore_errors=True)
