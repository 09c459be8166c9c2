"""Stressor records in fragments (the cont shape): the cont-fragments
rule on synthetic traces and their serial logs (analysis/cont_fragments.py).

printk() joins a KERN_CONT fragment to the record before it when that
is the same caller's and not finalized, else the fragment begins a
record of its own: both are right; a fragment stored twice, out of its
writer's order, damaged, or never (beyond printk()'s refusals) is a
violation."""

from analysis import cont_fragments as fragments
from analysis.cont_fragments import fragment_count, fragment_text, parse
from analysis.tests.tracebuilder import Trace, pstress
from analysis.tests.verdicts import check_results, violated, violation_messages

START = "printk_stress: start run=1 nobkl_debug=1 nmi=1 shapes=cont"
END = "printk_stress: end run=1 reason=duration elapsed_ms=10003 attempted=3 stored=3"


def frag(n, i, ctx="task", writer="task0", cpu=1, run=1):
    """Fragment i of record n of a producer (one writer: task0 on CPU 1
    unless named)."""
    return fragment_text(run, cpu, ctx, writer, n, i)


def record(n, **kw):
    """All fragments of record n, joined as printk() stores them when
    nothing came between."""
    return "".join(frag(n, i, **kw) for i in range(fragment_count(n)))


def results(tmp_path, stores, stats=None):
    """A results directory: the stores in order (a 1-tuple stores the
    seq before again: a continuation extending it), printed by the
    printer thread, each record's final text a line of the serial log;
    `stats`: stats.txt's lines after its first."""
    t = Trace()
    T = t.ctx(0, thread=1)
    seqs = []
    for s in stores:
        if isinstance(s, tuple):
            nxt = t.seq
            t.store(s[0], seq=seqs[-1])
            t.seq = nxt
        else:
            seqs.append(t.store(s))
    t.acquire(T)
    for s in seqs:
        t.print_rec(T, s)
    t.release(T)
    d = t.write(tmp_path)
    if stats is not None:
        (tmp_path / "stats.txt").write_text(
            "run=1 state=idle last_stop=duration result=SUCCESS elapsed_ms=10003\n" +
            "".join(ln + "\n" for ln in stats))
    return d


def passes(v):
    assert v["verdict"] == "pass", (v["reasons"], violation_messages(v))
    return v["cont_fragments"]


# ---------------------------------------------------------------- the text

def test_a_fragment_parses_and_proves_itself():
    text = record(1)
    got = parse(text, seq=7)
    assert [(f.prod, f.n, f.i, f.count, f.offset) for f in got] == [
        ((1, 1, "task", "task0"), 1, 0, 3, 0),
        ((1, 1, "task", "task0"), 1, 1, 3, len(frag(1, 0))),
        ((1, 1, "task", "task0"), 1, 2, 3, len(frag(1, 0)) + len(frag(1, 1)))]
    assert frag(1, 0).startswith("pscont v=1 r=1 c=1 x=task w=task0 n=1 f=0/3 l=16 ")
    assert frag(1, 0).endswith(";")
    # a changed field, payload character or crc: damaged
    for bad in (frag(1, 0).replace("n=1 ", "n=4 "), frag(1, 0).replace("f=0/3", "f=0/2"),
                frag(1, 0)[:-3] + "0;", frag(1, 0).replace(" l=16 ", " l=16 x", 1)):
        (d,) = parse(bad)
        assert type(d) is tuple, bad


def test_records_have_two_to_four_fragments():
    assert [fragment_count(n) for n in range(6)] == [2, 3, 4, 2, 3, 4]


def test_stats_cont_lines_are_read(tmp_path):
    results(tmp_path, [], stats=[
        "producer cpu=1 ctx=task writer=task0 attempted=3 stored=3 refused=0",
        "cont cpu=1 ctx=task writer=task0 records=2 fragments=5 stored=4 refused=1"])
    assert fragments.read_expected(str(tmp_path / "stats.txt")) == {
        (1, 1, "task", "task0"): (2, 1)}


# ---------------------------------------------------------------- accepted

def test_a_record_joined_by_its_continuations_passes(tmp_path):
    """Fragment 0 begins the record, each continuation stores it again,
    extended (nobkl_store of the same seq): one line on the serial log."""
    d = results(tmp_path, [frag(2, 0), (frag(2, 0) + frag(2, 1),), (record(2),),
                           pstress(1, "task", 0)])
    f = passes(check_results(d))
    assert (f["fragments"], f["records"], f["joined"], f["split"]) == (4, 1, 3, 0)
    assert f["stored_records"] == 1
    log = (tmp_path / "console.log").read_text()
    assert record(2) in log


