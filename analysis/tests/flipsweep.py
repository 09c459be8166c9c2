"""Random single-bit flips in a results directory's trace.dat, each
judged by the analysis with both readers (docs/analysis.md, "Single
flipped bits").

    /usr/bin/python3 -m analysis.tests.flipsweep RESULTS_DIR OUT.jsonl [N] [SEED]

Flips N bits (default 200, seed 20261204), one at a time, at offsets
drawn uniformly from the per-CPU data of RESULTS_DIR/trace.dat (a
version 7 file, compressed or not), runs `python3 -m analysis check`
on each copy with --reader libtracecmd and --reader text, writes one
JSON line per flip (offset, bit, each reader's exit code, violated
rules, reasons) and prints the count of each pair of exit codes.  The
analysis run is the one of the current directory (run it from the
repository root, or from a copy of another version)."""

import collections
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile

from analysis.tests import mutations as mu
from analysis.tests.verdicts import CLOCKS_ARGS


def flips(dat, n, seed):
    """[(offset, bit)] of n flips in the per-CPU data."""
    areas = mu.Run([], "\n", [], dat, "", "").cpu_data()
    total = sum(s for _, _, s in areas)
    rnd = random.Random(seed)
    out = []
    for _ in range(n):
        x = rnd.randrange(total)
        for _, off, size in areas:
            if x < size:
                out.append((off + x, rnd.randrange(8)))
                break
            x -= size
    return out


def judge(d, reader):
    out = os.path.join(d, "verdict-%s.json" % reader)
    if os.path.exists(out):
        os.unlink(out)
    p = subprocess.run([sys.executable, "-m", "analysis", "check", d, "--reader", reader, "-q", *CLOCKS_ARGS,
                        "-o", out], capture_output=True, text=True)
    v = {}
    if os.path.exists(out):
        with open(out) as f:
            v = json.load(f)
    return {"rc": p.returncode,
            "rules": sorted(k for k, c in v.get("violations_by_rule", {}).items() if c),
            "why": "; ".join(v.get("reasons", []))[:300]}


def main(argv):
    src, out = argv[0], argv[1]
    n = int(argv[2]) if len(argv) > 2 else 200
    seed = int(argv[3]) if len(argv) > 3 else 20261204
    with open(os.path.join(src, "trace.dat"), "rb") as f:
        dat = f.read()
    d = tempfile.mkdtemp(prefix="flipsweep-")
    try:
        for name in os.listdir(src):
            if name != "trace.dat" and os.path.isfile(os.path.join(src, name)):
                shutil.copy(os.path.join(src, name), d)
        pairs = collections.Counter()
        with open(out, "w") as f:
            for i, (pos, bit) in enumerate(flips(dat, n, seed)):
                with open(os.path.join(d, "trace.dat"), "wb") as t:
                    t.write(mu.flip(dat, pos, bit))
                res = {"i": i, "pos": pos, "bit": bit,
                       "libtracecmd": judge(d, "libtracecmd"), "text": judge(d, "text")}
                pairs[(res["libtracecmd"]["rc"], res["text"]["rc"])] += 1
                f.write(json.dumps(res) + "\n")
                f.flush()
    finally:
        shutil.rmtree(d)
    for (a, b), c in sorted(pairs.items()):
        print("libtracecmd exit %d, text exit %d: %d" % (a, b, c))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
