"""The readers on 6.12 (nbcon) events: the same contract items as a 6.1
trace gives (nbcon_events.py), the context from the common flags, the
target recorded, and a record that is not what the tracepoints print is
damage (incomplete input)."""

import io
import shutil
import subprocess

import pytest

from analysis import nbcon_events, tracedat
from analysis.nbcon_events import ctx_of_flags, decode_state, encode_state, translate
from analysis.tests.nbcon_dat import write_dat
from analysis.tests.nbcon_trace import NbconTrace
from analysis.traceparse import Damage, Event, InputError, ReportStats, Store, parse_lines


def read(text):
    st = ReportStats()
    return list(parse_lines(io.StringIO(text), st)), st


def kthread_record():
    t = NbconTrace()
    t.store(2, 5, "hello")
    t.acquire(1, "task", "normal", thread=1)
    t.print_record(1, "task", "normal", 5, thread=1)
    t.release(1, "task", "normal", thread=1)
    return t


def test_events_read_as_the_contract_with_ctx_and_target():
    items, st = read(kthread_record().text())
    assert st.target == "6.12" and st.malformed == 0
    kinds = [i.name for i in items if isinstance(i, (Event, Store))]
    assert kinds == ["nobkl_store", "nobkl_acquire", "nobkl_emit", "nobkl_commit",
                     "nobkl_release"]
    store = items[1]
    assert isinstance(store, Store) and (store.seq, store.caller, store.text) == \
        (5, "T102", "hello")
    acq = items[2]
    assert acq.fields["ctx"] == "task" and acq.fields["how"] == "direct"
    assert set(acq.fields) == set(nbcon_events.NBCON_FIELDS["nobkl_acquire"]) | {"ctx"}


def test_context_from_the_latency_column_and_the_common_flags():
    t = NbconTrace()
    t.acquire(0, "nmi", "emergency")
    t.release(0, "nmi", "emergency")
    t.acquire(3, "hardirq", "emergency")
    items, _ = read(t.text())
    assert [i.fields["ctx"] for i in items if isinstance(i, Event)] == \
        ["nmi", "nmi", "hardirq"]
    assert [ctx_of_flags(f) for f in (0, 0x01, 0x10, 0x08, 0x18, 0x48)] == \
        ["task", "task", "softirq", "hardirq", "hardirq", "nmi"]


def test_state_words_decode_as_struct_nbcon_state():
    w = encode_state("emergency", "panic", cpu=3, unsafe_takeover=1)
    assert w == 2 | 3 << 2 | 1 << 5 | 3 << 6
    assert decode_state(w) == ("emergency", "panic", 1, 3)


def test_without_latency_columns_the_input_is_incomplete():
    text = kthread_record().text().replace("d..1.", "")
    text = "\n".join(ln if " nbcon_" not in ln else
                     ln.replace(" 1 ", " [001] ", 1) for ln in text.splitlines())
    with pytest.raises(InputError, match="report -l"):
        read(text)


@pytest.mark.parametrize("edit, why", [
    (("prio=normal", "prio=urgent"), "prio=urgent"),
    (("device=0", "device=0 color=red"), "unknown field color"),
    (("prev_cpu=0", "prev_cpu=2"), "prev_cpu=2 but old_state"),
    (("new_state=65", "new_state=81"), "unsafe bit"),
])
def test_bad_values_and_unknown_fields_are_damage(edit, why):
    text = kthread_record().text()
    bad = text.replace(edit[0], edit[1], 1)
    assert bad != text
    items, st = read(bad)
    dmg = [i for i in items if isinstance(i, Damage)]
    assert st.malformed == 1 and len(dmg) == 1 and why in dmg[0].text


def test_translate_refuses_a_missing_field():
    f = {"con": "ttyS0", "seq": "1", "prio": "normal"}
    with pytest.raises(ValueError, match="missing field thread"):
        translate("nbcon_commit", f, "task")


def test_mixed_targets_are_refused():
    text = kthread_record().text() + (
        "  pr/ttyS0-13    [001]     9.000000: nobkl_commit: con=ttyS0 seq=6 prio=normal "
        "thread=1 ctx=task old_state=0 new_state=0\n")
    with pytest.raises(InputError, match="both"):
        read(text)