def test_a_record_split_by_other_contexts_passes(tmp_path):
    """Another CPU's record and an NMI's record in fragments come between
    the task's fragments: each of its fragments after them begins a
    record of its own, and the NMI's continuation may even join the
    task's open record; every line is on the serial log."""
    nmi = dict(ctx="nmi", writer="nmi")
    d = results(tmp_path, [
        START,
        frag(0, 0),                               # task: n=0 f=0/2 begins a record
        pstress(2, "hardirq", 0),                 # another CPU finalizes it
        frag(0, 1),                               # f=1/2 a record of its own
        frag(1, 0) + frag(0, 0, **nmi),           # task n=1 f=0/3, then an NMI's record
        frag(0, 1, **nmi),                        # ... its continuation alone
        frag(1, 1) + frag(1, 2),                  # the task's rest
        END])
    f = passes(check_results(d))
    assert (f["fragments"], f["records"], f["split"], f["shared_records"]) == (7, 3, 3, 1)


def test_fragments_refused_by_printk_are_no_loss(tmp_path):
    """stats.txt says printk() refused one fragment: one missing
    fragment is granted; with the end banner stored, the records up to
    stats.txt's count are checked."""
    stats = ["cont cpu=1 ctx=task writer=task0 records=2 fragments=5 stored=4 refused=1"]
    d = results(tmp_path, [START, frag(0, 0), frag(0, 1), frag(1, 0) + frag(1, 2), END],
                stats=stats)
    f = passes(check_results(d))
    assert f["refused_by_printk"] == 1


def test_fragments_before_the_trace_are_not_claimed(tmp_path):
    """Without the run's start banner in the trace, a producer is checked
    from its first fragment there (here the middle of a record); without
    its end banner, up to its last one."""
    passes(check_results(results(tmp_path, [frag(2, 2) + frag(2, 3), frag(3, 0)])))


# ---------------------------------------------------------------- violations

def test_a_missing_fragment_is_a_violation(tmp_path):
    v = check_results(results(tmp_path, [START, frag(0, 0), frag(1, 0) + frag(1, 1) +
                                         frag(1, 2), END]))
    assert violated(v) == {"cont-fragments"}
    (msg,) = [m for r, m in violation_messages(v)]
    assert "1 fragment(s) of r=1 c=1 x=task w=task0 never stored" in msg and "n=0 f=1" in msg


def test_missing_last_fragments_need_the_end_banner(tmp_path):
    """The record the producer was in when the run ended must be whole
    once its end banner is stored; stats.txt's records count too."""
    v = check_results(results(tmp_path, [START, frag(0, 0), END]))
    assert violated(v) == {"cont-fragments"}
    stats = ["cont cpu=1 ctx=task writer=task0 records=2 fragments=5 stored=5 refused=0"]
    v = check_results(results(tmp_path / "b", [START, record(0), END], stats=stats))
    (msg,) = [m for r, m in violation_messages(v)]
    assert "3 fragment(s)" in msg and "n=1 f=0, n=1 f=1, n=1 f=2" in msg


def test_a_fragment_stored_twice_is_a_violation(tmp_path):
    v = check_results(results(tmp_path, [START, frag(0, 0), frag(0, 0) + frag(0, 1), END]))
    assert violated(v) == {"cont-fragments"}
    (msg,) = [m for r, m in violation_messages(v)]
    assert "fragment f=0/2 of record n=0 of r=1 c=1 x=task w=task0" in msg
    assert "stored again" in msg


def test_a_fragment_out_of_order_is_a_violation(tmp_path):
    """Within a record (f=1 before f=0 in one stored record) and across
    records of one writer (n=1 before the end of n=0)."""
    v = check_results(results(tmp_path, [START, frag(0, 1) + frag(0, 0), END]))
    assert violated(v) == {"cont-fragments"}
    (msg,) = [m for r, m in violation_messages(v)]
    assert "fragment f=0/2 of record n=0" in msg and "stored after f=1/2 of n=0" in msg
    v = check_results(results(tmp_path / "b", [START, frag(0, 0), record(1), frag(0, 1), END]))
    assert [m for r, m in violation_messages(v) if "stored after f=2/3 of n=1" in m]


def test_a_damaged_fragment_is_a_violation(tmp_path):
    bad = frag(0, 1)[:-3] + ("00;" if not frag(0, 1).endswith("00;") else "11;")
    v = check_results(results(tmp_path, [START, frag(0, 0) + bad, END]))
    assert violated(v) == {"cont-fragments"}
    assert any("damaged fragment" in m for r, m in violation_messages(v))


class _Store:
    """What Fragments.on_store() reads of a traceparse.Store."""

    def __init__(self, seq, text):
        self.seq, self.text, self.ts, self.lineno, self.cpu = seq, text, 1.0 + seq, seq, 1


class _Judged:
    def __init__(self):
        self.messages = []

    def violate(self, rule, con, msg, **kw):
        self.messages.append((rule, msg))


