"""Emergency records against the RFC's bound (analysis/emergency_bound.py,
analysis/emergency_report.py): the figures by hand and, on random runs
fed out of time order, the same report as the definitions give record
by record (_reference()); what each late record waited for, one
synthetic console per cause; the checker's stream and the model file
alike."""

import json
import lzma
import os
import random
import time

import pytest

from analysis import emergency_bound as eb, emergency_report as er
from analysis.api import check_results
from analysis.emergency import EmergencyDelay
from analysis.intervals import read_results
from analysis.tests.recorded import HERE

# Times in ms as integers, so that every figure is exact.  seq: (store,
# first commit or None)
RUN = {
    1: (1000, 1010),
    2: (1005, 1020),     # stored after 3 with a lower seq: not 3's backlog
    3: (1002, 1030),     # emergency: pending 1 (seq 1), late
    4: (1030, 1040),     # emergency: seq 3's commit at its store ends 3's pendency
    5: (1041, None),     # emergency, never committed: pending for all after it
    6: (1050, 1060),     # emergency: pending 1 (seq 5)
    7: (1055, 1052),     # committed "before" its store (another CPU's clock)
    8: (1056, 1070),     # emergency: pending 2 (seqs 5 and 6; 7 is done)
}
EMERG = (3, 4, 5, 6, 8)


def _split(run):
    stored = {s: t for s, (t, _) in run.items()}
    committed = {s: c for s, (_, c) in run.items() if c is not None}
    return stored, committed


def test_the_figures_of_the_first_computation_by_hand():
    stored, committed = _split(RUN)
    # busy gaps 1->2, 2->3, 3->4 (10 each), 6->7 (-8); 7->8: 8 stored after 7's commit
    assert er.record_time(stored, committed) == 10
    assert er.pending_counts(stored, committed, [3, 4, 6, 8]) == {3: 1, 4: 0, 6: 1, 8: 2}
    rows = er.delay_rows(stored, committed, EMERG, 10)
    assert rows == [(3, 28, 20, 1), (4, 10, 10, 0), (6, 10, 20, 1), (8, 14, 30, 2)]
    # sorted delays 10 10 14 28: p50 the 3rd, p99 the 4th; 4 within (10 <= 10)
    assert er.delay_summary(rows, 10) == {"records": 4, "per_record_s": 10, "p50_s": 14,
                                          "p99_s": 28, "max_s": 28, "within_bound": 3}


def _brute_pending(stored, committed, seq):
    t = stored[seq]
    return sum(1 for s, ts in stored.items()
               if s < seq and ts <= t and committed.get(s, float("inf")) > t)


def test_a_large_run_in_seconds_and_as_counted_one_by_one():
    # 200 000 records, every fourth an emergency one, a backlog that comes
    # and goes, stores out of seq order: the first computation took
    # 50 000 x 200 000 steps here (hours); a sample checked by brute force
    rnd = random.Random(3)
    stored, committed, t, busy = {}, {}, 0.0, 0.0
    for s in range(200000):
        t += rnd.expovariate(1 / 0.004)
        stored[s] = t + rnd.choice((0.0, 0.0, 0.0, 0.002))
        busy = max(busy, t) + rnd.uniform(0.002, 0.006)
        if rnd.random() > 0.001:
            committed[s] = busy
    marked = list(range(0, 200000, 4))
    start = time.process_time()
    per = er.record_time(stored, committed)
    rows = er.delay_rows(stored, committed, marked, per)
    assert time.process_time() - start < 60
    assert len(rows) == sum(1 for s in marked if s in committed)
    for s, delay, bound, pending in rnd.sample(rows, 25):
        assert pending == _brute_pending(stored, committed, s)
        assert (delay, bound) == (committed[s] - stored[s], (pending + 1) * per)


