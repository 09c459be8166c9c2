"""`bench` subcommand: analysis speed on a (synthetic or real) run.

    python3 -m analysis bench [--events 1000000] [--dir RESULTS] [--keep]

Without --dir it generates a synthetic run (trace.txt + console.log) of
--events events.  It times `check` (trace read + all rules + serial) and
prints lines/s.  With a trace.dat in --dir it also times a bare
`trace-cmd report > /dev/null` and prints the ratio analysis/trace-cmd
(wall, and CPU as `ratio_cpu`), which is what `make bench` reports.
--reader picks the trace reader; --both-readers also times the text reader
(`trace-cmd report` parsed) on the same run for comparison."""

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
        res = {"dir": d}
        for i, reader in enumerate(readers):
            t = time.time()
            c = time.process_time()
            ch = _children_cpu()
            v, _ = analyse(d, no_serial=a.no_serial, reader=reader)
            ana_s = time.time() - t
            # the text reader's trace-cmd child counts as analysis CPU too
            cpu_s = time.process_time() - c + (_children_cpu() - ch)
            lines = v["trace"]["lines"]
            r = {
                "reader": v["inputs"]["read_with"].split()[0],
                "lines": lines, "nobkl_events": v["trace"]["nobkl_events"],
                "verdict": v["verdict"], "analysis_s": round(ana_s, 3),
                "lines_per_s": int(lines / ana_s) if ana_s > 0 else None,
                "analysis_cpu_s": round(cpu_s, 3),
                "lines_per_cpu_s": int(lines / cpu_s) if cpu_s > 0 else None,
            }
            if i == 0:
                res.update(r)
            else:
                res["with_%s_reader" % reader] = r
        res["max_rss_mb"] = _rss_mb()
        res["generate_s"] = round(gen_s, 3) if gen_s else None
        dat = os.path.join(d, "trace.dat")
        if os.path.exists(dat):
            try:
                exe = find_trace_cmd(a.trace_cmd)
                t = time.time()
                ch = _children_cpu()
                subprocess.run([exe, "report", "-i", dat], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, check=False)
                tc_s = time.time() - t
                tc_cpu = _children_cpu() - ch
                res["trace_cmd_report_s"] = round(tc_s, 3)
                res["trace_cmd_report_cpu_s"] = round(tc_cpu, 3)
                res["ratio_analysis_to_trace_cmd"] = round(res["analysis_s"] / tc_s, 2) \
                    if tc_s else None
                res["ratio_cpu"] = round(res["analysis_cpu_s"] / tc_cpu, 2) if tc_cpu else None
                for k, r in list(res.items()):
                    if k.startswith("with_") and tc_s:
                        r["ratio_analysis_to_trace_cmd"] = round(r["analysis_s"] / tc_s, 2)
                        r["ratio_cpu"] = round(r["analysis_cpu_s"] / tc_cpu, 2) if tc_cpu \
                            else None
            except InputError as e:
                res["trace_cmd_report_s"] = str(e)
        print(json.dumps(res, indent=1))
        return 0
    finally:
        if tmp and not a.keep:
            shutil.rmtree(tmp, ignore_errors=True)
