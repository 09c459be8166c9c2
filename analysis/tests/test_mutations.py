"""Mutation suite: the analysis on a recorded real run, mutated.

data/stress-20261203-095925 is a real 4-CPU stress run (hostile
takeovers, handovers, reprints, 3390 records).  Each mutation below
changes one thing in one of its inputs - the serial log, the `trace-cmd
report` text, the trace.dat bytes or the stressor's stats.txt - and says
what the analysis must answer: the exact set of violated rules (exit 1),
`incomplete` (exit 2) with a reason naming what is wrong, or a pass
(exit 0) for the benign controls.  That run has no console state words
and is judged by the clocks (`--order timestamps`).  Most mutations also
run on two shipped runs that carry the state chain, one of each
architecture (CHAIN_RUNS: i386 stress-20261204-172845, x86_64
panic-end-20261204-165730), judged in chain order; an operator that
edits a transition keeps the chain whole (mutations.drop_transition()
and its kin).  See docs/analysis.md, "Mutation suite".

A mutation the analysis does not catch yet carries `today="..."`: what
it answers instead.  It runs as a strict xfail, so the fix that makes it
caught fails the suite (XPASS) until that one `today=` is removed.
"""

import json
import lzma
import os
import re
import shutil
import subprocess
import sys
import tempfile

import pytest

from analysis import tracedat
from analysis.tests.verdicts import CLOCKS_ARGS, check_results
from analysis.pstress import parse_pstress, pstress2_text
from analysis.serial import REC
from analysis.tests import mutations as mu
from analysis.tests.verdicts import violated

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
RECORDED = os.path.join(HERE, "data", "stress-20261203-095925")
TRACE_CMD = shutil.which("trace-cmd")

pytestmark = pytest.mark.skipif(TRACE_CMD is None, reason="trace-cmd not installed")


# ---------------------------------------------------------------- outcomes
class Outcome:
    """What the analysis must answer."""

    def __init__(self, exit_code, rules=(), words=()):
        self.exit_code, self.rules, self.words = exit_code, frozenset(rules), words

    def __repr__(self):
        if self.exit_code == 1:
            return "fails(%s)" % ", ".join(sorted(self.rules))
        if self.exit_code == 2:
            return "incomplete(%s)" % ", ".join(self.words)
        return "passes"


def fails(*rules):
    """exit 1 with exactly these rules violated"""
    return Outcome(1, rules)


def incomplete(*words):
    """exit 2, the reasons (or error) mention each word"""
    return Outcome(2, (), words)


PASSES = Outcome(0)


def why(v):
    return "; ".join([v.get("error") or ""] + list(v.get("reasons", [])))


class WrongAnswer(AssertionError):
    """The analysis answered something else than the mutation expects.
    The only failure an xfail accepts: a broken operator or check is an
    AssertionError of its own and fails the test even under xfail."""


def assert_outcome(v, want):
    got = v["exit_code"]
    summary = "exit %d, violated %s, reasons: %s" % (got, sorted(violated(v)), why(v)[:300])
    if want.exit_code == 1:
        ok = got == 1 and violated(v) == want.rules
    elif want.exit_code == 2:
        # damaged or incomplete input is never blamed on the kernel
        text = why(v).lower()
        ok = got == 2 and v["verdict"] == "incomplete" and \
            all(w.lower() in text for w in want.words)
    else:
        ok = got == 0 and v["verdict"] == "pass" and not violated(v)
    if not ok:
        raise WrongAnswer(summary)


def escapes(today):
    return pytest.mark.xfail(strict=True, raises=WrongAnswer, reason="today: " + today)


class M:
    """One mutation: name, the input it runs from ("text": the report
    text and the serial log; "dat": trace.dat and the serial log), the
    operator (Run -> Run), the expected outcome, and `today` when the
    analysis answers something else today (a strict xfail)."""

    def __init__(self, name, source, op, expect, today=None, check=None):
        self.name, self.source, self.op, self.expect, self.today = \
            name, source, op, expect, today
        # check(verdict, verdict of the unchanged run, mutated run): the
        # counters that show a benign change was seen and tolerated, or
        # what else the answer must say
        self.check = check

    def param(self, reader=None):
        """The pytest param of this mutation (with one reader for "dat";
        `today` may then be a dict: reader -> what it answers today)."""
        today = self.today.get(reader) if isinstance(self.today, dict) else self.today
        marks = ()
        if today:
            marks = escapes(today)
        if reader is None:
            return pytest.param(self, id=self.name, marks=marks)
        return pytest.param(self, reader, id="%s-%s" % (self.name, reader), marks=marks)


# ---------------------------------------------------------------- inputs
@pytest.fixture(scope="session")
def recorded(tmp_path_factory):
    """The recorded run as a mutations.Run, with its report text from
    `trace-cmd report -i trace.dat` (the text reader's own command)."""
    with open(os.path.join(RECORDED, "trace.dat"), "rb") as f:
        dat = f.read()
    with lzma.open(os.path.join(RECORDED, "console.log.xz")) as f:
        serial = f.read()
    rep = subprocess.run([TRACE_CMD, "report", "-i", os.path.join(RECORDED, "trace.dat")],
                         capture_output=True, check=True).stdout.decode("latin-1")
    texts = {}
    for n in ("stats.txt", "printk.txt"):
        with open(os.path.join(RECORDED, n)) as f:
            texts[n] = f.read()
    return mu.Run.load(serial, rep, dat, texts["stats.txt"], texts["printk.txt"])


def write_run(d, run, source):
    d.mkdir()
    (d / "console.log").write_bytes(run.serial_bytes())
    (d / "stats.txt").write_text(run.stats)
    (d / "printk.txt").write_text(run.printk)
    if source == "text":
        (d / "report.txt").write_text(run.report_text(), encoding="latin-1")
    else:
        (d / "trace.dat").write_bytes(run.dat)
    return d


def analyse_text(d):
    return check_results(str(d), report=str(d / "report.txt"), serial=str(d / "console.log"))


def analyse_dat(d, readers):
    """{reader: verdict} of the CLI on results dir d, each reader in a
    child process (side by side): a damaged trace.dat must not take the
    test run down with it if a reader crashes."""
    procs = {}
    for rd in readers:
        out = d / ("verdict-%s.json" % rd)
        procs[rd] = out, subprocess.Popen(
            [sys.executable, "-m", "analysis", "check", str(d), "--reader", rd, "-q", *CLOCKS_ARGS,
             "-o", str(out)], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True)
    verdicts = {}
    for rd, (out, p) in procs.items():
        _, err = p.communicate()
        if p.returncode < 0 or not out.exists():
            verdicts[rd] = {"exit_code": p.returncode, "verdict": "crashed",
                            "violations_by_rule": {},
                            "error": "analysis died (rc %d): %s" % (p.returncode, err[-300:])}
            continue
        with open(out) as f:
            verdicts[rd] = json.load(f)
        assert verdicts[rd]["exit_code"] == p.returncode, (verdicts[rd]["exit_code"],
                                                           p.returncode)
    return verdicts


def mutate(recorded, m):
    new = m.op(recorded)
    changed = (new.serial_bytes() != recorded.serial_bytes() or
               new.report_text() != recorded.report_text() or new.dat != recorded.dat or
               new.stats != recorded.stats)
    assert changed, "mutation %s changed nothing" % m.name
    return new


_READER_COUNTS = """
import collections, json, sys
from analysis import tracedat
from analysis.traceparse import ReportStats, Event, Store
n = collections.Counter()
st = ReportStats()
with tracedat.DatReader(sys.argv[1]) as r:
    for it in r.items(st):
        if isinstance(it, (Event, Store)):
            n[it.cpu] += 1
print(json.dumps(n))
"""


def reader_counts(path):
    """Events per CPU the libtracecmd reader yields (in a child)."""
    p = subprocess.run([sys.executable, "-c", _READER_COUNTS, str(path)], cwd=REPO,
                       capture_output=True, text=True, check=True)
    return {int(k): v for k, v in json.loads(p.stdout).items()}


# ================================================================ mutations
# ---- serial log -------------------------------------------------------
def at(op, **kw):
    """op with other arguments than its own defaults (another target, in
    a smaller run)."""
    def g(r):
        return op(r, **kw)
    g.__name__ = op.__name__
    return g


def payload_end(ln):
    """Where the payload of a stressor record's line ends: the line's end
    (format version 1), or its ` k=` (version 2)."""
    return ln.rindex(" k=") if " pstress v=2 " in ln else len(ln)


def s_drop_record(r, n=40):
    i, _ = r.plain(n)
    return mu.drop_serial_line(r, i)


def s_payload_byte(r, n=60):
    i, _ = r.plain(n)
    ln = r.serial[i]
    j = payload_end(ln) - 10               # inside the payload
    return mu.replace_serial_line(r, i, ln[:j] + ("#" if ln[j] != "#" else "%") + ln[j + 1:])


def _adjacent_plain(r, n):
    """The n-th plain record whose next serial line is a plain record too."""
    recs = r.plain_records()
    for (i, s), (j, t) in zip(recs[n:], recs[n + 1:]):
        if j == i + 1:
            return i, j
    raise AssertionError("no two adjacent plain records")


def s_swap(r, n=80):
    i, j = _adjacent_plain(r, n)

    def swap(ls):
        ls[i], ls[j] = ls[j], ls[i]
    return mu.serial_edit(r, swap)


def s_header_n(r, n=100):
    i, _ = r.plain(n)
    ln = r.serial[i]
    k = ln.index(" n=") + 3
    d = ln[k]
    return mu.replace_serial_line(r, i, ln[:k] + ("1" if d != "1" else "2") + ln[k + 1:])


def s_forged_kernel_line(r, n=120):
    i, _ = r.plain(n)
    return mu.insert_serial_lines(r, i + 1, [r.prefix_of(i) + "forged: a kernel line no record"
                                             " of the trace explains"])


def s_cut_copy_before(r, n=140):
    # the record's line cut in the middle, then the record in full:
    # a partial line, but the attempt never lost the console
    i, _ = r.plain(n)
    return mu.insert_serial_lines(r, i, [r.serial[i][:60]])


def s_copy_after(r, n=160):
    i, _ = r.plain(n)
    return mu.insert_serial_lines(r, i + 1, [r.serial[i]])


def s_copy_before(r):
    # a complete copy 5 records before the record's turn
    recs = r.plain_records()
    i, _ = recs[185]
    j, _ = recs[180]
    return mu.insert_serial_lines(r, j, [r.serial[i]])


def _plain_lines_before(r, n, lines):
    """(serial index of the n-th plain record, index of the first plain
    record at least `lines` serial lines before it)."""
    recs = r.plain_records()
    i, _ = recs[n]
    j = max(j for j, _ in recs if j <= i - lines)
    return i, j


def s_copy_far_before(r):
    # a complete copy 150 lines before the record's turn
    i, j = _plain_lines_before(r, 1500, 150)
    return mu.insert_serial_lines(r, j, [r.serial[i]])


def s_spurious_dropped(r, n=200):
    i, _ = r.plain(n)
    ctxc = r.serial[i][:1] if r.serial[i][:1] in "AT" else ""
    return mu.insert_serial_lines(r, i, ["%s** 3 printk messages dropped **" % ctxc])


def _last_commit_line(r):
    return r.serial_line_of_seq(r.committed_seqs()[-1])


def s_post_trace_copy(r):
    # after the serial console's last traced commit: a copy of the last
    # stressor record it printed
    end = _last_commit_line(r)
    i = max(i for i, _ in r.plain_records() if i < end)
    return mu.insert_serial_lines(r, end + 1, [r.serial[i]])


def s_post_trace_forged(r):
    # a stressor record with a valid crc that the stressor never
    # produced: n = the producer's attempted count (stats.txt)
    end = _last_commit_line(r)
    run_id = int(dict(t.split("=", 1) for t in r.stats.split("\n", 1)[0].split())["run"])
    prod = next(ln.split() for ln in r.stats.splitlines()
                if ln.startswith("producer ") and "attempted=0 " not in ln)
    kv = dict(t.split("=", 1) for t in prod[1:])
    line = mu.stressor_line(r.prefix_of(end + 1), run_id, int(kv["cpu"]), kv["ctx"],
                            int(kv["attempted"]), "forged" * 10 + "0123", kv.get("writer"))
    return mu.insert_serial_lines(r, end + 1, [line])


def _presync_line(r):
    # the serial line of a record committed before the first committed
    # stressor record (where the serial check syncs)
    k = r.first_stressor_commit()
    assert k > 0, "no record committed before the first stressor record"
    return r.serial_line_of_seq(r.committed_seqs()[k - 1])


def s_presync_drop(r):
    return mu.drop_serial_line(r, _presync_line(r))


def s_presync_copy(r):
    i = _presync_line(r)
    return mu.insert_serial_lines(r, i + 1, [r.serial[i]])