def _history():
    """A console the printer thread (cpu3) owns when emergency record 20
    is stored on cpu0; the emergency context asks for a handover, gets
    it, and prints: 18 and 19 were stored before 20 (its backlog), 17 by
    an NMI after it with a lower seq (it overtook 20)."""
    h = eb.History()
    thread = "cpu3/task/thread/normal"
    emerg = "cpu0/task/emergency"
    for s, t in ((16, 90), (18, 95), (19, 99), (20, 100), (17, 101)):
        h.store(s, t)
    h.mark(20, 0, "T77", "pstress v=2 r=1 c=0 x=emerg w=task0 n=7 l=16 "
           "0123456789abcdefghijklmnopqrstuvwxyz", {"ttyS0": thread})
    h.feed_event("commit", 92, 16, "ttyS0", thread, {})
    h.feed_event("handover_request", 102, None, "ttyS0", None, {})
    h.feed_event("commit", 110, 17, "ttyS0", thread, {})
    h.feed_event("acquire", 111, None, "ttyS0", emerg, {"how": "handover"})
    h.feed_event("commit", 120, 18, "ttyS0", emerg, {})
    h.feed_event("commit", 130, 19, "ttyS0", "cpu2/hardirq/emergency", {})
    h.feed_event("emit", 131, 20, "ttyS0", emerg, {})
    h.feed_event("commit", 150, 20, "ttyS0", emerg, {})
    return h


def test_what_a_late_record_waited_for():
    rep = er.evaluate(_history(), "ttyS0")
    # busy gaps 17->18 10, 18->19 10, 19->20 20 (16->17: 17 was stored
    # after 16's commit): median 10; pending at 100: 18 and 19 (17 not
    # stored yet): bound 30, delay 50
    assert (rep["per_record_s"], rep["records"], rep["within_bound"], rep["past_bound"]) == \
        (10, 1, 0, 1)
    assert rep["late"] == [{
        "seq": 20, "cpu": 0, "context": "task", "caller": "T77",
        "text": "pstress v=2 r=1 c=0 x=emerg w=task0 n=7 l=16 0123456789abcde",
        "delay_s": 50, "bound_s": 30, "pending": 2, "printed_before": 3, "backlog": 2,
        "overtaken": 1, "by_thread": 1, "by_own_cpu": 1, "by_other_cpus": 1,
        "to_emission_s": 31, "own_emission_s": 19, "owner_at_store": "cpu3/task/thread/normal",
        "owner_prio": "normal", "handover_requests": 1, "handover_timeouts": 0,
        "handovers": 1, "takeovers": 0, "text_id": "r=1 c=0 x=emerg w=task0 n=7",
        # commits at 110, 120, 130 before its emission at 131; the request
        # at 102 waits until the handover at 111
        "silence_s": 10, "handover_wait_s": 9, "late_by_s": 20,
        # 3 printed for 2 pending: 10; 31 to its emission for 3 printed: 1;
        # its own emission 19: 9
        "late_parts_s": {"overtaken": 10, "stall": 1, "own_emission": 9},
        "waited_for": "overtaken"}]
    assert rep["totals"] == {
        "less_than_a_record_time_late": 0, "behind_owner": 1, "behind_thread": 1,
        "overtaken": 1, "printed_more_than_pending": 1,
        "own_emission_over_2_record_times": 0, "with_handover_request": 1,
        "with_handover_timeout": 0, "with_takeover": 0,
        "printed_record_time_s": 31 / 3,
        "waited_for": {"overtaken": 1, "own_emission": 0, "handover_wait": 0,
                       "not_printing": 0, "printer_thread": 0, "backlog": 0}}
    line = er.describe(rep["late"][0])
    assert line.startswith("seq 20 cpu0 task (T77) `pstress v=2 r=1 c=0 x=emerg w=task0 n=7 "
                           "l=16 0123456789abcde`: ")
    assert "3 printed (backlog 2, overtaken 1; by the thread 1, its CPU 1, other CPUs 1)" in line
    assert "owner at the store cpu3/task/thread/normal; handover requests 1, timeouts 0, " \
           "handovers 1, takeovers 0" in line


