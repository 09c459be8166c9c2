"""make bench: analysis speed on a real trace, as a ratio to trace-cmd report.

A long printk_stress run (scenario bench-trace) produces a trace.dat of
over a million events; `python3 -m analysis bench` then times the full
check against a bare `trace-cmd report` of the same trace, in the same
run, so the ratio means something on a shared, noisy machine.
"""

import subprocess
import sys

from . import runner
from .common import REPO, HarnessError, say


def bench():
    res = runner.new_results_dir("bench")
    verdict = runner.run_scenario("bench-trace", results=res)
    if not (res / "trace.dat").exists():
        raise HarnessError(f"the bench run left no trace.dat in {res}")
    if verdict["verdict"] != "pass":
        say("[bench] note: the bench run's verdict is not pass; timing it anyway")
    say(f"[bench] timing the analysis on {res / 'trace.dat'}")
    with open(res / "bench.txt", "w") as out:
        proc = subprocess.run([sys.executable, "-m", "analysis", "bench", "--dir", str(res)],
                              cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True)
        out.write(proc.stdout)
    sys.stdout.write(proc.stdout)
    say(f"[bench] results: {res / 'bench.txt'}")
    return proc.returncode
