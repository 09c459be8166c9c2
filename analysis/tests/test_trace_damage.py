"""Damaged trace input is `incomplete` (exit 2), never a kernel violation,
and a trace that is complete but starts in the middle of an emission is
not a violation either.

Every case edits the recorded real run in data/ (the report text of its
trace.dat, or one bit of the file) and derives what must come out from
that edit."""

import io
import os
import re
import shutil
import subprocess

import pytest

from analysis import tracedat
from analysis.tests.verdicts import check_results
from analysis.tests.recorded import RECORDED, copy_recorded
from analysis.tests.verdicts import violated, violation_counts


needs_trace_cmd = pytest.mark.skipif(shutil.which("trace-cmd") is None,
                                     reason="trace-cmd not installed")
needs_lib = pytest.mark.skipif(not tracedat.available(), reason="libtracecmd reader not built")


def run_dir(tmp_path, name="run"):
    return copy_recorded(tmp_path, name, files=("printk.txt", "stats.txt"))


def report_lines():
    out = subprocess.run(["trace-cmd", "report", "-i", os.path.join(RECORDED, "trace.dat")],
                         capture_output=True, check=True).stdout.decode("latin-1")
    return io.StringIO(out, newline="").readlines()


def with_report(tmp_path, lines, name="run"):
    d = run_dir(tmp_path, name)
    (d / "trace.txt").write_text("".join(lines), encoding="latin-1", newline="")
    return d


TRACE_RULES = {"no-loss", "dropped-count", "duplicate", "one-owner", "after-loss",
               "takeover-prio", "panic-protect", "handover-target", "thread-takeover"}


def index_of(lines, pattern):
    rx = re.compile(pattern)
    return next(i for i, ln in enumerate(lines) if rx.search(ln))


@pytest.fixture(scope="module")
def report():
    if shutil.which("trace-cmd") is None:
        pytest.skip("trace-cmd not installed")
    return report_lines()


def test_unedited_report_passes(tmp_path, report):
    v = check_results(with_report(tmp_path, report))
    assert v["verdict"] == "pass" and v["exit_code"] == 0
    assert v["trace"]["missing_stores"] == 0


def test_store_missing_between_stored_neighbours_is_incomplete(tmp_path, report):
    i = index_of(report, r"nobkl_store: +seq=1000 ")
    lines = report[:i] + report[i + 1:]
    v = check_results(with_report(tmp_path, lines))
    assert v["exit_code"] == 2 and v["verdict"] == "incomplete"
    assert v["trace"]["missing_stores"] == 1
    assert v["trace"]["missing_store_seqs"] == [1000]
    assert any("missing between records stored in the trace (seq 1000)" in r
               for r in v["reasons"]), v["reasons"]
    assert violation_counts(v) == {}


def test_stores_before_the_trace_began_are_not_missing(tmp_path, report):
    # cut the report after the first 400 stores, at a direct acquire with
    # a timestamp of its own (no tie group cut in half): the records
    # stored before are below every seq stored in the trace, no hole
    i = [n for n, ln in enumerate(report) if "nobkl_store:" in ln][400]
    ts = [re.search(r" (\d+\.\d+):", ln).group(1) for ln in report[1:]]
    j = next(n for n in range(i, len(report) - 1)
             if re.search(r"nobkl_acquire:.*how=direct", report[n]) and
             ts[n - 1] not in (ts[n - 2], ts[n]))
    v = check_results(with_report(tmp_path, report[:1] + report[j:]), no_serial=True)
    assert v["trace"]["missing_stores"] == 0
    assert v["verdict"] == "pass", [x["message"] for x in v["violations"]][:3]


def test_trace_starting_between_emit_and_commit_passes(tmp_path, report):
    # the first emission's nobkl_emit (and all before it) cut off: the
    # trace begins while the printer thread owns the console and is
    # writing seq 263
    i = index_of(report, r"nobkl_emit: .* seq=263 ")
    assert "nobkl_commit" in report[i + 1] and "seq=263 " in report[i + 1]
    v = check_results(with_report(tmp_path, report[:1] + report[i + 1:]))
    assert violation_counts(v) == {}
    assert v["verdict"] == "pass" and v["exit_code"] == 0
    assert v["counts"]["commits_of_pretrace_emission"] == 1