def _recorded_172845(tmp_path):
    src = os.path.join(HERE, "data", "stress-20261204-172845")
    d = tmp_path / "run"
    d.mkdir()
    for name in ("trace.txt", "console.log"):
        with lzma.open(os.path.join(src, name + ".xz")) as f:
            (d / name).write_bytes(f.read())
    for name in ("printk.txt", "stats.txt"):
        (d / name).write_bytes(open(os.path.join(src, name), "rb").read())
    return d


def test_the_model_file_tells_what_the_checker_saw(tmp_path, capsys):
    # a real run (an emergency NMI behind a panic owner's 356-record
    # backlog): the report from the model file `check -o` wrote is the
    # one the checker made on the way, every late record of it in the
    # late file, the furthest NAMED in the verdict
    from analysis.cli import main
    d = _recorded_172845(tmp_path)
    main(["check", str(d), "-o", str(d / "analysis.json"), "-z"])
    verdict, model = read_results(str(d))
    live = verdict["latency"]["emergency_past_bound"]["ttyS0"]
    again = er.evaluate(er.read_model(model), "ttyS0")
    assert (again["records"], again["past_bound"], len(again["late"])) == (292, 292, 292)
    assert verdict["emergency_late_file"] == {"name": "emergency-late.jsonl",
                                              "format_version": 1, "records": 292}
    assert er.read_late(str(d / "emergency-late.jsonl")) == {"ttyS0": again["late"]}
    assert er.named_only({"ttyS0": again}) == {"ttyS0": live}
    assert (live["past_bound"], len(live["late"])) == (292, 20)
    first = live["late"][0]
    assert (first["seq"], first["context"], first["pending"], first["backlog"],
            first["by_other_cpus"], first["owner_at_store"], first["handover_timeouts"]) == \
        (2990, "interrupt", 356, 356, 356, "cpu1/hardirq/panic", 15)
    assert "      ... 287 more (every one in emergency-late.jsonl)\n" in capsys.readouterr().out
    assert check_results(str(d))["latency"]["emergency_past_bound"]["ttyS0"] == live


def _late_ones(n):
    """A History of n emergency records past their bound on ttyS0: after
    seqs 1..11, one each 10 ms (the record time 10), seq 100 + i stored
    at 2000 + 100 i with nothing pending (bound 10) and committed 20 + i
    later, late by 10 + i."""
    h = eb.History()
    for s in range(1, 12):
        h.store(s, 0)
        h.feed_event("commit", 10 * s, s, "ttyS0", "cpu1/task/normal", {})
    for i in range(n):
        s, t = 100 + i, 2000 + 100 * i
        h.store(s, t)
        h.mark(s, 0, "T9", "pstress v=2 r=1 c=0 x=emerg w=task0 n=%d l=1 a" % i,
               {"ttyS0": None})
        h.feed_event("commit", t + 20 + i, s, "ttyS0", "cpu0/task/emergency", {})
    return h


def test_every_late_record_is_named_in_the_late_file(tmp_path):
    # 25 late records: the analysis reports all of them, the verdict the
    # furthest NAMED, the late file every one, furthest first
    e = EmergencyDelay()
    e.history = _late_ones(25)
    reports = e.past_bound()
    rep = reports["ttyS0"]
    assert (rep["per_record_s"], rep["records"], rep["past_bound"]) == (10, 25, 25)
    assert [(r["seq"], r["delay_s"], r["bound_s"], r["late_by_s"]) for r in rep["late"]] == \
        [(124 - i, 44 - i, 10, 34 - i) for i in range(25)]
    assert [r["seq"] for r in er.named_only(reports)["ttyS0"]["late"]] == \
        list(range(124, 104, -1))
    path = str(tmp_path / er.LATE_FILE)
    assert er.write_late(path, reports) == {"name": "emergency-late.jsonl",
                                            "format_version": 1, "records": 25}
    assert er.read_late(path) == {"ttyS0": rep["late"]}
    assert os.listdir(str(tmp_path)) == ["emergency-late.jsonl"]
    with open(path) as f:
        lines = f.read().splitlines()
    assert len(lines) == 26 and json.loads(lines[1])["console"] == "ttyS0"
    with open(path, "w") as f:
        f.write("\n".join(lines[:-1]) + "\n")
    with pytest.raises(ValueError, match="cut short"):
        er.read_late(path)


