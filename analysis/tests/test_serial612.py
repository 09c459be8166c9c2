"""The serial log of the 6.12 target (nbcon) checked end to end: synthetic
6.12 traces (nbcon_trace.py) with the console.log a 6.12 kernel prints
(no context mark, the replay marker glued to the interrupted owner's
cut line, a record below the console loglevel printing its dropped
notice alone), each with the exact set of rules it breaks; and the
real 6.12 runs shipped in data/ (nbcon-*), judged as they are and with
their log changed the way a faulty kernel would print it."""

import lzma
import os

import pytest

from analysis.console_output import OUTPUT
from analysis.rules import MODELS, NBCON_612, rules_of
from analysis.tests.nbcon_trace import NbconTrace
from analysis.tests.tracebuilder import pstress
from analysis.tests.verdicts import check_results, violation_counts, violated

KTHREAD = (1, "task", "normal")      # the printer thread pr/ttyS0 on CPU 1
EMERG = (2, "task", "emergency")
MARKER = "** replaying previous printk message **"
HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "data")


def notice(n):
    return "** %d printk messages dropped **" % n


class Run612:
    """A 6.12 trace and the console.log its kernel printed: records are
    stressor records of one producer (n = 0, 1, ...), stored on CPU 0,
    but for those `levels` stores at another level than 4: kernel
    messages (a stressor record below the console loglevel would be a
    gap of its producer on the log)."""

    def __init__(self, records, levels=None):
        self.t = NbconTrace()
        self.text = {}
        self.log = []
        levels = levels or {}
        n = 0
        for s in range(1, records + 1):
            if s in levels:
                self.text[s] = "debug message %d" % s
            else:
                self.text[s] = pstress(0, "task", n, "p%d" % n)
                n += 1
            self.t.store(0, s, self.text[s], level=levels.get(s, 4))

    def line(self, seq, cut=None, after=""):
        """seq's line as the console prints it (`cut`: its first
        characters only, then `after` on the same line)."""
        text = self.text[seq] if cut is None else self.text[seq][:cut]
        self.log.append("[%12.6f] %s%s" % (seq / 1000.0, text, after))

    def thread_prints(self, *seqs):
        self.t.acquire(*KTHREAD, thread=1)
        for s in seqs:
            self.t.print_record(*KTHREAD, s, thread=1)
            self.line(s)
        self.t.release(*KTHREAD, thread=1)

    def thread_starts(self):
        """The printer thread acquires the console and prints seq 1, and
        keeps the console: how the runs begin in which something
        happens to its next record."""
        self.t.acquire(*KTHREAD, thread=1)
        self.t.print_record(*KTHREAD, 1, thread=1)
        self.line(1)

    def check(self, tmp_path):
        d = self.t.write(str(tmp_path / "run"))
        with open(os.path.join(d, "console.log"), "w") as f:
            f.write("".join(ln + "\r\n" for ln in self.log))
        return check_results(d)


def test_every_model_has_its_console_output():
    assert set(OUTPUT) == set(MODELS)


def test_the_serial_and_producer_rules_judge_612():
    rules = rules_of(NBCON_612)
    for r in ("serial-missing", "serial-corrupt", "serial-order", "serial-partial",
              "serial-extra", "serial-dropped", "serial-replay", "producer-gap",
              "producer-order"):
        assert r in rules


def test_a_thread_printing_records_passes(tmp_path):
    r = Run612(4)
    r.thread_prints(1, 2, 3, 4)
    v = r.check(tmp_path)
    assert v["verdict"] == "pass", v["violations"]
    assert set(v["violations_by_rule"]) == set(rules_of(NBCON_612))
    assert v["serial"]["matched"] == 4 and v["serial"]["stressor_records"] == 4


# ------------------------------------------------------------ replay marker

def emergency_takes_the_thread_mid_record(r, marker=True, cut=30):
    """The emergency context takes the safe printer thread between two
    bytes of seq 2 (how=hostile prev_unsafe=0) and replays it: the
    thread's cut line has no line end, so the taker's marker follows it
    on the same log line (without `marker`: the kernel forgot it)."""
    t = r.t
    r.thread_starts()
    t.emit(*KTHREAD, 2, thread=1)
    t.acquire(*EMERG)
    t.lost(*KTHREAD, thread=1)
    r.line(2, cut=cut, after=MARKER if marker else "")
    t.print_record(*EMERG, 2, replay=1)
    r.line(2)
    t.print_record(*EMERG, 3)
    r.line(3)
    t.release(*EMERG)


