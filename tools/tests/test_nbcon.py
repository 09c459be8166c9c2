"""Mainline nbcon (KERNEL=6.12) in QEMU: each test boots a scenario on
the 6.12 target and judges what the guest produced (trace.dat,
console.log, the splats the harness found).

The scenarios force the situation they test through the series' debug
interface (printk_nbcon/ in debugfs): a hold that keeps the printer
thread inside a record until the WARN comes, at the place byte_delay_safe
selects, which decides whether the WARN's emergency output meets the
thread in a safe state (a takeover without a handover) or in an unsafe
one (a handover). How the hold ended proves which.

Skipped while patches/6.12/series is empty and with PNS_SKIP_BOOT=1.
"""

import os
import re
import subprocess

import pytest

from tools.pns import consolelog, target

from test_boot import run

NBCON = {"KERNEL": "6.12", "ARCH": "x86_64"}
REPLAY_MARKER = "** replaying previous printk message **"

pytestmark = [
    pytest.mark.skipif(os.environ.get("PNS_SKIP_BOOT") == "1", reason="PNS_SKIP_BOOT=1"),
    pytest.mark.skipif(not any(
        ln.strip() and not ln.startswith("#")
        for ln in (target.BY_NAME["6.12"].patches / "series").read_text().splitlines()),
        reason="patches/6.12/series is empty"),
]


def trace_events(res):
    """(name, fields) of every nbcon and vprintk_store event of the run,
    in the order trace-cmd reports them; a store's text runs to the end
    of its line."""
    out = subprocess.run(["trace-cmd", "report", "-i", str(res / "trace.dat")],
                         capture_output=True, text=True, check=True).stdout
    evs = []
    for m in re.finditer(r"\]\s+[\d.]+: (nbcon_\w+|vprintk_store): +(.*)", out):
        head, has_text, text = m.group(2).partition(" text=")
        fields = dict(re.findall(r"(\w+)=(\S*)", head))
        if has_text:
            fields["text"] = text
        evs.append((m.group(1), fields))
    return evs


def assert_only_the_warning(v):
    """The run passes (the analysis judges the trace by the nbcon model),
    and the one splat is the WARN the scenario provoked."""
    assert v["verdict"] == "pass", v["problems"]
    assert v["splats"] == {"warning": 1}, v["splats"]


def assert_replayed(res, evs):
    """The emission with replay=1 is the record the thread was printing,
    and on the console the marker is a line of its own (the cut record's
    line was ended first) followed by that record's text."""
    replays = [f for n, f in evs if n == "nbcon_emit" and f["replay"] == "1"]
    assert replays, "no record was replayed"
    stored = {f["seq"]: f["text"] for n, f in evs if n == "vprintk_store"}
    lines = consolelog.read_lines(res / "console.log")
    marked = [i for i, ln in enumerate(lines) if ln.endswith(REPLAY_MARKER)]
    assert len(marked) == len(replays), (len(marked), len(replays))
    glued = [lines[i] for i in marked if lines[i] != REPLAY_MARKER]
    assert glued == [], glued
    for i, f in zip(marked, replays):
        assert consolelog.strip_prefix(lines[i + 1]) == stored[f["seq"]], (lines[i:i + 2], f)


def hold_end(res):
    """How the hold of the printer thread ended (the scenario's "printer
    thread hold:" line): the proof that the WARN met the thread inside a
    record, as the scenario forced it to."""
    m = re.findall(r"^printer thread hold: (\w+)$", (res / "guest.log").read_text(), re.M)
    assert m, "the scenario did not say how the hold ended"
    return m[-1]


def first_meeting(evs):
    """The first time an emergency context got the console from the
    printer thread (a normal priority owner: the thread prints at normal
    priority), by a takeover or by a handover, and the events before it.
    Later meetings are not forced: between the WARN's printk() calls the
    thread may take the console again, and what the next call meets then
    depends on where the thread is."""
    for i, (n, f) in enumerate(evs):
        if n == "nbcon_acquire" and f["prio"] == "emergency" and (
                f["how"] == "handover" or (f["how"] == "takeover" and f["prev_prio"] == "normal")):
            return f, evs[:i]
    raise AssertionError("no emergency context got the console from the printer thread")


def assert_thread_reacquires(evs, after):
    """The printer thread, which lost the console mid-record (or handed
    it over) at event `after`, takes it back only to restore the port:
    its next acquire is nbcon_reacquire_nobuf()'s (reacquire=1), and it
    emits nothing before it releases the console."""
    mine = [(n, f) for n, f in evs[after + 1:] if f.get("thread") == "1"]
    acq = next(i for i, (n, _) in enumerate(mine) if n == "nbcon_acquire")
    assert mine[acq][1]["reacquire"] == "1", mine[acq]
    rel = next(i for i, (n, _) in enumerate(mine) if i > acq and n == "nbcon_release")
    assert [f for n, f in mine[acq:rel] if n == "nbcon_emit"] == [], mine[acq:rel]