def test_the_text_verdict_names_the_furthest_late_records(monkeypatch):
    from analysis import report
    monkeypatch.setattr(report, "LATE_SHOWN", 1)
    rep = er.evaluate(_history(), "ttyS0")
    out = []
    report._past_bound(out.append, rep)
    assert out == [
        "    against the RFC's bound: 1 of 1 past their bound ((pending + 1) x 10 s); "
        "less than a record time late 0; owner at the store: the thread 1, another context 0; "
        "with a handover request 1, a timeout 0, a takeover 0; overtaken 1; records printed "
        "before them took 10.3 s each; waited for: overtaken 1",
        "      " + er.describe(rep["late"][0])]


THREAD, OTHER = "cpu3/task/thread/normal", "cpu1/task/normal"
EMERGENCY_CTX = "cpu0/task/emergency"


def _waiting(stores, commits, emit, owner, changes=()):
    """One emergency record, seq 30 stored at 1000 on cpu0, behind the
    given stores {seq: ts} and commits [(seq, ts, owner)], emitted at
    emit and committed by EMERGENCY_CTX 10 later unless commits say otherwise;
    changes [(kind, ts)].  Before it the console printed seqs 1..11, one
    each 10 ms, so that the record time is 10 whatever follows."""
    h = eb.History()
    for s in range(1, 12):
        h.store(s, 0)
        h.feed_event("commit", 10 * s, s, "ttyS0", OTHER, {})
    for s, t in stores.items():
        h.store(s, t)
    h.store(30, 1000)
    h.mark(30, 0, "C0", "pstress v=2 r=1 c=0 x=emerg w=nmi0 n=3 l=4 abcd", {"ttyS0": owner})
    for s, t, o in commits:
        h.feed_event("commit", t, s, "ttyS0", o, {})
    for kind, t in changes:
        h.change("ttyS0", kind, t)
    h.feed_event("emit", emit, 30, "ttyS0", EMERGENCY_CTX, {})
    if not any(s == 30 for s, _, _ in commits):
        h.feed_event("commit", emit + 10, 30, "ttyS0", EMERGENCY_CTX, {})
    rep = er.evaluate(h, "ttyS0")
    assert rep["per_record_s"] == 10 and rep["past_bound"] == 1
    return rep["late"][0]


def test_a_record_overtaken_by_records_stored_after_it():
    # 28 and 29 were reserved before 30 but stored after it: the console
    # prints them first, the bound (nothing pending) does not count them
    r = _waiting({28: 1001, 29: 1001}, [(28, 1010, OTHER), (29, 1020, OTHER)], 1021, None)
    assert (r["pending"], r["printed_before"], r["overtaken"], r["delay_s"], r["bound_s"]) == \
        (0, 2, 2, 31, 10)
    assert r["late_parts_s"] == {"overtaken": 20, "stall": 1, "own_emission": 0}
    assert sum(r["late_parts_s"].values()) == r["late_by_s"] == 21
    assert r["waited_for"] == "overtaken"


def test_a_record_whose_own_emission_was_slow():
    # nothing pending, emitted at once, its emission took 40 ms
    r = _waiting({}, [(30, 1041, EMERGENCY_CTX)], 1001, None)
    assert r["late_parts_s"] == {"overtaken": 0, "stall": 1, "own_emission": 30}
    assert r["waited_for"] == "own_emission"