# ------------------------------------------------ the two formats

def takeovers_and_timeouts(first_format):
    """The thread prints; a waiter times out (removed its request), a
    second one is replaced by a higher priority (removed none, aborted);
    an emergency context takes the safe thread over, the panic flush the
    unsafe emergency owner."""
    t = NbconTrace(first_format=first_format)
    t.acquire(1, "task", "normal", thread=1)
    t.request(2, "task", "emergency")
    t.timeout(2, "task", "emergency", waited_us=2500)
    t.request(2, "task", "emergency")
    t.request(3, "nmi", "panic")
    t.timeout(2, "task", "emergency", waited_us=7, removed=False, reason="aborted")
    t.release(1, "task", "normal", thread=1)
    t.acquire(3, "nmi", "panic", how="handover")
    t.release(3, "nmi", "panic")
    t.acquire(1, "task", "normal", thread=1)
    t.acquire(2, "task", "emergency")
    t.acquire(3, "nmi", "panic", prev_unsafe=1)
    return t


def test_the_formats_print_what_the_series_printed():
    first, current = (takeovers_and_timeouts(f).text() for f in (True, False))
    assert "how=hostile prio=emergency" in first and "how=takeover" not in first
    assert "how=takeover prio=emergency" in current
    assert "how=hostile prio=panic" in first and "how=hostile prio=panic" in current
    assert "waited_us=2500 " in first and "waited_ns" not in first
    assert "reason=timeout removed=1 waited_ns=2500999 spins=2500 " in current
    assert "reason=aborted removed=0 waited_ns=7999 spins=7 old_state=0 new_state=0" in current


def test_both_formats_read_as_one_contract():
    """A safe owner taken reads how=hostile prev_unsafe=0 from either
    format; a timeout reads with removed, spins and waited_us from
    either, and with reason and waited_ns where the format has them."""
    (first, st1), (current, st2) = (read(takeovers_and_timeouts(f).text())
                                    for f in (True, False))
    assert st1.malformed == st2.malformed == 0
    assert [type(i) for i in first] == [type(i) for i in current]
    timeouts = []
    for a, b in zip(first, current):
        if isinstance(a, Event) and a.name == "nobkl_handover_timeout":
            timeouts.append((a.fields, b.fields))
            assert set(a.fields) == set(nbcon_events.NBCON_FIELDS[a.name]) | {"ctx"}
            assert set(b.fields) == set(a.fields) | {"reason", "waited_ns"}
            b = b._replace(fields={k: v for k, v in b.fields.items() if k in a.fields})
        assert a == b
    acquires = [(i.fields["how"], i.fields["prev_unsafe"]) for i in current
                if isinstance(i, Event) and i.name == "nobkl_acquire"]
    assert acquires == [("direct", "0"), ("handover", "0"), ("direct", "0"),
                        ("hostile", "0"), ("hostile", "1")]
    (removed1, removed2), (aborted1, aborted2) = timeouts
    assert [(f["removed"], f["spins"], f["waited_us"]) for f in (removed1, aborted1)] == \
        [("1", "2500", "2500"), ("0", "7", "7")]
    assert (removed2["reason"], removed2["waited_ns"]) == ("timeout", "2500999")
    assert (aborted2["reason"], aborted2["old_state"]) == ("aborted", "0")


