"""make checkers and make soak without a guest: the checker kernels'
fragments, the counts taken from a verdict, the totals of a soak."""

import json

import pytest

from tools.pns import checkers, kernel, runner
from tools.pns.common import REPO, HarnessError


def test_checker_fragments_are_extra_fragments_not_variants():
    assert checkers.fragments("kasan+kmemleak") == [
        "tools/configs/checkers/kasan.config", "tools/configs/checkers/kmemleak.config"]
    assert checkers.fragments("kcsan") == ["tools/configs/checkers/kcsan.config"]
    for name in checkers.CHECKERS:
        for f in checkers.fragments(name):
            assert (REPO / f).exists()
    # variants() lists tools/configs/*.config: the checkers are not among them
    assert kernel.variants() == ["debug", "lean"]
    assert kernel.build_name("debug", "x86_64", checkers.fragments("kasan+kmemleak")) \
        == "debug-x86_64+kasan+kmemleak"
    with pytest.raises(HarnessError, match="unknown checker kernel 'kasan'"):
        checkers.fragments("kasan")


def _opts(name):
    out = {}
    for f in checkers.fragments(name):
        out.update(kernel.parse_config((REPO / f).read_text()))
    return out


def test_checker_fragments_ask_for_what_the_issue_names():
    k = _opts("kasan+kmemleak")
    assert {o: k[o] for o in ("CONFIG_KASAN", "CONFIG_KASAN_GENERIC", "CONFIG_KASAN_INLINE",
                              "CONFIG_SLUB", "CONFIG_SLOB", "CONFIG_DEBUG_KMEMLEAK",
                              "CONFIG_DEBUG_KMEMLEAK_AUTO_SCAN",
                              "CONFIG_DEBUG_KMEMLEAK_DEFAULT_OFF", "CONFIG_PCI_MSI")} == {
        "CONFIG_KASAN": "y", "CONFIG_KASAN_GENERIC": "y", "CONFIG_KASAN_INLINE": "y",
        "CONFIG_SLUB": "y", "CONFIG_SLOB": "n", "CONFIG_DEBUG_KMEMLEAK": "y",
        "CONFIG_DEBUG_KMEMLEAK_AUTO_SCAN": "n", "CONFIG_DEBUG_KMEMLEAK_DEFAULT_OFF": "n",
        # the results share over MSI-X: the instrumented ACPI _PRT times out
        "CONFIG_PCI_MSI": "y"}
    c = _opts("kcsan")
    assert {o: c[o] for o in ("CONFIG_KCSAN", "CONFIG_KCSAN_STRICT",
                              "CONFIG_KCSAN_INTERRUPT_WATCHER",
                              "CONFIG_KCSAN_REPORT_ONCE_IN_MS")} == {
        "CONFIG_KCSAN": "y", "CONFIG_KCSAN_STRICT": "n",
        "CONFIG_KCSAN_INTERRUPT_WATCHER": "y", "CONFIG_KCSAN_REPORT_ONCE_IN_MS": "3000"}
    # allnoconfig turns every prompted option off: KCSAN's defaults are
    # spelled out, above all the one that switches it on at boot
    assert {o: c[o] for o in ("CONFIG_KCSAN_EARLY_ENABLE", "CONFIG_KCSAN_SELFTEST",
                              "CONFIG_KCSAN_REPORT_VALUE_CHANGE_ONLY",
                              "CONFIG_KCSAN_ASSUME_PLAIN_WRITES_ATOMIC",
                              "CONFIG_KCSAN_DELAY_RANDOMIZE",
                              "CONFIG_KCSAN_SKIP_WATCH_RANDOMIZE",
                              "CONFIG_KCSAN_REPORT_RACE_UNKNOWN_ORIGIN")} == dict.fromkeys(
        ("CONFIG_KCSAN_EARLY_ENABLE", "CONFIG_KCSAN_SELFTEST",
         "CONFIG_KCSAN_REPORT_VALUE_CHANGE_ONLY", "CONFIG_KCSAN_ASSUME_PLAIN_WRITES_ATOMIC",
         "CONFIG_KCSAN_DELAY_RANDOMIZE", "CONFIG_KCSAN_SKIP_WATCH_RANDOMIZE",
         "CONFIG_KCSAN_REPORT_RACE_UNKNOWN_ORIGIN"), "y")
    assert "CONFIG_KASAN" not in c
    # the debug options stay in the variant, not repeated in the fragments
    debug = kernel.parse_config((REPO / "tools/configs/debug.config").read_text())
    for name in checkers.CHECKERS:
        assert not set(debug) & set(_opts(name))


