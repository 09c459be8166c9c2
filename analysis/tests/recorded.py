"""The real stress run shipped in data/, copied where a test may change it.

data/stress-20261203-095925 keeps its serial log compressed
(console.log.xz); a copy has it as console.log, as a results directory
of a run has it.
"""

import lzma
import os
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))
RECORDED = os.path.join(HERE, "data", "stress-20261203-095925")


def copy_recorded(tmp_path, name="stress", files=("trace.dat", "printk.txt", "stats.txt"),
                  edit=None):
    """A results directory tmp_path/name holding `files` of the recorded
    run and its console.log; edit(lines) -> lines changes the log (a list
    of byte strings without line ends).  Returns the directory (a Path)."""
    d = tmp_path / name
    d.mkdir()
    for n in files:
        shutil.copy(os.path.join(RECORDED, n), d / n)
    with lzma.open(os.path.join(RECORDED, "console.log.xz")) as f:
        data = f.read()
    if edit is not None:
        lines = data.split(b"\n")
        tail = lines[-1] == b""
        lines = edit(lines[:-1] if tail else lines)
        data = b"\n".join(lines) + (b"\n" if tail else b"")
    (d / "console.log").write_bytes(data)
    return d