@pytest.mark.parametrize("first_format, edit, why", [
    (False, ("how=takeover prio=emergency", "how=takeover prio=panic"), "prio=panic but"),
    (False, ("prev_req_prio=none prev_unsafe=0 unsafe_takeover=0 old_state=65",
             "prev_req_prio=none prev_unsafe=1 unsafe_takeover=0 old_state=65"),
     "how=takeover but prev_unsafe=1"),
    (False, ("reason=timeout", "reason=gave_up"), "reason=gave_up is not one of"),
    (False, ("removed=0", "removed=2"), "removed=2 is not one of"),
    (False, ("reason=timeout removed=1", "reason=timeout removed=0"),
     "removed=0 but old_state="),
    (False, ("reason=aborted removed=0", "reason=aborted removed=1"),
     "owner_prio=normal but old_state=0"),
    (False, ("waited_ns=2500999", "waited_ns=-1"), "waited_ns=-1 is not an unsigned"),
    (False, (" spins=2500", ""), "missing field spins"),
    (False, ("spins=2500", "spins=2500 waited_us=2500"), "unknown field waited_us"),
    (True, ("waited_us=2500", "waited_us=2500 spins=2500"), "unknown field spins"),
    (True, ("owner_cpu=1 owner_prio=normal waited_us=2500",
            "owner_cpu=2 owner_prio=normal waited_us=2500"), "owner_cpu=2 but old_state"),
])
def test_a_record_of_neither_format_is_damage(first_format, edit, why):
    text = takeovers_and_timeouts(first_format).text()
    bad = text.replace(edit[0], edit[1], 1)
    assert bad != text
    items, st = read(bad)
    dmg = [i for i in items if isinstance(i, Damage)]
    assert st.malformed == 1 and len(dmg) == 1 and why in dmg[0].text, dmg


def test_the_first_format_reads_a_hostile_safe_takeover():
    """One event does not tell its format: how=hostile prev_unsafe=0 is
    the first format's takeover, read as it always was."""
    _, f = translate("nbcon_acquire", dict(
        con="ttyS0", how="hostile", prio="emergency", thread="0", device="0", prev_cpu="1",
        prev_prio="normal", prev_req_prio="none", prev_unsafe="0", unsafe_takeover="0",
        old_state=str(encode_state("normal", cpu=1)),
        new_state=str(encode_state("emergency", cpu=2))), "task")
    assert (f["how"], f["prev_unsafe"]) == ("hostile", "0")


needs_dat = pytest.mark.skipif(
    not tracedat.available() or shutil.which("trace-cmd") is None,
    reason="libtracecmd (Debian libtracecmd1) or trace-cmd not installed")


@needs_dat
@pytest.mark.parametrize("first_format", [True, False])
def test_a_trace_dat_of_either_format_reads_as_its_text(tmp_path, first_format):
    """The trace.dat reader reads the records of either format (the
    timeout's fields that one format lacks are optional, its reason
    renders from the raw aborted, waited_ns is read raw, also above 32
    bits) as the text reader reads the builder's text, and as it reads
    `trace-cmd report -l` of the file but for NMI events, which
    libtraceevent prints as hardirq ones."""
    t = takeovers_and_timeouts(first_format)
    t.request(1, "task", "normal")
    t.timeout(1, "task", "normal", waited_us=5000000)
    dat = write_dat(t, str(tmp_path / "trace.dat"))
    st = ReportStats()
    with tracedat.DatReader(dat) as r:
        items = r.items(st)
    assert st.malformed == 0 and st.target == "6.12"
    assert items == read(t.text())[0]
    report = subprocess.run(["trace-cmd", "report", "-l", "-i", dat], capture_output=True,
                            check=True).stdout.decode("latin-1")
    as_printed = [i._replace(fields=dict(i.fields, ctx="hardirq"))
                  if isinstance(i, Event) and i.fields["ctx"] == "nmi" else i for i in items]
    assert as_printed == read(report)[0]
    last = items[-1].fields
    assert last["waited_us"] == "5000000"
    assert first_format or last["waited_ns"] == "5000000999"


def test_a_version_6_trace_dat_cut_short_is_damaged_input(tmp_path):
    """A version 6 trace.dat (what the guest records) whose last CPU's
    data the file no longer holds, as when a guest is killed while it
    copies its trace, is damaged input named before libtracecmd opens
    it (libtracecmd crashes reading such a file); the whole file is not."""
    from analysis import tracedat_layout
    t = takeovers_and_timeouts(False)
    dat = write_dat(t, str(tmp_path / "trace.dat"))
    assert tracedat_layout.structure_problem(dat) is None
    data = open(dat, "rb").read()
    assert data[10:12] == b"6\0"
    cut = str(tmp_path / "cut.dat")
    with open(cut, "wb") as f:
        f.write(data[:-100])
    why = tracedat_layout.structure_problem(cut)
    assert why is not None and why.endswith(
        "data at %d..%d is beyond the end of the file (%d bytes)"
        % (len(data) - 4096, len(data), len(data) - 100)), why
