"""A run that ends in a real panic (the panic-end scenario, recorded on
x86_64): the trace was copied out before the panic, so the records the
console had not printed when it ended (439 of 447) must follow on the
serial log; the panic printed 387 of them (the atomic `A` stressor
lines: before the panic only the printer thread printed).  The analysis
passes the run as it is and reports exactly the records taken out of
its log."""

import lzma
import os

import pytest

from analysis.tests.verdicts import check_results
from analysis.tests.verdicts import violation_counts

HERE = os.path.dirname(os.path.abspath(__file__))
RECORDED = os.path.join(HERE, "data", "panic-end-20261204-165730")
PSTRESS = "pstress v=2 "


@pytest.fixture
def run_dir(tmp_path):
    for name in ("trace.txt", "console.log"):
        with lzma.open(os.path.join(RECORDED, name + ".xz")) as f:
            (tmp_path / name).write_bytes(f.read())
    for name in ("stats.txt", "printk.txt"):
        with open(os.path.join(RECORDED, name), "rb") as f:
            (tmp_path / name).write_bytes(f.read())
    return tmp_path


def log_lines(d):
    return (d / "console.log").read_text(errors="replace").splitlines()


def by_panic(lines):
    return {ln for ln in lines if ln.startswith("A") and PSTRESS in ln}


def with_log(d, lines):
    (d / "cut.log").write_text("\n".join(lines) + "\n")
    return check_results(str(d), serial=str(d / "cut.log"))


def test_the_recorded_run_passes_and_the_panic_printed_the_backlog(run_dir):
    v = check_results(str(run_dir))
    assert v["verdict"] == "pass", v["reasons"]
    pending = v["consoles"]["ttyS0"]["stored_not_committed_at_end"]
    assert pending == 439 and v["serial"]["post_trace_matched"] == pending
    assert len(by_panic(log_lines(run_dir))) == 387


def test_without_what_the_panic_printed_each_record_is_missing(run_dir):
    lines = log_lines(run_dir)
    panic = by_panic(lines)
    v = with_log(run_dir, [ln for ln in lines if ln not in panic])
    assert v["verdict"] == "fail" and violation_counts(v) == {"serial-missing": len(panic)}


def test_a_guest_that_died_before_the_panic_flush(run_dir):
    """The log ends where the panic began to print: every record stored
    in the trace and not printed by then is missing (the stressor's 387
    and one kernel record)."""
    lines = log_lines(run_dir)
    panic = by_panic(lines)
    first = next(i for i, ln in enumerate(lines) if ln in panic)
    v = with_log(run_dir, lines[:first])
    assert violation_counts(v) == {"serial-missing": len(panic) + 1}


def test_one_record_of_the_panic_missing(run_dir):
    lines = log_lines(run_dir)
    middle = sorted(by_panic(lines), key=lines.index)[200]
    v = with_log(run_dir, [ln for ln in lines if ln != middle])
    assert violation_counts(v) == {"serial-missing": 1}
    assert PSTRESS + middle.split(PSTRESS, 1)[1][:40] in v["violations"][0]["message"]