def test_a_record_that_waited_for_a_handover():
    # the thread prints 29 (pending) late and hands the console over 30
    # ms after the emergency context asked: 31 ms to its emission for one
    # record, a stall of 21 ms, all of it with the request outstanding
    r = _waiting({29: 995}, [(29, 1029, THREAD)], 1031, THREAD,
                 (("handover_request", 1000), ("handover", 1030)))
    assert (r["pending"], r["bound_s"], r["delay_s"]) == (1, 20, 41)
    assert r["late_parts_s"] == {"overtaken": 0, "stall": 21, "own_emission": 0}
    assert (r["handover_wait_s"], r["silence_s"]) == (30, 29)
    assert r["waited_for"] == "handover_wait"


def test_a_record_behind_a_console_that_was_not_printing():
    # the same wait without a handover request: the console printed
    # nothing for 29 ms, 19 more than a record time
    r = _waiting({29: 995}, [(29, 1029, OTHER)], 1031, OTHER)
    assert (r["handover_wait_s"], r["silence_s"]) == (0, 29)
    assert r["waited_for"] == "not_printing"


def test_a_record_behind_the_printer_thread():
    # the thread owns the console and prints the 3 pending records, 15 ms
    # each: no long silence, no handover asked for
    commits = [(27, 1015, THREAD), (28, 1030, THREAD), (29, 1045, THREAD)]
    r = _waiting({27: 999, 28: 999, 29: 999}, commits, 1046, THREAD)
    assert (r["pending"], r["by_thread"], r["bound_s"], r["delay_s"]) == (3, 3, 40, 56)
    assert r["late_parts_s"] == {"overtaken": 0, "stall": 16, "own_emission": 0}
    assert (r["handover_wait_s"], r["silence_s"]) == (0, 15)
    assert r["waited_for"] == "printer_thread"


def test_a_record_behind_a_slow_backlog():
    # the same records printed by another context: the backlog itself
    commits = [(27, 1015, OTHER), (28, 1030, OTHER), (29, 1045, OTHER)]
    r = _waiting({27: 999, 28: 999, 29: 999}, commits, 1046, OTHER)
    assert r["waited_for"] == "backlog"
    assert r["text_id"] == "r=1 c=0 x=emerg w=nmi0 n=3"


def test_the_handover_wait_counts_each_moment_once():
    # requests at 5 (outstanding into the window (6, 40) from before it),
    # 12 and 14 (both end at the timeout at 20), 30 (no end: until 40);
    # the sweep takes each event once a later one came (window 0)
    h = eb.History(window=0)
    asked = {}
    for ts, kind in ((5, "handover_request"), (8, "handover"), (12, "handover_request"),
                     (14, "handover_request"), (20, "handover_timeout"),
                     (30, "handover_request")):
        h.change("ttyS0", kind, ts)
        if ts == 12:           # the request at 5 taken, the handover at 8 not yet
            asked[6] = h.consoles["ttyS0"].counts(None, 6)[3]
    h.flush()
    asked[40] = h.consoles["ttyS0"].counts(None, 40)[3]
    assert asked[40] - asked[6] == (8 - 6) + (20 - 12) + (40 - 30)


def test_a_set_of_seqs_kept_as_runs():
    runs = eb.RunSet()
    for s in (5, 7, 6, 1, 9, 3, 2):
        assert runs.add(s)
    assert not runs.add(6)
    assert (runs.lo, runs.hi, runs.size) == ([1, 5, 9], [3, 7, 9], 7)
    assert [runs.count_below(s) for s in (0, 1, 4, 6, 9, 10)] == [0, 0, 3, 4, 6, 7]
    assert 2 in runs and 4 not in runs and 9 in runs and 10 not in runs


OWNERS = (THREAD, OTHER, EMERGENCY_CTX, "cpu1/hardirq/emergency", "cpu2/nmi/panic")


