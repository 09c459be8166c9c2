"""Report line parsing: trace-cmd 3.1.6 layouts, markers, malformed lines."""

import io

from analysis.traceparse import parse_lines, ReportStats, Event, Drop, Header, Damage
from analysis.pstress import parse_pstress, crc32_le_kernel
from analysis.serial import classify, REC, DROPPED, FRAG, OTHER
from analysis.stats import LogHist

EMIT = "con=ttyS0 seq=5 len=40 dropped=0 prio=normal thread=1 ctx=task"


def parse(text):
    st = ReportStats()
    items = list(parse_lines(io.StringIO(text), st))
    return items, st


def test_default_layout():
    items, st = parse("cpus=4\n        pr/ttyS0-15    [002]   123.456789: nobkl_emit:           "
                      + EMIT + "\n")
    assert isinstance(items[0], Header) and st.cpus == 4
    ev = items[1]
    assert isinstance(ev, Event) and ev.cpu == 2 and abs(ev.ts - 123.456789) < 1e-9
    assert ev.fields["seq"] == "5" and ev.fields["ctx"] == "task"


def test_latency_layout_and_odd_comms():
    lines = [
        "    bash-7830    1d.h1.   736.290889: nobkl_emit:           " + EMIT,
        "  my proc-with-dash-12  [003]    10.000001: nobkl_emit: " + EMIT,
        "     kworker/0:1-ev-9   [000] d.... 11.5: nobkl_emit: " + EMIT,
        "          <idle>-0     [001]   123.456789: nobkl_emit:        " + EMIT,
    ]
    items, st = parse("\n".join(lines) + "\n")
    assert [e.cpu for e in items] == [1, 3, 0, 1]
    assert st.events == 4 and st.malformed == 0


def test_store_text_runs_to_end_and_continuation():
    t = "seq=7 len=20 level=4 caller=T12 text=a=b c=d  two  spaces"
    items, st = parse("   x-1 [000] 1.000001: nobkl_store: " + t + "\nsecond line of the record\n"
                      "   x-1 [000] 1.000002: nobkl_emit: " + EMIT + "\n")
    assert items[0].fields["text"] == "a=b c=d  two  spaces\nsecond line of the record"
    assert st.continuations == 1 and items[1].name == "nobkl_emit"


def test_markers_and_other_lines():
    text = ("version = 6\ncpus=2\nCPU 1 is empty\nCPU:0 [123 EVENTS DROPPED]\n"
            "CPU:1 [EVENTS DROPPED]\nCPU:1 [LOST 5 EVENTS]\n[7 EVENTS DROPPED]\n"
            "   bash-1 [000] 1.0: console:              hello\n"
            "   bash-1 [000] 1.1: sched_switch: prev_comm=a\n")
    items, st = parse(text)
    drops = [i for i in items if isinstance(i, Drop)]
    assert [(d.cpu, d.count) for d in drops] == [(0, 123), (1, None), (1, 5), (None, 7)]
    assert st.other_events == 2 and st.unknown == 2


def test_malformed_and_truncated():
    items, st = parse("   x-1 [000] 1.0: nobkl_emit: con=ttyS0 seq=5\n"
                      "   x-1 [000] 1.1: nobkl_emit: " + EMIT[:20])
    # each malformed line is a Damage item where it was, so the checker
    # knows the trace lost an event there
    assert st.malformed == 2 and st.truncated_last_line
    assert [(type(i), i.lineno, i.cpu, i.ts) for i in items] == [
        (Damage, 1, 0, 1.0), (Damage, 2, 0, 1.1)]


def test_nobkl_lines_that_do_not_parse_are_damage():
    # a garbage timestamp, an unknown nobkl event name, a good line
    items, st = parse("   x-1 [000] 1.0x: nobkl_emit: " + EMIT + "\n"
                      "   x-1 [001] 1.1: nobkl_emXt: " + EMIT + "\n"
                      "   x-1 [002] 1.2: nobkl_emit: " + EMIT + "\n")
    assert st.malformed == 2 and st.events == 1 and st.unknown == 0
    assert [(type(i), i.lineno, i.cpu, i.ts) for i in items] == [
        (Damage, 1, None, None), (Damage, 2, 1, 1.1), (Event, 3, 2, 1.2)]
    assert st.cpu_last_ts == {1: 1.1, 2: 1.2}


def test_serial_classify():
    assert classify("[    1.234567] hello")[0] == REC
    assert classify("A[    1.234567] hello") == (REC, "A", "hello")
    assert classify("T[    1.234567][T123] hi") == (REC, "T", "hi")
    assert classify("** 5 printk messages dropped **") == (DROPPED, "", "5")
    assert classify("A** 5 printk messages dropped **")[0] == DROPPED
    assert classify("T[   12.3")[0] == FRAG
    assert classify("stress-ng: info") [0] == OTHER


def test_pstress_crc():
    # crc32_le(~0, "123456789") without final xor is 0x340bc6d9
    assert crc32_le_kernel(b"123456789") == 0x340BC6D9
    ok = parse_pstress("pstress r=1 c=2 x=nmi n=3 l=9 k=340bc6d9 123456789")
    assert ok == ((1, 2, "nmi"), 3, True, "")
    assert parse_pstress("pstress r=1 c=2 x=nmi n=3 l=9 k=00000000 123456789")[2] is False
    assert parse_pstress("pstress r=1 c=2 x=nmi n=3 l=8 k=340bc6d9 123456789")[2] is False
    assert parse_pstress("pstress garbage")[2] is False
    assert parse_pstress("other text") is None


def test_loghist():
    h = LogHist()
    for v in range(1, 1001):
        h.add(float(v))
    s = h.summary()
    assert s["count"] == 1000 and s["min"] == 1 and s["max"] == 1000
    assert 450 <= s["p50"] <= 550 and 850 <= s["p90"] <= 1000
    assert len(h.buckets) < 100


def test_fast_paths_store_text_and_console_lines():
    # the fast path takes the store text greedily to the line end (CRLF
    # too); a CR inside the text falls back to the slow path; console
    # lines are counted (and end a pending store) without being parsed
    st_line = "   sh-57 [001] 16.806376: nobkl_store:   seq=9 len=%d level=4 caller=T57 text=%s"
    text = "pstress r=1 c=1 x=task n=3 l=3 k=00000000 abc  "
    items, st = parse(st_line % (len(text), text) + "\r\n"
                      "   sh-57 [001] 16.806377: console:    " + text + "\n"
                      + st_line % (5, "a\rb c") + "\n")
    assert [i.fields["text"] for i in items] == [text, "a\rb c"]
    assert st.other_events == 1 and st.events == 2 and st.continuations == 0
    assert st.first_ts == 16.806376 and st.last_ts == 16.806376


def test_lines_of_a_multi_line_console_message_are_its_own():
    """printk:console prints a multi-line record's message as it is (the
    stressor's multiline shape): its further lines are part of the event,
    not unknown lines and not text of the store before it."""
    t = "seq=7 len=20 level=4 caller=T12 text=pstress one two"
    items, st = parse("   x-1 [000] 1.000001: nobkl_store: " + t + "\n"
                      "   x-1 [000] 1.000002: console:              pstress one\n"
                      "two\n"
                      "CPU:0 [3 EVENTS DROPPED]\n"
                      "   x-1 [000] 1.000003: nobkl_emit: " + EMIT + "\n")
    assert items[0].fields["text"] == "pstress one two"
    assert [type(i).__name__ for i in items] == ["Store", "Drop", "Event"]
    assert (st.other_events, st.unknown, st.continuations, st.lines) == (1, 0, 0, 5)
