"""printk_stress.

Host side (no QEMU): the record format of docs/interfaces.md section 3 as
the analysis reads it; records of version 2 prove themselves (a changed
header field is a corrupted record) and name their writer.

In QEMU: the guest-side interface tests run in one boot (scenario
stressor-tests); the host reads each test's PASS/FAIL lines and its
'N passed, N failed' summary from guest.log, the splat verdict from
console.log, and checks the records on console.log against the format.
Skipped with PNS_SKIP_BOOT=1 and while the module does not exist.
"""

import os
import re
import subprocess
import zlib

import pytest
from test_boot import REPO, run

from analysis import consolelog
from analysis.pstress import parse_pstress, pstress_id
from analysis.tests.tracebuilder import Trace, printed
from analysis.tests.verdicts import check_results, violated



def boot(test):
    """Marks a test that boots QEMU."""
    test = pytest.mark.skipif(os.environ.get("PNS_SKIP_BOOT") == "1",
                              reason="PNS_SKIP_BOOT=1")(test)
    return pytest.mark.skipif(not (REPO / "lib-printk-stress" / "Kbuild").exists(),
                              reason="no lib-printk-stress")(test)


ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def crc32_le(data):
    """The kernel's crc32_le(~0, data, len)."""
    return zlib.crc32(data) ^ 0xFFFFFFFF


def payload_of(header, length):
    """The payload the stressor generates for `header` (interfaces.md
    section 3: xorshift32 seeded with the header's crc)."""
    state = crc32_le(header.encode()) | 1
    out = []
    for _ in range(length):
        state ^= (state << 13) & 0xFFFFFFFF
        state ^= state >> 17
        state ^= (state << 5) & 0xFFFFFFFF
        out.append(ALPHABET[state % len(ALPHABET)])
    return "".join(out)


def record(cpu, ctx, writer, n, length=16, run_id=1):
    """A version 2 record as the stressor prints it."""
    header = "pstress v=2 r=%d c=%d x=%s w=%s n=%d l=%d " % (run_id, cpu, ctx, writer, n, length)
    body = header + payload_of(header, length)
    return "%s k=%08x" % (body, crc32_le(body.encode()))


# ---------------------------------------------------------------- parsing

def test_record_parses_with_its_writer():
    text = record(2, "emerg", "hardirq", 7)
    assert parse_pstress(text) == ((1, 2, "emerg", "hardirq"), 7, True, "")
    assert pstress_id(text) == ((1, 2, "emerg", "hardirq"), 7)
    # the second lookup comes from pstress_id()'s cache of producers
    assert pstress_id(record(2, "emerg", "hardirq", 8)) == ((1, 2, "emerg", "hardirq"), 8)


def test_payloads_differ_from_record_to_record():
    payloads = {record(0, "task", "task0", n).split(" ")[-2] for n in range(1000)}
    assert len(payloads) == 1000


# every header field and the payload: a record with one of them changed
# (its checksum as printed) no longer checks out
CHANGES = [("r=1 ", "r=2 "), ("c=3 ", "c=2 "), ("x=task ", "x=nmi "), ("w=task1 ", "w=task0 "),
           ("n=123 ", "n=124 "), ("v=2 r", "v=2  r")]


@pytest.mark.parametrize("old,new", CHANGES)
def test_changed_header_field_fails_the_checksum(old, new):
    text = record(3, "task", "task1", 123)
    bad = text.replace(old, new, 1)
    assert bad != text
    p = parse_pstress(bad)
    assert p is not None and not p[2]


def test_changed_length_and_payload_are_caught():
    text = record(0, "nmi", "nmi", 5, length=20)
    p = parse_pstress(text.replace("l=20 ", "l=21 "))
    assert p[2] is False and p[3] == "payload length 20 != l=21"
    i = text.index(" k=") - 3
    bad = text[:i] + ("a" if text[i] != "a" else "b") + text[i + 1:]
    p = parse_pstress(bad)
    assert p[2] is False and p[3].startswith("crc ")
    assert parse_pstress(text[:-1])[3] == "malformed stressor record"