def test_a_number_replaced_by_garbage_is_incomplete(tmp_path, report):
    i = index_of(report, r"nobkl_emit: .* seq=1000 ")
    lines = list(report)
    lines[i] = lines[i].replace(" seq=1000 ", " seq=1x00 ")
    v = check_results(with_report(tmp_path, lines))
    assert v["exit_code"] == 2 and v["verdict"] == "incomplete"
    assert v["trace"]["bad_field_events"] == 1
    assert v["trace"]["complete"] is False


def test_a_garbage_timestamp_is_incomplete(tmp_path, report):
    i = index_of(report, r"nobkl_emit: .* seq=1000 ")
    lines = list(report)
    lines[i] = re.sub(r"(\d+)\.(\d+):", r"\1.x\2:", lines[i], count=1)
    v = check_results(with_report(tmp_path, lines))
    assert v["exit_code"] == 2 and v["verdict"] == "incomplete"
    assert v["trace"]["malformed_lines"] == 1


# One flipped bit in a compressed data chunk of CPU 0: libtracecmd (and
# `trace-cmd report` with it) stopped reading CPU 0 at 23.134750, ten
# seconds before its last record, and both readers blamed the kernel
# (no-loss).  The chunk no longer decompresses to the size the file's
# chunk table gives it: the file is found damaged before it is read.
FLIP_OFFSET, FLIP_BIT = 462698, 7


def flipped(src, offset, bit, dst):
    data = bytearray(open(src, "rb").read())
    data[offset] ^= 1 << bit
    with open(dst, "wb") as f:
        f.write(bytes(data))


def readers():
    return [pytest.param("libtracecmd", marks=needs_lib),
            pytest.param("text", marks=needs_trace_cmd)]


@pytest.mark.parametrize("reader", readers())
def test_a_chunk_that_does_not_decompress_is_unusable(tmp_path, reader):
    d = run_dir(tmp_path)
    flipped(os.path.join(RECORDED, "trace.dat"), FLIP_OFFSET, FLIP_BIT, d / "trace.dat")
    v = check_results(d, reader=reader)
    assert v["exit_code"] == 2 and v["verdict"] == "incomplete"
    assert "CPU 0 chunk 3 of 8 does not decompress to its 40960 bytes" in v["error"]


def cpu_data(dat):
    """{cpu: (offset, size)} of a trace.dat's per-CPU data."""
    out = subprocess.run(["trace-cmd", "dump", "-i", str(dat), "--flyrecord"],
                         capture_output=True, check=True).stdout.decode()
    return {int(m.group(1)): (int(m.group(2)), int(m.group(3))) for m in
            re.finditer(r"^\s+(\d+) (\d+)\s+(\d+)\s+\[id, data offset and size\]", out, re.M)}


@needs_trace_cmd
@pytest.mark.parametrize("reader", readers())
def test_a_cpu_read_to_before_its_last_record_is_incomplete(tmp_path, reader):
    # an uncompressed copy with one bit flipped in the `commit` word of
    # page 50 of CPU 1: libtracecmd (and `trace-cmd report`) end CPU 1
    # there; the file's last record of CPU 1 is 6 s later
    d = run_dir(tmp_path)
    plain = tmp_path / "plain.dat"
    subprocess.run(["trace-cmd", "convert", "--compression", "none", "-i",
                    os.path.join(RECORDED, "trace.dat"), "-o", str(plain)],
                   capture_output=True, check=True)
    off, size = cpu_data(plain)[1]
    assert size > 51 * 4096
    flipped(plain, off + 50 * 4096 + 8 + 1, 7, d / "trace.dat")
    v = check_results(d, reader=reader)
    assert v["exit_code"] == 2 and v["verdict"] == "incomplete", v["reasons"]
    assert [(x["cpu"], x["text"].split(" [")[1].split(":")[0]) for x in v["trace"]["drops"]] \
        == [(1, "RECORDS END EARLY")]
    assert "the file's last record at 30.214654]" in v["trace"]["drops"][0]["text"]