def test_a_replay_marker_glued_to_the_cut_line_passes(tmp_path):
    r = Run612(3)
    emergency_takes_the_thread_mid_record(r)
    v = r.check(tmp_path)
    assert v["verdict"] == "pass", v["violations"]
    s = v["serial"]
    assert (s["partial_lines"], s["replay_markers"], s["replay_markers_checked"]) == (1, 1, 1)
    assert v["counts"]["replays"] == 1


def test_a_replay_marker_glued_to_a_cut_dropped_notice_passes(tmp_path):
    """The thread lost the console inside the dropped notice it wrote in
    front of seq 3 (`** 1 printk messages drop`); the taker's marker
    follows on the same line, then its own notice and the record (seen
    on a real run, storm at an instant line: `** 1 printk messages
    drop** replaying previous printk message **`)."""
    r = Run612(3)
    t = r.t
    r.thread_starts()
    t.emit(*KTHREAD, 3, dropped=1, thread=1)
    t.acquire(*EMERG)
    t.lost(*KTHREAD, thread=1)
    r.log.append(notice(1)[:25] + MARKER)
    t.emit(*EMERG, 3, dropped=1, replay=1)
    t.commit(*EMERG, 3)
    r.log.append(notice(1))
    r.line(3)
    t.release(*EMERG)
    v = r.check(tmp_path)
    assert v["verdict"] == "pass", v["violations"]
    s = v["serial"]
    assert (s["partial_lines"], s["replay_markers_checked"]) == (1, 1)


def test_a_notice_glued_to_a_dropped_notice_cut_after_its_first_byte_passes(tmp_path):
    """The thread lost the console to an emergency owner right after the
    first byte of the dropped notice it wrote in front of seq 4; the
    taker prints seq 5 (seq 4 was overwritten meanwhile), its notice on
    the same line (seen on a real run, backlog on 6.12: `*** 315 printk
    messages dropped **`)."""
    r = Run612(5)
    t = r.t
    r.thread_starts()
    t.emit(*KTHREAD, 4, dropped=2, thread=1)
    t.acquire(*EMERG)
    t.lost(*KTHREAD, where="release", thread=1)
    t.emit(*EMERG, 5, dropped=3)
    t.commit(*EMERG, 5)
    r.log.append(notice(2)[:1] + notice(3))
    r.line(5)
    t.release(*EMERG)
    v = r.check(tmp_path)
    assert v["verdict"] == "pass", v["violations"]
    assert v["serial"]["partial_lines"] == 1


def test_a_replay_without_its_marker(tmp_path):
    """No marker anywhere on the log: a 6.12 kernel always prints it
    (the emission's replay=1 says so), so the log is held to it."""
    r = Run612(3)
    emergency_takes_the_thread_mid_record(r, marker=False)
    v = r.check(tmp_path)
    assert violation_counts(v) == {"serial-replay": 1}
    assert v["violations"][0]["seq"] == 2


def test_a_handover_in_the_middle_of_a_line_and_the_replay(tmp_path):
    """The emergency context on CPU 2 requests; the printer thread, in
    its unsafe section inside seq 2, hands the console over (release
    handover=1); the waiter replays seq 2 behind the marker, glued to
    the thread's cut line (the boot test warn-thread's case)."""
    r = Run612(3)
    t = r.t
    r.thread_starts()
    t.emit(*KTHREAD, 2, thread=1)
    t.request(*EMERG)
    t.release(*KTHREAD, thread=1)
    r.line(2, cut=12, after=MARKER)
    t.acquire(*EMERG, how="handover")
    t.print_record(*EMERG, 2, replay=1)
    r.line(2)
    t.print_record(*EMERG, 3)
    r.line(3)
    t.release(*EMERG)
    v = r.check(tmp_path)
    assert v["verdict"] == "pass", v["violations"]
    assert v["serial"]["replay_markers_checked"] == 1 and v["serial"]["partial_lines"] == 1


def test_a_marker_where_no_record_was_replayed(tmp_path):
    r = Run612(3)
    r.thread_prints(1)
    r.log.append(MARKER)
    r.thread_prints(2, 3)
    v = r.check(tmp_path)
    assert violation_counts(v) == {"serial-replay": 1}


