"""The emergency store-to-console delay (analysis/emergency.py): only
records stored in an emergency section count, only the serial console's
first commit ends their delay; on the recorded real run it covers every
such record the trace shows committed."""

import re
import shutil
import subprocess

import pytest

from analysis.tests.verdicts import check_results
from analysis.emergency import EmergencyDelay
from analysis.traceparse import Event, Store
from analysis.tests.recorded import copy_recorded



class Con:
    def __init__(self, name):
        self.name = name


class An:
    serial_console = "ttyS0"


def store(seq, ts, ctx):
    text = "pstress v=2 r=1 c=0 x=%s w=task0 n=%d l=1 a k=00000000" % (ctx, seq)
    return Store(1, 0, ts, seq, len(text), 4, "T1", text)


def commit(seq, ts, con="ttyS0"):
    return Event(1, "nobkl_commit", 0, ts, {"con": con, "seq": str(seq)}), Con(con)


def test_only_emergency_records_and_the_serial_consoles_first_commit():
    e = EmergencyDelay(An())
    e.on_event(store(10, 1.0, "emerg"), None)
    e.on_event(store(11, 1.0, "task"), None)
    e.on_event(store(12, 1.5, "emerg"), None)
    e.on_event(store(13, 1.5, "emerg"), None)
    e.on_event(*commit(10, 1.25, con="ttyS1"))      # another console
    e.on_event(*commit(10, 1.5))                    # 500 ms
    e.on_event(*commit(10, 1.75))                   # a reprint's commit: not again
    e.on_event(*commit(11, 1.75))                   # not an emergency record
    e.on_event(*commit(12, 1.5))                    # 0 ms
    s = e.summary()
    assert (s["count"], s["min"], s["max"], s["not_committed"]) == (2, 0.0, 500000.0, 1)


@pytest.mark.skipif(shutil.which("trace-cmd") is None, reason="trace-cmd not installed")
def test_every_committed_emergency_record_of_the_recorded_run(tmp_path):
    d = copy_recorded(tmp_path)
    out = subprocess.run(["trace-cmd", "report", "-i", str(d / "trace.dat")],
                         capture_output=True, text=True).stdout
    emerg = {int(m.group(1)) for m in re.finditer(r"nobkl_store:\s+seq=(\d+) .* x=emerg ", out)}
    committed = {int(m.group(1)) for m in re.finditer(r"nobkl_commit:\s+con=ttyS0 seq=(\d+)", out)}
    assert emerg and emerg & committed
    v = check_results(str(d))
    s = v["latency"]["emergency_store_to_console"]
    assert s["count"] == len(emerg & committed)
    assert s["not_committed"] == len(emerg - committed)
    assert s["p99"] <= s["max"]


class Owner:
    def __init__(self, prio, label):
        self.prio = prio
        self._label = label

    def label(self):
        return self._label


class OwnedCon(Con):
    def __init__(self, name, owner=None):
        super().__init__(name)
        self.owner = owner


class OwnedAn(An):
    def __init__(self):
        self.consoles = {"ttyS0": OwnedCon("ttyS0")}


def event(name, ts, **fields):
    fields.setdefault("con", "ttyS0")
    return Event(1, name, 0, ts, {k: str(x) for k, x in fields.items()}), Con(fields["con"])


def test_wait_behind_a_lower_priority_owner_ends_at_an_acquire_of_its_priority():
    """The wait ends when a context of at least the record's priority
    acquires the console (not a lower one), or when the owner commits the
    record itself; records stored while no lower-priority context owned
    the console do not wait; a wait longer than FEW_RECORDS record times
    (median emit to commit) is the finding."""
    an = OwnedAn()
    e = EmergencyDelay(an)
    thread = Owner("normal", "cpu0/task/thread/normal")
    # record time: 100 us, from one emission of an ordinary record
    e.on_event(*event("nobkl_emit", 0.9, seq=1))
    e.on_event(*event("nobkl_commit", 0.9001, seq=1))
    an.consoles["ttyS0"].owner = thread
    e.on_event(store(10, 1.0, "emerg"), None)            # behind the thread
    e.on_event(store(11, 1.0, "panic"), None)            # behind the thread
    e.on_event(store(12, 1.0, "task"), None)             # not marked
    e.on_event(*event("nobkl_acquire", 1.001, prio="normal"))      # no end
    e.on_event(*event("nobkl_acquire", 1.002, prio="emergency"))   # ends 10's
    an.consoles["ttyS0"].owner = Owner("emergency", "cpu1/hardirq/emergency")
    e.on_event(store(13, 1.003, "emerg"), None)          # its own priority: no wait
    e.on_event(*event("nobkl_commit", 1.0105, seq=11))   # ends 11's by commit: 10.5 ms
    d = e.per_console()["ttyS0"]
    w_em, w_pa = d["emergency_wait_behind_lower_prio"], d["panic_wait_behind_lower_prio"]
    assert (w_em["count"], w_em["max"]) == (1, 2000.0)
    assert (w_pa["count"], w_pa["max"], w_pa["still_waiting"]) == (1, 10500.0, 0)
    assert d["record_time_us"]["count"] == 1
    f = e.findings()["ttyS0"]
    assert f["threshold_us"] == 400.0
    assert [(x["seq"], x["kind"], x["wait_us"]) for x in f["examples"]] == \
        [(11, "panic", 10500.0), (10, "emergency", 2000.0)]
    assert f["examples"][0]["owner_at_store"] == "cpu0/task/thread/normal"


def test_no_finding_within_a_few_record_times():
    an = OwnedAn()
    e = EmergencyDelay(an)
    e.on_event(*event("nobkl_emit", 0.9, seq=1))
    e.on_event(*event("nobkl_commit", 0.901, seq=1))         # record time 1 ms
    an.consoles["ttyS0"].owner = Owner("normal", "cpu0/task/thread/normal")
    e.on_event(store(10, 1.0, "emerg"), None)
    e.on_event(*event("nobkl_acquire", 1.003, prio="panic"))   # 3 ms < 4 record times
    assert e.per_console()["ttyS0"]["emergency_wait_behind_lower_prio"]["count"] == 1
    assert e.findings() == {}


def test_recorded_run_reports_store_to_console_per_kind(tmp_path):
    v = check_results(str(copy_recorded(tmp_path)))
    d = v["latency"]["store_to_console"]["ttyS0"]
    s = v["latency"]["emergency_store_to_console"]
    assert (d["emergency"]["count"], d["emergency"]["not_committed"]) == \
        (s["count"], s["not_committed"])
    # every commit of this run has its emission in the trace
    assert d["record_time_us"]["count"] == v["consoles"]["ttyS0"]["commits"] == 3390
    f = v["findings"]["emergency_behind_lower_prio"]["ttyS0"]
    assert f["examples"][0]["wait_us"] == d["emergency_wait_behind_lower_prio"]["max"]