def test_version_1_records_still_parse():
    pb = b"ABCDEFGH"
    text = "pstress r=4 c=1 x=task n=9 l=8 k=%08x ABCDEFGH" % crc32_le(pb)
    assert parse_pstress(text) == ((4, 1, "task"), 9, True, "")
    assert pstress_id(text) == ((4, 1, "task"), 9)


# ---------------------------------------------------------------- analysis



def serial_index(t, seq):
    return next(i for i, ln in enumerate(t.serial) if ln.endswith(t.texts[seq]))


def check(tmp_path, t, stats=None):
    d = t.write(tmp_path / "res")
    if stats is not None:
        with open(os.path.join(d, "stats.txt"), "w") as f:
            f.write(stats)
    return check_results(d)


def test_clean_version_2_run_passes(tmp_path):
    recs = [record(1, "task", "task%d" % (n % 2), n // 2) for n in range(8)]
    t, _ = printed(recs)
    v = check(tmp_path, t)
    assert v["verdict"] == "pass", v["violations"]
    assert v["serial"]["stressor_records"] == 8 and v["serial"]["producers"] == 2


@pytest.mark.parametrize("old,new", CHANGES)
def test_changed_header_field_is_corruption(tmp_path, old, new):
    # Before version 2 the checksum covered the payload only and payloads
    # repeated every 62 records: a line whose n= changed was a valid
    # record, equal to another one (serial-missing + serial-extra).
    recs = [record(3, "task", "task1", n) for n in range(120, 127)]
    t, seqs = printed(recs)
    i = serial_index(t, seqs[3])
    assert "n=123 " in t.serial[i]
    t.serial[i] = t.serial[i].replace(old, new, 1)
    v = check(tmp_path, t)
    assert violated(v) == {"serial-corrupt"}, v["violations"]
    assert v["violations_by_rule"]["serial-corrupt"] == 1


def test_gap_of_a_writer_names_it(tmp_path):
    recs = [record(1, "emerg", w, n) for n in range(4) for w in ("task0", "nmi")
            if (w, n) != ("nmi", 2)]
    t, _ = printed(recs)
    v = check(tmp_path, t)
    assert violated(v) == {"producer-gap"}, v["violations"]
    assert [x["message"] for x in v["violations"]] == [
        "producer r=1 c=1 x=emerg w=nmi: n=2..2 never appeared on the serial log "
        "(not counted as dropped; producer reached n=3)"]


@pytest.mark.parametrize("ctx,writer", [("softirq", "softirq"), ("deferred", "task2"),
                                        ("emerg", "softirq")])
def test_softirq_and_deferred_records_are_checked_like_the_others(tmp_path, ctx, writer):
    # the contexts and writer added later need nothing new in the
    # analysis: a complete producer passes, a gap is named
    t, _ = printed([record(3, ctx, writer, n) for n in range(4)])
    v = check(tmp_path / "full", t)
    assert v["verdict"] == "pass", v["violations"]
    assert v["serial"]["stressor_records"] == 4 and v["serial"]["producers"] == 1
    t, _ = printed([record(3, ctx, writer, n) for n in (0, 1, 3)])
    v = check(tmp_path / "gap", t)
    assert violated(v) == {"producer-gap"}, v["violations"]
    assert v["violations"][0]["message"].startswith(
        "producer r=1 c=3 x=%s w=%s: n=2..2 never appeared" % (ctx, writer))


def test_records_dropped_by_the_console_are_accounted(tmp_path):
    t = Trace()
    T = t.ctx(0, thread=1)
    s = [t.store(record(2, "hardirq", "hardirq", n)) for n in range(8)]
    t.acquire(T)
    t.print_rec(T, s[0])
    t.print_rec(T, s[1])
    t.print_rec(T, s[5], dropped=3)    # n=2..4 overwritten
    t.print_rec(T, s[6])
    t.print_rec(T, s[7])
    t.release(T)
    v = check(tmp_path, t)
    assert v["verdict"] == "pass", v["violations"]
    assert v["counts"]["dropped_records"] == 3


@pytest.mark.parametrize("where", ["payload", "header"])
def test_a_damaged_stored_record_is_trace_damage(tmp_path, where):
    # a stored record changed in the trace (a flipped bit), intact on the
    # serial log: its own checksum says the trace is not trustworthy
    recs = [record(1, "task", "task0", n) for n in range(4)]
    t, seqs = printed(recs)
    good = t.texts[seqs[2]]
    i = good.index(" k=") - 1 if where == "payload" else good.index("n=2 ") + 2
    bad = good[:i] + chr(ord(good[i]) ^ 1) + good[i + 1:]
    j = next(k for k, ln in enumerate(t.lines) if ln.endswith("text=" + good))
    t.lines[j] = t.lines[j][:-len(good)] + bad
    v = check(tmp_path, t)
    assert v["exit_code"] == 2 and v["verdict"] == "incomplete"
    assert v["trace"]["bad_field_events"] == 1
    assert any("own check fails (crc" in a["message"] for a in v["anomalies"]["examples"])


STATS = """run=1 state=idle last_stop=duration elapsed_ms=1000
producer cpu=1 ctx=task writer=task0 attempted=%d stored=%d
producer cpu=1 ctx=emerg writer=task0 attempted=0 stored=0
"""


def test_stats_per_writer_expect_the_tail(tmp_path):
    t, _ = printed([record(1, "task", "task0", n) for n in range(5)])
    v = check(tmp_path, t, STATS % (5, 5))
    assert v["verdict"] == "pass", v["violations"]
    # two more were stored but never printed
    v = check(tmp_path, t, STATS % (7, 7))
    assert violated(v) == {"producer-gap"}, v["violations"]
    assert "w=task0: n=5..6 never appeared" in v["violations"][0]["message"]


# ---------------------------------------------------------------- in QEMU

@pytest.fixture(scope="module")
def stressor_run(tmp_path_factory):
    rc, v, res = run(tmp_path_factory.mktemp("stressor"), "stressor-tests")
    return v, parse_guest_log((res / "guest.log").read_text(errors="replace")), res


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


def run_check_success(result, reasons, figure=""):
    """check_success of stressor-lib.sh under busybox sh, with the run's
    result and the reasons of its FAILURE line stubbed in."""
    script = (f'. {REPO}/workloads/tests/stressor-lib.sh\n'
              f'ps_result() {{ echo {result}; }}\n'
              'dmesg() { echo "[ 1.0] printk_stress: run=1 SUCCESS checks=stored"; '
              f'echo "[ 2.0] printk_stress: run=2 FAILURE checks=stored,nmi failed: {reasons}"; }}\n'
              f'check_success name {figure}\nsummary\n')
    out = subprocess.run(["/bin/busybox", "sh", "-c", script], capture_output=True,
                         text=True, check=False)
    return out.stdout.splitlines()


@pytest.mark.skipif(not os.path.exists("/bin/busybox"), reason="no /bin/busybox")
def test_check_success_says_why_and_takes_only_the_figure_check():
    assert run_check_success("SUCCESS", "") == ["PASS name", "1 passed, 0 failed"]
    assert run_check_success("FAILURE", "nmi 1 CPUs, first cpu=3 sent=2 handled=1") == [
        "FAIL name: nmi 1 CPUs, first cpu=3 sent=2 handled=1", "0 passed, 1 failed"]
    both = "records cpu=0 ctx=hardirq none; stored 1 producers, first cpu=0"
    assert run_check_success("FAILURE", both, "records") == [
        "FAIL name: records cpu=0 ctx=hardirq none;stored 1 producers, first cpu=0",
        "0 passed, 1 failed"]
    assert run_check_success("FAILURE", "records cpu=0 ctx=hardirq none", "records") == [
        "figure name records cpu=0 ctx=hardirq none", "PASS name", "1 passed, 0 failed"]
    assert run_check_success("FAILURE", "records cpu=0 ctx=hardirq none")[0].startswith("FAIL")


def test_parse_guest_log():
    got = parse_guest_log("== stressor-a\nPASS x\nFAIL y: why\n1 passed, 1 failed\n"
                          "== stressor-b\n")
    assert got == {"stressor-a": [1, 1, ["FAIL y: why"]], "stressor-b": [0, 0, []]}


@boot
def test_no_splat_and_guest_finished(stressor_run):
    v, _, _ = stressor_run
    assert v["booted"] and v["finished"] and not v["hung"]
    assert v["splats"] == {}, v["splat_examples"]


@boot
@pytest.mark.parametrize("name", ["stressor-badinput", "stressor-lifecycle", "stressor-checks",
                                  "stressor-smoke"])
def test_guest_side_checks(stressor_run, name):
    _, results, _ = stressor_run
    assert name in results, f"{name} did not run"
    passed, failed, fails = results[name]
    assert passed > 0 and failed == 0, fails


@boot
def test_run_lines_reach_the_console_whatever_the_level(stressor_run):
    """The banners and the SUCCESS/FAILURE line of a run whose records are
    at level 7 (not shown with loglevel=7) are on the serial console:
    they are printed at KERN_ALERT (stressor-checks, first load)."""
    _, _, res = stressor_run
    text = (res / "console.log").read_text(errors="replace")
    starts = re.findall(r"printk_stress: start run=1 .* level=7 .*$", text, re.M)
    assert starts, "no start banner of a level=7 run on the console"
    assert re.search(r"printk_stress: end run=1 .* level=7 .* reason=duration .*"
                     r" takeovers_taken=\d+ takeovers_direct=\d+ ", text), \
        "no end banner of a level=7 run on the console"
    assert re.search(r"printk_stress: run=1 SUCCESS checks=stored,nmi,takeovers,records$",
                     text, re.M)
    assert re.search(r"printk_stress: run=1 FAILURE checks=stored,nmi,takeovers,records "
                     r"failed: records cpu=\d+ ctx=hardirq none$", text, re.M)


@boot
def test_fuzzed_writes_are_refused_or_valid(tmp_path):
    """Scenario stressor-fuzz: random and malformed writes at every
    debugfs file and module parameter, idle and while running."""
    rc, v, res = run(tmp_path, "stressor-fuzz")
    results = parse_guest_log((res / "guest.log").read_text(errors="replace"))
    assert v["booted"] and v["finished"] and not v["hung"]
    assert v["splats"] == {}, v["splat_examples"]
    assert "stressor-fuzz" in results, "stressor-fuzz did not run"
    passed, failed, fails = results["stressor-fuzz"]
    assert passed == 5 and failed == 0, fails


@boot
def test_kernel_records_are_the_documented_ones(stressor_run):
    """Every record on the console that passes its checksum is exactly
    what the format generates from its header: payload as documented.
    (A line damaged by a takeover fails it: the analysis's business.)"""
    _, _, res = stressor_run
    text = (res / "console.log").read_text(errors="replace")
    recs = re.findall(r"(pstress v=2 r=\d+ c=\d+ x=\w+ w=\w+ n=\d+ l=\d+ \S+ k=[0-9a-f]{8})$",
                      text, re.M)
    recs = [r for r in recs if parse_pstress(r)[2]]
    assert recs, "no version 2 record on the console"
    writers = set()
    for r in recs:
        m = re.match(r"pstress v=2 r=(\d+) c=(\d+) x=(\w+) w=(\w+) n=(\d+) l=(\d+) ", r)
        run_id, cpu, ctx, w, n, ln = m.groups()
        assert r == record(int(cpu), ctx, w, int(n), int(ln), int(run_id))
        writers.add((ctx, re.sub(r"\d+$", "", w)))
    assert {("task", "task"), ("hardirq", "hardirq"), ("nmi", "nmi"), ("softirq", "softirq"),
            ("deferred", "task")} <= writers


def check_shapes(res, verdict):
    """What the scenario shapes (stutter_ms=500, all three shapes) must
    show besides the analysis' pass: records cut at the line limit on the
    serial log, valid and counted; multi-line records; the stutter phases
    in stats.txt that a run of its length begins, whatever the load did
    to the guest's timers (one more burst than idle phases at most, as a
    run begins with a burst). How
    many idle phases show as a gap between the trace's stores is the
    host's timing (a producer the host held up at the end of a burst
    stores into the idle phase): a figure, not a gate."""
    a = verdict["analysis"]
    cut = 0
    for line in consolelog.lines(res / "console.log"):
        text = line.text
        if text.startswith("pstress v=2 ") and len(text) == 989 and \
                not re.search(r" k=[0-9a-f]{8}$", text):
            assert parse_pstress(text)[2], text
            cut += 1
    s = a["serial"]
    assert cut > 0
    assert cut <= s["truncated_records"] <= cut + s.get("stray_after_unsafe_takeover", 0)
    assert s["multi_line_records"] > 0
    st = re.search(r"^stutter bursts=(\d+) idles=(\d+)$", (res / "stats.txt").read_text(), re.M)
    bursts, idles = int(st.group(1)), int(st.group(2))
    assert bursts - idles in (0, 1), st.group(0)
    assert bursts + idles in stutter_phases(res / "control.txt"), st.group(0)


def stutter_phases(control):
    """The numbers of stutter phases a whole run of the knobs in
    control.txt may begin: phase k > 0 starts k stutter_ms after the start,
    off by a quarter of stutter_ms at most, so the phases with k + 1/4
    periods before the run's end surely begin, those with k - 1/4 may."""
    text = control.read_text()
    assert re.search(r"^last_stop: duration$", text, re.M), "the run was stopped early"
    knob = dict(re.findall(r"^knob (duration_s|stutter_ms)=(\d+) ", text, re.M))
    end4 = 4000 * int(knob["duration_s"])      # in quarters of a ms
    period4 = 4 * int(knob["stutter_ms"])
    quarter4 = period4 // 4
    surely = 1 + sum(1 for k in range(1, end4) if k * period4 + quarter4 < end4)
    maybe = 1 + sum(1 for k in range(1, end4) if k * period4 - quarter4 < end4)
    return range(surely, maybe + 1)


def check_cont(res, verdict):
    """What the scenario cont (the cont shape, every context, four CPUs)
    must show besides the analysis' pass: fragments from task, hardirq
    and NMI producers on more than one CPU each, on the serial log; and
    in stats.txt every fragment a producer passed to printk() stored or
    refused, as the stored self-check says. How many fragments were
    joined to their record and how many began a record of their own
    depends on how the host interleaved the producers: figures."""
    f = verdict["analysis"]["cont_fragments"]
    assert f["fragments"] > 0, f
    print("figure cont fragments=%d joined=%d split=%d"
          % (f["fragments"], f["joined"], f["split"]))
    cpus = {}
    for m in re.finditer(r"pscont v=1 r=\d+ c=(\d+) x=(\w+) ",
                         (res / "console.log").read_text(errors="replace")):
        cpus.setdefault(m.group(2), set()).add(m.group(1))
    for ctx in ("task", "hardirq", "nmi"):
        assert len(cpus.get(ctx, ())) > 1, (ctx, cpus)
    lines = re.findall(r"^cont cpu=\d+ ctx=\w+ writer=\w+ records=(\d+) fragments=(\d+) "
                       r"stored=(\d+) refused=(\d+)$", (res / "stats.txt").read_text(), re.M)
    assert lines
    for records, frags, stored, refused in lines:
        assert int(records) > 0 and int(frags) == int(stored) + int(refused)


@boot
def test_records_in_fragments_are_judged_by_the_analysis(tmp_path):
    """Scenario cont: records printed as printk() and KERN_CONT fragments
    from every context on every CPU pass the analysis (cont-fragments:
    every fragment stored once, in its writer's order, none lost)."""
    rc, v, res = run(tmp_path, "cont")
    assert v["verdict"] == "pass", v["problems"]
    assert rc == 0
    check_cont(res, v)


@boot
def test_load_shapes_are_judged_by_the_analysis(tmp_path):
    """Scenario shapes: the stress load with stutter and records at the
    line limit passes the analysis, and shows both shapes."""
    rc, v, res = run(tmp_path, "shapes")
    assert v["verdict"] == "pass", v["problems"]
    assert rc == 0
    check_shapes(res, v)