# ------------------------------------------------------------ missing, corrupt

def test_a_record_missing_from_the_log(tmp_path):
    r = Run612(4)
    r.thread_prints(1, 2, 3, 4)
    del r.log[2]
    v = r.check(tmp_path)
    # its producer number is already reported: no gap on top
    assert violation_counts(v) == {"serial-missing": 1}
    assert v["violations"][0]["seq"] == 3


def test_a_context_mark_is_a_byte_612_never_prints(tmp_path):
    r = Run612(3)
    r.thread_prints(1, 2, 3)
    r.log[1] = "T" + r.log[1]
    v = r.check(tmp_path)
    assert violation_counts(v) == {"serial-corrupt": 1}
    assert v["violations"][0]["seq"] == 2


# ------------------------------------------------------------ dropped notices

def ring_overruns_the_thread(r, said=3):
    """The ringbuffer overwrote seqs 2..4 before the thread read them: it
    prints seq 5 with dropped=3 and the notice (saying `said`) in front."""
    t = r.t
    r.thread_starts()
    t.emit(*KTHREAD, 5, thread=1, dropped=3)
    t.commit(*KTHREAD, 5, thread=1)
    if said is not None:
        r.log.append(notice(said))
    r.line(5)
    t.print_record(*KTHREAD, 6, thread=1)
    r.line(6)
    t.release(*KTHREAD, thread=1)


def test_producer_gaps_are_accounted_by_the_dropped_records(tmp_path):
    r = Run612(6)
    ring_overruns_the_thread(r)
    v = r.check(tmp_path)
    assert v["verdict"] == "pass", v["violations"]
    assert v["consoles"]["ttyS0"]["dropped_records"] == 3
    assert v["serial"]["dropped_notices_checked"] == 1
    assert v["violations_by_rule"]["producer-gap"] == 0


def test_a_dropped_notice_with_the_wrong_count(tmp_path):
    r = Run612(6)
    ring_overruns_the_thread(r, said=2)
    v = r.check(tmp_path)
    assert violation_counts(v) == {"serial-dropped": 1}
    assert v["violations"][0]["seq"] == 5


def test_a_dropped_notice_missing(tmp_path):
    r = Run612(6)
    ring_overruns_the_thread(r, said=None)
    v = r.check(tmp_path)
    assert violation_counts(v) == {"serial-dropped": 1}


def suppressed_record_drops(r, notices):
    """Seqs 2..4 overwritten, then seq 5, stored at level 7, not below
    the console loglevel 7 (suppressed): the thread emits it with
    dropped=3 and, on 6.12, prints its notice alone (len counts the
    notice's bytes); seqs 6..7 overwritten, seq 8 printed with
    dropped=2.  The log shows `notices` between seq 1's line and seq
    8's."""
    t = r.t
    r.thread_starts()
    t.emit(*KTHREAD, 5, thread=1, dropped=3, length=len(notice(3)) + 1)
    t.commit(*KTHREAD, 5, thread=1)
    t.emit(*KTHREAD, 8, thread=1, dropped=2)
    t.commit(*KTHREAD, 8, thread=1)
    r.log.extend(notice(n) for n in notices)
    r.line(8)
    t.print_record(*KTHREAD, 9, thread=1)
    r.line(9)
    t.release(*KTHREAD, thread=1)


def test_a_suppressed_record_prints_its_own_dropped_notice(tmp_path):
    r = Run612(9, levels={5: 7})
    suppressed_record_drops(r, (3, 2))
    v = r.check(tmp_path)
    assert v["verdict"] == "pass", v["violations"]
    assert v["serial"]["dropped_notices_checked"] == 2
    assert v["consoles"]["ttyS0"]["dropped_records"] == 5


def test_a_suppressed_records_count_is_not_carried_on_612(tmp_path):
    """6.1 would print one notice of 5 before seq 8 (the suppressed
    record's count carried over); 6.12 prints two."""
    r = Run612(9, levels={5: 7})
    suppressed_record_drops(r, (5,))
    v = r.check(tmp_path)
    # seq 8's notice says 5, not 2; seq 5's own notice of 3 is not there
    assert violation_counts(v) == {"serial-dropped": 2}
    assert {x["seq"] for x in v["violations"]} == {5, 8}


