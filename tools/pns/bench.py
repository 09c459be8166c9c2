"""make bench: analysis speed on a real trace, as a ratio to trace-cmd report.

A long printk_stress run (scenario bench-trace) produces a large trace.dat:
the requirement is measured on over a million events, so the bench runs it
for DURATION_S seconds unless DURATION says otherwise (the scenario's own
40 s give only about 210 000 records; 200 s gave 1.9 million on the shared
2-CPU VM).  `python3 -m analysis bench --both-readers` then times the full
check with the libtracecmd reader and with the text reader against a bare
`trace-cmd report` of the same trace, in the same run, REPEAT rounds
interleaved, so the ratio (of the medians) means something on a shared,
noisy machine.
"""

import os
import subprocess
import sys

from . import runner
from .common import REPO, HarnessError, say

DURATION_S = 200
MIN_RECORDS = 1000000
# The guest records into its tmpfs: trace-cmd's per-CPU files of a 200 s
# run on a quiet host did not fit next to the 128 MB of trace buffers in
# 1 GB (trace-cmd died, no trace.dat), so the bench guest gets more.
MEM_MB = 3072
# rounds of timings (the machine is shared: one pair can be off by a third)
REPEAT = 3


def bench():
    res = runner.new_results_dir("bench")
    if not os.environ.get("MEM"):      # make passes MEM, empty when unset
        os.environ["MEM"] = str(MEM_MB)
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
