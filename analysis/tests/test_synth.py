"""The generator: clean runs pass, every injected break is caught by the
rule it targets, a dropped-events marker makes the verdict incomplete."""

import pytest

from analysis.tests.verdicts import check_results
from analysis.synth import BREAKS, generate


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_synth_clean_passes(tmp_path, seed):
    info = generate(str(tmp_path), events=15000, seed=seed)
    assert info["events"] >= 15000
    v = check_results(str(tmp_path))
    assert v["verdict"] == "pass", v["violations"][:3]
    c = v["counts"]
    # the run exercises every mechanism
    assert c["takeovers"]["hostile"] > 0 and c["takeovers"]["handover"] > 0
    assert c["handovers"]["timeouts"] > 0 and c["reprints"] > 0
    assert c["dropped_records"] > 0
    assert v["serial"]["partial_lines"] > 0 and v["serial"]["foreign_lines"] > 0
    # format 2 records: every one the console printed had its writer's
    # order checked
    assert v["serial"]["writer_order_checked"] == v["serial"]["stressor_records"] > 0


def test_synth_latency_format_passes(tmp_path):
    generate(str(tmp_path), events=8000, seed=4, latency=True)
    v = check_results(str(tmp_path))
    assert v["verdict"] == "pass", v["violations"][:3]


@pytest.mark.parametrize("kind", sorted(BREAKS))
def test_synth_break_is_caught(tmp_path, kind):
    info = generate(str(tmp_path), events=8000, seed=5, breaks=[kind])
    assert info["breaks_done"] == [kind]
    v = check_results(str(tmp_path))
    assert v["verdict"] == "fail"
    assert v["violations_by_rule"][BREAKS[kind]] >= 1, v["violations_by_rule"]


def test_synth_trace_drop_incomplete(tmp_path):
    generate(str(tmp_path), events=8000, seed=6, drop_trace=True)
    v = check_results(str(tmp_path))
    assert v["verdict"] == "incomplete" and v["exit_code"] == 2
    assert v["trace"]["drop_markers"] == 1
