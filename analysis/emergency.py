"""The store-to-console delay of emergency and panic output.

The RFC promises that emergency output gets out at once, while ordinary
records wait for the printer thread.  The figure that shows it is the
delay from the store of a record printed in an emergency (or panic)
section to a console's first commit of it; the store-to-commit delay of
all records mixes it with the backlog the printer thread works through.

The records that can be told apart in the trace are the stressor's own
(docs/interfaces.md section 3): `x=emerg` records were stored in an
emergency section, `x=panic` ones in a panic section.  A WARN's lines
carry no such mark and are not counted.

Both delays include the backlog: a console prints in seq order, so an
emergency record waits for the records stored before it, whoever prints
them.  What the RFC changes is who prints: an emergency context takes
the console from a lower-priority owner (by handover or, when that times
out, hostile) and prints the backlog itself.  The wait behind the owner
is the time from the store of an emergency or panic record, made while a
context of lower priority owned the console, until a context of at
least the record's priority acquired it, or the owner committed the
record itself.  Figures, not rules (the contract does not bound them);
a wait longer than FEW_RECORDS record times (a record time: the
console's median emission, `nobkl_emit` to its `nobkl_commit`) is a
finding.  The owner at the store is the model's owner when the store is
taken, which the analysis places by its timestamp: a finding names it,
it does not prove it.

Against the RFC's bound (the time of the records stored before it plus
one record, emergency_bound.py) each record is judged by a History that
sweeps the stores, commits, emissions and ownership changes as they come
and keeps what later records still need (one float per busy commit for
the record time, the emergency records' own facts).

Memory: what is kept to the end grows with the records marked `x=`,
not with the trace: a _Pending per marked record (its kind, store time
and the consoles that committed it), as `not_committed` counts per
console at the end and a console first seen later may still commit it;
and the History's facts of each emergency record, as which of them are
late is known only with the record time, at the end; for the same
reason every wait behind a lower-priority owner (`slow`: the finding's
threshold is a record time).  The rest is the History's window of
events and, per console, the records waiting now.
"""

from .emergency_bound import History, is_emergency
from .emergency_report import evaluate
from .model import prio_rank
from .stats import LogHist

KINDS = (("emergency", " x=emerg "), ("panic", " x=panic "))
FEW_RECORDS = 4
EXAMPLES = 5


class _Pending:
    __slots__ = ("seq", "kind", "ts", "done")

    def __init__(self, seq, kind, ts):
        self.seq = seq
        self.kind = kind
        self.ts = ts
        # the consoles that committed it: a tuple, not a set (one per
        # console, and there are few), as one is kept for every marked
        # record to the end (_not_committed() counts them there)
        self.done = ()


class _ConsoleFigures:
    def __init__(self):
        self.delay = {kind: LogHist() for kind, _ in KINDS}
        self.record_time = LogHist()
        self.emits = {}           # seq -> ts of its last emission
        self.waiting = {}         # seq -> (_Pending, owner label): behind a lower-priority owner
        self.wait = {kind: LogHist() for kind, _ in KINDS}
        self.slow = []            # (wait_us, seq, kind, owner label)

    def end_wait(self, seq, ts):
        p, owner = self.waiting.pop(seq)
        us = (ts - p.ts) * 1e6
        self.wait[p.kind].add(us)
        self.slow.append((us, seq, p.kind, owner))


