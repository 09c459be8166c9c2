"""printk_stress in QEMU (issue 4): the guest-side interface tests run in
one boot (scenario stressor-tests); the host reads each test's PASS/FAIL
lines and its 'N passed, N failed' summary from guest.log, and the splat
verdict from console.log.

Skipped with PNS_SKIP_BOOT=1 and while the module does not exist.
"""

import os
import re

import pytest
from test_boot import REPO, run

pytestmark = [
    pytest.mark.skipif(os.environ.get("PNS_SKIP_BOOT") == "1", reason="PNS_SKIP_BOOT=1"),
    pytest.mark.skipif(not (REPO / "lib-printk-stress" / "Kbuild").exists(),
                       reason="no lib-printk-stress"),
]


@pytest.fixture(scope="module")
def stressor_run(tmp_path_factory):
    rc, v, res = run(tmp_path_factory.mktemp("stressor"), "stressor-tests")
    return v, parse_guest_log((res / "guest.log").read_text(errors="replace"))


def parse_guest_log(text):
    """{test name: (passed, failed, [FAIL lines])} from '== stressor-NAME' sections."""
    out, name = {}, None
    for line in text.splitlines():
        m = re.match(r"== (\S+)", line)
        if m:
            name = m.group(1)
            out[name] = [0, 0, []]
        elif name and line.startswith("FAIL"):
            out[name][2].append(line)
        elif name:
            m = re.match(r"(\d+) passed, (\d+) failed$", line)
            if m:
                out[name][0:2] = [int(m.group(1)), int(m.group(2))]
    return out


def test_parse_guest_log():
    got = parse_guest_log("== stressor-a\nPASS x\nFAIL y: why\n1 passed, 1 failed\n"
                          "== stressor-b\n")
    assert got == {"stressor-a": [1, 1, ["FAIL y: why"]], "stressor-b": [0, 0, []]}


def test_no_splat_and_guest_finished(stressor_run):
    v, _ = stressor_run
    assert v["booted"] and v["finished"] and not v["hung"]
    assert v["splats"] == {}, v["splat_examples"]


@pytest.mark.parametrize("name", ["stressor-badinput", "stressor-lifecycle", "stressor-smoke"])
def test_guest_side_checks(stressor_run, name):
    _, results = stressor_run
    assert name in results, f"{name} did not run"
    passed, failed, fails = results[name]
    assert passed > 0 and failed == 0, fails