def test_warn_takes_a_safe_printer_thread_over_without_a_handover(tmp_path):
    """The line's time spent after each byte's unsafe section (scenario
    warn-takeover-safe): the WARN's emergency output finds the printer
    thread safe between two bytes and takes the console over directly,
    with no handover request; the thread learns it at its next byte
    (nbcon_lost), and the taker replays the interrupted record behind the
    replay marker."""
    rc, v, res = run(tmp_path, "warn-takeover-safe", **NBCON)
    assert_only_the_warning(v)
    assert hold_end(res) == "lost"
    evs = trace_events(res)
    taken, before = first_meeting(evs)
    # how=takeover: a safe owner taken without a handover, which the
    # trace tells apart from the unsafe takeover of a panic (how=hostile)
    assert (taken["how"], taken["prev_unsafe"]) == ("takeover", "0"), taken
    assert [f for n, f in before if n == "nbcon_handover_request"] == []
    lost = [i for i, (n, f) in enumerate(evs) if n == "nbcon_lost" and f["thread"] == "1"]
    assert lost and evs[lost[0]][1]["owner_prio"] == "emergency", [evs[i] for i in lost]
    assert_thread_reacquires(evs, lost[0])
    assert_replayed(res, evs)


def test_warn_asks_an_unsafe_printer_thread_for_a_handover(tmp_path):
    """The line's time spent inside each byte's unsafe section (scenario
    warn-thread, the default place): the WARN's emergency output finds
    the printer thread unsafe, requests a handover, and the thread hands
    the console over at its next safe point instead of being taken over;
    the waiter replays the interrupted record."""
    rc, v, res = run(tmp_path, "warn-thread", **NBCON)
    assert_only_the_warning(v)
    assert hold_end(res) == "request"
    evs = trace_events(res)
    handed, before = first_meeting(evs)
    # the release left the console free with the waiter's reservation in
    # it: the handover acquire's previous word has no owner
    assert (handed["how"], handed["prev_req_prio"]) == ("handover", "emergency"), handed
    requests = [f for n, f in before if n == "nbcon_handover_request"
                and f["prio"] == "emergency" and f["owner_prio"] == "normal"]
    granted = [i for i, (n, f) in enumerate(before) if n == "nbcon_release"
               and f["thread"] == "1" and f["handover"] == "1" and f["to_prio"] == "emergency"]
    assert requests and granted, (requests, granted)
    assert_thread_reacquires(evs, granted[-1])
    # the WARN waits for the held thread as long as it takes
    assert [f for n, f in before if n == "nbcon_handover_timeout"] == []
    assert_replayed(res, evs)


def test_a_handover_granted_by_the_drivers_last_safe_point_is_no_loss(tmp_path):
    """The printer thread held where the 8250 restores its port after a
    record (scenario warn-restore): the WARN's request is granted by the
    driver's last nbcon_exit_unsafe(), so the thread no longer owns the
    console when the core releases it after the write. That release is
    no news to the thread: no nbcon_lost between its grant and its next
    acquire. The record, written whole but not committed, is replayed."""
    rc, v, res = run(tmp_path, "warn-restore", **NBCON)
    assert_only_the_warning(v)
    assert hold_end(res) == "request"
    evs = trace_events(res)
    handed, before = first_meeting(evs)
    assert handed["how"] == "handover", handed
    grants = [i for i, (n, f) in enumerate(before) if n == "nbcon_release"
              and f["thread"] == "1" and f["handover"] == "1"]
    assert grants, "the thread granted no handover"
    after = []
    for n, f in evs[grants[-1] + 1:]:
        if f.get("thread") == "1":
            if n == "nbcon_acquire":
                break
            after.append((n, f))
    assert [f for n, f in after if n == "nbcon_lost"] == [], after
    assert_replayed(res, evs)


def test_the_debug_knobs_refuse_what_they_cannot_take(tmp_path):
    """Scenario nbcon-knobs: each number knob of printk_nbcon/ takes its
    limit (10 ms a byte, a 10 s hold, a 10 s handover wait: they are
    spent with interrupts or preemption disabled) and refuses one more,
    keeping its value; the hold arms and disarms, refuses a disarm it
    has nothing to undo, and a hold nobody ends times out. A kernel
    record that reaches the printer thread between an arm and its disarm
    engages the hold, and the disarm is refused: the scenario takes that
    course (a "note:" line) once the thread has run and the hold ended."""
    rc, v, res = run(tmp_path, "nbcon-knobs", **NBCON)
    log = (res / "guest.log").read_text()
    fails = re.findall(r"^FAIL .*$", log, re.M)
    passes = re.findall(r"^PASS (\S+)$", log, re.M)
    assert fails == [] and rc == 0, fails
    assert len(passes) == 3 * 6 + 10, passes
    assert v["splats"] == {}, v["splats"]
