"""The hand-off counts (analysis/handoffs.py): the kind of each hostile
takeover and handover, whether the old owner was in the middle of a
record, and whether the new owner printed that record again."""


from analysis.handoffs import Handoffs
from analysis.traceparse import Event
from analysis.tests.recorded import copy_recorded



class Con:
    name = "ttyS0"


def feed(h, cpu, name, **f):
    h.on_event(Event(1, name, cpu, 1.0, {k: str(v) for k, v in f.items()}), Con())


def thread_in_record(h, seq):
    feed(h, 0, "nobkl_acquire", how="direct", prio="normal", thread=1)
    feed(h, 0, "nobkl_emit", seq=seq, thread=1)


def test_the_cover_letters_story():
    h = Handoffs()
    # the thread on CPU 0 in the middle of seq 5; a WARN on CPU 0 takes over
    thread_in_record(h, 5)
    feed(h, 0, "nobkl_acquire", how="hostile", prio="emergency", thread=0, ctx="task",
         prev_cpu=0, prev_thread=1, prev_prio="normal")
    feed(h, 0, "nobkl_emit", seq=5, thread=0)
    feed(h, 0, "nobkl_commit", seq=5, thread=0)
    feed(h, 0, "nobkl_release", thread=0)
    # the thread in the middle of seq 9; a panic on CPU 2 gets a handover
    thread_in_record(h, 9)
    feed(h, 2, "nobkl_handover_request", prio="panic", thread=0)
    feed(h, 0, "nobkl_handover_grant", prio="normal", thread=1, to_cpu=2, to_prio="panic")
    feed(h, 2, "nobkl_acquire", how="handover", prio="panic", thread=0, ctx="hardirq")
    feed(h, 2, "nobkl_emit", seq=9, thread=0)
    assert h.summary() == {
        "hostile emergency<-thread same-cpu": {"taken": 1, "interrupted": 1, "reprinted": 1,
                                               "by_ctx": {"task": 1}},
        "handover panic<-thread other-cpu": {"taken": 1, "interrupted": 1, "reprinted": 1,
                                             "by_ctx": {"hardirq": 1}},
    }


def test_a_finished_record_is_not_interrupted_and_a_skip_is_no_reprint():
    h = Handoffs()
    thread_in_record(h, 5)
    feed(h, 0, "nobkl_commit", seq=5, thread=1)
    feed(h, 1, "nobkl_acquire", how="hostile", prio="panic", thread=0, prev_cpu=0,
         prev_thread=1, prev_prio="normal")
    feed(h, 1, "nobkl_emit", seq=6, thread=0)
    thread_in_record(h, 7)
    feed(h, 1, "nobkl_acquire", how="hostile", prio="panic", thread=0, prev_cpu=0,
         prev_thread=1, prev_prio="normal")
    feed(h, 1, "nobkl_emit", seq=8, thread=0)        # not the interrupted seq 7
    assert h.summary() == {
        "hostile panic<-thread other-cpu": {"taken": 2, "interrupted": 1, "reprinted": 0,
                                            "by_ctx": {}}}


def test_the_recorded_run_counts_every_takeover_and_reprint(tmp_path):
    from analysis.tests.verdicts import check_results
    v = check_results(str(copy_recorded(tmp_path)))
    h = v["handoffs"]
    tk = v["counts"]["takeovers"]
    taken = lambda how: sum(c["taken"] for k, c in h.items() if k.startswith(how + " "))
    assert taken("hostile") == tk["hostile"] and taken("handover") == tk["handover"]
    # every reprint of this run is a taker's reprint of an interrupted record
    assert sum(c["reprinted"] for c in h.values()) == v["counts"]["reprints"]
