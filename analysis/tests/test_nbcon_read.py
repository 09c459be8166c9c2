"""The readers on 6.12 (nbcon) events: the same contract items as a 6.1
trace gives (nbcon_events.py), the context from the common flags, the
target recorded, and a record that is not what the tracepoints print is
damage (incomplete input)."""

import io

import pytest

from analysis import nbcon_events
from analysis.nbcon_events import ctx_of_flags, decode_state, encode_state, translate
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