def test_a_suppressed_records_notice_missing(tmp_path):
    r = Run612(9, levels={5: 7})
    suppressed_record_drops(r, (2,))
    v = r.check(tmp_path)
    assert violation_counts(v) == {"serial-dropped": 1}
    assert v["violations"][0]["seq"] == 5


def test_a_suppressed_record_printed_without_a_notice_to_print(tmp_path):
    """A record below the console loglevel with nothing dropped and no
    replay has nothing to print: output of it is output of a record the
    console must not print."""
    r = Run612(3, levels={2: 7})
    r.thread_starts()
    r.t.emit(*KTHREAD, 2, thread=1, length=60)
    r.t.commit(*KTHREAD, 2, thread=1)
    r.line(2)
    r.t.print_record(*KTHREAD, 3, thread=1)
    r.line(3)
    r.t.release(*KTHREAD, thread=1)
    v = r.check(tmp_path)
    assert "serial-extra" in violated(v)


# ------------------------------------------------------------ real runs

def shipped(tmp_path, name, edit=None):
    """A results directory in tmp_path holding the shipped 6.12 run
    data/<name> uncompressed; edit(lines) -> lines changes its
    console.log (str lines without line ends)."""
    src = os.path.join(DATA, name)
    d = tmp_path / name
    d.mkdir()
    for f in os.listdir(src):
        if f.endswith(".xz"):
            with lzma.open(os.path.join(src, f)) as fh:
                (d / f[:-3]).write_bytes(fh.read())
        else:
            with open(os.path.join(src, f), "rb") as fh:
                (d / f).write_bytes(fh.read())
    if edit is not None:
        lines = (d / "console.log").read_bytes().decode("latin-1").split("\r\n")
        (d / "console.log").write_bytes("\r\n".join(edit(lines)).encode("latin-1"))
    return str(d)


WARN = "nbcon-warn-takeover-safe-20261207-132240"
SMOKE = "nbcon-smoke-20261207-131859"


def test_the_warn_takeover_run_passes_end_to_end(tmp_path):
    """A WARN takes the printer thread over between two bytes of a
    record (9600 baud): the cut line with the marker glued to it, the
    replay."""
    v = check_results(shipped(tmp_path, WARN))
    assert v["verdict"] == "pass", v["reasons"]
    assert v["inputs"]["target"] == "6.12"
    s = v["serial"]
    assert (s["matched"], s["partial_lines"], s["replay_markers_checked"]) == (87, 1, 1)


def test_the_warn_takeover_run_without_its_marker(tmp_path):
    def unglue(lines):
        return [ln.replace(MARKER, "") for ln in lines]
    v = check_results(shipped(tmp_path, WARN, unglue))
    assert violation_counts(v) == {"serial-replay": 1}


def test_the_smoke_run_checks_its_stressor_records_end_to_end(tmp_path):
    """The stressor at 115200 baud: 79 dropped notices, a replay, every
    producer of stats.txt complete but for the records the console
    dropped; the stressor's own end line says FAILURE (`records cpu=1
    ctx=hardirq none; ...`), the one violation."""
    v = check_results(shipped(tmp_path, SMOKE))
    assert violation_counts(v) == {"stressor-selfcheck": 1}
    s = v["serial"]
    assert (s["matched"], s["stressor_records"], s["dropped_notices_checked"]) == \
        (1203, 1158, 79)
    assert s["replay_markers_checked"] == 1 and s["writer_order_checked"] == 1158


def test_the_smoke_run_with_a_stressor_record_taken_out(tmp_path):
    def drop_one(lines):
        i = next(i for i, ln in enumerate(lines) if "pstress v=2" in ln and i > 600)
        return lines[:i] + lines[i + 1:]
    v = check_results(shipped(tmp_path, SMOKE, drop_one))
    assert violation_counts(v) == {"serial-missing": 1, "stressor-selfcheck": 1}


def test_the_smoke_run_with_a_dropped_count_changed(tmp_path):
    def change(lines):
        i = [i for i, ln in enumerate(lines) if ln.endswith("printk messages dropped **")][-1]
        n = int(lines[i].split()[1])
        return lines[:i] + [notice(n + 1)] + lines[i + 1:]
    v = check_results(shipped(tmp_path, SMOKE, change))
    assert violation_counts(v) == {"serial-dropped": 1, "stressor-selfcheck": 1}