def s_other_run(r):
    # the serial log of run 2 of the stressor: every stressor line r=2
    # (a version 2 record with its checksum made right: it covers the
    # header)
    out = []
    for ln, k in zip(r.serial, r.kinds):
        if k[0] == REC and k[2].startswith("pstress r=1 "):
            ln = ln.replace("pstress r=1 ", "pstress r=2 ", 1)
        elif k[0] == REC and k[2].startswith("pstress v=2 r=1 ") and parse_pstress(k[2])[2]:
            (_, cpu, ctx, writer), n = parse_pstress(k[2])[:2]
            payload = k[2][k[2].index(" l=") + 1:].split(" ", 1)[1].rsplit(" k=", 1)[0]
            assert " " not in payload
            ln = ln[:len(ln) - len(k[2])] + pstress2_text(2, cpu, ctx, writer, n, len(payload),
                                                          payload=payload)
        out.append(ln)
    # (the shipped runs print 446 to 5660 stressor records)
    assert sum(1 for ln in out if " r=2 " in ln) > 400
    return r.replace(serial=out)


def s_boot_only(r):
    # the log cut before the stressor starts: only the boot
    first = min(i for i, _ in r.plain_records())
    start = max(i for i in range(first) if "printk_stress: start" in r.serial[i])
    return r.replace(serial=r.serial[:start])


NOISE = ["pns: user space says hello", "sh-5.1# echo noise", ""]
NOISE_LINES = len(NOISE)


def s_user_noise(r):
    # user space output between lines (docs: ignored)
    recs = r.plain_records()
    new = list(r.serial)
    for n in (900, 600, 300):      # 3 places
        i = recs[n][0]
        new[i:i] = NOISE
    return r.replace(serial=new)


def s_timestamp_changed(r, n=450):
    # the serial lines are matched by their text, not their time
    i, _ = r.plain(n)
    ln = r.serial[i]
    k = ln.index("] ") - 1                 # the last digit of the usec
    return mu.replace_serial_line(r, i, ln[:k] + str((int(ln[k]) + 5) % 10) + ln[k + 1:])


def s_garbled_prefix(r, n=500):
    # a stray byte in the `[  sec.usec]` prefix (documented: corrupt)
    i, _ = r.plain(n)
    ln = r.serial[i]
    k = ln.index(".") - 1
    return mu.replace_serial_line(r, i, ln[:k + 1] + "o" + ln[k + 1:])


def s_stray_lf(r, n=550):
    # a record cut in two by a stray LF with no takeover to explain it
    i, _ = r.plain(n)
    ln = r.serial[i]
    k = ln.index("] pstress ") + 4
    return serial_split(r, i, k)


def serial_split(r, i, k):
    ln = r.serial[i]
    return mu.serial_edit(r, lambda ls: ls.__setitem__(slice(i, i + 1), [ln[:k], ln[k:]]))


def s_moved_later(r, n=600):
    # a record printed 30 records after its turn
    recs = r.plain_records()
    i, _ = recs[n]
    j, _ = recs[n + 30]
    ln = r.serial[i]
    return mu.serial_edit(r, lambda ls: (ls.insert(j + 1, ln), ls.pop(i)))


def s_moved_far_later(r):
    # a record printed 600 lines after its turn (beyond the matcher's
    # 400-line look-ahead)
    i, j = _plain_lines_before(r, 2200, 600)
    ln = r.serial[j]
    return mu.serial_edit(r, lambda ls: (ls.insert(i + 1, ln), ls.pop(j)))


def s_two_bytes_in_payload(r, n=1200):
    i, _ = r.plain(n)
    ln = r.serial[i]
    j = payload_end(ln) - 20
    return mu.replace_serial_line(r, i, ln[:j] + "\x00\x00" + ln[j:])


def s_payload_byte_lost(r, n=1250):
    i, _ = r.plain(n)
    ln = r.serial[i]
    j = payload_end(ln) - 20
    return mu.replace_serial_line(r, i, ln[:j] + ln[j + 1:])


def s_replaced_by_next(r, n=1100):
    # a record's line replaced by the next record's: the one missing,
    # the other printed twice, the extra copy before its turn
    i, j = _adjacent_plain(r, n)
    return mu.replace_serial_line(r, i, r.serial[j])


def s_cut_lines_removed(r):
    # the interrupted attempts wrote nothing (documented: allowed)
    cut = set(r.cut_lines())
    assert cut
    return r.replace(serial=[ln for i, ln in enumerate(r.serial) if i not in cut])


def s_cut_line_completed(r):
    # an interrupted attempt wrote its whole line before it noticed the
    # loss (documented: two complete copies, the first is its own)
    i = r.cut_lines()[0]
    text = r.kinds[i][2]
    full = [t for t in r.store_texts().values() if t.startswith(text)]
    assert len(full) == 1
    return mu.replace_serial_line(r, i, r.prefix_of(i) + full[0])


def s_ctx_letter(r, n=950):
    # the context letter is not checked
    i, _ = r.plain(n)
    ln = r.serial[i]
    return mu.replace_serial_line(r, i, ("T" if ln[0] == "A" else "A") + ln[1:])


def s_untraced_tail_removed(r):
    # the log ends with the serial console's last traced record: the
    # lines of records stored after the trace are not required when the
    # trace stored none of them
    return r.replace(serial=r.serial[:_last_commit_line(r) + 1])


def _stressor_of_plain(r, n):
    """(serial index, (run, cpu, ctx), n) of the n-th plain record."""
    i, _ = r.plain(n)
    p = parse_pstress(r.kinds[i][2])
    return i, p[0], p[1]


def s_forged_stressor_record(r, n=1340):
    # a valid stressor record (crc right) of a producer and n that the
    # serial log shows with another payload: no emission explains it
    i, prod, n = _stressor_of_plain(r, n)
    line = mu.stressor_line(r.prefix_of(i), prod[0], prod[1], prod[2], n, "Z" * 64,
                            *prod[3:])
    return mu.insert_serial_lines(r, i + 3, [line])


def s_valid_other_payload(r, n=1380):
    # the record's line with another payload and its right crc: a valid
    # stressor record, but not the text the trace stored
    i, prod, n = _stressor_of_plain(r, n)
    line = mu.stressor_line(r.prefix_of(i), prod[0], prod[1], prod[2], n, "Z" * 64,
                            *prod[3:])
    return mu.replace_serial_line(r, i, line)


def s_blank_lines(r):
    # an empty line after every line (user space, a terminal)
    return r.replace(serial=[x for ln in r.serial for x in (ln, "")])


def s_earlier_run(r):
    # valid records of an earlier stressor run (r=0) in the boot part,
    # before run 1 starts: not this run's, not the trace's
    start = next(i for i, ln in enumerate(r.serial) if "printk_stress: start" in ln)
    pre = r.prefix_of(start - 1)
    writer = "task0" if " writer=" in r.stats else None
    lines = [mu.stressor_line(pre, 0, c, "task", n, "abcdefgh" * 8, writer)
             for c in range(2) for n in range(3)]
    return mu.insert_serial_lines(r, start, lines)


def s_uart_noise(r, n=1800):
    # bytes of no kernel line (a UART glitch, a terminal escape)
    i, _ = r.plain(n)
    return mu.insert_serial_lines(r, i, ["\x00\x00\xff\xfe", "\x1b[0m"])


def s_lf_endings(r):
    assert r.eol == "\r\n"
    return r.replace(eol="\n")


# ---- dropped records, synthesised from the report text and the serial log
DROPPED = 3


def _with_dropped(r, n=DROPPED, notice="%s** %d printk messages dropped **"):
    """The run as if the ringbuffer had overwritten n records the console
    had not printed yet: their emissions and serial lines removed, the
    next emission of the same owner counts dropped=n and its line has
    the notice before it (notice=None: no notice)."""
    pairs = mu.owner_run_of_plain_records(r, 500, n)
    gone, nxt = pairs[:-1], pairs[-1][0]
    drop_idx = {e.idx for p in gone for e in p}
    nxt_line = r.serial_line_of_seq(nxt.int("seq"))
    gone_lines = {r.serial_line_of_seq(e.int("seq")) for e, _ in gone}
    report = [mu.set_field(ln, "dropped", n) if i == nxt.idx else ln
              for i, ln in enumerate(r.report) if i not in drop_idx]
    serial = []
    for i, ln in enumerate(r.serial):
        if i in gone_lines:
            continue
        if i == nxt_line and notice is not None:
            ctxc = ln[:1] if ln[:1] in "AT" else ""
            serial.append(notice % (ctxc, n))
        serial.append(ln)
    return r.replace(report=report, serial=serial)


def d_dropped_more_than_gap(r):
    # dropped=5 (and its notice) where 3 seqs are missing
    v = _with_dropped(r)
    report = [re.sub(r" dropped=3 ", " dropped=5 ", ln) for ln in v.report]
    serial = [ln.replace("** 3 printk", "** 5 printk") for ln in v.serial]
    return v.replace(report=report, serial=serial)


def d_dropped_but_printed(r):
    # the trace says the records were dropped, the serial log shows them
    # (and no notice)
    return _with_dropped(r).replace(serial=r.serial)


def d_benign(r):
    return _with_dropped(r)


def d_no_notice(r):
    return _with_dropped(r, notice=None)


def d_wrong_n(r):
    # the notice says 4 where the trace dropped 3
    v = _with_dropped(r)
    serial = [ln.replace("** 3 printk", "** 4 printk") for ln in v.serial]
    return v.replace(serial=serial)


def r_dropped_count_no_gap(r, n=700):
    # dropped=2 on an emission right after the previous seq: no gap,
    # the notice on the serial log agrees with the trace
    emit, _ = mu.plain_seq_events(r, n)
    report = list(r.report)
    report[emit.idx] = mu.set_field(report[emit.idx], "dropped", 2)
    i = r.serial_line_of_seq(emit.int("seq"))
    ctxc = r.serial[i][:1] if r.serial[i][:1] in "AT" else ""
    return mu.insert_serial_lines(r.replace(report=report), i,
                                  ["%s** 2 printk messages dropped **" % ctxc])


# ---- report text ------------------------------------------------------
def _dup_line(r, idx):
    return mu.report_edit(r, lambda ls: ls.insert(idx + 1, ls[idx]))


def r_dup_emit(r, n=1000):
    emit, _ = mu.plain_seq_events(r, n)
    return _dup_line(r, emit.idx)


def r_dup_commit(r, n=1100):
    # a 64-bit commit is a transition (it installs seq + 1 in the state
    # word): the copy installs it again, the chain kept whole
    _, commit = mu.plain_seq_events(r, n)
    if mu.is_transition(commit):
        return mu.repeat_transition(r, commit)
    return _dup_line(r, commit.idx)


def _drop_commit(r, commit):
    """r without the commit (a 64-bit commit's transition taken out of
    the chain: the console's seq stays where it was)."""
    if mu.is_transition(commit):
        return mu.drop_transition(r, commit)
    return mu.report_edit(r, lambda ls: ls.pop(commit.idx))


def r_drop_commit(r, n=1200):
    # the line is on the serial log: also a complete line of an attempt
    # that did not lose the console
    _, commit = mu.plain_seq_events(r, n)
    return _drop_commit(r, commit)


def r_drop_commit_and_line(r, n=1250):
    _, commit = mu.plain_seq_events(r, n)
    r2 = mu.drop_serial_line(r, r.serial_line_of_seq(commit.int("seq")))
    return _drop_commit(r2, commit)


def r_commit_after_lost(r):
    # the context that noticed its loss commits its record anyway
    lost = next(e for e in r.console_events("nobkl_lost") if e.get("where") == "can_proceed")
    key = (lost.cpu, lost.get("prio"), lost.get("thread"), lost.get("ctx"))
    emit = max((e for e in r.console_events("nobkl_emit") if e.idx < lost.idx and
                (e.cpu, e.get("prio"), e.get("thread"), e.get("ctx")) == key),
               key=lambda e: e.idx)
    line = r.report[emit.idx].replace("nobkl_emit:  ", "nobkl_commit:", 1)
    line = re.sub(r" len=\d+ dropped=\d+", "", line)
    # at the time of the nobkl_lost it follows: a CPU's timestamps never
    # go back in a trace (the checker takes that as a damaged page)
    ts = re.search(r"\] +(\d+\.\d+):", r.report[lost.idx]).group(1)
    line = re.sub(r"(\] +)\d+\.\d+:", lambda m: m.group(1) + ts + ":", line, count=1)
    if r.arch32:
        # a 32-bit commit is no transition: its words are 0 0
        line += " old_state=0 new_state=0"
    else:
        # a 64-bit commit is a transition, and the state word is no
        # longer the context's after its loss: the kernel's cmpxchg fails
        assert r.arch32 is None, "no commit after a loss on 64-bit"
    return mu.report_edit(r, lambda ls: ls.insert(lost.idx + 1, line))


