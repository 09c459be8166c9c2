"""The verdict's headline (what `make run` prints) says what the verdict
holds: its numbers are the verdict's counts, a failure names its first
violation."""

import lzma
import shutil
from pathlib import Path

import pytest

from analysis.tests.verdicts import check_results
from analysis.report import DUPLICATE_RULES, LOSS_RULES, headline

SHIPPED = Path(__file__).parent / "data" / "stress-20261203-095925"


@pytest.fixture(scope="module")
def shipped(tmp_path_factory):
    d = tmp_path_factory.mktemp("shipped")
    for f in SHIPPED.iterdir():
        if f.suffix == ".xz":
            (d / f.stem).write_bytes(lzma.decompress(f.read_bytes()))
        else:
            shutil.copy2(f, d / f.name)
    return d


def test_headline_of_a_pass_gives_the_verdicts_counts(shipped):
    v = check_results(shipped)
    assert v["verdict"] == "pass", v["reasons"]
    c = v["counts"]
    lines = headline(v)
    assert lines[0] == "analysis PASS: %d records stored, %d printed, %d on the serial log; " \
        "reprints %d" % (c["records"], c["commits"], v["serial"]["matched"], c["reprints"])
    assert "hostile %d " % c["takeovers"]["hostile"] in lines[1]
    assert "handovers %d " % c["handovers"]["completed"] in lines[1]
    assert lines[2] == "  lost 0, unjustified duplicates 0; rules: all %d hold" % len(
        v["violations_by_rule"])
    assert len(lines) == 3


def test_headline_of_a_failure_names_the_first_violation(shipped, tmp_path):
    # Drop the 100th stressor line from the serial log: a record is lost.
    log = (shipped / "console.log").read_bytes().split(b"\n")
    idx = [i for i, ln in enumerate(log) if b" pstress r=" in ln][100]
    for f in shipped.iterdir():
        shutil.copy2(f, tmp_path / f.name)
    (tmp_path / "console.log").write_bytes(b"\n".join(log[:idx] + log[idx + 1:]))
    v = check_results(tmp_path)
    assert v["verdict"] == "fail"
    lines = headline(v)
    vb = v["violations_by_rule"]
    lost = sum(vb.get(r, 0) for r in LOSS_RULES)
    dups = sum(vb.get(r, 0) for r in DUPLICATE_RULES)
    assert lost > 0
    assert lines[2].startswith("  lost %d, unjustified duplicates %d; rules: violated " % (
        lost, dups))
    first = v["violations"][0]
    assert lines[-1].startswith("  first violation [%s] (console %s seq %s" % (
        first["rule"], first["console"], first["seq"]))
    assert lines[-1].endswith(first["message"])


def test_headline_of_unusable_input_says_why():
    assert headline({"error": "no trace"}) == ["analysis: UNUSABLE INPUT: no trace"]
