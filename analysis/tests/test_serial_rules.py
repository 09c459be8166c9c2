"""The serial-log rules on hand-written traces and on the recorded real
run (data/stress-20261203-095925) with its console.log changed the way a
faulty kernel would print it.  Each test asserts the exact set of rules
violated and the counter that shows which check ran."""

import os
import shutil
import subprocess

import pytest

from analysis.tests.verdicts import check_results
from analysis.tests.tracebuilder import Trace, printed, pstress
from analysis.tests.recorded import RECORDED, copy_recorded
from analysis.tests.verdicts import violated



def run(tmp_path, t, **kw):
    return check_results(t.write(tmp_path / "res"), **kw)


def recorded_run(tmp_path, edit=None, name="rec"):
    """A copy of the recorded run; edit(lines) -> lines changes its
    console.log (a list of byte strings without line ends)."""
    return str(copy_recorded(tmp_path, name, edit=edit))


def index_of(lines, text):
    """Index of the only line that contains text."""
    hits = [i for i, ln in enumerate(lines) if text.encode() in ln]
    assert len(hits) == 1, (text, hits)
    return hits[0]


def test_recorded_run_passes(tmp_path):
    v = check_results(recorded_run(tmp_path))
    assert v["verdict"] == "pass", v["reasons"]
    assert v["serial"]["matched"] == 3390


def test_recorded_run_read_with_its_compressed_log():
    # data/ keeps console.log.xz: `check` of that directory reads it
    v = check_results(RECORDED)
    assert v["verdict"] == "pass", v["reasons"]
    assert v["inputs"]["serial"].endswith("console.log.xz")
    assert v["serial"]["matched"] == 3390
    assert v["serial"]["lines_read"] == 3655


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


def _notice_of_an_interrupted_attempt(notice_line=None):
    """The printer thread prints s[0], emits s[3] after two dropped
    records, writes a dropped notice (notice_line; None: its own, the
    right count) and part of the line, and is taken over by an NMI on
    its CPU, which reprints s[3] with its notice and prints s[4]."""
    t = Trace()
    T = t.ctx(0, thread=1)
    N = t.ctx(0, prio="emergency", ctx="nmi")
    s = [t.store(pstress(1, "task", n, "payload%d" % n)) for n in range(5)]
    t.acquire(T)
    t.print_rec(T, s[0])
    t.emit(T, s[3], dropped=2, serial=notice_line is None)
    if notice_line is not None:
        t.serial.append(notice_line)
    t.partial(s[3], 0.4, "T")
    t.acquire(N, "hostile", prev=T)
    t.print_rec(N, s[3], dropped=2)     # the reprint: notice again
    t.print_rec(N, s[4])
    t.release(N)
    t.lost(T, "exit_unsafe")
    return t


def test_dropped_notice_of_interrupted_attempt_and_reprint(tmp_path):
    """Both the interrupted attempt and the reprint print the notice
    (the dropped count is the distance to the committed seq)."""
    v = run(tmp_path, _notice_of_an_interrupted_attempt())
    assert v["verdict"] == "pass", v["violations"]
    assert v["serial"]["dropped_notices_checked"] == 2
    assert v["serial"]["dropped_lines"] == 2


def test_dropped_notice_of_interrupted_attempt_wrong_count(tmp_path):
    v = run(tmp_path, _notice_of_an_interrupted_attempt("T** 7 printk messages dropped **"))
    assert violated(v) == {"serial-dropped"}
    assert v["violations_by_rule"]["serial-dropped"] == 1


def _glued_notice_trace(cut, takeover=True):
    """The thread prints the notice of its emission, then `cut` bytes of
    the record's line, and loses the console: its line has no end, so the
    taker's notice (more records dropped by then) lands on the same line:
    `T** 2 printk messages dropped **` / `TA** 4 printk messages dropped **`
    (seen on x86_64 and i386 stress runs).  Without the takeover the
    thread commits: the cut piece is then a line no lost ownership
    explains: the piece is cut before its own notice."""
    t = Trace()
    T = t.ctx(0, thread=1)
    N = t.ctx(1, prio="emergency", ctx="nmi")
    s = [t.store(pstress(1, "task", n, "payload%d" % n)) for n in range(7)]
    t.acquire(T)
    t.print_rec(T, s[0])
    t.emit(T, s[3], dropped=2, serial=False)
    t.serial.append("T** 2 printk messages dropped **")
    t.partial(s[3], cut, "T")
    if not takeover:
        t.serial[-2:] = [t.serial[-1] + t.serial[-2]]
        t.line(s[3], "T")
        t.commit(T, s[3])
        for seq in s[4:]:
            t.print_rec(T, seq)
        t.release(T)
        return t
    t.acquire(N, "hostile", prev=T)
    t.emit(N, s[5], dropped=4, serial=False)
    t.serial[-1:] = [t.serial[-1] + "A** 4 printk messages dropped **"]
    t.line(s[5], "A")
    t.commit(N, s[5])
    t.print_rec(N, s[6])
    t.release(N)
    t.lost(T, "exit_unsafe")
    return t


@pytest.mark.parametrize("cut", [0.0, 0.05, 0.5])
def test_notice_glued_to_an_interrupted_line(tmp_path, cut):
    t = _glued_notice_trace(cut)
    glued = [ln for ln in t.serial if "A** 4 " in ln][0]
    assert glued.startswith("T"), glued
    v = run(tmp_path, t)
    assert v["verdict"] == "pass", v["violations"]
    assert v["serial"]["dropped_notices_checked"] == 2
    assert v["serial"]["dropped_lines"] == 2
    assert v["serial"]["partial_lines"] == 1


def test_notice_glued_to_a_line_no_takeover_cut(tmp_path):
    v = run(tmp_path, _glued_notice_trace(0.05, takeover=False))
    assert violated(v) == {"serial-partial"}
    assert v["violations_by_rule"]["serial-partial"] == 1


def test_recorded_run_spurious_dropped_notice(tmp_path):
    def edit(lines):
        i = index_of(lines, "c=3 x=task n=100 ")
        return lines[:i] + [b"A** 4 printk messages dropped **"] + lines[i:]
    v = check_results(recorded_run(tmp_path, edit))
    assert violated(v) == {"serial-dropped"}
    assert v["violations_by_rule"]["serial-dropped"] == 1
    assert v["serial"]["dropped_lines"] == 1


