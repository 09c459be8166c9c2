"""Boot-to-verdict tests in QEMU. Each one proves the harness can fail:
a panic, a hang and a WARN are each reported, and a clean run passes.

These need the kernel and initramfs (`make test` builds them first);
PNS_SKIP_BOOT=1 skips them.
"""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(os.environ.get("PNS_SKIP_BOOT") == "1",
                                reason="PNS_SKIP_BOOT=1")


def run(tmp_path, scenario, **env):
    res = tmp_path / scenario
    full = dict(os.environ, **env)
    proc = subprocess.run(
        [sys.executable, "-m", "tools.pns", "run", "--no-build",
         "--scenario", scenario, "--results", str(res)],
        cwd=REPO, env=full, capture_output=True, text=True, timeout=600)
    verdict = json.loads((res / "verdict.json").read_text())
    return proc.returncode, verdict, res


def test_default_scenario_passes(tmp_path):
    rc, v, res = run(tmp_path, "default")
    assert v["verdict"] == "pass", v["problems"]
    assert rc == 0
    for f in ("console.log", "trace.dat", "qemu.cmd", "kernel.config", "source.json"):
        assert (res / f).exists(), f
    assert v["booted"] and v["finished"] and not v["hung"]


def test_panic_on_the_command_line_is_reported(tmp_path):
    # No init can be found: the kernel panics before user space.
    rc, v, _ = run(tmp_path, "default", EXTRA_CMDLINE="rdinit=/nope init=/nope")
    assert rc == 1 and v["verdict"] == "fail"
    assert v["splats"].get("panic") == 1
    assert not v["booted"]


def assert_guest_state(path):
    """The monitor's report names each vCPU's instruction pointer."""
    text = path.read_text()
    assert re.search(r"^CPU 0: ip 0x[0-9a-f]+ \S+\+0x[0-9a-f]+$", text, re.M), text[:2000]
    assert "RSP=" in text or "ESP=" in text


def test_hung_guest_is_killed_and_reported(tmp_path):
    rc, v, res = run(tmp_path, "hang", GRACE="5")
    assert rc == 1 and v["verdict"] == "fail"
    assert v["hung"] and v["booted"] and not v["finished"]
    assert v["boot_hangs"] == []
    assert_guest_state(res / "guest-state.txt")


def test_boot_that_never_reaches_init_is_tried_again(tmp_path):
    # A second is too short to reach /init: both attempts hang at boot.
    rc, v, res = run(tmp_path, "default", BOOT_TIMEOUT="1", GRACE="5")
    assert rc == 1 and v["verdict"] == "fail"
    assert v["hung"] and not v["booted"]
    assert [h["attempt"] for h in v["boot_hangs"]] == [1]
    assert any("boot attempt 1 hung before /init" in n for n in v["notes"])
    assert (res / "boot-hang-1" / "console.log").exists()
    # still in the firmware or early boot: registers, maybe no kernel symbol
    for state in (res / "boot-hang-1" / "guest-state.txt", res / "guest-state.txt"):
        assert re.search(r"^CPU 0: ip 0x[0-9a-f]+ ", state.read_text(), re.M)


def test_warn_is_reported_as_splat(tmp_path):
    rc, v, _ = run(tmp_path, "warn")
    assert v["splats"].get("warning") == 1
    assert v["verdict"] == "pass" and rc == 0   # the scenario expects it
