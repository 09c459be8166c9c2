"""The emergency store-to-console delay (analysis/emergency.py): only
records stored in an emergency section count, only the serial console's
first commit ends their delay; on the recorded real run it covers every
such record the trace shows committed."""

import re
import shutil
import subprocess

import pytest

from analysis.api import check_results
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