# ------------------------------------------------------------ repeats and forgeries

def _stressor_lines(lines):
    return [i for i, ln in enumerate(lines) if b"] pstress r=1 " in ln]


def _last_stressor_line(lines):
    return _stressor_lines(lines)[-1]


def test_recorded_copy_after_its_turn(tmp_path):
    def edit(lines):
        i = index_of(lines, "c=3 x=task n=100 ")
        return lines[:i + 30] + [lines[i]] + lines[i + 30:]
    v = check_results(recorded_run(tmp_path, edit))
    assert violated(v) == {"serial-partial"}
    assert v["violations_by_rule"]["serial-partial"] == 1
    assert v["serial"]["producer_repeats"] == 1


def test_recorded_copy_before_its_turn(tmp_path):
    # the extra copy comes first: the one in its turn is matched, the
    # early one must not be forgotten
    def edit(lines):
        i = index_of(lines, "c=3 x=task n=100 ")
        return lines[:i - 30] + [lines[i]] + lines[i - 30:]
    v = check_results(recorded_run(tmp_path, edit))
    assert violated(v) == {"serial-partial"}
    assert v["violations_by_rule"]["serial-partial"] == 1
    assert v["serial"]["matched"] == 3390


def test_recorded_other_record_with_a_known_identity(tmp_path):
    # n=100 of c=3 task twice, the second with another payload (valid crc)
    def edit(lines):
        i = index_of(lines, "c=3 x=task n=100 ")
        forged = lines[i][:lines[i].index(b"pstress")] + \
            pstress(3, "task", 100, "forged0123", version=1).encode()
        return lines[:i + 30] + [forged] + lines[i + 30:]
    v = check_results(recorded_run(tmp_path, edit))
    assert violated(v) == {"serial-extra"}
    assert v["violations_by_rule"]["serial-extra"] == 1


def _trace_end(lines):
    """Index of the last line the trace placed (the stressor's end)."""
    return index_of(lines, "printk_stress: end run=1")


def test_recorded_copy_after_the_trace(tmp_path):
    # after the last traced commit, a copy of the last stressor record
    def edit(lines):
        i, end = _last_stressor_line(lines), _trace_end(lines)
        return lines[:end + 1] + [lines[i]] + lines[end + 1:]
    v = check_results(recorded_run(tmp_path, edit))
    assert violated(v) == {"serial-partial"}
    assert v["violations_by_rule"]["serial-partial"] == 1
    assert v["serial"]["lines_after_trace"] == 5


def test_recorded_forged_record_after_the_trace(tmp_path):
    # stats.txt: cpu 0 task attempted 312, so n=312 was never made
    def edit(lines):
        end = _trace_end(lines)
        forged = pstress(0, "task", 312, "x" * 64, version=1)
        return lines[:end + 1] + [b"A[   34.000000] " + forged.encode()] + lines[end + 1:]
    v = check_results(recorded_run(tmp_path, edit))
    assert violated(v) == {"serial-extra"}
    assert v["violations_by_rule"]["serial-extra"] == 1


def test_recorded_record_of_an_unknown_producer_after_the_trace(tmp_path):
    # run 1 has no cpu 7
    def edit(lines):
        return lines + [b"A[   44.100000] " + pstress(7, "task", 0, "x" * 64, version=1).encode()]
    v = check_results(recorded_run(tmp_path, edit))
    assert violated(v) == {"serial-extra"}


# ------------------------------------------------------------ the trace ends before the run

def _report_text(tmp_path):
    trace_cmd = shutil.which("trace-cmd")
    if trace_cmd is None:
        pytest.skip("trace-cmd not installed")
    out = subprocess.run([trace_cmd, "report", "-i", os.path.join(RECORDED, "trace.dat")],
                         capture_output=True, check=True).stdout
    return out.split(b"\n")


def _cut_report(tmp_path, frac, edit=None):
    d = recorded_run(tmp_path, edit)
    rep = _report_text(tmp_path)
    cut = tmp_path / "cut.txt"
    cut.write_bytes(b"\n".join(rep[:int(len(rep) * frac)]) + b"\n")
    return check_results(d, report=str(cut))


def test_report_cut_at_a_line_boundary_is_incomplete(tmp_path):
    # the serial log goes on with records the trace never stored
    v = _cut_report(tmp_path, 0.6)
    assert v["exit_code"] == 2 and v["verdict"] == "incomplete", v["reasons"]
    assert violated(v) == set()
    assert "the trace ended before the stressor run did" in v["reasons"][0]
    assert v["serial"]["stressor_records_after_trace"] == 1325
    assert v["serial"]["matched"] == 2064


def test_report_cut_a_reprint_after_its_end_is_not_judged(tmp_path):
    # a complete copy right after the first one, where the trace no
    # longer says whether an interrupted attempt printed it
    def edit(lines):
        i = _stressor_lines(lines)[-5]
        return lines[:i + 1] + [lines[i]] + lines[i + 1:]
    v = _cut_report(tmp_path, 0.6, edit)
    assert v["exit_code"] == 2 and violated(v) == set(), v["reasons"]
    assert v["serial"]["unverified_reprints_after_trace"] == 1


def test_report_cut_a_repeat_after_its_end_far_from_the_first(tmp_path):
    def edit(lines):
        i = _stressor_lines(lines)[-50]
        return lines + [lines[i]]
    v = _cut_report(tmp_path, 0.6, edit)
    # a violation where the trace cannot place it: incomplete, reported
    assert v["exit_code"] == 2 and violated(v) == {"serial-partial"}, v["reasons"]
    assert v["serial"]["unverified_reprints_after_trace"] == 0


# ------------------------------------------------------------ before the first stressor record

def _presync_line(lines):
    """The record the trace commits right before the first stressor record."""
    return index_of(lines, "printk_stress: start run=1")