def test_a_stored_stressor_record_that_fails_its_crc_is_incomplete(tmp_path, report):
    # one payload character of a stored stressor record changed (a flipped
    # bit in the trace): the serial line has the record intact, so a
    # serial check would call the console's line corrupted
    i = index_of(report, r"nobkl_store: +seq=1000 .*text=pstress ")
    lines = list(report)
    head, payload = lines[i].rstrip("\n").rsplit(" ", 1)
    lines[i] = "%s %s%s\n" % (head, chr(ord(payload[0]) ^ 1), payload[1:])
    v = check_results(with_report(tmp_path, lines))
    assert v["exit_code"] == 2 and v["verdict"] == "incomplete"
    assert v["trace"]["bad_field_events"] == 1
    # no trace rule blames the kernel (the serial side resynchronises at
    # the damage and reports producer numbers after it, not the kernel's)
    assert not violated(v) & TRACE_RULES
    assert any("own check fails (crc" in a["message"] for a in v["anomalies"]["examples"])


def test_a_cpu_whose_timestamps_go_back_is_incomplete(tmp_path, report):
    # one event line of CPU 0 dated 0.5 s later (a damaged page timestamp
    # in the trace): CPU 0's next event then goes back in time
    i = 4000 + index_of(report[4000:], r"\[000\] .*nobkl_emit: ")
    lines = list(report)
    ts = float(re.search(r"\] +(\d+\.\d+):", lines[i]).group(1))
    lines[i] = re.sub(r"(\] +)\d+\.\d+:", lambda m: "%s%.6f:" % (m.group(1), ts + 0.5),
                      lines[i], count=1)
    v = check_results(with_report(tmp_path, lines))
    assert v["exit_code"] == 2 and v["verdict"] == "incomplete"
    assert v["trace"]["timestamps_back"] == 1
    assert any("timestamps went back" in r and "CPU 0 from %.6f" % (ts + 0.5) in r
               for r in v["reasons"]), v["reasons"]
    assert not violated(v) & TRACE_RULES


@pytest.mark.parametrize("edit,why", [
    (lambda ln: ln.replace(" prio=normal ", " prio=bogus ", 1), "prio=bogus is not one of"),
    (lambda ln: re.sub(r" seq=\d+ ", " seq=-5 ", ln, count=1), "seq=-5 is not an unsigned"),
    (lambda ln: ln.replace("[000]", "[009]", 1), "event on CPU 9 of a trace of 4 CPUs"),
])
def test_a_field_outside_its_values_is_incomplete(tmp_path, report, edit, why):
    i = 4000 + index_of(report[4000:], r"\[000\] .*nobkl_emit: .* prio=normal ")
    lines = list(report)
    lines[i] = edit(lines[i])
    v = check_results(with_report(tmp_path, lines))
    assert v["exit_code"] == 2 and v["verdict"] == "incomplete"
    assert v["trace"]["bad_field_events"] == 1
    assert any(why in r for r in v["reasons"]), v["reasons"]
    assert not violated(v) & TRACE_RULES


# A flipped bit that decompresses (the chunk table is intact) into a
# record of an event type the file does not describe, right after the
# store of seq 3538: `trace-cmd report` prints "[UNKNOWN EVENT]" (the text
# reader took it for a continuation of the store's text, incomplete), the
# C reader counted it as another event (pass).  Both: a damaged record.
UNKNOWN_OFFSET, UNKNOWN_BIT = 507711, 5


@pytest.mark.parametrize("reader", readers())
def test_a_record_of_no_known_event_is_incomplete(tmp_path, reader):
    d = run_dir(tmp_path)
    flipped(os.path.join(RECORDED, "trace.dat"), UNKNOWN_OFFSET, UNKNOWN_BIT, d / "trace.dat")
    v = check_results(d, reader=reader)
    assert v["exit_code"] == 2 and v["verdict"] == "incomplete", v["reasons"]
    assert v["trace"]["malformed_lines"] == 1 and v["trace"]["bad_field_events"] == 0
    assert "a record of no event in the file" in v["trace"]["malformed_examples"][0]