class EmergencyDelay:
    """Collects the delays from the analysis' event stream, in the order
    the checker takes it: on_store() with every store, on_event() with
    every console event (`nobkl_emit`, `nobkl_commit`).  view: what
    it reads of the checker, and no more: `consoles` (name ->
    model.Console, for who owns each) and `serial_console` (its name),
    read when asked (api.py builds it; None: no console known)."""

    def __init__(self, view=None):
        self.view = view
        self.stored = {}          # seq -> _Pending, of every marked record
        self.consoles = {}
        self.history = History()

    def _con(self, name):
        f = self.consoles.get(name)
        if f is None:
            f = self.consoles[name] = _ConsoleFigures()
        return f

    def on_store(self, st):
        self.history.store(st.seq, st.ts)
        text = st.text
        if " x=" not in text:
            return
        if is_emergency(text):
            self.history.mark(st.seq, st.cpu, st.caller, text, self._owner_labels())
        for kind, mark in KINDS:
            if mark in text:
                break
        else:
            return
        p = self.stored[st.seq] = _Pending(st.seq, kind, st.ts)
        for name, con in getattr(self.view, "consoles", {}).items():
            o = con.owner
            if o is not None and prio_rank(o.prio) < prio_rank(kind):
                self._con(name).waiting[st.seq] = (p, o.label())

    def _owner_labels(self):
        return {name: (con.owner.label() if con.owner is not None else None)
                for name, con in getattr(self.view, "consoles", {}).items()}

    def on_event(self, item, con):
        if con is None:
            self.on_store(item)
            return
        self._record(item, con)
        if item.name == "nobkl_emit":
            seq = _seq(item)
            if seq is not None:
                self._con(con.name).emits[seq] = item.ts
        elif item.name == "nobkl_commit":
            self.on_commit(item, con)
        elif item.name == "nobkl_acquire":
            self.on_acquire(item, con)

    def _record(self, item, con):
        """The console event into the History, with the owner it left."""
        name = item.name[6:]
        if name == "commit":
            o = getattr(con, "owner", None)
            label = o.label() if o is not None else None
        else:
            label = None
        self.history.feed_event(name, item.ts, _seq(item), con.name, label, item.fields)

    def on_acquire(self, item, con):
        """A context of at least a waiting record's priority has the
        console: that record waits no longer behind the old owner."""
        f = self.consoles.get(con.name)
        if f is None or not f.waiting:
            return
        rank = prio_rank(item.fields.get("prio", "none"))
        for seq in [s for s, (p, _) in f.waiting.items() if prio_rank(p.kind) <= rank]:
            f.end_wait(seq, item.ts)

    def on_commit(self, item, con):
        seq = _seq(item)
        if seq is None:
            return
        f = self._con(con.name)
        t_emit = f.emits.pop(seq, None)
        if t_emit is not None:
            f.record_time.add((item.ts - t_emit) * 1e6)
        p = self.stored.get(seq)
        if p is None or con.name in p.done:
            return
        p.done += (con.name,)
        f.delay[p.kind].add((item.ts - p.ts) * 1e6)
        if seq in f.waiting:
            f.end_wait(seq, item.ts)

    def _serial(self):
        return self.view.serial_console if self.view is not None else None

    def summary(self):
        """The serial console's emergency delays (LogHist.summary() in us),
        plus `not_committed`: records stored in emergency sections that it
        did not commit in the trace."""
        serial = self._serial()
        f = self.consoles.get(serial)
        s = (f.delay["emergency"] if f is not None else LogHist()).summary()
        s["not_committed"] = self._not_committed(serial, "emergency")
        return s

    def _not_committed(self, con, kind):
        return sum(1 for p in self.stored.values() if p.kind == kind and con not in p.done)

    def per_console(self):
        """{console: {kind: store-to-console summary + not_committed,
        kind_wait_behind_lower_prio: summary, record_time_us: summary}};
        summaries in us."""
        out = {}
        names = set(self.consoles)
        names |= set(getattr(self.view, "consoles", ()))
        for name in sorted(names):
            f = self._con(name)
            d = {}
            for kind, _ in KINDS:
                s = f.delay[kind].summary()
                s["not_committed"] = self._not_committed(name, kind)
                d[kind] = s
                w = f.wait[kind].summary()
                w["still_waiting"] = sum(1 for p, _ in f.waiting.values() if p.kind == kind)
                d[kind + "_wait_behind_lower_prio"] = w
            d["record_time_us"] = f.record_time.summary()
            out[name] = d
        return out

    def past_bound(self):
        """{console: emergency_report.evaluate()} of the consoles with
        emergency records and a record time, every late record of each."""
        out = {}
        for name in sorted(self.history.consoles):
            r = evaluate(self.history, name)
            if r is not None:
                out[name] = r
        return out

    def findings(self):
        """Emergency/panic records that waited behind a lower-priority
        owner for more than FEW_RECORDS record times, per console (a
        record still waiting when the trace ended is not one: its wait
        has no end to measure)."""
        out = {}
        for name, f in sorted(self.consoles.items()):
            rt = f.record_time.summary().get("p50")
            if not rt or not f.slow:
                continue
            limit = FEW_RECORDS * rt
            slow = sorted((x for x in f.slow if x[0] > limit), reverse=True)
            if not slow:
                continue
            out[name] = {
                "count": len(slow), "threshold_us": round(limit, 1), "records": FEW_RECORDS,
                "examples": [{"seq": seq, "kind": kind, "wait_us": round(us, 1),
                              "owner_at_store": owner}
                             for us, seq, kind, owner in slow[:EXAMPLES]]}
        return out


def _seq(item):
    try:
        return int(item.fields["seq"])
    except (KeyError, ValueError):
        return None