def test_recorded_presync_record_removed(tmp_path):
    def edit(lines):
        i = _presync_line(lines)
        return lines[:i] + lines[i + 1:]
    v = check_results(recorded_run(tmp_path, edit))
    assert violated(v) == {"serial-missing"}
    assert v["violations_by_rule"]["serial-missing"] == 1
    assert "printk_stress: start" in v["violations"][0]["message"]


def test_recorded_presync_record_doubled(tmp_path):
    def edit(lines):
        i = _presync_line(lines)
        return lines[:i + 1] + [lines[i]] + lines[i + 1:]
    v = check_results(recorded_run(tmp_path, edit))
    assert violated(v) == {"serial-partial"}
    assert v["violations_by_rule"]["serial-partial"] == 1


def test_recorded_presync_record_checked(tmp_path):
    v = check_results(recorded_run(tmp_path))
    assert v["serial"]["matched"] == 3390       # 3389 stressor-synced + the start line
    assert v["serial"]["lines_before_trace"] == 254
    assert "unchecked_before_sync" not in v["serial"]


def test_recorded_log_of_another_run_is_unusable(tmp_path):
    def edit(lines):
        return [ln.replace(b"] pstress r=1 ", b"] pstress r=2 ") for ln in lines]
    v = check_results(recorded_run(tmp_path, edit))
    assert v["exit_code"] == 2 and v["verdict"] == "incomplete", v["reasons"]
    assert violated(v) == set()
    assert v["reasons"][0].startswith("serial log not checked: none of the first 3 records")
    assert v["serial"]["matched"] == 0


def test_record_missing_before_the_first_one_found(tmp_path):
    # the first committed stressor record is nowhere on the log, the
    # second is: the first is missing (not a reason to give up)
    t, s = printed([pstress(1, "task", n, "p%d" % n) for n in range(4)])
    del t.serial[2]
    v = run(tmp_path, t)
    assert violated(v) == {"serial-missing"}
    assert v["violations"][0]["seq"] == s[0]
    assert v["serial"]["matched"] == 3


def test_recorded_record_far_after_its_turn_is_out_of_order(tmp_path):
    # 600 lines later: beyond the 400 lines looked at in its turn
    def edit(lines):
        i = index_of(lines, "c=3 x=task n=100 ")
        ln = lines[i]
        rest = lines[:i] + lines[i + 1:]
        return rest[:i + 600] + [ln] + rest[i + 600:]
    v = check_results(recorded_run(tmp_path, edit))
    assert violated(v) == {"serial-order"}
    assert v["violations_by_rule"]["serial-order"] == 1


def test_recorded_record_missing_is_reported_at_the_end(tmp_path):
    def edit(lines):
        i = index_of(lines, "c=3 x=task n=100 ")
        return lines[:i] + lines[i + 1:]
    v = check_results(recorded_run(tmp_path, edit))
    assert violated(v) == {"serial-missing"}
    assert v["violations_by_rule"]["serial-missing"] == 1
    assert "c=3 x=task n=100 " in v["violations"][0]["message"]


def test_no_producer_gap_after_trace_loss(tmp_path):
    # the dropped counts of the lost part are unknown: the numbers the
    # console skipped there are no gap (before: 4907 producer-gap on
    # this run, with the verdict incomplete all the same)
    from analysis.synth import generate
    generate(str(tmp_path), events=60000, seed=2, drop_trace=True)
    v = check_results(str(tmp_path))
    assert v["verdict"] == "incomplete" and v["exit_code"] == 2
    assert violated(v) == set()
    assert v["trace"]["drop_markers"] == 1


# ------------------------------------------------------------ after the last traced commit

def _stored_four():
    """Four stressor records stored; the console commits the first in
    the trace, the others are on the serial log after it or not."""
    t = Trace()
    T = t.ctx(0, thread=1)
    s = [t.store(pstress(1, "task", n, "p%d" % n)) for n in range(4)]
    t.acquire(T)
    t.print_rec(T, s[0])
    t.release(T)
    return t, s


def test_post_trace_notice_counts_the_records_missing(tmp_path):
    t, s = _stored_four()
    t.serial.append("T** 2 printk messages dropped **")
    t.line(s[3], "T")
    v = run(tmp_path, t)
    assert v["verdict"] == "pass", v["violations"]
    assert v["serial"]["post_trace_dropped"] == 2
    assert v["serial"]["dropped_notices_checked"] == 1


def test_post_trace_notice_where_nothing_is_missing(tmp_path):
    t, s = _stored_four()
    t.line(s[1], "T")
    t.line(s[2], "T")
    t.serial.append("T** 3 printk messages dropped **")
    t.line(s[3], "T")
    v = run(tmp_path, t)
    assert violated(v) == {"serial-dropped"}
    assert v["serial"]["post_trace_matched"] == 3


def test_post_trace_notice_too_small(tmp_path):
    # s[1] and s[2] are not there, the notice says 1
    t, s = _stored_four()
    t.serial.append("T** 1 printk messages dropped **")
    t.line(s[3], "T")
    v = run(tmp_path, t)
    assert violated(v) == {"serial-missing", "serial-dropped"}
    assert v["violations_by_rule"]["serial-missing"] == 1


def test_recorded_stats_of_another_run(tmp_path):
    d = recorded_run(tmp_path)
    with open(os.path.join(d, "stats.txt")) as f:
        stats = f.read()
    assert stats.startswith("run=1 ")
    with open(os.path.join(d, "stats.txt"), "w") as f:
        f.write("run=2 " + stats[len("run=1 "):])
    v = check_results(d)
    assert v["exit_code"] == 2 and violated(v) == set(), v["reasons"]
    assert v["reasons"] == ["stats.txt is of stressor run 2, but the stressor records on the "
                            "serial log are of run 1: stats.txt not used"]


# ------------------------------------------------------------ one writer's order

def _writer_trace(ns, writer="task0", ctx="task"):
    """Records of one version 2 writer stored (and printed) in the order
    of `ns`."""
    t, s = printed([pstress(1, ctx, n, "p" * 24, writer=writer) for n in ns])
    return t, s


def test_writer_records_in_order_pass(tmp_path):
    t, s = _writer_trace(range(6))
    v = run(tmp_path, t)
    assert v["verdict"] == "pass", v["violations"]
    assert v["serial"]["writer_order_checked"] == 6