def _random_run(rnd, n, consoles=("ttyS0",)):
    """The events of a synthetic run in time order, [(ts, call, args)] for
    History: n records stored one to 12 us apart, some stored late (a
    lower seq after a higher one), some committed before their store
    (another CPU's clock), some never printed; every third an emergency
    one.  Each console prints in seq order, one record in 5 to 15 us,
    now and then stalled, a record emitted twice or slowly, or printed
    again after its first commit; handover requests, timeouts, handovers
    and takeovers at random."""
    events, stored, t = [], {}, 0
    for s in range(n):
        t += rnd.randint(1, 12)
        stored[s] = t + (rnd.randint(1, 20) if rnd.random() < 0.05 else 0)
    for con in consoles:
        # each console seen from the start (one first seen later counts no
        # records as overtaking those stored before it)
        events.append((0, "change", (con, "handover_timeout", None)))
        busy, owner = 0, rnd.choice(OWNERS)
        for s in sorted(stored):
            if rnd.random() < 0.03:
                continue
            if rnd.random() < 0.05:
                owner = rnd.choice(OWNERS)
            start = max(busy, stored[s] + rnd.randint(0, 3))
            if rnd.random() < 0.03:
                start += rnd.randint(30, 200)
            end = start + rnd.randint(5, 15)
            emitted = end - 2
            if rnd.random() < 0.05:
                events.append((start + 1, "emit", (con, s)))
            if rnd.random() < 0.03:
                emitted, end = start + 1, start + rnd.randint(30, 60)   # a slow emission
            events.append((emitted, "emit", (con, s)))
            events.append((end, "commit", (con, s, owner)))
            if con == consoles[0] and rnd.random() < 0.02 and stored[s] < end - 1:
                stored[s] = end + rnd.randint(1, 3)     # a clock behind: committed first
            busy = end + 1
            if rnd.random() < 0.02:
                events.append((busy, "commit", (con, s, owner)))   # printed again
                busy += 1
        for _ in range(n // 20):
            events.append((rnd.randint(0, busy), "change",
                           (con, rnd.choice(CHANGES_WEIGHTED), None)))
    for s, ts in stored.items():
        events.append((ts, "store", (s,)))
    events.sort(key=lambda e: e[0])
    return events


CHANGES_WEIGHTED = ("handover_request",) * 3 + eb.CHANGES


def _facts(s):
    """The facts of emergency record s (every third): cpu, caller, text,
    owner at its store per console."""
    return (s % 4, "C%d" % (s % 4) if s % 2 else "T%d" % s,
            "pstress v=2 r=1 c=%d x=emerg w=nmi n=%d l=4 abcd" % (s % 4, s),
            {"ttyS0": OWNERS[s % 5] if s % 7 else None, "ttyS1": None})


def _feed(history, rnd, events, jitter):
    """The events into history in an order that differs from their time
    order by up to jitter (stores first at equal times); each emergency
    record marked right after its store, as the checker does."""
    arrival = sorted(events, key=lambda e: (e[0] + rnd.uniform(0, jitter), e[1] != "store"))
    for ts, call, args in arrival:
        if call == "store":
            s = args[0]
            history.store(s, ts)
            if s % 3 == 0:
                history.mark(s, *_facts(s))
        elif call == "commit":
            history.commit(args[0], args[1], ts, args[2])
        elif call == "emit":
            history.emit(args[0], args[1], ts)
        else:
            history.change(args[0], args[1], ts)


def _reference(events, con):
    """The report of console con by the definitions, one record at a time
    (quadratic: for small runs), from the events of _random_run()."""
    stored, first, emits, changes, marked = {}, {}, {}, [], {}
    for ts, call, args in sorted(events, key=lambda e: (e[0], e[1] != "store")):
        if call == "store":
            stored.setdefault(args[0], ts)
            if args[0] % 3 == 0:
                marked[args[0]] = _facts(args[0])
        elif call == "commit" and args[0] == con and args[1] not in first:
            first[args[1]] = (ts, args[2])
        elif call == "emit" and args[0] == con:
            emits.setdefault(args[1], []).append(ts)
        elif call == "change" and args[0] == con:
            changes.append((ts, args[1]))
    per = er.median_low([first[s + 1][0] - first[s][0] for s in first
                         if s + 1 in first and s + 1 in stored
                         and stored[s + 1] <= first[s][0]])
    rows = []
    for s in sorted(marked):
        if s in first:
            t = stored[s]
            p = sum(1 for o, ts in stored.items() if o < s and ts <= t
                    and (o not in first or max(ts, first[o][0]) > t))
            rows.append((s, first[s][0] - t, (p + 1) * per, p))
    out = er.delay_summary(rows, per)
    late = sorted((r for r in rows if r[1] > r[2]), key=lambda r: (r[2] - r[1], r[0]))
    explained = [_reference_row(r, stored, first, emits.get(r[0], []), changes,
                                marked[r[0]], con, per) for r in late]
    out.update({"console": con, "past_bound": len(late), "totals": er.totals(explained, per),
                "late": explained})
    return out


def _reference_row(row, stored, first, emits, changes, facts, con, per):
    s, delay, bound, pending = row
    cpu, caller, text, owners = facts
    t, tc = stored[s], first[s][0]
    te = max([x for x in emits if x <= tc], default=tc)
    printed = sorted((ts, o, owner) for o, (ts, owner) in first.items() if t < ts < te)
    backlog = sum(1 for _, o, _ in printed if o in stored and stored[o] <= t)
    thread = sum(1 for _, _, owner in printed if eb.is_thread(owner))
    own = sum(1 for _, _, owner in printed
              if not eb.is_thread(owner) and eb.owner_cpu(owner) == cpu)
    edges = [t] + [ts for ts, _, _ in printed] + [te]
    ends = sorted(ts for ts, k in changes if k != "handover_request")
    asked = []                 # each request until the next end, within (t, te)
    for r in sorted(ts for ts, k in changes if k == "handover_request"):
        end = min([e for e in ends if e >= r], default=te)
        if max(r, t) < min(end, te):
            asked.append((max(r, t), min(end, te)))
    covered, reach = 0, t
    for a, b in asked:
        covered += max(0, b - max(a, reach))
        reach = max(reach, b)
    owner = owners.get(con)
    out = {"seq": s, "cpu": cpu, "context": er.context(caller), "caller": caller,
           "text": text[:eb.TEXT], "delay_s": delay, "bound_s": bound, "pending": pending,
           "printed_before": len(printed), "backlog": backlog,
           "overtaken": len(printed) - backlog, "by_thread": thread, "by_own_cpu": own,
           "by_other_cpus": len(printed) - thread - own, "to_emission_s": te - t,
           "own_emission_s": tc - te, "owner_at_store": owner,
           "owner_prio": owner.rsplit("/", 1)[-1] if owner else None}
    for k in eb.CHANGES:
        out[k + "s"] = sum(1 for ts, kind in changes if kind == k and t < ts <= tc)
    out["text_id"] = eb.text_id(text)
    out["silence_s"] = max(b - a for a, b in zip(edges, edges[1:]))
    out["handover_wait_s"] = covered
    out["late_by_s"] = delay - bound
    out["late_parts_s"], out["waited_for"] = er.waited_for(out, per)
    return out


def test_the_sweep_gives_what_the_definitions_give():
    # the report by the definitions, record by record, against the sweep
    # on random runs fed out of time order within its window; integer
    # times, so that every figure must be equal, not close
    seen = set()
    for seed in range(12):
        events = _random_run(random.Random(seed), 600, ("ttyS0", "ttyS1"))
        h = eb.History(window=50)
        _feed(h, random.Random(seed), events, 40)
        for con in ("ttyS0", "ttyS1"):
            got = er.evaluate(h, con)
            assert got.pop("events_beyond_window") == 0
            assert got == _reference(events, con), (seed, con)
            seen |= {r["waited_for"] for r in got["late"]}
    assert seen == set(er.WAITED_FOR)


def test_events_beyond_the_window_are_counted():
    events = _random_run(random.Random(5), 300)
    h = eb.History(window=50)
    _feed(h, random.Random(5), events, 200)
    assert er.evaluate(h, "ttyS0")["events_beyond_window"] > 0
