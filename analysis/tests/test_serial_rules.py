"""The serial-log rules on hand-written traces and on the recorded real
run (data/stress-20261203-095925) with its console.log changed the way a
faulty kernel would print it.  Each test asserts the exact set of rules
violated and the counter that shows which check ran."""

import lzma
import os
import shutil

from analysis import check_results
from analysis.tests.tracebuilder import Trace, pstress

HERE = os.path.dirname(os.path.abspath(__file__))
RECORDED = os.path.join(HERE, "data", "stress-20261203-095925")


def run(tmp_path, t, **kw):
    return check_results(t.write(tmp_path / "res"), **kw)


def violated(v):
    return {k for k, n in v["violations_by_rule"].items() if n}


def recorded_run(tmp_path, edit=None, name="rec"):
    """A copy of the recorded run; edit(lines) -> lines changes its
    console.log (a list of byte strings without line ends)."""
    d = tmp_path / name
    d.mkdir()
    for n in ("trace.dat", "printk.txt", "stats.txt"):
        shutil.copy(os.path.join(RECORDED, n), d / n)
    with lzma.open(os.path.join(RECORDED, "console.log.xz")) as f:
        data = f.read()
    if edit is not None:
        lines = data.split(b"\n")
        tail = lines[-1] == b""
        lines = edit(lines[:-1] if tail else lines)
        data = b"\n".join(lines) + (b"\n" if tail else b"")
    (d / "console.log").write_bytes(data)
    return str(d)


def index_of(lines, text):
    """Index of the only line that contains text."""
    hits = [i for i, ln in enumerate(lines) if text.encode() in ln]
    assert len(hits) == 1, (text, hits)
    return hits[0]


def test_recorded_run_passes(tmp_path):
    v = check_results(recorded_run(tmp_path))
    assert v["verdict"] == "pass", v["reasons"]
    assert v["serial"]["matched"] == 3389


# ------------------------------------------------------------ dropped notices

def _dropped_trace(notice=3, dropped=3):
    """Three records overwritten; the next one is emitted with dropped=3
    and printed after a notice of `notice` (None: no notice)."""
    t = Trace()
    T = t.ctx(0, thread=1)
    s = [t.store(pstress(1, "task", n, "p%d" % n)) for n in range(6)]
    t.acquire(T)
    t.print_rec(T, s[0])
    t.emit(T, s[4], dropped=dropped, serial=False)
    if notice is not None:
        t.serial.append("T** %d printk messages dropped **" % notice)
    t.line(s[4], "T")
    t.commit(T, s[4])
    t.print_rec(T, s[5])
    t.release(T)
    return t, s


def test_dropped_notice_right_count_passes(tmp_path):
    t, _ = _dropped_trace()
    v = run(tmp_path, t)
    assert v["verdict"] == "pass", v["violations"]
    assert v["serial"]["dropped_notices_checked"] == 1
    assert v["consoles"]["ttyS0"]["dropped_records"] == 3


def test_dropped_notice_missing(tmp_path):
    t, s = _dropped_trace(notice=None)
    v = run(tmp_path, t)
    assert violated(v) == {"serial-dropped"}
    assert v["violations_by_rule"]["serial-dropped"] == 1
    assert v["violations"][0]["seq"] == s[4]


def test_dropped_notice_wrong_count(tmp_path):
    t, s = _dropped_trace(notice=2)
    v = run(tmp_path, t)
    assert violated(v) == {"serial-dropped"}
    assert v["violations_by_rule"]["serial-dropped"] == 1
    assert v["serial"]["dropped_notices_checked"] == 0


def test_dropped_notice_spurious(tmp_path):
    t = Trace()
    T = t.ctx(0, thread=1)
    s = [t.store(pstress(1, "task", n, "p%d" % n)) for n in range(3)]
    t.acquire(T)
    t.print_rec(T, s[0])
    t.serial.append("T** 5 printk messages dropped **")
    t.print_rec(T, s[1])
    t.print_rec(T, s[2])
    t.release(T)
    v = run(tmp_path, t)
    assert violated(v) == {"serial-dropped"}
    assert v["violations_by_rule"]["serial-dropped"] == 1
    assert v["violations"][0]["seq"] == s[1]


def test_dropped_notice_of_interrupted_attempt_and_reprint(tmp_path):
    """Both the interrupted attempt and the reprint print the notice
    (the dropped count is the distance to the committed seq)."""
    t = Trace()
    T = t.ctx(0, thread=1)
    N = t.ctx(0, prio="emergency", ctx="nmi")
    s = [t.store(pstress(1, "task", n, "payload%d" % n)) for n in range(5)]
    t.acquire(T)
    t.print_rec(T, s[0])
    t.emit(T, s[3], dropped=2)          # prints its notice
    t.partial(s[3], 0.4, "T")
    t.acquire(N, "hostile", prev=T)
    t.print_rec(N, s[3], dropped=2)     # the reprint: notice again
    t.print_rec(N, s[4])
    t.release(N)
    t.lost(T, "exit_unsafe")
    v = run(tmp_path, t)
    assert v["verdict"] == "pass", v["violations"]
    assert v["serial"]["dropped_notices_checked"] == 2
    assert v["serial"]["dropped_lines"] == 2


def test_dropped_notice_of_interrupted_attempt_wrong_count(tmp_path):
    t = Trace()
    T = t.ctx(0, thread=1)
    N = t.ctx(0, prio="emergency", ctx="nmi")
    s = [t.store(pstress(1, "task", n, "payload%d" % n)) for n in range(5)]
    t.acquire(T)
    t.print_rec(T, s[0])
    t.emit(T, s[3], dropped=2, serial=False)
    t.serial.append("T** 7 printk messages dropped **")
    t.partial(s[3], 0.4, "T")
    t.acquire(N, "hostile", prev=T)
    t.print_rec(N, s[3], dropped=2)
    t.print_rec(N, s[4])
    t.release(N)
    t.lost(T, "exit_unsafe")
    v = run(tmp_path, t)
    assert violated(v) == {"serial-dropped"}
    assert v["violations_by_rule"]["serial-dropped"] == 1


def test_recorded_run_spurious_dropped_notice(tmp_path):
    def edit(lines):
        i = index_of(lines, "c=3 x=task n=100 ")
        return lines[:i] + [b"A** 4 printk messages dropped **"] + lines[i:]
    v = check_results(recorded_run(tmp_path, edit))
    assert violated(v) == {"serial-dropped"}
    assert v["violations_by_rule"]["serial-dropped"] == 1
    assert v["serial"]["dropped_lines"] == 1