def test_writer_records_swapped_in_the_ringbuffer(tmp_path):
    # n=2 got its seq before n=1: stored, printed and on the log that way
    t, s = _writer_trace((0, 2, 1, 3))
    v = run(tmp_path, t)
    assert violated(v) == {"producer-order"}, v["violations"]
    assert v["violations_by_rule"]["producer-order"] == 1
    x = v["violations"][0]
    assert x["seq"] == s[2]
    assert "w=task0: n=1 got seq %d after n=2 got seq %d" % (s[2], s[1]) in x["message"]


def test_writer_record_far_behind_is_one_violation(tmp_path):
    # n=1 stored after n=2..20: one record out of place, not 19
    t, s = _writer_trace([0] + list(range(2, 21)) + [1])
    v = run(tmp_path, t)
    assert violated(v) == {"producer-order"}, v["violations"]
    assert v["violations_by_rule"]["producer-order"] == 1
    assert v["violations"][0]["seq"] == s[-1]


def test_writer_records_swapped_on_the_log_only(tmp_path):
    # the ringbuffer has them in order, the log swaps two: the log's
    # order is serial-order's
    t, s = _writer_trace(range(5))
    i = next(k for k, ln in enumerate(t.serial) if " n=2 " in ln)
    t.serial[i], t.serial[i + 1] = t.serial[i + 1], t.serial[i]
    v = run(tmp_path, t)
    assert violated(v) == {"serial-order"}, v["violations"]


def test_two_writers_of_one_context_interleave(tmp_path):
    # emergency sections in the task kthread and in the hrtimer of CPU 1:
    # two producers, each in order
    t, s = printed([pstress(1, "emerg", n, "p" * 16, writer=w)
                    for n, w in ((0, "task0"), (0, "hardirq"), (1, "hardirq"), (1, "task0"),
                                 (2, "task0"), (2, "hardirq"))])
    v = run(tmp_path, t)
    assert v["verdict"] == "pass", v["violations"]
    assert v["serial"]["producers"] == 2


def test_writer_order_with_a_reprint_after_a_takeover(tmp_path):
    # the interrupted attempt of n=2 and its reprint: one commit
    t = Trace()
    T = t.ctx(0, thread=1)
    N = t.ctx(0, prio="emergency", ctx="nmi")
    s = [t.store(pstress(1, "task", n, "p" * 30)) for n in range(5)]
    t.acquire(T)
    t.print_rec(T, s[0])
    t.print_rec(T, s[1])
    t.emit(T, s[2])
    t.partial(s[2], 0.5, "T")
    t.take_over(N, T, [s[2], s[3]])
    t.lost(T, "exit_unsafe")
    t.acquire(T)
    t.print_rec(T, s[4])
    t.release(T)
    v = run(tmp_path, t)
    assert v["verdict"] == "pass", v["violations"]
    assert v["counts"]["reprints"] == 1
    assert v["serial"]["writer_order_checked"] == 5


def test_writer_records_swapped_after_the_last_commit(tmp_path):
    # stored after the console's last traced commit, n=3 before n=2
    t = Trace()
    T = t.ctx(0, thread=1)
    s = [t.store(pstress(1, "task", n, "p" * 20)) for n in (0, 1, 3, 2)]
    t.acquire(T)
    t.print_rec(T, s[0])
    t.release(T)
    for q in s[1:]:
        t.line(q, "T")
    v = run(tmp_path, t)
    assert violated(v) == {"producer-order"}, v["violations"]
    assert v["serial"]["post_trace_matched"] == 3


def test_writer_records_swapped_before_the_trace(tmp_path):
    # on the log before the trace's first record: n=1 before n=0
    t = Trace()
    T = t.ctx(0, thread=1)
    t.serial += ["[    0.200000] " + pstress(1, "task", 1, "p" * 20),
                 "[    0.300000] " + pstress(1, "task", 0, "p" * 20)]
    s = [t.store(pstress(1, "task", n, "p" * 20)) for n in (2, 3)]
    t.acquire(T)
    for q in s:
        t.print_rec(T, q)
    t.release(T)
    v = run(tmp_path, t)
    assert violated(v) == {"producer-order"}, v["violations"]
    assert v["serial"]["stressor_records_before_trace"] == 2


# ------------------------------------------------------------ the console loglevel

def test_record_at_the_console_loglevel_printed(tmp_path):
    # level 7 with the console loglevel 7: suppressed, yet emitted and printed
    t = Trace()
    T = t.ctx(0, thread=1)
    s = [t.store(pstress(1, "task", n, "p" * 12), level=7 if n == 1 else 4) for n in range(3)]
    t.acquire(T)
    for q in s:
        t.print_rec(T, q)
    t.release(T)
    v = run(tmp_path, t)
    assert violated(v) == {"serial-extra"}, v["violations"]
    assert v["violations_by_rule"]["serial-extra"] == 1
    assert v["violations"][0]["seq"] == s[1]
    # with the console loglevel 8 it is printable
    v = run(tmp_path, t, console_loglevel=8)
    assert v["verdict"] == "pass", v["violations"]


def test_line_of_an_unprinted_record_is_no_producer_gap(tmp_path):
    # the emission of n=1 is gone (committed without being written), its
    # line is on the log: extra, but its n is on the log
    t = Trace()
    T = t.ctx(0, thread=1)
    s = [t.store(pstress(1, "task", n, "p" * 12)) for n in range(3)]
    t.acquire(T)
    t.print_rec(T, s[0])
    t.line(s[1], "T")
    t.commit(T, s[1])
    t.print_rec(T, s[2])
    t.release(T)
    v = run(tmp_path, t)
    assert violated(v) == {"no-loss", "serial-extra"}, v["violations"]
    assert v["violations_by_rule"]["serial-extra"] == 1


