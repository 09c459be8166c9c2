"""Boot-to-verdict tests in QEMU. Each one proves the harness can fail:
a panic, a hang and a WARN are each reported, and a clean run passes.

These need the kernel and initramfs (`make test` builds them first);
PNS_SKIP_BOOT=1 skips them.
"""

import json
import os
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


def test_hung_guest_is_killed_and_reported(tmp_path):
    rc, v, _ = run(tmp_path, "hang", GRACE="5")
    assert rc == 1 and v["verdict"] == "fail"
    assert v["hung"] and v["booted"] and not v["finished"]


def test_warn_is_reported_as_splat(tmp_path):
    rc, v, _ = run(tmp_path, "warn")
    assert v["splats"].get("warning") == 1
    assert v["verdict"] == "pass" and rc == 0   # the scenario expects it