def r_grant_removed(r):
    # a handover acquire without the owner's grant (of a normal owner,
    # else the first: the chain run has none of a normal owner); with
    # the state words the grant's transition is taken out of the chain,
    # and the acquire saw the word its request installed
    acq = [e for e in r.console_events("nobkl_acquire") if e.get("how") == "handover"]
    a = next((e for e in acq if e.get("prev_prio") == "normal"), acq[0])
    g = max((e for e in r.console_events("nobkl_handover_grant") if e.idx < a.idx),
            key=lambda e: e.idx)
    if mu.is_transition(g):
        return mu.drop_transition(r, g)
    return mu.report_edit(r, lambda ls: ls.pop(g.idx))


def r_takeover_of_panic_owner(r):
    # an emergency takeover shown taking the console from a panic owner
    e = _hostile(r, lambda e: e.get("prio") == "emergency" and e.get("prev_prio") == "normal")
    return mu.report_edit(r, lambda ls: ls.__setitem__(
        e.idx, mu.set_field(ls[e.idx], "prev_prio", "panic")))


def r_record_never_stored(r, n=800):
    # a stressor record that the trace never saw (store, emit, commit
    # and serial line gone; the next emission counts it as dropped, the
    # notice is there): only the stressor's numbering shows the loss.
    # A 64-bit commit's transition is taken out of the chain.
    pairs = mu.owner_run_of_plain_records(r, n, 1)
    (emit, commit), nxt = pairs[0], pairs[1][0]
    seq = emit.int("seq")
    store = next(e for e in r.events if e.name == "nobkl_store" and e.int("seq") == seq)
    ed = mu.ReportEdit(r)
    if mu.is_transition(commit):
        mu.drop_transition(r, commit, ed)
    ed.drop |= {store.idx, emit.idx, commit.idx}
    ed.set(nxt, dropped=1)
    report = ed.done().report
    line = r.serial_line_of_seq(seq)
    nline = r.serial_line_of_seq(nxt.int("seq"))
    ctxc = r.serial[nline][:1] if r.serial[nline][:1] in "AT" else ""
    serial = list(r.serial)
    serial[nline:nline] = ["%s** 1 printk messages dropped **" % ctxc]
    serial.pop(line)
    return r.replace(report=report, serial=serial)


def r_record_never_logged(r, n=850):
    # a record the stressor counts as stored that never reached the
    # ringbuffer: no seq for it (the later seqs one lower), no events,
    # no line; only the stressor's numbering (stats.txt) shows the loss
    # (a 64-bit commit's transition taken out of the chain, the seq in
    # every later state word one lower too)
    _, seq = r.plain(n)
    gone = [e for e in r.events if e.get("seq") == str(seq)]
    assert len(gone) == 3                  # store, emit, commit
    ed = mu.ReportEdit(r)
    commit = gone[2]
    assert commit.name == "nobkl_commit"
    if mu.is_transition(commit):
        mu.drop_transition(r, commit, ed)
        mu.shift_word_seqs(r, seq, -1, ed)
    ed.drop |= {e.idx for e in gone}
    for e in r.events:
        if e.get("seq") is not None and e.int("seq") > seq:
            ed.set(e, seq=e.int("seq") - 1)
    return mu.drop_serial_line(ed.done(), r.serial_line_of_seq(seq))


def r_cut_without_eol(r, n=2000):
    # the report's last line cut, no newline after it
    _, commit = mu.plain_seq_events(r, n)
    return r.replace(report=r.report[:commit.idx] + [r.report[commit.idx][:70]],
                     report_eol=False)


def r_drop_release(r, n=20):
    # the owner never releases: its next direct acquire is of a console
    # it still owns (its transition taken out of the chain: that acquire
    # replaces the owner's word)
    rel = mu.nth_console_event(r, "nobkl_release", n)
    if mu.is_transition(rel):
        return mu.drop_transition(r, rel)
    return mu.report_edit(r, lambda ls: ls.pop(rel.idx))


def r_store_text_changed(r, n=1050):
    # the trace stored another text than the serial log shows
    _, seq = r.plain(n)
    st = next(e for e in r.events if e.name == "nobkl_store" and e.int("seq") == seq)
    return mu.report_edit(r, lambda ls: ls.__setitem__(st.idx, ls[st.idx][:-3] + "XYZ"))


def _kernel_store_text_changed(r, seq):
    # a kernel record (no crc of its own) stored with another text than
    # the serial log shows: its last 3 characters
    st = next(e for e in r.events if e.name == "nobkl_store" and e.int("seq") == seq)
    assert not st.get("text").startswith("pstress ")
    return mu.report_edit(r, lambda ls: ls.__setitem__(st.idx, ls[st.idx][:-3] + "XYZ"))


def r_kernel_store_text_changed(r, after=0):
    # the first kernel record committed after the first stressor record
    # (and after seq `after`) that is on the serial log once
    texts = r.store_texts()
    seqs = r.committed_seqs()[r.first_stressor_commit() + 1:]
    seq = next(s for s in seqs if s > after and not texts[s].startswith("pstress ") and
               len(texts[s]) > 40
               and len(r.serial_index(texts[s].split("\n")[0])) == 1)
    return _kernel_store_text_changed(r, seq)


def r_presync_store_text_changed(r):
    # the record committed before the first stressor record
    return _kernel_store_text_changed(r, r.committed_seqs()[r.first_stressor_commit() - 1])


def r_drop_marker(r, n=900):
    # trace-cmd's marker of lost events before an emission
    e, _ = mu.plain_seq_events(r, n)
    return mu.report_edit(r, lambda ls: ls.insert(e.idx, "CPU:%d [12 EVENTS DROPPED]" % e.cpu))


def r_dup_store(r, n=1420):
    # a record stored again with the same text (a LOG_CONT record's
    # re-store looks like this)
    _, seq = r.plain(n)
    st = next(e for e in r.events if e.name == "nobkl_store" and e.int("seq") == seq)
    return _dup_line(r, st.idx)


def r_drop_store(r, n=1300):
    # the store of a record whose neighbours are stored
    _, seq = r.plain(n)
    st = {e.int("seq"): e for e in r.events if e.name == "nobkl_store"}
    assert seq - 1 in st and seq + 1 in st
    return mu.report_edit(r, lambda ls: ls.pop(st[seq].idx))


def _hostile(r, pred):
    return next(e for e in r.console_events("nobkl_acquire")
                if e.get("how") == "hostile" and pred(e))


def r_takeover_lower_prio(r):
    # an emergency takeover of a normal owner, shown taking an emergency owner
    e = _hostile(r, lambda e: e.get("prio") == "emergency" and e.get("prev_prio") == "normal")
    return mu.report_edit(r, lambda ls: ls.__setitem__(
        e.idx, mu.set_field(ls[e.idx], "prev_prio", "emergency")))


def r_direct_prev_locked(r, n=30):
    # a direct acquire that found the console locked
    e = nth_direct_acquire(r, n)
    return mu.report_edit(r, lambda ls: ls.__setitem__(
        e.idx, mu.set_field(ls[e.idx], "prev_locked", 1)))


def nth_direct_acquire(r, n):
    return mu.nth_console_event(r, "nobkl_acquire", n, lambda e: e.get("how") == "direct")


def _regrant(r, g, **to):
    """r with grant g naming another waiter (to_cpu, to_prio); with the
    state words the word it installs names that waiter too, until the
    next owner's (the chain whole)."""
    ed = mu.ReportEdit(r)
    ed.set(g, **to)
    if mu.has_words(g):
        bits = {"cpu": to["to_cpu"]} if "to_cpu" in to else {"cur_prio": to["to_prio"]}
        mu.restate(r, g, ed, **bits)
    return ed.done()


def r_grant_wrong_cpu(r, n=0):
    g = mu.nth_console_event(r, "nobkl_handover_grant", n)
    return _regrant(r, g, to_cpu=(g.int("to_cpu") + 1) % 4)


def r_grant_wrong_prio(r):
    # a grant to the waiter's CPU with a prio it did not request at
    g = mu.nth_console_event(r, "nobkl_handover_grant", 1)
    return _regrant(r, g, to_prio="panic" if g.get("to_prio") != "panic" else "emergency")


def r_release_handover_without_grant(r, n=30):
    # with the state words a handover=1 release reports no transition
    # (0 0, its grant did): without a grant the owner's word stays
    rel = mu.nth_console_event(r, "nobkl_release", n, lambda e: e.get("handover") == "0")
    line = mu.set_field(r.report[rel.idx], "handover", 1)
    if mu.is_transition(rel):
        line = mu.set_field(mu.set_field(line, "old_state", 0), "new_state", 0)
        return mu.drop_transition(r, rel, keep=line)
    return mu.report_edit(r, lambda ls: ls.__setitem__(rel.idx, line))


def r_thread_hostile(r):
    # a hostile takeover by an atomic context shown as the printer
    # thread's: thread=1 on its events from the acquire to its release
    # (and in the state words that name it as the owner).  Of another
    # CPU than the owner it takes the console from: on that CPU's
    # printer thread it would be the victim's own stream
    e = _hostile(r, lambda e: e.get("thread") == "0" and e.get("prev_cpu") != str(e.cpu))
    ed = mu.ReportEdit(r)
    for x in mu.owner_events(r, e):
        ed.set(x, thread=1)
    if mu.has_words(e):
        mu.restate(r, e, ed, thread=1)
    return ed.done()


def r_malformed_number(r, n=1500):
    emit, _ = mu.plain_seq_events(r, n)
    seq = emit.get("seq")
    return mu.report_edit(r, lambda ls: ls.__setitem__(
        emit.idx, mu.set_field(ls[emit.idx], "seq", seq[:1] + "x" + seq[2:])))


def _edit_emit(r, n, fn):
    """The report with the emission of the n-th plain record's line
    replaced by fn(line, emit)."""
    emit, _ = mu.plain_seq_events(r, n)
    return mu.report_edit(r, lambda ls: ls.__setitem__(emit.idx, fn(ls[emit.idx], emit)))


def r_seq_negative(r, n=1850):
    # a seq is unsigned: -5 is no seq
    return _edit_emit(r, n, lambda ln, e: mu.set_field(ln, "seq", -5))


def r_prio_garbage(r, n=2000):
    # prio is one of none/normal/emergency/panic
    return _edit_emit(r, n, lambda ln, e: mu.set_field(ln, "prio", "bogus"))


def r_absent_cpu(r, n=1900):
    # an event on CPU 9 of a trace of 4 CPUs (cpus=4)
    assert r.report[0] == "cpus=4"
    return _edit_emit(r, n, lambda ln, e: mu.set_cpu(ln, 9))


def r_field_missing(r, n=1700):
    return _edit_emit(r, n, lambda ln, e: re.sub(r" dropped=\d+", "", ln))


def r_unknown_event(r, n=1650):
    # an emission line again, as an event the analysis does not know
    emit, _ = mu.plain_seq_events(r, n)
    line = r.report[emit.idx].replace("nobkl_emit: ", "nobkl_foo:  ", 1)
    return mu.report_edit(r, lambda ls: ls.insert(emit.idx, line))


def r_lines_merged(r):
    # an emission and its commit on one line (a lost newline)
    pairs = mu.owner_run_of_plain_records(r, 1600, 1)
    emit, commit = pairs[0]
    assert commit.idx == emit.idx + 1
    return mu.report_edit(r, lambda ls: ls.__setitem__(
        slice(emit.idx, emit.idx + 2), [ls[emit.idx] + ls[emit.idx + 1].lstrip()]))


def r_timestamp_back(r, n=1950):
    # an emission 5 s before the events around it on its CPU
    def back(ln, e):
        return ln.replace(e.ts, "%.6f" % (float(e.ts) - 5), 1)
    return _edit_emit(r, n, back)


def r_cut_at_line(r, n=2000):
    # the report ends (at a line boundary) after the commit of a record
    # in the middle of the run
    _, commit = mu.plain_seq_events(r, n)
    return r.replace(report=r.report[:commit.idx + 1])


def r_cut_in_line(r, n=2000):
    _, commit = mu.plain_seq_events(r, n)
    return r.replace(report=r.report[:commit.idx] + [r.report[commit.idx][:70]])


def _start_at(r, idx):
    """The report beginning at line idx (the cpus= header kept)."""
    assert r.report[0].startswith("cpus=")
    return r.replace(report=r.report[:1] + r.report[idx:])


def _presync_emit(r):
    """The emission of the last record committed before the first
    stressor record: a start of the trace there loses no stressor
    record (stats.txt wants them all on the serial log)."""
    seq = r.committed_seqs()[r.first_stressor_commit() - 1]
    return next(e for e in r.console_events("nobkl_emit") if e.int("seq") == seq)


def r_start_after_emit(r):
    # the trace starts between an emission and its commit
    return _start_at(r, _presync_emit(r).idx + 1)