def test_after_trace_loss_nothing_is_claimed_missing():
    """A trace that lost events may have lost a store: missing fragments
    are not claimed then, a repeat still is."""
    stores = [START, frag(0, 0), record(1), frag(1, 0)]
    for loss, want in ((False, {"missing", "repeat"}), (True, {"repeat"})):
        fr = fragments.Fragments()
        for seq, text in enumerate(stores):
            fr.on_store(_Store(seq, text))
        an = _Judged()
        fr.finish(an, loss_seen=loss)
        got = {"missing" if "never stored" in m else "repeat" if "stored again" in m else m
               for _, m in an.messages}
        assert got == want


def test_stores_are_taken_in_seq_order_once_a_window_behind():
    """Stores listed out of seq order (two CPUs' clocks) within the
    window are taken in seq order; the longest text of a seq counts."""
    fr = fragments.Fragments()
    for seq, text in ((1, START), (3, frag(0, 1)), (2, frag(0, 0)), (4, frag(1, 0)),
                      (4, frag(1, 0) + frag(1, 1) + frag(1, 2))):
        fr.on_store(_Store(seq, text))
    an = _Judged()
    fr.finish(an)
    assert an.messages == []
    assert fr.summary()["fragments"] == 5 and fr.summary()["stored_records"] == 3


class _Ringbuffer:
    """printk()'s continuation rule, as 6.1 and 6.12 store: a KERN_CONT
    text joins the last record when that one has the same caller id and
    is not finalized; anything else begins a record, finalizing the one
    before; a newline finalizes."""

    def __init__(self):
        self.records = []         # [text, caller, final]

    def printk(self, caller, text, cont, newline):
        last = self.records[-1] if self.records else None
        if cont and last is not None and last[1] == caller and not last[2]:
            last[0] += text
        else:
            if last is not None:
                last[2] = True
            last = [text, caller, False]
            self.records.append(last)
        if newline:
            last[2] = True


def _interleaved(seed, steps=400):
    """Two CPUs, each with a task (caller its pid) and a hardirq and an
    NMI (both caller the CPU) printing records in fragments and whole
    records; an hardirq interrupts its CPU's task between two fragments,
    an NMI its CPU's task or hardirq, and each prints a whole record in
    fragments before it returns: the stored texts of a random run."""
    import random
    rnd = random.Random(seed)
    rb = _Ringbuffer()
    nxt = {}

    def record_of(cpu, ctx, caller, nested):
        writer = "task0" if ctx == "task" else ctx
        n = nxt[(cpu, ctx)] = nxt.get((cpu, ctx), -1) + 1
        count = fragment_count(n)
        for i in range(count):
            if i and nested:
                for inner in nested:
                    if rnd.random() < 0.3:
                        record_of(cpu, inner, "C%d" % cpu, nested[nested.index(inner) + 1:])
            rb.printk(caller, frag(n, i, ctx=ctx, writer=writer, cpu=cpu), i > 0, i + 1 == count)

    for _ in range(steps):
        cpu = rnd.randrange(2)
        if rnd.random() < 0.2:
            rb.printk("X", pstress(cpu, "softirq", rnd.randrange(1000)), False, True)
        ctx = rnd.choice(("task", "hardirq", "nmi"))
        inner = {"task": ["hardirq", "nmi"], "hardirq": ["nmi"], "nmi": []}[ctx]
        record_of(cpu, ctx, "T%d" % (100 + cpu) if ctx == "task" else "C%d" % cpu, inner)
    return [r[0] for r in rb.records]


def _judge(texts, started=True):
    fr = fragments.Fragments()
    stores = ([START] if started else []) + texts + [END]
    for seq, text in enumerate(stores):
        fr.on_store(_Store(seq, text))
    an = _Judged()
    fr.finish(an)
    return fr, an.messages


def test_random_interleavings_of_contexts_pass_and_show_joins_and_splits():
    """Whatever the interleaving of tasks, hardirqs and NMIs on two CPUs,
    the stored records are accepted, and among them are joined, split
    and shared records."""
    for seed in range(8):
        fr, msgs = _judge(_interleaved(seed))
        assert msgs == [], (seed, msgs[:3])
    f = fr.summary()
    assert f["joined"] and f["split"] and f["records"] > 100


def test_random_interleavings_with_a_fragment_lost_repeated_or_swapped_fail():
    texts = _interleaved(3)
    joined = next(i for i, t in enumerate(texts) if t.count(fragments.TAG) > 1)
    first, rest = texts[joined].split(";", 1)
    lost = texts[:joined] + [rest] + texts[joined + 1:]
    again = texts[:joined] + [texts[joined], first + ";"] + texts[joined + 1:]
    swapped = texts[:joined] + [rest + first + ";"] + texts[joined + 1:]
    for mutated, word in ((lost, "never stored"), (again, "stored again"),
                          (swapped, "stored after")):
        _, msgs = _judge(mutated)
        assert msgs and all(word in m for _, m in msgs), (word, msgs[:3])