def test_garbage_stats_is_unusable(tmp_path):
    t, s = _writer_trace(range(3))
    d = t.write(tmp_path / "r")
    for garbage in ("", "garbage\n", "run=1 state=idle\nproducer cpu=1 ctx=task writer=task0 "
                    "attempted=3 stored=4\n", "run=1 state=idle\nproducer cpu=1 ctx=task "
                    "writer=task0 attempted=3x stored=3\n"):
        with open(os.path.join(d, "stats.txt"), "w") as f:
            f.write(garbage)
        v = check_results(d)
        assert v["exit_code"] == 2 and v["verdict"] == "incomplete", (garbage, v["reasons"])
        assert "is not the stressor's stats" in v["error"]
    with open(os.path.join(d, "stats.txt"), "w") as f:
        f.write("run=1 state=idle\nproducer cpu=1 ctx=task writer=task0 attempted=3 stored=3\n")
    v = check_results(d)
    assert v["verdict"] == "pass", v["violations"]
    assert v["serial"]["stressor_stats_producers"] == 1


def test_post_trace_records_swapped_on_the_log(tmp_path):
    # stored after the last traced commit in seq order, on the log n=3
    # before n=2: out of order, not missing
    t = Trace()
    T = t.ctx(0, thread=1)
    s = [t.store(pstress(1, "task", n, "p" * 20)) for n in range(5)]
    t.acquire(T)
    t.print_rec(T, s[0])
    t.release(T)
    for q in (s[1], s[3], s[2], s[4]):
        t.line(q, "T")
    v = run(tmp_path, t)
    assert violated(v) == {"serial-order"}, v["violations"]
    assert v["violations_by_rule"]["serial-order"] == 1
    assert v["violations"][0]["seq"] == s[3]
    assert v["serial"]["post_trace_matched"] == 3


def test_pstress2_text_is_what_the_stressor_prints():
    # two records of a real x86_64 stress run (format 2): the tests and
    # synth build records the way the module does
    from analysis.pstress import pstress2_text
    assert pstress2_text(1, 1, "task", "task0", 0, 64) == (
        "pstress v=2 r=1 c=1 x=task w=task0 n=0 l=64 "
        "ne3VQud3GR1nrum2krfPwDO8hsmPLVLGP7rdRDB1mpBGgVoxerG8JLI40q7nl90s k=411833a3")
    assert pstress2_text(1, 1, "task", "task0", 1, 64) == (
        "pstress v=2 r=1 c=1 x=task w=task0 n=1 l=64 "
        "z3KjNsm8JmgGwlnwX5RvNI3WuSYeMoZtAUMztEHfSuSaB3mHOl7U49ceFEGGRcw4 k=c54adb66")


# ---------------------------------------------------------------- the line limit
# the longest text 6.1 stores of a record printed with a level prefix
# (LOG_LINE_MAX 992, less the NUL and the prefix)
LIMIT = 989

def truncated(n, over, cpu=1):
    """Record n of the stressor's `truncate` shape: its whole text is
    LIMIT + over characters, as printk() stores it: cut after LIMIT when
    over > 0."""
    from analysis.pstress import pstress2_text
    head = len("pstress v=2 r=1 c=%d x=task w=task0 n=%d l=999 " % (cpu, n))
    full = pstress2_text(1, cpu, "task", "task0", n, LIMIT + over - head - 11)
    assert len(full) == LIMIT + over
    return full[:LIMIT]


def line_limit_run(tmp_path, texts, serial_edit=None):
    t, _ = printed(texts)
    if serial_edit:
        t.serial = [serial_edit(ln) for ln in t.serial]
    return run(tmp_path, t)


def test_records_cut_at_the_line_limit_pass(tmp_path):
    """Records longer than printk() stores are cut after TEXT_MAX
    characters, inside the payload or the crc: each is the first part of
    the record its header makes, valid, counted."""
    overs = (-2, -1, 0, 1, 2, 40)
    texts = [truncated(n, over) for n, over in enumerate(overs)]
    v = line_limit_run(tmp_path, texts)
    assert v["verdict"] == "pass", (v["reasons"], v["violations"])
    assert v["serial"]["stressor_records"] == len(overs)
    assert v["serial"]["truncated_records"] == sum(over > 0 for over in overs)


def test_cut_record_changed_on_the_log_is_corrupt(tmp_path):
    texts = [truncated(n, 2) for n in range(3)]
    bad = texts[1][:600] + ("A" if texts[1][600] != "A" else "B") + texts[1][601:]
    v = line_limit_run(tmp_path, texts, lambda ln: ln.replace(texts[1], bad))
    assert violated(v) == {"serial-corrupt"}, v["violations"]
    assert v["violations_by_rule"]["serial-corrupt"] == 1


def test_cut_record_changed_in_the_trace_is_damage(tmp_path):
    """A stored cut record one byte off the header's record is no record
    the stressor made: the trace is damaged (incomplete)."""
    texts = [truncated(n, 2) for n in range(3)]
    texts[1] = texts[1][:600] + ("A" if texts[1][600] != "A" else "B") + texts[1][601:]
    v = line_limit_run(tmp_path, texts)
    assert v["verdict"] == "incomplete", v["reasons"]
    assert v["trace"]["bad_field_events"] == 1


def test_record_cut_short_of_the_limit_is_malformed(tmp_path):
    texts = [truncated(n, 2) for n in range(3)]
    texts[1] = texts[1][:-1]
    v = line_limit_run(tmp_path, texts)
    assert v["verdict"] == "incomplete", v["reasons"]
    assert v["trace"]["bad_field_events"] == 1


# A stress run (x86_64, make test): printk() found no room in its data ring
# for a task record, cut it to 111 characters and put its mark after them
# (6.1's truncate_msg()): "...QVKL3Gk <truncated>". The analysis took the
# stored text for damage and the verdict for incomplete.
def cut_to_fit(n, keep, cpu=1):
    """Record n as printk() stores it when it cuts it to fit its data
    ring: the first `keep` characters, then its mark."""
    from analysis.pstress import pstress2_text
    return pstress2_text(1, cpu, "task", "task0", n, 64)[:keep] + "<truncated>"


def test_record_cut_to_fit_the_data_ring_passes(tmp_path):
    texts = [pstress2_text_of(0), cut_to_fit(1, 111), cut_to_fit(2, 60), pstress2_text_of(3)]
    v = line_limit_run(tmp_path, texts)
    assert v["verdict"] == "pass", (v["reasons"], v["violations"])
    assert v["serial"]["stressor_records"] == 4
    assert (v["serial"]["records_cut_to_fit"], v["serial"]["truncated_records"]) == (2, 0)