@pytest.mark.parametrize("edit,why", [
    (lambda ln: ln.replace("con=ttyS0 ", "con=tt{S0 ", 1), "is not a console name"),
    (lambda ln: re.sub(r" seq=(\d+) ", lambda m: " seq=%d " % (int(m.group(1)) + (1 << 32)),
                       ln, count=1), "is far above every record stored in the trace"),
    (lambda ln: ln.replace(" dropped=0 ", " dropped=140737488355328 ", 1),
     "is more than the records before seq"),
])
def test_a_flipped_high_bit_in_a_field_is_incomplete(tmp_path, report, edit, why):
    # what one flipped bit of an uncompressed trace.dat did (flips at
    # random offsets: con=ttyS0@..., seq=4294969170, dropped=2^47), here in
    # the report text; before: no-loss, duplicate or dropped-count
    i = 4000 + index_of(report[4000:], r"\[000\] .*nobkl_emit: .* dropped=0 ")
    lines = list(report)
    lines[i] = edit(lines[i])
    assert lines[i] != report[i]
    v = check_results(with_report(tmp_path, lines))
    assert v["exit_code"] == 2 and v["verdict"] == "incomplete"
    assert v["trace"]["bad_field_events"] == 1
    assert any(why in r for r in v["reasons"]), v["reasons"]
    # what the checker finds after the damage is not the kernel's
    assert all(x["after_trace_loss"] for x in v["violations"])


# The transition fields (patch 31) give a 64-bit commit a second copy of
# its seq: new_state's low half is seq + 1.  One flipped bit in the seq
# field then contradicts the record itself, which a kernel that commits
# the wrong seq cannot do (checker.field_problem()).  Before: fail
# (no-loss, duplicate).
def _chain_run_with_commit(edit):
    from analysis.tests.tracebuilder import Trace, pstress
    t = Trace(chain=True)
    T = t.ctx(0, thread=1)
    s = [t.store(pstress(1, "task", n, "p" * 20)) for n in range(4)]
    t.acquire(T)
    for q in s:
        t.print_rec(T, q)
    t.release(T)
    i = [k for k, ln in enumerate(t.lines) if "nobkl_commit" in ln][1]
    t.lines[i] = edit(t.lines[i])
    return t


@pytest.mark.parametrize("field", ["seq", "new_state"])
def test_commit_seq_against_its_new_state(tmp_path, field):
    # either copy flipped: the record contradicts itself
    t = _chain_run_with_commit(lambda ln: re.sub(
        r" %s=(\d+)" % field, lambda m: " %s=%d" % (field, int(m.group(1)) ^ 1), ln))
    v = check_results(t.write(tmp_path / "r"), no_serial=True)
    assert v["exit_code"] == 2 and v["verdict"] == "incomplete", v["reasons"]
    assert v["trace"]["bad_field_events"] == 1
    assert not violated(v) & TRACE_RULES
    assert any("bad field value in nobkl_commit" in r and "new_state=" in r
               for r in v["reasons"]), v["reasons"]


def test_commit_seq_that_matches_its_new_state_passes(tmp_path):
    # the control: the same run unedited, and on 32-bit (no seq in the
    # word, the commit reports no transition) a seq is not checked
    t = _chain_run_with_commit(lambda ln: ln)
    v = check_results(t.write(tmp_path / "r"), no_serial=True)
    assert (v["verdict"], v["trace"]["bad_field_events"]) == ("pass", 0), v["reasons"]


# Who the state word names.  Every acquire is traced (the tracepoint fires
# at each successful cmpxchg), so an owner that prev_* of an acquire or
# owner_* of a loss names must be one the trace shows taking the console
# (an acquire, or a grant to it); a name that contradicts the record
# itself or the trace is a damaged event (or a lost one): incomplete.
def _takeover(chain, prev="W", lost_owner="P", con4=False):
    from analysis.tests.tracebuilder import Trace, pstress
    t = Trace(chain=chain)
    T = t.ctx(0, thread=1)
    W = t.ctx(3, prio="emergency")          # never owns the console
    P = t.ctx(2, prio="panic")
    s = [t.store(pstress(1, "task", n, "p" * 20)) for n in range(5)]
    t.acquire(T)
    t.print_rec(T, s[0])
    t.emit(T, s[1])
    t.acquire(P, "hostile", prev={"W": W, "T": T}[prev])
    t.print_rec(P, s[1])
    t.print_rec(P, s[2])
    t.release(P)
    t.lost(T, "can_proceed", owner={"W": W, "P": P, None: None}[lost_owner])
    t.acquire(T)
    t.print_rec(T, s[3])
    if con4:
        i = len(t.lines)
        t.print_rec(T, s[4])
        t.lines[i] = t.lines[i].replace("con=ttyS0 ", "con=ttyS4 ", 1)
    t.release(T)
    return t


