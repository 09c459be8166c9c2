"""`bench` subcommand: analysis speed on a (synthetic or real) run.

    python3 -m analysis bench [--events 1000000] [--dir RESULTS] [--keep]

Without --dir it generates a synthetic run (trace.txt + console.log) of
--events events.  It times `check` (trace read + all rules + serial) and
prints lines/s.  With a trace.dat in --dir it also times a bare
`trace-cmd report > /dev/null` and prints the ratio analysis/trace-cmd,
which is what `make bench` reports."""

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
        t = time.time()
        c = time.process_time()
        v, _ = analyse(d, no_serial=a.no_serial)
        ana_s = time.time() - t
        cpu_s = time.process_time() - c
        lines = v["trace"]["lines"]
        res = {
            "dir": d, "lines": lines, "nobkl_events": v["trace"]["nobkl_events"],
            "verdict": v["verdict"], "analysis_s": round(ana_s, 3),
            "lines_per_s": int(lines / ana_s) if ana_s > 0 else None,
            "analysis_cpu_s": round(cpu_s, 3),
            "lines_per_cpu_s": int(lines / cpu_s) if cpu_s > 0 else None,
            "max_rss_mb": _rss_mb(), "generate_s": round(gen_s, 3) if gen_s else None,
        }
        dat = os.path.join(d, "trace.dat")
        if os.path.exists(dat):
            try:
                exe = find_trace_cmd(a.trace_cmd)
                t = time.time()
                subprocess.run([exe, "report", "-i", dat], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, check=False)
                tc_s = time.time() - t
                res["trace_cmd_report_s"] = round(tc_s, 3)
                res["ratio_analysis_to_trace_cmd"] = round(ana_s / tc_s, 2) if tc_s else None
            except InputError as e:
                res["trace_cmd_report_s"] = str(e)
        print(json.dumps(res, indent=1))
        return 0
    finally:
        if tmp and not a.keep:
            shutil.rmtree(tmp, ignore_errors=True)