def test_record_cut_to_fit_with_a_byte_changed_is_damage(tmp_path):
    bad = cut_to_fit(1, 111)
    bad = bad[:80] + ("A" if bad[80] != "A" else "B") + bad[81:]
    v = line_limit_run(tmp_path, [pstress2_text_of(0), bad, pstress2_text_of(2)])
    assert v["verdict"] == "incomplete", v["reasons"]
    assert v["trace"]["bad_field_events"] == 1


def pstress2_text_of(n, cpu=1):
    from analysis.pstress import pstress2_text
    return pstress2_text(1, cpu, "task", "task0", n, 64)


# ---------------------------------------------------------------- multi-line records
def multiline(n, length=40, cpu=1):
    """Record n of the stressor's `multiline` shape as the trace stores it
    (its line breaks as blanks), and its lines on the log."""
    from analysis.pstress import crc32_le_kernel, pstress2_payload
    head = "pstress v=2 r=1 c=%d x=task w=task0 n=%d l=%d " % (cpu, n, length)
    payload = list(pstress2_payload(head, length))
    lines = 1 + n % 4
    for i in range(1, lines):
        payload[length * i // lines] = "\n"
    body = head + "".join(payload)
    text = "%s k=%08x" % (body, crc32_le_kernel(body.encode()))
    return text.replace("\n", " "), text.split("\n")


def multiline_trace(recs, interrupt=None, cut=None, frag=False):
    """A trace and log of the records recs [(stored, lines)]; the
    attempt at record `interrupt` is cut after `cut` characters of its
    lines (`frag`: and inside the prefix of the next line) and taken
    over, the new owner reprints it."""
    t = Trace()
    T = t.ctx(0, thread=1)
    E = t.ctx(1, prio="emergency")
    seqs = [t.store(st) for st, _ in recs]
    t.acquire(T)
    owner = T
    for i, (s, (_, lines)) in enumerate(zip(seqs, recs)):
        if i == interrupt:
            t.emit(T, s)
            out = "\n".join(lines)[:cut].split("\n")
            for ln in out:
                t.line(s, "T", text=ln)
            if frag:
                t.serial.append("T[    1.")
            t.acquire(E, "hostile", prev=T)
            owner = E
        t.emit(owner, s)
        for ln in lines:
            t.line(s, "A" if owner is E else "T", text=ln)
        t.commit(owner, s)
    t.release(owner)
    return t


@pytest.mark.parametrize("first", [0, 1])
def test_multi_line_records_pass(tmp_path, first):
    """From record 1 on the first record the matcher syncs on has lines."""
    recs = [multiline(n) for n in range(first, first + 8)]
    v = run(tmp_path, multiline_trace(recs))
    assert v["verdict"] == "pass", (v["reasons"], v["violations"])
    assert v["serial"]["stressor_records"] == 8
    assert v["serial"]["multi_line_records"] == sum(len(ln) > 1 for _, ln in recs) == 6


@pytest.mark.parametrize("rec,line", [(3, 2), (2, 1), (2, 0)])
def test_multi_line_record_with_a_byte_changed_fails(tmp_path, rec, line):
    """Its lines joined are the stored text with one byte changed (in
    line `line` of record `rec`): corrupt once, as a single line one byte
    off is.  Before, a record before the last was missing and each of
    its lines a kernel line no emission explains (serial-extra)."""
    recs = [multiline(n) for n in range(4)]
    t = multiline_trace(recs)
    old = recs[rec][1][line]
    bad = old[:5] + ("A" if old[5] != "A" else "B") + old[6:]
    t.serial = [ln.replace(old, bad) for ln in t.serial]
    v = run(tmp_path, t)
    assert violated(v) == {"serial-corrupt"}, v["violations"]
    assert v["violations_by_rule"]["serial-corrupt"] == 1
    assert v["violations"][0]["seq"] == 10 + rec
    # its producer number is placed: no gap after it
    assert v["serial"]["stressor_records"] == 4


@pytest.mark.parametrize("line", [0, 1, 2])
def test_multi_line_record_cut_by_a_takeover_and_reprinted(tmp_path, line):
    """The owner is taken over inside line `line` of a four-line record;
    the new owner reprints all of it: its lines before the cut and the
    cut one are the interrupted attempt's."""
    recs = [multiline(n) for n in range(4)]
    lines = recs[3][1]
    assert len(lines) == 4
    cut = sum(len(x) + 1 for x in lines[:line]) + 3
    v = run(tmp_path, multiline_trace(recs, interrupt=3, cut=cut))
    assert v["verdict"] == "pass", (v["reasons"], v["violations"])
    assert v["serial"]["partial_lines"] == line + 1


@pytest.mark.parametrize("line", [1, 2, 3])
def test_multi_line_record_cut_inside_a_line_prefix(tmp_path, line):
    """Taken over after `line` complete lines, inside the `[  sec.usec]`
    of the next one (seen on the shapes scenario: `T[    9.`)."""
    recs = [multiline(n) for n in range(4)]
    cut = sum(len(x) + 1 for x in recs[3][1][:line]) - 1
    v = run(tmp_path, multiline_trace(recs, interrupt=3, cut=cut, frag=True))
    assert v["verdict"] == "pass", (v["reasons"], v["violations"])
    assert v["serial"]["partial_lines"] == line + 1


def test_multi_line_record_cut_at_the_line_limit_passes(tmp_path):
    """Both shapes at once: the cut record keeps the line breaks before
    the cut; its header makes the whole record with them."""
    from analysis.pstress import pstress2_text
    recs = []
    for n in range(3, 8):
        head = len("pstress v=2 r=1 c=1 x=task w=task0 n=%d l=999 " % n)
        text = pstress2_text(1, 1, "task", "task0", n, LIMIT + 2 - head - 11, multiline=True)
        recs.append((text[:LIMIT].replace("\n", " "), text[:LIMIT].split("\n")))
    v = run(tmp_path, multiline_trace(recs))
    assert v["verdict"] == "pass", (v["reasons"], v["violations"])
    assert v["serial"]["truncated_records"] == len(recs)
    assert v["serial"]["multi_line_records"] == sum(len(ln) > 1 for _, ln in recs) == 4


# ------------------------------------------------------------ other users of the port

def test_user_line_cut_by_a_kernel_line(tmp_path):
    """User space writing to the same UART (TTY_USERS): the tty sends its
    line a FIFO's worth at a time and the console's line starts right
    after the first piece; the rest of the user's line comes later. The
    kernel line is whole: the run passes, both pieces are foreign."""
    base = check_results(recorded_run(tmp_path, name="base"))

    def edit(lines):
        i = index_of(lines, "c=3 x=task n=100 ")
        lines[i] = b"tty-user n=58 ba" + lines[i]
        return lines[:i + 3] + [b"ud=115200"] + lines[i + 3:]
    v = check_results(recorded_run(tmp_path, edit))
    assert v["verdict"] == "pass", v["reasons"]
    assert v["serial"]["matched"] == base["serial"]["matched"]
    assert v["serial"]["foreign_lines"] == base["serial"]["foreign_lines"] + 2


def test_user_bytes_inside_a_kernel_line(tmp_path):
    """The same piece inside the kernel line (a console that does not
    serialize with the tty): the record is not on the log, and the line
    that holds the damaged copy is one no emission explains."""
    def edit(lines):
        i = index_of(lines, "c=3 x=task n=100 ")
        lines[i] = lines[i][:60] + b"tty-user n=58 ba" + lines[i][60:]
        return lines
    v = check_results(recorded_run(tmp_path, edit))
    assert violated(v) == {"serial-missing", "serial-extra"}
    assert v["violations_by_rule"]["serial-missing"] == 1
    assert v["violations_by_rule"]["serial-extra"] == 1


# ------------------------------------------------------------ a dropped count carried over
# A record below the console loglevel is committed without output (len=0);
# the records dropped in front of it go into the notice of the next record
# printed (cons_emit_record() carries them over in con->dropped).

def _stores(t, count):
    """count records, s[4] a kernel message below the console loglevel,
    the others stressor records (n from 0, no gap in the numbers)."""
    return [t.store("debug: below the console loglevel", level=7) if i == 4 else
            t.store(pstress(1, "task", i - (i > 4), "p%d" % i)) for i in range(count)]


def _carried_trace(notice=3, own=0, takeover=None):
    """s[0] printed; s[1..3] overwritten; s[4] below the console loglevel,
    emitted with dropped=3 and committed without output; `own` more
    records overwritten; then the next record, emitted with dropped=own,
    printed after a notice of `notice` (None: no notice).  takeover:
    None, or where an emergency context takes the console over from the
    thread in that record: "before" its first byte, "inside" its line
    after the notice; the taker prints notice and record again."""
    t = Trace()
    T = t.ctx(0, thread=1)
    N = t.ctx(0, prio="emergency", ctx="nmi")
    s = _stores(t, 6 + own)
    nxt = s[5 + own]
    t.acquire(T)
    t.print_rec(T, s[0])
    t.emit(T, s[4], dropped=3, length=0, serial=False)
    t.commit(T, s[4])
    t.emit(T, nxt, dropped=own, serial=False)
    if takeover is not None:
        if takeover == "inside":
            t.serial.append("T** %d printk messages dropped **" % notice)
            t.partial(nxt, 0.4, "T")
        t.acquire(N, "hostile", prev=T)
        t.emit(N, nxt, dropped=own, serial=False)
    if notice is not None:
        t.serial.append("%s** %d printk messages dropped **" % ("A" if takeover else "T", notice))
    t.line(nxt, "A" if takeover else "T")
    if takeover is not None:
        t.commit(N, nxt)
        t.release(N)
        t.lost(T, "enter_unsafe")
    else:
        t.commit(T, nxt)
        t.release(T)
    return t, s


def test_dropped_count_carried_past_a_suppressed_record(tmp_path):
    t, _ = _carried_trace()
    v = run(tmp_path, t)
    assert v["verdict"] == "pass", v["violations"]
    assert v["serial"]["dropped_notices_checked"] == 1
    assert v["counts"]["suppressed_records"] == 1
    assert v["consoles"]["ttyS0"]["dropped_records"] == 3


def test_dropped_count_lost_at_a_suppressed_record(tmp_path):
    # the port before the fix: the suppressed record took the count along
    t, s = _carried_trace(notice=None)
    v = run(tmp_path, t)
    assert violated(v) == {"serial-dropped"}
    assert v["violations_by_rule"]["serial-dropped"] == 1
    x = v["violations"][0]
    assert x["seq"] == s[5]
    assert "carried 3" in x["message"], x["message"]


def test_dropped_count_carried_and_counted_twice(tmp_path):
    t, s = _carried_trace(notice=6)
    v = run(tmp_path, t)
    assert violated(v) == {"serial-dropped"}
    assert v["violations_by_rule"]["serial-dropped"] == 1
    assert v["serial"]["dropped_notices_checked"] == 0


def test_dropped_count_carried_adds_the_records_own(tmp_path):
    # two more records overwritten after the suppressed one: 3 + 2
    t, _ = _carried_trace(notice=5, own=2)
    v = run(tmp_path, t)
    assert v["verdict"] == "pass", v["violations"]
    assert v["serial"]["dropped_notices_checked"] == 1
    assert v["consoles"]["ttyS0"]["dropped_records"] == 5
    # its own count alone is the lost carry
    t, _ = _carried_trace(notice=2, own=2)
    assert violated(run(tmp_path, t)) == {"serial-dropped"}


@pytest.mark.parametrize("where", ["before", "inside"])
def test_dropped_count_carried_across_a_takeover(tmp_path, where):
    """Taken over between the suppressed record and the next one printed:
    the taker prints the carried count (it is the console's, not the
    thread's); after a cut inside the line both notices are checked."""
    t, _ = _carried_trace(takeover=where)
    v = run(tmp_path, t)
    assert v["verdict"] == "pass", v["violations"]
    assert v["serial"]["dropped_notices_checked"] == (2 if where == "inside" else 1)


def test_dropped_count_lost_across_a_takeover(tmp_path):
    # a carry kept by the thread's context: the taker prints no notice
    t, s = _carried_trace(notice=None, takeover="before")
    v = run(tmp_path, t)
    assert violated(v) == {"serial-dropped"}
    assert v["violations"][0]["seq"] == s[5]


def _carried_at_the_end(notice):
    """The trace ends after the suppressed record carried 3; the next
    record (stored in the trace) is printed after it."""
    t = Trace()
    T = t.ctx(0, thread=1)
    s = _stores(t, 6)
    t.acquire(T)
    t.print_rec(T, s[0])
    t.emit(T, s[4], dropped=3, length=0, serial=False)
    t.commit(T, s[4])
    t.release(T)
    if notice is not None:
        t.serial.append("T** %d printk messages dropped **" % notice)
    t.line(s[5], "T")
    return t, s


def test_dropped_count_carried_past_the_trace_end(tmp_path):
    v = run(tmp_path, _carried_at_the_end(3)[0])
    assert v["verdict"] == "pass", v["violations"]
    assert v["serial"]["post_trace_matched"] == 1
    assert v["serial"]["dropped_notices_checked"] == 1
    v = run(tmp_path, _carried_at_the_end(None)[0])
    assert violated(v) == {"serial-dropped"}


# ------------------------------------------------------------ replay markers

MARKER = "** replaying previous printk message **"


def _takeover_trace(marks=(True,), dropped=0):
    """The thread is taken over in the middle of a record once per entry
    of `marks`, each time by an NMI at emergency priority that prints the
    record again, with the replay marker in front of it when the entry
    is true (before its dropped notice: `dropped` records overwritten
    before the first interrupted record)."""
    t = Trace()
    T = t.ctx(0, thread=1)
    N = t.ctx(0, prio="emergency", ctx="nmi")
    s = [t.store(pstress(1, "task", n, "payload%d" % n)) for n in range(1 + dropped + len(marks))]
    t.acquire(T)
    t.print_rec(T, s[0])
    q = 1 + dropped
    for k, mark in enumerate(marks):
        if k:
            t.acquire(T)
        d = dropped if k == 0 else 0
        t.emit(T, s[q], dropped=d)
        t.partial(s[q], 0.4, "T")
        t.acquire(N, "hostile", prev=T)
        if mark:
            t.serial.append("A" + MARKER)
        t.print_rec(N, s[q], dropped=d)
        t.release(N)
        t.lost(T, "exit_unsafe")
        q += 1
    return t, s


def test_reprint_with_its_marker_passes(tmp_path):
    t, _ = _takeover_trace()
    v = run(tmp_path, t)
    assert v["verdict"] == "pass", v["violations"]
    assert v["serial"]["replay_markers"] == 1
    assert v["serial"]["replay_markers_checked"] == 1


def test_reprint_with_its_marker_before_its_dropped_notice_passes(tmp_path):
    t, _ = _takeover_trace(dropped=2)
    v = run(tmp_path, t)
    assert v["verdict"] == "pass", v["violations"]
    assert v["serial"]["replay_markers_checked"] == 1
    assert v["serial"]["dropped_notices_checked"] == 2


def test_reprint_without_its_marker(tmp_path):
    """On a log whose kernel prints the marker (one reprint has it), a
    reprint without it is a violation."""
    t, s = _takeover_trace(marks=(True, False))
    v = run(tmp_path, t)
    assert violated(v) == {"serial-replay"}
    assert v["violations_by_rule"]["serial-replay"] == 1
    assert v["violations"][0]["seq"] == s[2]
    assert v["serial"]["replay_markers_checked"] == 1


def test_reprints_without_markers_on_a_kernel_before_them_pass(tmp_path):
    """A log with no marker at all is from a kernel before the marker:
    its reprints are not held to it."""
    t, _ = _takeover_trace(marks=(False, False))
    v = run(tmp_path, t)
    assert v["verdict"] == "pass", v["violations"]
    assert v["serial"]["replay_markers"] == 0


def test_marker_before_a_record_that_is_no_reprint(tmp_path):
    t = Trace()
    T = t.ctx(0, thread=1)
    s = [t.store(pstress(1, "task", n, "payload%d" % n)) for n in range(3)]
    t.acquire(T)
    t.print_rec(T, s[0])
    t.serial.append("T" + MARKER)
    t.print_rec(T, s[1])
    t.print_rec(T, s[2])
    t.release(T)
    v = run(tmp_path, t)
    assert violated(v) == {"serial-replay"}
    assert v["violations_by_rule"]["serial-replay"] == 1
    assert v["violations"][0]["seq"] == s[1]


def test_interrupted_reprint_keeps_its_marker(tmp_path):
    """A reprint that is itself taken over prints its marker and a cut
    line; the next owner's reprint has its own marker."""
    t = Trace()
    T = t.ctx(0, thread=1)
    E = t.ctx(1, prio="emergency")
    P = t.ctx(2, prio="panic")
    s = [t.store(pstress(1, "task", n, "payload%d" % n)) for n in range(3)]
    t.acquire(T)
    t.print_rec(T, s[0])
    t.emit(T, s[1])
    t.partial(s[1], 0.4, "T")
    t.acquire(E, "hostile", prev=T)
    t.lost(T, "exit_unsafe")
    t.emit(E, s[1])
    t.serial.append("A" + MARKER)
    t.partial(s[1], 0.5, "A")
    t.acquire(P, "hostile", prev=E)
    t.lost(E, "exit_unsafe")
    t.serial.append("A" + MARKER)
    t.print_rec(P, s[1])
    t.print_rec(P, s[2])
    t.release(P)
    v = run(tmp_path, t)
    assert v["verdict"] == "pass", v["violations"]
    assert v["serial"]["replay_markers"] == 2
    assert v["serial"]["replay_markers_checked"] == 2


def test_marker_glued_to_the_cut_line(tmp_path):
    """The thread cut right after its context mark: the taker's marker
    lands on the same line (`TA** replaying ...`) and is read as its own
    line."""
    t, _ = _takeover_trace()
    i = t.serial.index("A" + MARKER)
    t.serial[i - 1:i + 1] = ["T" + "A" + MARKER]
    v = run(tmp_path, t)
    assert v["verdict"] == "pass", v["violations"]
    assert v["serial"]["replay_markers_checked"] == 1