@pytest.mark.parametrize("chain,why", [
    (False, "prev_cpu=3 prev_prio=emergency prev_thread=0 names an owner that the trace "
            "never shows acquiring the console"),
    (True, " but old_state="),
], ids=["timestamps", "chain"])
def test_takeover_naming_an_owner_never_traced_is_damage(tmp_path, chain, why):
    # before: pass (the named owner was kept as an acquire listed late
    # that never came), and in chain order too
    v = check_results(_takeover(chain).write(tmp_path / "r"), no_serial=True)
    assert (v["verdict"], v["trace"]["bad_field_events"]) == ("incomplete", 1), v["reasons"]
    assert why in v["reasons"][0], v["reasons"]
    assert not violated(v) & TRACE_RULES


@pytest.mark.parametrize("chain", [False, True], ids=["timestamps", "chain"])
@pytest.mark.parametrize("owner,bad", [("P", 0), (None, 0), ("W", 1)],
                         ids=["the-taker", "none", "never-an-owner"])
def test_loss_names_an_owner_the_trace_shows(tmp_path, chain, owner, bad):
    # the loss names the taker (or a free console): a pass; a context that
    # never owned the console: damage (before: pass, not checked)
    v = check_results(_takeover(chain, prev="T", lost_owner=owner).write(tmp_path / "r"),
                      no_serial=True)
    assert (v["verdict"], v["trace"]["bad_field_events"]) == \
        ("incomplete" if bad else "pass", bad), v["reasons"]
    if bad:
        assert "owner_cpu=3 owner_prio=emergency names an owner" in v["reasons"][0]
    assert not violated(v) & TRACE_RULES


@pytest.mark.parametrize("chain", [False, True], ids=["timestamps", "chain"])
def test_handover_acquire_naming_another_owner_than_its_grantor_is_damage(tmp_path, chain):
    # prev_* of a handover acquire is the state the waiter saw at its
    # request: the owner it requested from, the one that grants (before:
    # pass)
    from analysis.tests.tracebuilder import Trace, pstress
    t = Trace(chain=chain)
    T = t.ctx(0, thread=1)
    W = t.ctx(3, prio="emergency")
    X = t.ctx(1, prio="normal")
    s = [t.store(pstress(1, "task", n, "p" * 20)) for n in range(3)]
    t.acquire(T)
    t.print_rec(T, s[0])
    t.request(W, T)
    t.print_rec(T, s[1])
    t.hand_over(T, W, prev=X)
    t.print_rec(W, s[2])
    t.release(W)
    v = check_results(t.write(tmp_path / "r"), no_serial=True)
    assert (v["verdict"], v["trace"]["bad_field_events"]) == ("incomplete", 1), v["reasons"]
    assert "prev_cpu=1 prev_prio=normal, but the waiter requested the console from " \
        "cpu0/task/thread/normal" in v["reasons"][0]
    assert not violated(v) & TRACE_RULES


@pytest.mark.parametrize("chain", [False, True], ids=["timestamps", "chain"])
def test_a_console_name_one_bit_off_with_one_event_is_damage(tmp_path, chain):
    # an emission of ttyS0 shown as ttyS4's, the only event of that
    # console (before: no-loss on both)
    v = check_results(_takeover(chain, prev="T", con4=True).write(tmp_path / "r"),
                      no_serial=True)
    assert (v["verdict"], v["trace"]["bad_field_events"]) == ("incomplete", 1), v["reasons"]
    assert "con=ttyS4, the only event of that console, is one bit off console ttyS0" \
        in v["reasons"][0]
    assert all(x["after_trace_loss"] for x in v["violations"])


def test_a_console_name_not_one_bit_off_stays_the_kernels(tmp_path):
    # the control: a console first seen with one emission whose name no
    # flipped bit of another explains is taken as a console owned before
    # the trace (no-loss for the records it never printed)
    t = _takeover(False, prev="T", con4=True)
    t.lines = [ln.replace("con=ttyS4 ", "con=ttyAB ") for ln in t.lines]
    v = check_results(t.write(tmp_path / "r"), no_serial=True)
    assert (v["verdict"], v["trace"]["bad_field_events"]) == ("fail", 0), v["reasons"]
    assert violated(v) == {"no-loss"}