def r_start_while_owned(r):
    # the trace starts after an owner's acquire, before its emission
    emit = _presync_emit(r)
    a = max((e for e in r.console_events("nobkl_acquire") if e.idx < emit.idx),
            key=lambda e: e.idx)
    assert mu.next_console_event(r, a.idx) is emit
    return _start_at(r, a.idx + 1)


def r_start_after_stressor_emit(r):
    # the trace starts between the emission and the commit of the first
    # stressor record: the records stored before it have no store
    # event, their lines come before the serial check's sync
    seq = r.committed_seqs()[r.first_stressor_commit()]
    emit = next(e for e in r.console_events("nobkl_emit") if e.int("seq") == seq)
    return _start_at(r, emit.idx + 1)


def r_latency_format(r):
    # the report as `trace-cmd report -l` prints it (docs: accepted)
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "trace.dat")
        with open(src, "wb") as f:
            f.write(r.dat)
        out = subprocess.run([TRACE_CMD, "report", "-l", "-i", src], capture_output=True,
                             check=True).stdout.decode("latin-1")
    return r.replace(report=out.rstrip("\n").split("\n"))


def _end_after_store(r, last_stressor):
    """The report cut after the store of the serial console's last
    committed record, or (last_stressor) of the last stressor record:
    the trace ends raggedly, with records stored and not committed that
    the serial log shows after the last traced commit."""
    texts = r.store_texts()
    stores = [e for e in r.events if e.name == "nobkl_store"]
    if last_stressor:
        end = max(e.idx for e in stores if texts[e.int("seq")].startswith("pstress "))
    else:
        last = r.committed_seqs()[-1]
        end = next(e.idx for e in stores if e.int("seq") == last)
    return r.replace(report=r.report[:end + 1])


def post_trace_records(r):
    """Seqs stored in r's trace and not committed by the console."""
    committed = set(r.committed_seqs())
    return sorted(s for s in r.store_texts() if s not in committed)


def r_end_after_last_store(r):
    return _end_after_store(r, False)


def r_end_after_last_stressor_store(r):
    return _end_after_store(r, True)


def _post_trace_run(r, n):
    """(the trace cut after its last stressor store, the serial indices
    of n consecutive seqs stored after its last commit, printed on n
    consecutive lines), from the 200th such record on."""
    cut = _end_after_store(r, True)
    post = post_trace_records(cut)
    for k in range(200, len(post) - n):
        seqs = post[k:k + n]
        lines = [r.serial_line_of_seq(s) for s in seqs]
        if seqs[-1] - seqs[0] == n - 1 and lines[-1] - lines[0] == n - 1:
            return cut, lines
    raise AssertionError("no %d post-trace records in a row" % n)


def s_post_trace_record_removed(r):
    cut, lines = _post_trace_run(r, 1)
    return mu.drop_serial_line(cut, lines[0])


def s_post_trace_records_swapped(r):
    # two records stored after the last traced commit, swapped on the log
    cut, (i, j) = _post_trace_run(r, 2)

    def swap(ls):
        ls[i], ls[j] = ls[j], ls[i]
    return mu.serial_edit(cut, swap)


def _post_trace_notice(r, shown):
    cut, lines = _post_trace_run(r, 3)
    ln = r.serial[lines[0]]
    ctxc = ln[:1] if ln[:1] in "AT" else ""
    serial = list(cut.serial)
    serial[lines[0]:lines[-1] + 1] = ["%s** %d printk messages dropped **" % (ctxc, shown)]
    return cut.replace(serial=serial)


def s_post_trace_dropped(r):
    # three records stored after the last traced commit overwritten
    # before the console printed them: the notice in their place
    return _post_trace_notice(r, 3)


def s_post_trace_dropped_wrong_n(r):
    # the notice says 2 where 3 records are missing
    return _post_trace_notice(r, 2)


def r_second_console(r):
    # a second nobkl console (ttyS1, no serial log) with the same history
    out = []
    for ln in r.report:
        out.append(ln)
        if " con=%s " % mu.CON in ln:
            out.append(ln.replace(" con=%s " % mu.CON, " con=ttyS1 ", 1))
    return r.replace(report=out)


def r_second_console_commit_removed(r, n=1270):
    # ... that skips one record: its no-loss, the serial console's log
    # is not concerned
    two = r_second_console(r)
    _, commit = mu.plain_seq_events(r, n)
    seq = commit.get("seq")
    idx = next(i for i, ln in enumerate(two.report) if "nobkl_commit" in ln and
               " con=ttyS1 seq=%s " % seq in ln)
    return mu.report_edit(two, lambda ls: ls.pop(idx))


# ---- who the state word names (prev_* of an acquire, owner_* of a loss) -
def _other_cpu(*cpus):
    return next(c for c in range(4) if c not in cpus)


def r_takeover_names_another_owner(r):
    # a hostile acquire whose prev_cpu names a CPU that neither owns the
    # console nor ever acquires it as that context: every acquire is
    # traced, so the trace lost one or the field is damaged (before:
    # pass, the named owner was kept as an acquire to come)
    e = _hostile(r, lambda e: True)
    return mu.report_edit(r, lambda ls: ls.__setitem__(e.idx, mu.set_field(
        ls[e.idx], "prev_cpu", _other_cpu(e.int("prev_cpu"), e.cpu))))


def r_hostile_prev_unlocked(r):
    # a hostile acquire of a free state word: the kernel's hostile path
    # runs only for a locked one (before: taken as the owner's release
    # traced late; duplicate and serial-partial for its reprint)
    e = _hostile(r, lambda e: True)
    return mu.report_edit(r, lambda ls: ls.__setitem__(
        e.idx, mu.set_field(ls[e.idx], "prev_locked", 0)))


def r_handover_names_another_owner(r):
    # a handover acquire whose prev_cpu names another owner than the one
    # its request named and that granted it (before: pass)
    e = next(e for e in r.console_events("nobkl_acquire") if e.get("how") == "handover")
    return mu.report_edit(r, lambda ls: ls.__setitem__(e.idx, mu.set_field(
        ls[e.idx], "prev_cpu", _other_cpu(e.int("prev_cpu"), e.cpu))))


def _never_owner(r):
    """(cpu, prio) of no acquire and no grant target of the trace."""
    owners = {(e.cpu, e.get("prio")) for e in r.console_events("nobkl_acquire")}
    owners |= {(e.int("to_cpu"), e.get("to_prio"))
               for e in r.console_events("nobkl_handover_grant")}
    return next((c, p) for p in ("normal", "emergency", "panic") for c in range(4)
                if (c, p) not in owners)


def r_lost_names_another_owner(r):
    # a nobkl_lost naming an owner the trace never shows acquiring the
    # console (before: pass; the loss's owner was not checked)
    e = next(e for e in r.console_events("nobkl_lost") if e.get("owner_prio") != "none")
    cpu, prio = _never_owner(r)
    return mu.report_edit(r, lambda ls: ls.__setitem__(e.idx, mu.set_field(
        mu.set_field(ls[e.idx], "owner_cpu", cpu), "owner_prio", prio)))


def r_console_name_bit(r, n=1175):
    # one bit of an emission's console name: ttyS0 -> ttyS4, a console
    # with that one event (before: no-loss on both consoles)
    emit, _ = mu.plain_seq_events(r, n)
    return mu.report_edit(r, lambda ls: ls.__setitem__(
        emit.idx, ls[emit.idx].replace(" con=ttyS0 ", " con=ttyS4 ", 1)))


# ---- stats.txt (the stressor's own counts) -----------------------------
def _stats_producer(r, attempted, stored):
    """stats.txt with the first producer that made records counting
    `attempted` and `stored` more."""
    lines = r.stats.split("\n")
    i = next(k for k, ln in enumerate(lines)
             if ln.startswith("producer ") and "attempted=0 " not in ln)
    m = re.search(r"attempted=(\d+) stored=(\d+)", lines[i])
    lines[i] = lines[i].replace(m.group(0), "attempted=%d stored=%d" % (
        int(m.group(1)) + attempted, int(m.group(2)) + stored))
    return r.replace(stats="\n".join(lines))


def st_one_more_stored(r):
    # the stressor stored one record more than the log and trace show
    return _stats_producer(r, 1, 1)


def st_one_refused(r):
    # one more attempt that printk() refused (attempted > stored), with no
    # data-less record in the trace: a refusal that left nothing behind,
    # as when the descriptor ring is full up to a record still reserved
    return _stats_producer(r, 1, 0)


def st_one_refused_dataless(r):
    # one more attempt that printk() refused, and the data-less record it
    # left as the trace's last seq (no console got there)
    r = _stats_producer(r, 1, 0)
    top = max(e.int("seq") for e in r.events if "seq" in e.fields)
    last = r.report[-1] if r.report[-1].strip() else r.report[-2]
    m = re.match(r"(.*?\[\d+\]\s+[\d.]+:)", last)
    line = "%s nobkl_dataless:       seq=%d" % (m.group(1), top + 1)
    return mu.report_edit(r, lambda ls: ls.insert(len(ls) if ls[-1].strip() else len(ls) - 1,
                                                  line))


def st_other_run(r):
    # the stats of run 2 with the log and trace of run 1
    assert r.stats.startswith("run=1 ")
    return r.replace(stats="run=2 " + r.stats[len("run=1 "):])


def st_garbage(r):
    # bytes that are no stressor stats at all
    return r.replace(stats="\x7fELF\x02\x01\x01 garbage where the stats should be\n")


def st_damaged_producer_line(r):
    # one producer's counts unreadable: that producer would go unchecked
    lines = r.stats.split("\n")
    i = next(k for k, ln in enumerate(lines) if ln.startswith("producer ") and
             "attempted=0 " not in ln)
    lines[i] = re.sub(r"attempted=(\d)", r"attempted=\1x", lines[i], count=1)
    return r.replace(stats="\n".join(lines))


def r_store_level_7(r, n=1150):
    # a printed record stored at level 7, where the console loglevel
    # (printk.txt) is 7: the console must not have printed it
    assert r.printk.split()[0] == "7"
    _, seq = r.plain(n)
    st = next(e for e in r.events if e.name == "nobkl_store" and e.int("seq") == seq)
    return mu.report_edit(r, lambda ls: ls.__setitem__(st.idx, mu.set_field(ls[st.idx],
                                                                            "level", 7)))


def r_emit_len_zero(r, n=1160):
    # a printable record emitted with len=0 (nothing written), its line
    # on the log all the same
    return _edit_emit(r, n, lambda ln, e: mu.set_field(ln, "len", 0))


def r_drop_emit(r, n=1170):
    # the emission of a record gone: committed without being written,
    # and its line on the log explained by nothing
    emit, _ = mu.plain_seq_events(r, n)
    return mu.report_edit(r, lambda ls: ls.pop(emit.idx))


def unchanged(r):
    return r


# ---- trace.dat --------------------------------------------------------
STOP_CPU = 1