def _verdict(verdict="pass", splats=None, records=100):
    return {"scenario": "storm", "verdict": verdict, "splats": splats or {},
            "results": "/r/storm-1", "problems": [], "analysis": {"counts": {
                "records": records,
                "takeovers": {"direct": 50, "handover": 3, "hostile": 7,
                              "hostile_by_prio": {"emergency": 5, "panic": 2},
                              "hostile_same_cpu": 1, "hostile_from_nmi": 2,
                              "hostile_while_unsafe": 4},
                "handovers": {"requests": 9, "grants": 4, "completed": 3, "timeouts": 5}}}}


def test_a_row_gives_takeovers_by_kind_and_handovers():
    assert checkers.row("kcsan", _verdict(splats={"kcsan": 2})) == (
        "kcsan", "storm", "pass", "kcsan=2", 100,
        "direct 50, handover 3, hostile 7 (by prio emergency=5,panic=2; from nmi 2, "
        "unsafe 4)",
        "requests 9, grants 4, completed 3, timeouts 5", "storm-1")
    # a run without an analysis (hung, no trace) counts nothing
    v = {"scenario": "storm", "verdict": "fail", "splats": {}, "results": "/r/x",
         "analysis": None}
    assert checkers.row("kcsan", v)[4:7] == (
        0, "direct 0, handover 0, hostile 0 (by prio -; from nmi 0, unsafe 0)",
        "requests 0, grants 0, completed 0, timeouts 0")


def test_soak_adds_up_every_run(tmp_path, monkeypatch):
    runs = iter([_verdict(), _verdict("fail", {"kmemleak": 3}, records=40)])
    clock = iter([0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0])
    monkeypatch.setenv("RESULTS", str(tmp_path))
    monkeypatch.setattr(runner, "build_all", lambda sc=None: None)
    monkeypatch.setattr(runner, "run_scenario", lambda name, build=True: next(runs))
    monkeypatch.setattr(checkers.time, "monotonic", lambda: next(clock))
    # two runs start within 4 s (the clock is read twice per run)
    assert checkers.soak(4, "soak") == 1
    (out,) = tmp_path.glob("soak-summary-*.json")
    s = json.loads(out.read_text())
    assert (s["runs"], s["passed"], s["verdict"]) == (2, 1, "fail")
    assert s["totals"] == {
        "records": 140, "hostile_from_nmi": 4, "hostile_while_unsafe": 8,
        "takeovers": {"direct": 100, "handover": 6, "hostile": 14},
        "hostile_by_prio": {"emergency": 10, "panic": 4},
        "handovers": {"requests": 18, "grants": 8, "completed": 6, "timeouts": 10},
        "splats": {"kmemleak": 3}}


def test_checkers_are_x86_64_only_and_names_are_checked(monkeypatch):
    monkeypatch.setenv("ARCH", "i386")
    with pytest.raises(HarnessError, match="x86_64 only"):
        checkers.run_checkers()
    monkeypatch.setenv("ARCH", "x86_64")
    with pytest.raises(HarnessError, match="unknown checker kernel 'kmsan'"):
        checkers.run_checkers("kasan+kmemleak kmsan")


def test_checkers_run_each_scenario_on_each_kernel_with_its_fragments(monkeypatch, capsys):
    seen = []
    monkeypatch.setenv("ARCH", "x86_64")
    monkeypatch.setenv("EXTRA_FRAGMENTS", "mine.config")
    monkeypatch.setenv("GRACE", "77")
    monkeypatch.delenv("BOOT_TIMEOUT", raising=False)
    env = checkers.os.environ
    monkeypatch.setattr(runner, "run_scenario", lambda name: seen.append(
        (name, env["EXTRA_FRAGMENTS"], env["BOOT_TIMEOUT"], env["GRACE"])) or _verdict())
    assert checkers.run_checkers("kasan+kmemleak kcsan", "storm") == 0
    # the slower kernels get more time unless the settings say otherwise
    assert seen == [
        ("storm", "mine.config tools/configs/checkers/kasan.config "
                  "tools/configs/checkers/kmemleak.config", "300", "77"),
        ("storm", "mine.config tools/configs/checkers/kcsan.config", "300", "77")]
    assert env["EXTRA_FRAGMENTS"] == "mine.config" and "BOOT_TIMEOUT" not in env
    assert "[checkers] 2 of 2 passed" in capsys.readouterr().out