def _middle_chunk(r, cpu):
    ch = r.chunks(cpu)
    return ch[len(ch) // 2]


def t_stop_cpu_early(r):
    # one bit of the zstd frame magic of the middle chunk of one CPU's
    # data: libtracecmd reads that CPU up to the chunk and stops there
    p, _, _ = _middle_chunk(r, STOP_CPU)
    return r.replace(dat=mu.flip(r.dat, p + 8, 0))


def t_chunk_size(r):
    # the uncompressed size of that chunk + 4096
    p, _, _ = _middle_chunk(r, STOP_CPU)
    return r.replace(dat=mu.flip(r.dat, p + 5, 4))


def t_chunk_csize(r):
    # the compressed size of that chunk, lowest bit
    p, _, _ = _middle_chunk(r, STOP_CPU)
    return r.replace(dat=mu.flip(r.dat, p, 0))


def t_chunk_count(r):
    # the number of chunks of the last CPU's data, + 16
    cpu, off, _ = r.cpu_data()[-1]
    return r.replace(dat=mu.flip(r.dat, off, 4))


def t_truncated(r):
    # cut in the middle of a CPU's data
    _, off, size = r.cpu_data()[2]
    return r.replace(dat=r.dat[:off + size // 2])


def t_cut_at_chunk(r):
    # the file ends where the last CPU's last chunk begins
    cpu, _, _ = r.cpu_data()[-1]
    p, _, _ = r.chunks(cpu)[-1]
    assert len(r.dat) > p
    return r.replace(dat=r.dat[:p])


def t_cut_after_chunk(r):
    # the file ends after the last CPU's first chunk
    cpu, _, _ = r.cpu_data()[-1]
    p, cs, _ = r.chunks(cpu)[0]
    return r.replace(dat=r.dat[:p + 8 + cs])


def t_magic(r):
    return r.replace(dat=mu.flip(r.dat, 3, 0))


def converted(r, *args):
    """r with its trace.dat rewritten by `trace-cmd convert ARGS`."""
    with tempfile.TemporaryDirectory() as d:
        src, dst = os.path.join(d, "in.dat"), os.path.join(d, "out.dat")
        with open(src, "wb") as f:
            f.write(r.dat)
        subprocess.run([TRACE_CMD, "convert"] + list(args) + ["-i", src, "-o", dst],
                       capture_output=True, check=True)
        with open(dst, "rb") as f:
            return r.replace(dat=f.read())


def t_uncompressed(r):
    return converted(r, "--compression", "none")


def t_file_version_6(r):
    return converted(r, "--file-version", "6")


def _middle_page(r, cpu):
    """Offset of the middle ring-buffer page of one CPU's data in an
    uncompressed trace.dat (u64 timestamp, u64 commit, then events)."""
    _, off, size = next(c for c in r.cpu_data() if c[0] == cpu)
    assert size % 4096 == 0
    return off + (size // 4096 // 2) * 4096


def _store_text_at(u, seq, r):
    """Offset in the uncompressed trace.dat u of the text of seq's
    nobkl_store record (the report of r tells the text): the copy right
    after the record's __data_loc word, its level 4 bytes before it."""
    text = r.store_texts()[seq].encode("latin-1")
    hits, p = [], u.dat.find(text)
    while p >= 0:
        if u.dat[p - 4:p - 2] == b",\x00" and u.dat[p - 24:p - 20] == b"\x04\x00\x00\x00":
            hits.append(p)
        p = u.dat.find(text, p + 1)
    assert len(hits) == 1, hits
    return hits[0]


def t_store_level(r):
    # one bit of a store's level: 4 -> 20, no printk level; before the
    # reader checked it the record passed as suppressed, or was blamed on
    # the console as printed below the loglevel
    u = t_uncompressed(r)
    _, seq = r.plain(1150)
    return u.replace(dat=mu.flip(u.dat, _store_text_at(u, seq, r) - 24, 4))


def t_stored_header_bit(r):
    # one bit of a stored stressor record's header: `c=3` -> `c53`, a
    # text that is no stressor record; the log shows the valid record
    # (before: serial-corrupt and producer-gap)
    u = t_uncompressed(r)
    _, seq = r.plain(1160)
    at = _store_text_at(u, seq, r) + r.store_texts()[seq].index(" c=") + 2
    return u.replace(dat=mu.flip(u.dat, at, 3))


def t_emit_type_bit(r):
    # one bit of an emission record's event type: it reads as a commit
    # (nobkl_emit and nobkl_commit have ids one bit apart), a plausible
    # event that `trace-cmd report` prints as such; before: no-loss,
    # duplicate, serial-extra
    import struct
    u = t_uncompressed(r)
    emit, commit = mu.plain_seq_events(r, 1170)
    seq, length = emit.int("seq"), emit.int("len")
    recs = []                  # (offset of the type, type, u32 after the seq)
    p = u.dat.find(b"ttyS0\x00")
    while p >= 0:
        if struct.unpack_from("<Q", u.dat, p + 32)[0] == seq:
            recs.append((p - 8, struct.unpack_from("<H", u.dat, p - 8)[0],
                         struct.unpack_from("<I", u.dat, p + 40)[0]))
        p = u.dat.find(b"ttyS0\x00", p + 1)
    emits = [x for x in recs if x[2] == length]
    types = {x[1] for x in recs}
    assert len(emits) == 1 and len(types) == 2, recs
    other = (types - {emits[0][1]}).pop()
    diff = emits[0][1] ^ other
    assert diff & (diff - 1) == 0 and diff < 256, (emits, other)
    return u.replace(dat=mu.flip(u.dat, emits[0][0], diff.bit_length() - 1))


def _console_records(u, seq):
    """[(offset of the console name, event type, u32 after the seq)] of
    the nobkl records of seq in the uncompressed trace.dat u (the name's
    copy right after the fixed fields, the seq 32 bytes after it)."""
    import struct
    recs = []
    p = u.dat.find(b"ttyS0\x00")
    while p >= 0:
        if struct.unpack_from("<Q", u.dat, p + 32)[0] == seq:
            recs.append((p, struct.unpack_from("<H", u.dat, p - 8)[0],
                         struct.unpack_from("<I", u.dat, p + 40)[0]))
        p = u.dat.find(b"ttyS0\x00", p + 1)
    return recs


def t_console_name_bit(r):
    # one bit of an emission's console name: ttyS0 -> ttyS4, the only
    # event of that console (before: no-loss, serial-extra)
    u = t_uncompressed(r)
    emit, _ = mu.plain_seq_events(r, 1175)
    at = [x for x in _console_records(u, emit.int("seq")) if x[2] == emit.int("len")]
    assert len(at) == 1, at
    return u.replace(dat=mu.flip(u.dat, at[0][0] + 4, 2))


def t_commit_seq_bit(r):
    # one bit of a commit's seq (988 -> 989 style): this trace has no
    # transition fields, so nothing else in the record tells its seq and
    # a console committing the wrong seq is what no-loss and duplicate
    # exist for (with the fields a 64-bit commit carries it twice: see
    # test_trace_damage::test_commit_seq_against_its_new_state)
    u = t_uncompressed(r)
    _, commit = mu.plain_seq_events(r, 1180)
    seq = commit.int("seq")
    assert seq % 2 == 0                # the flip makes the next record's seq
    recs = _console_records(u, seq)
    types = {x[1] for x in recs}
    assert len(recs) == 2 and len(types) == 2, recs
    emit_len = next(e.int("len") for e in r.console_events("nobkl_emit") if e.int("seq") == seq)
    at = [x for x in recs if x[2] != emit_len]
    assert len(at) == 1, recs
    return u.replace(dat=mu.flip(u.dat, at[0][0] + 32, 0))


def t_stored_ctx_bit(r):
    # one bit of a stored version 1 record's context: `x=task` ->
    # `x=taqk`, still a valid version 1 record (its checksum covers the
    # payload only), but of no context the stressor has
    u = t_uncompressed(r)
    seq = next(s for _, s in r.plain_records()[1180:] if " x=task " in r.store_texts()[s])
    at = _store_text_at(u, seq, r) + r.store_texts()[seq].index(" x=task ") + 5
    return u.replace(dat=mu.flip(u.dat, at, 1))


def t_kernel_text_nul(r):
    # one bit of a kernel record's stored text: a blank becomes a NUL.
    # trace-cmd prints the text cut there, the C reader read all of it:
    # the readers disagreed (text: incomplete, libtracecmd: serial-corrupt)
    u = t_uncompressed(r)
    texts = r.store_texts()
    seqs = r.committed_seqs()[r.first_stressor_commit() + 1:]
    seq = next(s for s in seqs if not texts[s].startswith("pstress ") and " " in texts[s]
               and len(r.serial_index(texts[s])) == 1)
    text = texts[seq].encode("latin-1")
    # the store's copy (the console event has one too): right after
    # the __data_loc word of the store's text, as in _store_text_at()
    hits, p = [], u.dat.find(text + b"\x00")
    while p >= 0:
        if u.dat[p - 4:p - 2] == b",\x00":
            hits.append(p)
        p = u.dat.find(text + b"\x00", p + 1)
    assert len(hits) == 1, hits
    return u.replace(dat=mu.flip(u.dat, hits[0] + text.index(b" "), 5))


def check_names_damaged_text(v, base, run):
    assert v["serial"]["stored_texts_damaged"] == 1


def t_page_commit(r):
    # the middle page of CPU 1 claims 1 MiB of events
    u = t_uncompressed(r)
    return u.replace(dat=mu.flip(u.dat, _middle_page(u, STOP_CPU) + 10, 4))


def t_page_timestamp(r):
    # bit 40 of the middle page's timestamp: its events 1100 s late,
    # CPU 1's timestamps jump forward and back
    u = t_uncompressed(r)
    return u.replace(dat=mu.flip(u.dat, _middle_page(u, STOP_CPU) + 5, 0))


def check_noise(v, base, run=None):
    assert v["serial"]["foreign_lines"] == base["serial"]["foreign_lines"] + 3 * NOISE_LINES
    check_same_match(v, base)


def check_no_cut_lines(v, base, run=None):
    assert base["serial"]["partial_lines"] > 0 and v["serial"]["partial_lines"] == 0
    check_same_match(v, base)


def check_cut_line_completed(v, base, run=None):
    assert v["serial"]["partial_lines"] == base["serial"]["partial_lines"] - 1
    assert v["serial"]["reprinted_full_lines"] == base["serial"]["reprinted_full_lines"] + 1
    check_same_match(v, base)


def check_store_update(v, base, run=None):
    assert v["counts"]["store_updates"] == base["counts"]["store_updates"] + 1
    check_same_match(v, base)


def check_names_missing_store(v, base, run):
    # the reason names the seq whose store is missing (the recorded
    # run stores every seq from its first to its last)
    seqs = set(run.store_texts())
    missing = sorted(set(range(min(seqs), max(seqs) + 1)) - seqs)
    assert len(missing) == 1 and str(missing[0]) in why(v), (missing, why(v))


def check_blank_lines(v, base, run):
    # every line read; the blank ones between records ignored as foreign
    # (those before the sync and after the trace are counted there)
    added = v["serial"]["lines_read"] - base["serial"]["lines_read"]
    assert added == len(run.serial) // 2
    inside = added - (v["serial"]["lines_before_trace"] - base["serial"]["lines_before_trace"]) \
        - (v["serial"]["lines_after_trace"] - base["serial"]["lines_after_trace"])
    assert v["serial"]["foreign_lines"] - base["serial"]["foreign_lines"] >= inside
    check_same_match(v, base)


def check_post_trace(v, base, run):
    # every record stored after the last traced commit found after it
    post = post_trace_records(run)
    assert post and v["serial"]["post_trace_matched"] == len(post)


def check_post_trace_dropped(v, base, run):
    post = post_trace_records(run)
    assert v["serial"]["post_trace_dropped"] == 3
    assert v["serial"]["post_trace_matched"] == len(post) - 3


def check_second_console(v, base, run):
    cons = v["consoles"]
    assert v["inputs"]["serial_console"] == mu.CON and set(cons) == {mu.CON, "ttyS1"}
    assert cons["ttyS1"]["commits"] == cons[mu.CON]["commits"] == \
        base["consoles"][mu.CON]["commits"]
    check_same_match(v, base)


def check_on_second_console(v, base, run):
    assert v["violations"] and {x["console"] for x in v["violations"]} == {"ttyS1"}


def check_refused(v, base, run):
    assert v["serial"]["refused_by_printk"] == 1
    assert v["trace"]["dataless_records"] == 1


def check_refused_bare(v, base, run):
    assert v["serial"]["refused_by_printk"] == 1
    assert v["trace"]["dataless_records"] == 0
    check_same_match(v, base)


def check_same_match(v, base, run=None):
    assert v["serial"]["matched"] == base["serial"]["matched"]


def check_dropped(v, base, run=None):
    assert v["counts"]["dropped_records"] == base["counts"]["dropped_records"] + DROPPED
    assert v["serial"]["dropped_lines"] == base["serial"]["dropped_lines"] + 1
    assert v["serial"]["matched"] == base["serial"]["matched"] - DROPPED


# name, source, operator, outcome[, today]
MUTATIONS = [
    # benign controls
    M("unchanged", "text", unchanged, PASSES),
    M("user-space-noise", "text", s_user_noise, PASSES, check=check_noise),
    M("lf-line-endings", "text", s_lf_endings, PASSES, check=check_same_match),
    M("serial-timestamp-changed", "text", s_timestamp_changed, PASSES,
      check=check_same_match),
    M("serial-context-letter-changed", "text", s_ctx_letter, PASSES, check=check_same_match),
    M("serial-cut-lines-removed", "text", s_cut_lines_removed, PASSES, check=check_no_cut_lines),
    M("serial-cut-line-completed", "text", s_cut_line_completed, PASSES,
      check=check_cut_line_completed),
    M("serial-untraced-tail-removed", "text", s_untraced_tail_removed, PASSES,
      check=check_same_match),
    M("report-store-repeated", "text", r_dup_store, PASSES, check=check_store_update),
    M("dropped-with-notice", "text", d_benign, PASSES, check=check_dropped),
    M("trace-starts-while-owned", "text", r_start_while_owned, PASSES),
    M("trace-starts-between-emit-and-commit", "text", r_start_after_emit, PASSES),
    M("trace-starts-after-stressor-emit", "text", r_start_after_stressor_emit, PASSES),
    M("report-latency-format", "text", r_latency_format, PASSES, check=check_same_match),
    M("report-second-console", "text", r_second_console, PASSES, check=check_second_console),
    M("trace-ends-after-last-store", "text", r_end_after_last_store, PASSES,
      check=check_post_trace),
    M("trace-ends-after-last-stressor-store", "text", r_end_after_last_stressor_store,
      PASSES, check=check_post_trace),
    M("serial-post-trace-dropped-notice", "text", s_post_trace_dropped, PASSES,
      check=check_post_trace_dropped),
    M("serial-blank-lines", "text", s_blank_lines, PASSES, check=check_blank_lines),
    M("serial-uart-noise", "text", s_uart_noise, PASSES, check=check_same_match),
    M("stats-one-refused-by-printk", "text", st_one_refused, PASSES, check=check_refused_bare),
    M("stats-one-refused-with-dataless-record", "text", st_one_refused_dataless, PASSES,
      check=check_refused),
    M("serial-earlier-run-in-boot-part", "text", s_earlier_run, PASSES,
      check=check_same_match),
    # serial log
    M("serial-record-removed", "text", s_drop_record, fails("serial-missing")),
    M("serial-payload-byte", "text", s_payload_byte, fails("serial-corrupt")),
    M("serial-records-swapped", "text", s_swap, fails("serial-order")),
    M("serial-header-n", "text", s_header_n, fails("serial-corrupt")),
    M("serial-forged-kernel-line", "text", s_forged_kernel_line, fails("serial-extra")),
    M("serial-forged-stressor-record", "text", s_forged_stressor_record,
      fails("serial-extra")),
    M("serial-valid-other-payload", "text", s_valid_other_payload, fails("serial-corrupt")),
    M("serial-cut-copy-before", "text", s_cut_copy_before, fails("serial-partial")),
    M("serial-garbled-prefix", "text", s_garbled_prefix, fails("serial-corrupt")),
    M("serial-stray-lf", "text", s_stray_lf, fails("serial-corrupt")),
    M("serial-two-bytes-in-payload", "text", s_two_bytes_in_payload, fails("serial-corrupt")),
    M("serial-payload-byte-lost", "text", s_payload_byte_lost, fails("serial-corrupt")),
    M("serial-record-moved-later", "text", s_moved_later, fails("serial-order")),
    M("serial-record-moved-far-later", "text", s_moved_far_later, fails("serial-order")),
    M("serial-copy-after-its-turn", "text", s_copy_after, fails("serial-partial")),
    M("serial-copy-before-its-turn", "text", s_copy_before, fails("serial-partial")),
    M("serial-copy-far-before-its-turn", "text", s_copy_far_before, fails("serial-partial")),
    M("serial-record-replaced-by-next", "text", s_replaced_by_next,
      fails("serial-missing", "serial-partial")),
    M("serial-spurious-dropped-notice", "text", s_spurious_dropped, fails("serial-dropped")),
    M("serial-dropped-notice-missing", "text", d_no_notice, fails("serial-dropped")),
    M("serial-dropped-notice-wrong-n", "text", d_wrong_n, fails("serial-dropped")),
    M("serial-dropped-but-printed", "text", d_dropped_but_printed,
      fails("serial-dropped", "serial-extra")),
    M("serial-post-trace-copy", "text", s_post_trace_copy, fails("serial-partial")),
    M("serial-post-trace-forged-record", "text", s_post_trace_forged, fails("serial-extra")),
    M("serial-post-trace-record-removed", "text", s_post_trace_record_removed,
      fails("serial-missing")),
    M("serial-post-trace-records-swapped", "text", s_post_trace_records_swapped,
      fails("serial-order")),
    # no trace count to hold the notice against: one record is missing
    # or the notice is wrong, both are said
    M("serial-post-trace-dropped-wrong-n", "text", s_post_trace_dropped_wrong_n,
      fails("serial-dropped", "serial-missing")),
    M("serial-presync-record-removed", "text", s_presync_drop, fails("serial-missing")),
    M("serial-presync-record-doubled", "text", s_presync_copy, fails("serial-partial")),
    M("serial-of-another-run", "text", s_other_run, incomplete("serial")),
    M("serial-boot-only", "text", s_boot_only, incomplete("serial")),
    # report text
    M("report-emit-duplicated", "text", r_dup_emit, fails("duplicate")),
    M("report-commit-duplicated", "text", r_dup_commit, fails("duplicate")),
    M("report-commit-removed", "text", r_drop_commit, fails("no-loss", "serial-partial")),
    M("report-commit-and-line-removed", "text", r_drop_commit_and_line, fails("no-loss")),
    M("report-second-console-commit-removed", "text", r_second_console_commit_removed,
      fails("no-loss"), check=check_on_second_console),
    M("report-dropped-count-without-gap", "text", r_dropped_count_no_gap,
      fails("dropped-count")),
    M("report-dropped-count-over-gap", "text", d_dropped_more_than_gap, fails("dropped-count")),
    M("report-takeover-of-higher-prio", "text", r_takeover_lower_prio, fails("takeover-prio")),
    M("report-direct-acquire-prev-locked", "text", r_direct_prev_locked, fails("one-owner")),
    M("report-grant-to-wrong-cpu", "text", r_grant_wrong_cpu, fails("handover-target")),
    M("report-thread-hostile", "text", r_thread_hostile, fails("thread-takeover")),
    M("report-commit-after-lost", "text", r_commit_after_lost, fails("after-loss")),
    M("report-grant-removed", "text", r_grant_removed, fails("handover-target")),
    M("report-grant-to-wrong-prio", "text", r_grant_wrong_prio, fails("handover-target")),
    M("report-release-handover-without-grant", "text", r_release_handover_without_grant,
      fails("handover-target")),
    M("report-takeover-of-panic-owner", "text", r_takeover_of_panic_owner,
      fails("takeover-prio", "panic-protect")),
    # the seq's store is gone too: every record is stored through the
    # tracepoint, so a seq missing between stored ones is a lost event
    M("report-record-never-stored", "text", r_record_never_stored, incomplete("store")),
    M("report-record-never-logged", "text", r_record_never_logged, fails("producer-gap")),
    M("report-release-removed", "text", r_drop_release, fails("one-owner")),
    M("stats-one-more-stored", "text", st_one_more_stored, fails("producer-gap")),
    M("stats-of-another-run", "text", st_other_run, incomplete("stats")),
    M("stats-garbage", "text", st_garbage, incomplete("stats")),
    M("stats-producer-line-damaged", "text", st_damaged_producer_line, incomplete("stats")),
    M("report-printed-record-at-level-7", "text", r_store_level_7, fails("serial-extra")),
    M("report-emit-len-zero-line-printed", "text", r_emit_len_zero,
      fails("no-loss", "serial-extra")),
    M("report-emit-removed", "text", r_drop_emit, fails("no-loss", "serial-extra")),
    # the changed stored text fails the stressor record's own crc: the
    # trace is damaged there, not the console output
    M("report-store-text-changed", "text", r_store_text_changed, incomplete("field")),
    M("report-kernel-store-text-changed", "text", r_kernel_store_text_changed,
      fails("serial-corrupt")),
    M("report-presync-store-text-changed", "text", r_presync_store_text_changed,
      fails("serial-corrupt")),
    M("report-drop-marker", "text", r_drop_marker, incomplete("lost events")),
    M("report-cut-without-eol", "text", r_cut_without_eol, incomplete("truncated")),
    M("report-store-removed", "text", r_drop_store, incomplete("store"),
      check=check_names_missing_store),
    M("report-malformed-number", "text", r_malformed_number, incomplete("field")),
    M("report-seq-negative", "text", r_seq_negative, incomplete("field")),
    M("report-prio-garbage", "text", r_prio_garbage, incomplete("field")),
    M("report-event-on-absent-cpu", "text", r_absent_cpu, incomplete("cpu")),
    M("report-field-missing", "text", r_field_missing, incomplete("malformed")),
    M("report-unknown-nobkl-event", "text", r_unknown_event, incomplete("malformed")),
    M("report-lines-merged", "text", r_lines_merged, incomplete("malformed")),
    M("report-timestamp-back", "text", r_timestamp_back, incomplete("timestamps")),
    M("report-cut-at-line-boundary", "text", r_cut_at_line, incomplete("trace")),
    M("report-cut-in-line", "text", r_cut_in_line, incomplete("malformed")),
]

# What the state word names, against the trace: name, operator, the
# answer on this run's report and on the chain run's (CHAIN_MUTATIONS),
# where an acquire's prev_* are held against its own old_state first.
STATE_WORD_MUTATIONS = [
    ("takeover-names-another-owner", r_takeover_names_another_owner,
     incomplete("never shows acquiring"), incomplete("but old_state=")),
    ("hostile-prev-unlocked", r_hostile_prev_unlocked,
     incomplete("how=hostile with prev_locked=0"), incomplete("how=hostile with prev_locked=0")),
    ("handover-names-another-owner", r_handover_names_another_owner,
     incomplete("the waiter requested the console from"),
     incomplete("the waiter requested the console from")),
    ("lost-names-another-owner", r_lost_names_another_owner,
     incomplete("never shows acquiring"), incomplete("never shows acquiring")),
    ("console-name-bit", r_console_name_bit, incomplete("one bit off"),
     incomplete("one bit off")),
]
MUTATIONS += [M("report-" + n, "text", op, want) for n, op, want, _ in STATE_WORD_MUTATIONS]

DAT_MUTATIONS = [
    M("dat-unchanged", "dat", unchanged, PASSES),
    M("dat-cpu-stops-early", "dat", t_stop_cpu_early, incomplete("cpu")),
    M("dat-chunk-size", "dat", t_chunk_size, incomplete("chunk")),
    M("dat-chunk-compressed-size", "dat", t_chunk_csize, incomplete("chunk")),
    M("dat-chunk-count", "dat", t_chunk_count, incomplete("chunk")),
    M("dat-truncated", "dat", t_truncated, incomplete()),
    M("dat-magic", "dat", t_magic, incomplete()),
    M("dat-cut-at-chunk", "dat", t_cut_at_chunk, incomplete()),
    M("dat-cut-after-chunk", "dat", t_cut_after_chunk, incomplete()),
    # the same trace uncompressed, or as a version-6 file, and damage
    # inside an uncompressed page
    M("dat-uncompressed", "dat", t_uncompressed, PASSES),
    M("dat-file-version-6", "dat", t_file_version_6, PASSES),
    M("dat-page-commit", "dat", t_page_commit, incomplete()),
    M("dat-page-timestamp", "dat", t_page_timestamp, incomplete("went back")),
    M("dat-store-level-bit", "dat", t_store_level, incomplete("malformed")),
    M("dat-emit-type-bit", "dat", t_emit_type_bit, incomplete("malformed")),
    M("dat-kernel-text-nul", "dat", t_kernel_text_nul, incomplete("malformed")),
    M("dat-stored-ctx-bit", "dat", t_stored_ctx_bit, incomplete("stored text"),
      check=check_names_damaged_text),
    M("dat-stored-header-bit", "dat", t_stored_header_bit, incomplete("stored text"),
      check=check_names_damaged_text),
    M("dat-console-name-bit", "dat", t_console_name_bit, incomplete("one bit off")),
    M("dat-commit-seq-bit", "dat", t_commit_seq_bit,
      fails("no-loss", "duplicate", "serial-partial", "producer-gap")),
]


# ---- format version 2 (the recorded run rewritten by mutations.to_v2) --
def _writer_pair(r, first):
    """Serial indices and seqs (i, s, j, t) of two plain records of one
    writer with consecutive n (n, n+1) and texts of the same length, the
    first at or after the first-th plain record."""
    last = {}
    for i, s in r.plain_records()[first:]:
        prod, n = mu.writer_of(r.kinds[i][2])
        prev = last.get(prod)
        if prev is not None and prev[2] == n - 1 and \
                len(r.kinds[prev[0]][2]) == len(r.kinds[i][2]):
            return prev[0], prev[1], i, s
        last[prod] = (i, s, n)
    raise AssertionError("no two plain records of one writer")


def v2_serial_writer_swapped(r, first=300):
    # two records of one writer (n, n+1) swapped on the log: the trace
    # has them in order
    i, _, j, _ = _writer_pair(r, first)

    def swap(ls):
        ls[i], ls[j] = ls[j], ls[i]
    return mu.serial_edit(r, swap)


def _swap_records(r, i, s, j, t):
    """r as if the ringbuffer had given the record of seq t the seq s and
    the other way round: the stored texts swapped, and the lines."""
    texts = r.store_texts()
    a, b = texts[s], texts[t]
    assert len(a) == len(b)

    def rep(ls):
        for e in r.events:
            if e.name == "nobkl_store" and e.int("seq") in (s, t):
                ln = ls[e.idx]
                ls[e.idx] = ln[:len(ln) - len(a)] + (b if e.int("seq") == s else a)
    v = mu.report_edit(r, rep)

    def swap(ls):
        ls[i], ls[j] = ls[j], ls[i]
    return mu.serial_edit(v, swap)


def v2_writer_swapped_in_ringbuffer(r, first=600):
    # the writer's n+1 got the lower seq: stored, printed and on the log
    # in that order
    return _swap_records(r, *_writer_pair(r, first))


def v2_writer_swapped_after_last_commit(r):
    # the trace ends after its last stressor store; two records of one
    # writer stored after the last traced commit got their seqs swapped
    cut = _end_after_store(r, True)
    post = set(post_trace_records(cut))
    last = {}
    for s in sorted(post):
        t = cut.store_texts()[s]
        if not t.startswith("pstress v=2 "):
            continue
        prod, n = mu.writer_of(t)
        prev = last.get(prod)
        if prev is not None and prev[1] == n - 1 and len(cut.store_texts()[prev[0]]) == len(t):
            return _swap_records(cut, cut.serial_line_of_seq(prev[0]), prev[0],
                                 cut.serial_line_of_seq(s), s)
        last[prod] = (s, n)
    raise AssertionError("no two records of one writer after the last commit")


def v2_header_n(r, n=100):
    # n=5 -> n=6 of one record: its own checksum fails, so it is that
    # record damaged, not another record
    i, _ = r.plain(n)
    ln = r.serial[i]
    k = ln.index(" n=") + 3
    return mu.replace_serial_line(r, i, ln[:k] + ("1" if ln[k] != "1" else "2") + ln[k + 1:])


def v2_writer_name(r, n=120):
    i, _ = r.plain(n)
    ln = r.serial[i]
    return mu.replace_serial_line(r, i, ln.replace(" w=", " w=x", 1))


def check_writer_order_ran(v, base, run):
    # every stressor record the serial console committed was checked
    assert v["serial"]["writer_order_checked"] == v["serial"]["stressor_records"] > 3000
    assert v["serial"]["matched"] == 3390


V2_MUTATIONS = [
    M("v2-unchanged", "text", unchanged, PASSES, check=check_writer_order_ran),
    # tolerances on version 2 records too
    M("v2-cut-lines-removed", "text", s_cut_lines_removed, PASSES, check=check_no_cut_lines),
    M("v2-dropped-with-notice", "text", d_benign, PASSES, check=check_dropped),
    M("v2-trace-ends-after-last-stressor-store", "text", r_end_after_last_stressor_store,
      PASSES, check=check_post_trace),
    M("v2-serial-writer-records-swapped", "text", v2_serial_writer_swapped,
      fails("serial-order")),
    M("v2-writer-records-swapped-in-ringbuffer", "text", v2_writer_swapped_in_ringbuffer,
      fails("producer-order")),
    M("v2-writer-records-swapped-after-last-commit", "text",
      v2_writer_swapped_after_last_commit, fails("producer-order")),
    M("v2-header-n", "text", v2_header_n, fails("serial-corrupt")),
    M("v2-writer-name", "text", v2_writer_name, fails("serial-corrupt")),
]


# ---- the chain runs (old_state/new_state) ------------------------------
# Shipped runs whose traces carry the state words, recorded with the
# stressor's records of format version 2: their console events are
# ordered by the state chain (docs/analysis.md, "Ordering by the state
# chain"), judged as the analysis judges a run by default (no `--order
# timestamps`).  Their report text is shipped (no trace.dat: the "dat"
# mutations run on the recorded run only).  One run of each
# architecture:
CHAIN_RUNS = {
    # a 10 s stress run under qemu-system-i386: 623 transitions, 5665
    # records committed, hostile takeovers (with prev_unsafe=1), handovers,
    # losses; a 32-bit word has no seq, a commit is no transition
    "i386": "stress-20261204-172845",
    # the panic-end run (x86_64): the printer thread committed 8 records,
    # each between a direct acquire and a release, and 439 records stored
    # in the trace were printed by the panic after it; a 64-bit commit is
    # a transition (it installs seq + 1 in the word's low half)
    "x86_64": "panic-end-20261204-165730",
}
_BY_NAME = {m.name: m for m in MUTATIONS + V2_MUTATIONS}
_SAME = object()


def like(name, op=None, expect=None, today=None, check=_SAME, as_name=None):
    """The mutation `name` of the recorded run on a chain run: its
    operator or `op` (the same with another target, at()), its expected
    answer or `expect`, its check or `check` (None: none); `as_name`
    names a variant."""
    m = _BY_NAME[name]
    return M(as_name or name, m.source, op or m.op, expect or m.expect, today=today,
             check=m.check if check is _SAME else check)


# The unsafe victim's stray byte (docs/analysis.md, "What the checker
# tolerates"): on the i386 run panic contexts took the console from owners
# inside their unsafe section (5 takeovers), and a victim's loss named an
# owner, a panic hardirq on CPU 1, that printed most of the rest of the
# run (4585 records): 5460 of the run's 5670 emissions may be hit by a
# victim's byte (all but those of seqs 275-280, 317-334, 542-545, 626-677,
# 785-912 and 5938-5939).  One byte inserted there, one of the victim's
# own line, is tolerated once per victim (serialcheck._corrupt(),
# model.StrayByte); any other damage of such a line (a byte replaced or
# lost, two bytes, another payload with its right crc, a kernel record's
# stored text 3 bytes off) is serial-corrupt.


# A direct acquire of a locked console: its prev_locked=1 contradicts
# its old_state (damage, checker.acquire_problem()).  A word that says
# locked is a release taken out of the chain: report-release-removed.
PREV_LOCKED = incomplete("prev_locked=1 but old_state=")


def check_stray_tolerated(v, base, run):
    # the one byte is the stray byte the tolerance grants
    assert v["serial"]["stray_after_unsafe_takeover"] == \
        base["serial"]["stray_after_unsafe_takeover"] + 1
    check_same_match(v, base)


def check_chain_unchanged(v, base, run):
    # every record the console committed is matched on the log, every
    # stressor record's writer order checked
    committed = len(set(run.committed_seqs()))
    assert v["serial"]["matched"] == committed + v["serial"]["post_trace_matched"]
    assert v["serial"]["writer_order_checked"] == v["serial"]["stressor_records"] > 0


# A record moved 30 records later past an interrupted attempt's cut line
# (the i386 run's 600th plain record, seq 883; 30 records later a panic
# NMI took the console over from the emergency hardirq printing seq 912
# and printed it again): that cut line is serial-extra too ("kernel line
# on the serial log that no emission explains").  Not of the chain:
# on the recorded run, by the clocks, the same move past a cut line
# (its 2130th plain record) is 17 serial-order, 14 serial-missing and 15
# serial-extra.
MOVED_PAST_CUT = ("serial-order and serial-extra: the cut line of the interrupted "
                  "attempt the record was moved past is taken for an extra kernel line")

# A grant to a waiter that never requested (cpu2/emergency): the granter's
# CPU took the console over (hostile, a new panic record) before any
# waiter picked it up; the state word the grant replaced carries cpu1's
# request, so the grant answers no request of cpu2: handover-target at
# the grant (model_rfc.unrequested_grant()).

# the i386 run: ~0.5 s of CPU a mutation, so not every mutation of the
# recorded run runs here: 44 of them, and 5 with another target.  Not picked: those of the log's
# format alone (line ends, blank lines, UART and user-space noise, the
# stamp, the context letter, records of an earlier run, another run's
# log), of stats.txt, of the report's syntax (malformed numbers and
# fields, unknown events, merged or cut lines, a timestamp going back),
# of the records after the trace, and variants of a kind that runs here
# (one more copy of a record, a notice wrong, a second console skipping
# a record, a kernel line forged, a line replaced by the next, a stored
# text or level changed, an emission of len=0): they run on the x86_64
# run (most of them, cheap) and on the recorded run.  The state word's
# own mutations (STATE_WORD_MUTATIONS) run here.
I386_MUTATIONS = [
    like("unchanged", check=check_chain_unchanged),
    like("serial-cut-lines-removed"),
    like("serial-cut-line-completed"),
    like("dropped-with-notice"),
    like("trace-starts-while-owned"),
    like("trace-starts-between-emit-and-commit"),
    like("report-second-console"),
    like("trace-ends-after-last-stressor-store"),
    # serial log
    like("serial-record-removed"),
    like("serial-records-swapped"),
    like("serial-record-moved-later", today=MOVED_PAST_CUT),
    like("serial-record-moved-later", op=at(s_moved_later, n=560),
         as_name="serial-record-moved-later-past-no-cut-line"),
    like("serial-cut-copy-before"),
    like("serial-stray-lf"),
    like("serial-dropped-notice-missing"),
    # corrupt lines where a victim's stray byte may land ...
    like("serial-payload-byte"),
    like("serial-two-bytes-in-payload"),
    like("serial-payload-byte-lost"),
    like("serial-valid-other-payload"),
    like("report-kernel-store-text-changed"),
    # ... one inserted byte there is the stray byte
    like("serial-garbled-prefix", expect=PASSES, check=check_stray_tolerated),
    # ... and where it is not (no victim's byte pending: seqs 843 and 863,
    # and the kernel record 5938, the stressor's end banner)
    like("serial-payload-byte", op=at(s_payload_byte, n=560),
         as_name="serial-payload-byte-where-no-stray-byte"),
    like("serial-garbled-prefix", op=at(s_garbled_prefix, n=580),
         as_name="serial-garbled-prefix-where-no-stray-byte"),
    like("report-kernel-store-text-changed", op=at(r_kernel_store_text_changed, after=830),
         as_name="report-kernel-store-text-changed-where-no-stray-byte"),
    # report text
    like("report-emit-duplicated"),
    like("report-commit-duplicated"),
    like("report-commit-removed"),
    like("report-dropped-count-without-gap"),
    like("report-commit-after-lost"),
    like("report-grant-removed"),
    like("report-grant-to-wrong-cpu"),
    # the third grant, picked up by its waiter
    like("report-grant-to-wrong-cpu", op=at(r_grant_wrong_cpu, n=2),
         as_name="report-grant-to-wrong-cpu-picked-up"),
    like("report-grant-to-wrong-prio"),
    # without a grant the owner's word stays (a handover=1 release
    # reports no transition): the next direct acquire replaces a word
    # that names the owner
    like("report-release-handover-without-grant",
         expect=fails("handover-target", "one-owner")),
    like("report-thread-hostile"),
    like("report-release-removed"),
    like("report-direct-acquire-prev-locked", expect=PREV_LOCKED),
    like("report-record-never-stored"),
    like("report-record-never-logged"),
    like("report-emit-removed"),
    like("report-store-removed"),
    like("report-drop-marker"),
    like("report-cut-at-line-boundary"),
    # format version 2
    like("v2-writer-records-swapped-in-ringbuffer"),
] + [M("report-" + n, "text", op, want) for n, op, _, want in STATE_WORD_MUTATIONS]

# the x86_64 run: its 7 stressor records committed in the trace are the
# targets (indices 0-6), and the 439 printed after it
X86_64_MUTATIONS = [
    like("unchanged", check=check_chain_unchanged),
    like("lf-line-endings"),
    like("serial-blank-lines"),
    like("serial-earlier-run-in-boot-part"),
    like("report-store-repeated", op=at(r_dup_store, n=3)),
    like("trace-starts-while-owned"),
    like("trace-starts-between-emit-and-commit"),
    like("trace-starts-after-stressor-emit"),
    like("report-second-console"),
    like("trace-ends-after-last-stressor-store"),
    like("serial-post-trace-dropped-notice"),
    like("stats-one-refused-with-dataless-record"),
    # serial log
    like("serial-record-removed", op=at(s_drop_record, n=3)),
    like("serial-payload-byte", op=at(s_payload_byte, n=1)),
    like("serial-header-n", op=at(s_header_n, n=2)),
    like("serial-garbled-prefix", op=at(s_garbled_prefix, n=3)),
    like("serial-stray-lf", op=at(s_stray_lf, n=4)),
    like("serial-two-bytes-in-payload", op=at(s_two_bytes_in_payload, n=5)),
    like("serial-payload-byte-lost", op=at(s_payload_byte_lost, n=6)),
    like("serial-valid-other-payload", op=at(s_valid_other_payload, n=0)),
    like("serial-forged-stressor-record", op=at(s_forged_stressor_record, n=1)),
    like("serial-forged-kernel-line", op=at(s_forged_kernel_line, n=5)),
    like("serial-records-swapped", op=at(s_swap, n=0)),
    like("serial-record-replaced-by-next", op=at(s_replaced_by_next, n=2)),
    like("serial-copy-after-its-turn", op=at(s_copy_after, n=3)),
    like("serial-cut-copy-before", op=at(s_cut_copy_before, n=4)),
    like("serial-spurious-dropped-notice", op=at(s_spurious_dropped, n=6)),
    like("serial-post-trace-copy"),
    like("serial-post-trace-forged-record"),
    like("serial-post-trace-record-removed"),
    like("serial-post-trace-records-swapped"),
    like("serial-post-trace-dropped-wrong-n"),
    like("serial-presync-record-removed"),
    like("serial-presync-record-doubled"),
    like("serial-of-another-run"),
    like("serial-boot-only"),
    # the trace stored 439 records after its last commit: their lines
    # are required (the mutation's "when the trace stored none" does not
    # hold; test_panic_end.py)
    like("serial-untraced-tail-removed", expect=fails("serial-missing"), check=None),
    # stats.txt
    like("stats-one-more-stored"),
    like("stats-one-refused-by-printk"),
    like("stats-of-another-run"),
    like("stats-garbage"),
    like("stats-producer-line-damaged"),
    # report text
    like("report-emit-duplicated", op=at(r_dup_emit, n=2)),
    like("report-commit-duplicated", op=at(r_dup_commit, n=3)),
    like("report-commit-removed", op=at(r_drop_commit, n=4)),
    like("report-commit-and-line-removed", op=at(r_drop_commit_and_line, n=5)),
    like("report-release-removed", op=at(r_drop_release, n=3)),
    like("report-direct-acquire-prev-locked", op=at(r_direct_prev_locked, n=3),
         expect=PREV_LOCKED),
    like("report-dropped-count-without-gap", op=at(r_dropped_count_no_gap, n=3)),
    like("report-record-never-logged", op=at(r_record_never_logged, n=3)),
    like("report-printed-record-at-level-7", op=at(r_store_level_7, n=3)),
    like("report-emit-len-zero-line-printed", op=at(r_emit_len_zero, n=4)),
    like("report-emit-removed", op=at(r_drop_emit, n=5)),
    like("report-store-text-changed", op=at(r_store_text_changed, n=2)),
    # the record is among the first stored in the trace: its store may
    # have fired before tracing began (a hole at the trace's edge, not a
    # missing store, checker.hole_at_trace_edge()); its line on the log
    # has no stored text to be compared with
    like("report-store-removed", op=at(r_drop_store, n=3),
         expect=incomplete("no nobkl_store of their seq"), check=None),
    like("report-presync-store-text-changed"),
    like("report-drop-marker", op=at(r_drop_marker, n=3)),
    like("report-malformed-number", op=at(r_malformed_number, n=2)),
    like("report-seq-negative", op=at(r_seq_negative, n=3)),
    like("report-prio-garbage", op=at(r_prio_garbage, n=4)),
    like("report-event-on-absent-cpu", op=at(r_absent_cpu, n=5)),
    like("report-field-missing", op=at(r_field_missing, n=6)),
    like("report-unknown-nobkl-event", op=at(r_unknown_event, n=2)),
    like("report-timestamp-back", op=at(r_timestamp_back, n=3)),
    like("report-cut-at-line-boundary", op=at(r_cut_at_line, n=3)),
    like("report-cut-in-line", op=at(r_cut_in_line, n=3)),
    like("report-cut-without-eol", op=at(r_cut_without_eol, n=3)),
    like("report-console-name-bit", op=at(r_console_name_bit, n=4)),
    # format version 2
    like("v2-serial-writer-records-swapped", op=at(v2_serial_writer_swapped, first=0)),
    like("v2-writer-records-swapped-in-ringbuffer", op=at(v2_writer_swapped_in_ringbuffer, first=0)),
    like("v2-writer-records-swapped-after-last-commit"),
    like("v2-header-n", op=at(v2_header_n, n=1)),
    like("v2-writer-name", op=at(v2_writer_name, n=2)),
]

# mutations of the recorded run that cannot be expressed on a chain run:
# the run has nothing they need (a skip says why)
NO_TAKEOVER = ("the run has no takeover, handover or loss: 9 direct acquires by the "
               "printer thread")
NOT_ON = {
    "i386": {
        "report-takeover-of-higher-prio": "every hostile acquire of the run is by a panic "
        "context; a lower-prio taker is another owner with all its state words",
        "report-takeover-of-panic-owner": "every hostile acquire of the run is by a panic "
        "context; a lower-prio taker is another owner with all its state words",
        "report-latency-format": "the run ships the report text, no trace.dat to list with -l",
    },
    "x86_64": dict(
        {n: NO_TAKEOVER for n in (
            "report-takeover-of-higher-prio", "report-takeover-of-panic-owner",
            "report-grant-removed", "report-grant-to-wrong-cpu", "report-grant-to-wrong-prio",
            "report-thread-hostile", "report-commit-after-lost",
            "report-release-handover-without-grant")},
        **{"report-" + n: NO_TAKEOVER for n, _, _, _ in STATE_WORD_MUTATIONS
           if n != "console-name-bit"},
        **{n: "the printer thread acquires and releases the console for every record: "
           "no owner prints records back to back to overwrite (dropped records)"
           for n in ("dropped-with-notice", "serial-dropped-notice-missing",
                     "serial-dropped-notice-wrong-n", "serial-dropped-but-printed",
                     "report-dropped-count-over-gap", "report-record-never-stored",
                     "report-lines-merged", "v2-dropped-with-notice")},
        **{n: "no attempt of the run was interrupted: no cut line"
           for n in ("serial-cut-lines-removed", "serial-cut-line-completed",
                     "v2-cut-lines-removed")},
        **{n: "the trace committed 7 stressor records: no record 30 records, 150 or "
           "600 lines away, no kernel record committed after the first stressor record"
           for n in ("serial-record-moved-later", "serial-record-moved-far-later",
                     "serial-copy-before-its-turn", "serial-copy-far-before-its-turn",
                     "report-kernel-store-text-changed")},
        **{"report-latency-format": "the run ships the report text, no trace.dat to list "
           "with -l",
           "trace-ends-after-last-store": "the trace's last committed record is its 8th: "
           "cut after its store, no record is stored after the last commit (the check's "
           "premise); trace-ends-after-last-stressor-store runs",
           "report-second-console-commit-removed": "covered by report-commit-removed: the "
           "second console's copy of a 7-record history"}),
}
CHAIN_MUTATIONS = {"i386": I386_MUTATIONS, "x86_64": X86_64_MUTATIONS}


def _chain_params():
    out = []
    for arch, ms in CHAIN_MUTATIONS.items():
        for m in ms:
            marks = escapes(m.today) if m.today else ()
            out.append(pytest.param(arch, m, id="%s-%s" % (arch, m.name), marks=marks))
        for name, why in sorted(NOT_ON[arch].items()):
            out.append(pytest.param(arch, None, id="%s-%s" % (arch, name),
                                    marks=pytest.mark.skip(reason="not on this run: " + why)))
    return out


def load_chain_run(arch):
    """The chain run of `arch` as a mutations.Run, and its kernel.config
    (None: none shipped)."""
    src = os.path.join(HERE, "data", CHAIN_RUNS[arch])

    def xz(name):
        path = os.path.join(src, name + ".xz")
        if not os.path.exists(path):
            return None
        with lzma.open(path) as f:
            return f.read()
    texts = {}
    for n in ("stats.txt", "printk.txt"):
        with open(os.path.join(src, n)) as f:
            texts[n] = f.read()
    config = xz("kernel.config")
    arch32 = config is not None and b"\nCONFIG_64BIT=y\n" not in config
    run = mu.Run.load(xz("console.log"), xz("trace.txt").decode("latin-1"), None,
                      texts["stats.txt"], texts["printk.txt"], arch32=arch32)
    return run, config


def analyse_chain(d):
    """The verdict of a chain run's results dir, as the analysis judges
    a run by default (the events ordered by the chain)."""
    from analysis import api
    return api.check_results(str(d), report=str(d / "report.txt"), serial=str(d / "console.log"))


def write_chain_run(d, run, config):
    write_run(d, run, "text")
    if config is not None:
        (d / "kernel.config").write_bytes(config)     # 32-bit: no seq in the word
    return d


@pytest.fixture(scope="session")
def chain_inputs(tmp_path_factory):
    """arch -> (Run, kernel.config, verdict of the unchanged run), each
    made once."""
    cache = {}

    def get(arch):
        if arch not in cache:
            run, config = load_chain_run(arch)
            base = analyse_chain(write_chain_run(tmp_path_factory.mktemp("chain-" + arch) / "run",
                                                 run, config))
            cache[arch] = run, config, base
        return cache[arch]
    return get


@pytest.mark.parametrize("arch,m", _chain_params())
def test_chain_mutation(chain_inputs, tmp_path, arch, m):
    run, config, base = chain_inputs(arch)
    if m.op is not unchanged:
        run = mutate(run, m)
    v = analyse_chain(write_chain_run(tmp_path / "run", run, config))
    assert_outcome(v, m.expect)
    if "inputs" in v or m.op is unchanged:    # (stats.txt refused: no analysis ran)
        assert v["inputs"]["ordering"].startswith("causal")
        assert v["inputs"]["arch32"] == run.arch32
    if m.check is not None:
        m.check(v, base, run)


@pytest.fixture(scope="session")
def recorded_v2(recorded):
    return mu.to_v2(recorded)


def _verdict_as_recorded(recorded, tmp_path_factory, name):
    """The verdict of a recorded run, unchanged: what a mutation's own
    check compares the mutated run's verdict with."""
    return analyse_text(write_run(tmp_path_factory.mktemp(name) / "run", recorded, "text"))


def _check_mutation(recorded, base_verdict, tmp_path, m):
    """Mutation m of a recorded run has the outcome it expects, and
    passes its own check against the verdict of the run as recorded."""
    run = recorded if m.op is unchanged else mutate(recorded, m)
    v = analyse_text(write_run(tmp_path / "run", run, m.source))
    assert_outcome(v, m.expect)
    if m.check is not None:
        m.check(v, base_verdict, run)


@pytest.fixture(scope="session")
def base_verdict_v2(recorded_v2, tmp_path_factory):
    return _verdict_as_recorded(recorded_v2, tmp_path_factory, "base2")


@pytest.mark.parametrize("m", [m.param() for m in V2_MUTATIONS])
def test_v2_mutation(recorded_v2, base_verdict_v2, tmp_path, m):
    _check_mutation(recorded_v2, base_verdict_v2, tmp_path, m)


@pytest.fixture(scope="session")
def base_verdict(recorded, tmp_path_factory):
    return _verdict_as_recorded(recorded, tmp_path_factory, "base")


@pytest.mark.parametrize("m", [m.param() for m in MUTATIONS])
def test_mutation(recorded, base_verdict, tmp_path, m):
    _check_mutation(recorded, base_verdict, tmp_path, m)


def test_flipped_bit_stops_one_cpu_early(recorded, tmp_path):
    # what dat-cpu-stops-early does to the reader: the CPU's events end
    # at the damaged chunk, every other CPU is read in full
    if not tracedat.available():
        pytest.skip(tracedat.unavailable_reason())
    (tmp_path / "a.dat").write_bytes(recorded.dat)
    (tmp_path / "b.dat").write_bytes(t_stop_cpu_early(recorded).dat)
    before, after = reader_counts(tmp_path / "a.dat"), reader_counts(tmp_path / "b.dat")
    assert {c: n for c, n in after.items() if c != STOP_CPU} == \
        {c: n for c, n in before.items() if c != STOP_CPU}
    assert 0 < after[STOP_CPU] < before[STOP_CPU]


@pytest.mark.parametrize("m,reader", [m.param(rd) for m in DAT_MUTATIONS
                                      for rd in ("libtracecmd", "text")])
def test_dat_mutation(recorded, tmp_path_factory, m, reader):
    v = dat_verdict(recorded, tmp_path_factory, m, reader)
    assert_outcome(v, m.expect)
    if m.check is not None:
        m.check(v, None, None)


_dat_verdicts = {}


def dat_verdict(recorded, tmp_path_factory, m, reader):
    """The verdict of a trace.dat mutation with one reader (both readers
    run once, side by side: the readers' agreement below reuses them)."""
    if reader == "libtracecmd" and not tracedat.available():
        pytest.skip(tracedat.unavailable_reason())
    if m.name not in _dat_verdicts:
        run = recorded if m.op is unchanged else mutate(recorded, m)
        readers = ["text"] + (["libtracecmd"] if tracedat.available() else [])
        _dat_verdicts[m.name] = analyse_dat(
            write_run(tmp_path_factory.mktemp(m.name) / "run", run, "dat"), readers)
    return _dat_verdicts[m.name][reader]


def _agree_param(m):
    """Both readers give the same exit class; a `today` dict with
    different answers says where they differ today."""
    today = None
    if isinstance(m.today, dict) and len(set(m.today.values())) > 1:
        today = "; ".join("%s %s" % kv for kv in sorted(m.today.items()))
    marks = escapes(today) if today else ()
    return pytest.param(m, id=m.name, marks=marks)


@pytest.mark.parametrize("m", [_agree_param(m) for m in DAT_MUTATIONS])
def test_dat_readers_agree(recorded, tmp_path_factory, m):
    a = dat_verdict(recorded, tmp_path_factory, m, "libtracecmd")
    b = dat_verdict(recorded, tmp_path_factory, m, "text")
    if a["exit_code"] != b["exit_code"]:
        raise WrongAnswer("libtracecmd exit %d (%s), text exit %d (%s)" % (
            a["exit_code"], why(a)[:200], b["exit_code"], why(b)[:200]))
