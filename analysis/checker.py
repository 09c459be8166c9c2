"""The checker: it takes the trace's items, checks the fields of each
event, keeps the record window and the order of events, drives the
ownership model (model_rfc.py) and dispatches the facts the model hands
back to the units that judge them (rules.py, trace_rules.py).

`Analyzer.feed()` takes the items produced by `traceparse.parse_lines()` in
trace order (or in chain order, ordering.py).  Besides the model's state
it keeps a window of stored record texts that the consoles have not
printed yet, so memory does not grow with the trace; events of one
timestamp (flush_tie()) and emissions whose store is listed later
(admit(), must_wait()) wait here before the model sees them.  Every
violation is reported here (violate()), with the console's events
around it; input found damaged (bad_event()) is trace loss, after which
the model forgets every console's state.
"""

import re
import zlib
from bisect import bisect_left, insort
from collections import OrderedDict, deque

from . import model_rfc
from .happens_before import NOWHERE, before, meet, strictly_before
from .bootlog import STORED_TAIL
from .rules import RULE_IDS, dispatch_table
from .model import PRIO, PRIO_NAME, Console
from .serial import parse_pstress
from .traceparse import Damage, Drop, Event, Store, store_of

# The values interfaces.md section 1 allows for each symbolic field, and
# the fields that are unsigned decimal numbers (CPU numbers among them).
_BOOL = frozenset(("0", "1"))
_PRIOS = frozenset(PRIO)
FIELD_VALUES = {
    "prio": _PRIOS, "prev_prio": _PRIOS, "to_prio": _PRIOS, "owner_prio": _PRIOS,
    "ctx": frozenset(("task", "softirq", "hardirq", "nmi")),
    "how": frozenset(("direct", "handover", "hostile")),
    "where": frozenset(("can_proceed", "enter_unsafe", "exit_unsafe", "seq", "release")),
    "thread": _BOOL, "prev_locked": _BOOL, "prev_thread": _BOOL, "prev_unsafe": _BOOL,
    "unsafe_takeover": _BOOL, "handover": _BOOL,
}
NUMBER_FIELDS = frozenset(("seq", "len", "dropped", "waited_us", "old_state", "new_state"))
CON_NAME_RE = re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")   # a console name with its index
SEQ_FAR = 1 << 12            # a seq this far above every stored one was never stored
CPU_FIELDS = frozenset(("prev_cpu", "to_cpu", "owner_cpu"))
SEQ_IN_STATE = 0xffffffff    # the seq in a 64-bit state word (its low half)

HELD_MAX = 100000            # console events held at most while one waits for its store
TIE_MAX = 100000             # events of one timestamp reordered at most
# stores one CPU can have between prb_reserve() and the store tracepoint
# at once: vprintk_store() runs that stretch with interrupts off, so only
# an NMI nests in it, and each of the two (NMI, the rest) allows four
# nested printk() calls (PRINTK_MAX_RECURSION 3, entered at 0..3)
IN_FLIGHT_PER_CPU = 8
HOLE_MAX = 100000            # seqs followed at most as holes of one jump
TS_JUMP = 1.0                # s: a CPU's timestamps jumping forward this far are
                             #    remembered (a damaged page may be dated too late)
HB_RECENT = 4096             # stamps of the events of the last trace lines kept (hb_of())
HB_KEPT = 4096               # and of the events the model reports on later (keep_stamp())
MAX_DETAIL = 25              # violations kept in detail per rule
AFTER = 3                    # and after it

# fact -> the trace units that judge it for the model (rules.py, the one
# registry)
TRACE_UNITS = dispatch_table("trace_rules", model_rfc.MODEL)


class Analyzer:
    def __init__(self, serial_console=None, facts=None, on_event=None, store_cap=500000,
                 console_loglevel=7, arch32=False):
        self.console_loglevel = console_loglevel
        self.arch32 = arch32
        self.pstress_printable = False
        self.unwritten = 0            # serial console attempts that wrote nothing
        self.consoles = {}
        self.serial_console = serial_console
        self.serial = None            # serialcheck.SerialChecker, set by the caller
        # what the model emits besides the verdict: the ownership
        # intervals and marks (facts.interval(), facts.mark(); intervals.py)
        self.facts = facts
        self.on_event = on_event
        self.store = {}
        self.store_min = None
        self.store_cap = store_cap
        self.store_overflow = 0
        self.text_to_seq = {}
        # the last STORED_TAIL stores (Store tuples, a re-store of a
        # LOG_CONT record too): the records a dmesg saved after the trace
        # can show, exported for the boot-log check (stored_texts())
        self.stored_tail = deque(maxlen=STORED_TAIL)
        self.records = 0
        self.first_stored = None     # lowest seq stored in the trace before any trace loss
        self.max_stored = None       # highest seq stored in the trace
        self.store_holes = {}        # seq -> ts: not stored, but a higher seq was (at ts)
        self.dataless = set()        # seqs of nobkl_dataless: records without text
        self.emitted_unstored = set()  # seqs a console emitted before any store of them
        self.missing_stores = []     # (seq, ts) of holes the trace never filled
        self.missing_store_count = 0
        self.missing_store_ts = None # the earliest of them opened then
        # what places a hole without a clock (hole_at_trace_edge()): the
        # lowest seqs stored, the highest seq a task stored and the highest
        # seq a console emitted or committed, per CPU
        self.low_seqs = []
        self.low_full = False
        self.task_store_max = {}
        self.console_seq_max = {}
        self.store_updates = 0
        self.vcount = dict.fromkeys(RULE_IDS, 0)
        self.violations = []
        self.anomalies = []
        self.anomaly_count = 0
        self.bad_events = 0
        self.first_bad = None        # the message of the first of them
        self.bad_lines = set()       # their trace lines
        self.counts = {
            "emits": 0, "commits": 0, "reprints": 0,
            "acquire": {"direct": 0, "handover": 0, "hostile": 0},
            "hostile_by_prio": {}, "hostile_same_cpu": 0, "hostile_from_nmi": 0,
            "hostile_unsafe": 0,
            "handover_requests": 0, "handover_grants": 0, "handover_timeouts": 0,
            "releases": 0, "lost": {}, "dropped_records": 0, "held_for_store": 0,
            "store_wait_overflow": 0,
            "panic_release_handovers": 0, "tie_groups_reordered": 0,
            "grants_taken_before_pickup": 0, "late_commits_after_takeover": 0,
            "stale_emits": 0, "commits_of_pretrace_emission": 0,
            "acquires_traced_after_takeover": 0, "grants_traced_after_pickup": 0,
            "releases_traced_after_next_acquire": 0, "losses_traced_before_takeover": 0,
            "releases_mid_record_on_request": 0, "store_holes_at_trace_edges": 0,
            "store_holes_dataless": 0,
            "pre_chain_events": 0,
            "attempts": {"commit": 0, "lost": 0, "handover": 0, "abandoned": 0, "open": 0},
        }
        self.loss_seen = False
        self.loss_start_ts = None
        self.first_violation_ts = None
        # happens-before (happens_before.py), in chain order: the ordering
        # stage's stamps by trace line until process() pops them; the
        # stamp of the event processed (hb_cur, of hb_cur_ev); per CPU,
        # the vector of each of its streams' last event processed
        # (loss_place()); the stamps of recent events (by trace line
        # modulo HB_RECENT) and of those kept for later (hb_of()); per
        # stream the vector of its earliest violation found before trace
        # loss; the place before every trace loss so far (None: no loss)
        self.hb_stamps = {}
        self.hb_cur = self.hb_cur_ev = None
        self.hb_last = {}
        self.hb_recent = [None] * HB_RECENT
        self.hb_kept = OrderedDict()
        self.hb_violations = {}
        self.loss_at = None
        self.last_ts_cpu = {}
        self.last_ts = None
        self.first_ts = None
        self.cpus = None
        self.cur_event = None
        self.held = deque()          # console events waiting for a store (feed())
        self.held_seq = None         # the seq whose store the first of them waits for
        self.gave_up = {}            # seq -> ts of an event that went on without its store
                                     #    after HELD_MAX events waited (overflow_held())
        self.gave_up_full = 0        # such events not remembered (HOLE_MAX of them are)
        self.late_stores = []        # (seq, ts) of stores listed after that: at most 20
        self.late_store_count = 0
        self.late_store_ts = None    # the earliest ts of the events that went on without them
        self.forgotten_below = None  # stores below this seq were forgotten (trim_store())
        self.tie = []                # events sharing the timestamp tie_ts (feed())
        self.tie_ts = None
        self.read_order_here = True  # feed() sees the reader's order (check_read_order())
        self.causal_order = False    # the items come in chain order (flush_tie())
        self.chain_notes = {}        # trace line -> note of the ordering stage (ordering.py)
        self.feed_last_ts = {}       # cpu -> timestamp of its last item fed
        self.ts_jump_from = {}       # cpu -> its timestamp before its last jump forward
        self.time_back = None        # (cpu, from, to, line) of the first step back
        self.time_back_count = 0
        # the ownership model: it keeps the consoles' state and hands
        # back facts (judge()), attempts and intervals
        m = self.model = model_rfc.RfcModel(self, self.consoles, self.counts, facts)
        self.lat_handover = m.lat_handover
        self.lat_store_commit = m.lat_store_commit
        self.lat_timeout = m.lat_timeout
        self.dropped_producer = m.dropped_producer

    @property
    def race32(self):
        """Late commits after a remote takeover that 32-bit allows."""
        return self.model.race32

    @property
    def suppressed(self):
        """Records the console did not print: below the console
        loglevel, or attempts of the serial console that wrote nothing."""
        return self.model.suppressed + self.unwritten

    # ------------------------------------------------------------------ util
    def con(self, name):
        c = self.consoles.get(name)
        if c is None:
            c = self.consoles[name] = Console(name)
            if self.serial_console is None:
                # the serial log belongs to the first ttyS* console; a trace
                # whose first console is something else uses that one
                self.serial_console = name
        return c

    # ------------------------------------------- what the model hands back
    def judge(self, fact, con, *args):
        """Hand a fact of the ownership model to the units that judge it
        (rules.consumers()): each reports through violate()."""
        for fn in TRACE_UNITS[fact]:
            fn(self, con, *args)

    def attempt_ended(self, att):
        """An emission attempt ended (att.outcome): the serial alignment
        takes the serial console's."""
        if self.serial is None or att.con != self.serial_console:
            return
        if att.len == 0:
            self.unwritten += 1           # nothing written (suppressed record)
            if att.outcome == "commit":
                self.serial.suppressed(att)
        else:
            self.serial.attempt(att)

    def records_passed(self, seq):
        """A console committed seq: the records every console has passed
        are forgotten."""
        if self.store and self.store_min is not None and self.store_min < seq:
            self.trim_store()

    def emitted(self, seq):
        """A console emitted seq: one not stored yet, above the first
        stored, is no data-less record, whatever the trace says (readers
        skip those)."""
        if seq not in self.store and self.first_stored is not None and \
                seq > self.first_stored and len(self.emitted_unstored) < HOLE_MAX:
            self.emitted_unstored.add(seq)

    # ------------------------------------------------------------ reporting
    def fmt_event(self, ev):
        f = ev.fields
        if ev.name == "nobkl_store":
            body = "seq=%s caller=%s text=%s" % (f.get("seq"), f.get("caller"), f.get("text", "")[:60])
        else:
            body = " ".join("%s=%s" % kv for kv in f.items() if kv[0] != "con")
        cpu = "[%03d]" % ev.cpu if ev.cpu is not None else "[---]"
        ts = "%.6f" % ev.ts if ev.ts is not None else "-"
        return "line %s %s %s %s %s %s" % (
            ev.lineno, ts, cpu, ev.name, f.get("con", ""), body)

    def violate(self, rule, con, msg, seq=None, cpus=(), ctxs=(), ev=None, extra=None,
                at=None):
        """ev: the event the violation is placed at (default: the current
        one); at: instead of an event, (ts, trace line, cpu, text) of the
        place, for a violation found outside the event stream (the serial
        rules, serial_rules.Blame)."""
        if at is not None:
            later = True
        else:
            ev = ev if ev is not None else self.cur_event
            later = ev is not self.cur_event
            at = (ev.ts, ev.lineno, ev.cpu, None) if ev is not None else None
            if ev is not None and not self.loss_seen:
                self.violation_stamp(ev)
        ts, line, cpu, shown = at if at is not None else (None, None, None, None)
        self.vcount[rule] += 1
        if not self.loss_seen and at is not None and ts is not None:
            if self.first_violation_ts is None or ts < self.first_violation_ts:
                self.first_violation_ts = ts
        if self.facts is not None and at is not None:
            self.facts.mark("violation", con.name if con else None, cpu, ts, rule, line)
        if self.vcount[rule] > MAX_DETAIL:
            return None
        v = {
            "rule": rule,
            "console": con.name if con else None,
            "seq": seq,
            "ts": ts,
            "line": line,
            "cpus": sorted(set(c for c in cpus if c is not None)),
            "contexts": list(ctxs),
            "message": msg,
            "after_trace_loss": self.loss_seen,
            "events_before": [self.fmt_event(e) for e in con.recent] if con else [],
            "event": None if at is None else shown if shown is not None else self.fmt_event(ev),
            "events_after": [],
        }
        late = (later and line is not None and
                con is not None and con.recent and con.recent[-1].lineno > line)
        if late:
            # found after the fact (serial rules check an attempt when it
            # has ended, or later): the console's latest events are not
            # its surroundings
            v["events_before"] = [self.fmt_event(e) for e in con.recent
                                  if e.lineno < line] if con else []
            v["context_note"] = ("checked at trace line %d; run `timeline --seq %s` for the "
                                 "events around it" % (con.recent[-1].lineno, seq))
        if extra:
            v.update(extra)
        self.violations.append(v)
        if con is not None and not late:
            con.pending_after.append(v)
        return v

    def bad_event(self, con, ev, e, place=None):
        """An event with a field value that is not what interfaces.md says:
        the trace is damaged there (verdict incomplete), and what the
        event did is unknown: as after trace loss, the consoles' state is
        forgotten, so nothing after it blames the kernel.  `place`: the
        loss's (trace_loss())."""
        self.bad_events += 1
        self.bad_lines.add(ev.lineno)
        msg = "bad field value in %s at line %d: %s" % (ev.name, ev.lineno, e)
        if self.first_bad is None:
            self.first_bad = msg
        self.anomaly(con, msg)
        self.trace_loss(ev.cpu, ev.ts, "bad field value at line %d" % ev.lineno, place)

    def anomaly(self, con, msg):
        self.anomaly_count += 1
        if len(self.anomalies) < 50:
            ev = self.cur_event
            self.anomalies.append({"console": con.name if con else None,
                                   "line": ev.lineno if ev else None,
                                   "ts": ev.ts if ev else None, "message": msg})






    # ------------------------------------------------------- happens-before
    # In chain order (ordering.py) an incomplete trace's violation is the
    # kernel's when it happens before every trace loss: the lost events
    # came after the place the trace proves for the loss, so none of them
    # took part in it (genuine()).  Places and stamps: happens_before.py.

    def hb_of(self, ev):
        """The happens-before stamp of event ev, or None: not stamped
        (a trace without the chain, an event the ordering stage passed
        on unlinked, a store) or no longer known."""
        if ev is self.hb_cur_ev:
            return self.hb_cur
        x = self.hb_recent[ev.lineno % HB_RECENT]
        if x is not None and x[0] == ev.lineno:
            return x[1]
        return self.hb_kept.get(ev.lineno)

    def keep_stamp(self, ev):
        """The model keeps ev to report on later (owner_unexplained()):
        keep its stamp too."""
        st = self.hb_of(ev)
        if st is not None:
            kept = self.hb_kept
            kept[ev.lineno] = st
            if len(kept) > HB_KEPT:
                kept.popitem(last=False)

    def hb_done(self, ev, st):
        """Event ev with stamp st was processed: the last of its stream."""
        self.hb_last.setdefault(ev.cpu, {})[st[0]] = st[1]
        self.hb_recent[ev.lineno % HB_RECENT] = (ev.lineno, st)

    def violation_stamp(self, ev):
        """A violation placed at event ev was found before trace loss:
        per stream the earliest such one is kept (before a place when a
        later one of its stream is)."""
        st = self.hb_of(ev)
        if st is None:
            return
        i, v = st
        old = self.hb_violations.get(i)
        if old is None or v[i] < old[i]:
            self.hb_violations[i] = v

    def loss_place(self, cpu):
        """The place before events lost on `cpu`: each was in a stream of
        that CPU (which one is not known), after the stream's last event
        processed, so the place before the last of each of its streams
        (the meet); NOWHERE for an unknown CPU or one without a stamped
        event yet.  An event the ordering stage holds back is not
        processed: its stream's place is then an earlier one, never a
        later one.  A stream of that CPU without an event before the
        loss is taken to have lost none."""
        last = self.hb_last.get(cpu) if cpu is not None else None
        if not last:
            return NOWHERE
        it = iter(last.values())
        place = next(it)
        for v in it:
            place = meet(place, v)
        return place

    def not_before_loss(self, ev):
        """Is ev not proven before every trace loss seen so far?  In chain
        order by happens-before (an event without a stamp is not); by
        the clocks (a trace without the chain) its timestamp at or after
        the earliest loss start."""
        if not self.loss_seen:
            return False
        if self.causal_order:
            st = self.hb_of(ev)
            return st is None or not before(st[1], self.loss_at)
        return self.loss_start_ts is not None and ev.ts >= self.loss_start_ts

    def genuine(self):
        """Is a violation of an incomplete trace the kernel's?  In chain
        order: one found before trace loss (at a stamped event) happens
        before every trace loss; a missing store or one listed after its
        record's events went on without it has no place the trace tells
        (the store event fired somewhere before the record's use), so
        none is then.  A violation the serial rules found has no stamp:
        it is placed at an attempt, but judged on the serial log and on
        what the trace showed when the attempt ended, so it is never
        proven before a loss.  Without trace loss, any violation found
        is.  A trace without the chain (order=timestamps) is judged by
        the clocks: the earliest violation's timestamp before
        untrusted_from()."""
        if not self.causal_order:
            untrusted = self.untrusted_from()
            return (self.first_violation_ts is not None and
                    (untrusted is None or self.first_violation_ts < untrusted))
        place = self.loss_at
        if self.missing_store_count or self.late_store_count:
            place = NOWHERE
        if place is None:
            return self.first_violation_ts is not None
        return any(before(v, place) for v in self.hb_violations.values())

    # --------------------------------------------------------------- driving
    def feed(self, item):
        """Take the next trace item (in `trace-cmd report` order).

        Events of different CPUs with equal timestamps are unordered
        (trace-cmd lists them by CPU number): they are collected and
        admitted by flush_tie().  Timestamps of different CPUs do not
        order events at all, but a record is always stored before it is
        emitted or committed (the kernel stores it before any console can
        read it), and the store and the emission carry the same seq.  An
        emission/commit of a seq whose `nobkl_store` has not been listed
        yet therefore waits, with every console event listed after it,
        for the store of that seq, however late it is listed, until the
        trace ends or loses events (a loss marker, damage, a CPU's
        timestamps going back, a CPU's records ending early: then it goes
        on without it, e.g. a record stored before the trace began), or
        more than HELD_MAX events wait (overflow_held()).  Stores are
        never held.

        A store is taken at once: flush_tie() would admit it before the
        other events of its timestamp anyway, and the events of an
        earlier timestamp go first.  Three quarters of the events are
        stores, so this is the path that counts."""
        cls = item.__class__
        if self.read_order_here and (cls is Store or cls is Event):
            self.check_read_order(item)
        if cls is not Store:
            if cls is not Event:
                self.flush_tie()
                self.flush_held()
                if isinstance(item, Drop):
                    self.on_drop(item)
                elif isinstance(item, Damage):
                    self.on_damage(item)
                elif item.key == "cpus":
                    self.cpus = item.value
                return
            if item.name == "nobkl_dataless":
                self.on_dataless(item)
                return
            if item.name != "nobkl_store":
                self.feed_console_event(item)
                return
            item = self.typed_store(item)
            if item is None:
                return
        if self.tie and item.ts != self.tie_ts:
            self.flush_tie()
        if self.held:
            self.admit(item)
        else:
            self.process_store(item)

    def take_causal_order(self):
        """The items come in the order of their consoles' transition
        chains (ordering.py): events of one timestamp are taken as they
        come instead of being reordered by flush_tie()."""
        self.causal_order = True

    def check_read_order(self, item):
        """A Store or Event in the reader's order (each CPU's in ring
        buffer order): note how its CPU's timestamps go on.  feed()
        calls it, unless a stage in front of feed() reorders the items
        (ordering.py; then `read_order_here` is False and that stage
        calls it as it reads them)."""
        last = self.feed_last_ts.get(item.cpu)
        if last is not None and item.ts < last:
            self.time_went_back(item, last)
        elif last is not None and item.ts - last > TS_JUMP:
            self.ts_jump_from[item.cpu] = last
        self.feed_last_ts[item.cpu] = item.ts

    def time_went_back(self, item, last):
        """A CPU's events are in its ring buffer's order, whose timestamps
        never decrease (the shipped real run has no step back on any
        CPU): one that does means a damaged page timestamp.  The damage
        starts where the CPU's events went wrong: at the step back, or
        at the forward jump before it (a page dated too late is listed
        after every other CPU's events, then its CPU goes back)."""
        self.time_back_count += 1
        if self.time_back is None:
            self.time_back = (item.cpu, last, item.ts, item.lineno)
        self.flush_tie()
        self.flush_held()
        start = min(item.ts, self.ts_jump_from.get(item.cpu, item.ts))
        # its place: the events of that CPU from the jump on may have
        # been processed already (or be held in the ordering stage)
        self.trace_loss(item.cpu, start, "CPU:%d timestamps go back from %.6f to %.6f at "
                        "line %s" % (item.cpu, last, item.ts, item.lineno), NOWHERE)

    def typed_store(self, ev):
        """The Store of a nobkl_store that came as an Event: a hand-made
        item, or one whose numbers the reader could not parse (then None,
        after reporting the bad value)."""
        try:
            return store_of(ev)
        except (KeyError, ValueError) as e:
            self.cur_event = ev
            self.bad_event(None, ev, e)
            return None

    def feed_console_event(self, item):
        """feed() of an event other than a store: events of one timestamp
        are collected for flush_tie()."""
        tie = self.tie
        if item.ts == self.tie_ts and len(tie) < TIE_MAX:
            tie.append(item)
            return
        if len(tie) == 1:
            self.admit(tie[0])
            tie[0] = item
        else:
            if tie:
                self.flush_tie()
            self.tie.append(item)
        self.tie_ts = item.ts

    def flush_tie(self):
        """Admit the events that share one timestamp.  Events of different
        CPUs with the same timestamp are unordered (the guest clock stood
        still, or the global trace clock clamped a CPU that lagged behind
        to the last timestamp), trace-cmd lists them by CPU number.  Admit
        them in an order consistent with the console state (the stores
        among them were taken first, by feed()): of the CPUs' next events
        (each CPU in program order), one of the CPU that owns its console,
        else the first listed."""
        tie = self.tie
        if not tie:
            return
        self.tie = []
        self.tie_ts = None
        if len(tie) == 1 or self.causal_order:
            # in chain order (ordering.py) a tie is no longer unordered
            for ev in tie:
                self.admit(ev)
            return
        cpu0 = tie[0].cpu
        for ev in tie:
            if ev.cpu != cpu0:
                break
        else:
            for ev in tie:
                self.admit(ev)
            return
        self.counts["tie_groups_reordered"] += 1
        queues = {}
        for ev in tie:
            q = queues.get(ev.cpu)
            if q is None:
                q = queues[ev.cpu] = deque()
            q.append(ev)
        consoles = self.consoles
        while queues:
            if len(queues) == 1:
                # one CPU left: its events in program order
                for q in queues.values():
                    for ev in q:
                        self.admit(ev)
                break
            pick = None
            # 1. the waiter a pending grant goes to takes it
            for cpu, q in queues.items():
                ev = q[0]
                if ev.name == "nobkl_acquire" and ev.fields.get("how") == "handover":
                    con = consoles.get(ev.fields.get("con"))
                    g = con.grant if con is not None else None
                    if g is not None and g["to_cpu"] == cpu:
                        pick = cpu
                        break
            # 2. the owner's CPU goes on
            if pick is None:
                for cpu, q in queues.items():
                    con = consoles.get(q[0].fields.get("con"))
                    owner = con.owner if con is not None else None
                    if owner is not None and owner.cpu == cpu and self.tie_fits(q[0], con, q):
                        pick = cpu
                        break
            # 3. an event that fits the state; 4. the first listed
            if pick is None:
                for cpu, q in queues.items():
                    if self.tie_fits(q[0], consoles.get(q[0].fields.get("con")), q):
                        pick = cpu
                        break
            if pick is None:
                pick = next(iter(queues))
            q = queues[pick]
            self.admit(q.popleft())
            if not q:
                del queues[pick]

    @staticmethod
    def next_emit_fits(con, q):
        """The first emission that follows in q (the acquiring CPU's events
        of the tie) prints the console's next record, or skips to it with
        a dropped count.  A CPU may acquire and release a free console
        several times within one timestamp; the emission tells which of
        those free states an acquire of another CPU found."""
        want = con.next_seq
        if want is None:
            return True
        for n, ev in enumerate(q):
            if n > 8 or ev.name == "nobkl_release":
                break
            if ev.name == "nobkl_emit" and ev.fields.get("con") == con.name:
                seq = int_or_none(ev.fields.get("seq"))
                dropped = int_or_none(ev.fields.get("dropped")) or 0
                return seq is None or want <= seq <= want + dropped
        return True

    @staticmethod
    def tie_fits(ev, con, q=()):
        """Whether ev fits the console state (for ordering a timestamp
        tie): an acquire must find the state word its prev_* fields
        describe (and be followed by the console's next record), an
        owner's action needs the owner (or no known one)."""
        if con is None:
            return True
        owner = con.owner
        name = ev.name
        f = ev.fields
        if name == "nobkl_acquire":
            g = con.grant
            if f.get("how") == "handover":
                # after the grant to it (traced before it is tolerated,
                # but within a tie the grant goes first)
                return g is not None and str(g["to_cpu"]) == str(ev.cpu)
            word = owner.cpu if owner is not None else (g["to_cpu"] if g is not None else None)
            if f.get("prev_locked") == "1":
                fits = word is not None and str(word) == f.get("prev_cpu")
            else:
                fits = word is None
            return fits and Analyzer.next_emit_fits(con, q)
        if name == "nobkl_handover_grant":
            # after the request it answers
            r = con.requests.get(int_or_none(f.get("to_cpu")))
            if r is None or r["prio"] != f.get("to_prio"):
                return False
        if name in ("nobkl_emit", "nobkl_commit", "nobkl_release", "nobkl_handover_grant"):
            return owner is None or owner.cpu == ev.cpu
        return True

    def admit(self, item):
        """Next event in an order consistent with the console state; holds
        emissions/commits whose store has not been listed (see feed())."""
        held = self.held
        name = item.name
        if name == "nobkl_store":
            self.process_store(item)
            if held and item.seq == self.held_seq:
                self.release_held()
            return
        if held:
            held.append(item)
            if len(held) > HELD_MAX:
                self.overflow_held()
            return
        if (name == "nobkl_emit" or name == "nobkl_commit") and self.must_wait(item):
            held.append(item)
            self.counts["held_for_store"] += 1
            return
        self.process(item)

    def must_wait(self, ev):
        """ev (emit/commit) names a seq whose store has not been listed:
        that store came before ev, so it waits for it (noting the seq in
        held_seq).  Not for a store forgotten already (trim_store()) or
        one an event of its seq stopped waiting for (overflow_held())."""
        seq = int_or_none(ev.fields["seq"])
        if seq is None or seq in self.store or seq in self.gave_up or \
                (self.forgotten_below is not None and seq < self.forgotten_below):
            return False
        self.held_seq = seq
        return True

    def release_held(self, overflow=False):
        """The store the first held event waited for was listed (or, with
        `overflow`, that event went on without it): process held events
        in order; one whose store has not been listed starts a new hold."""
        held = self.held
        first = held[0] if held and not overflow else None
        while held:
            ev = held[0]
            if ev.name in ("nobkl_emit", "nobkl_commit") and self.must_wait(ev):
                if ev is not first:
                    self.counts["held_for_store"] += 1
                return
            held.popleft()
            self.process(ev)
        self.held_seq = None

    def overflow_held(self):
        """More than HELD_MAX events wait for the store of held_seq (a
        record stored before the trace began has none): the first goes
        on without it, as at the trace's end, and the others as far as
        their stores are listed.  Should that store be listed after all,
        the check went on without a record the trace has: incomplete
        (process_store(), late_stores), never a pass."""
        held = self.held
        ev = held.popleft()
        self.counts["store_wait_overflow"] += 1
        if len(self.gave_up) < HOLE_MAX:
            self.gave_up.setdefault(self.held_seq, ev.ts)
        else:
            self.gave_up_full += 1
        self.process(ev)
        self.release_held(overflow=True)

    def store_after_overflow(self, seq):
        """The store of seq is listed after an event of its record went on
        without it (overflow_held())."""
        ts = self.gave_up.pop(seq)
        self.late_store_count += 1
        if len(self.late_stores) < 20:
            self.late_stores.append((seq, ts))
        if self.late_store_ts is None or ts < self.late_store_ts:
            self.late_store_ts = ts

    def flush_held(self):
        """Process every held event (trace loss marker, end of trace)."""
        held = self.held
        while held:
            self.process(held.popleft())
        self.held_seq = None

    def process(self, ev):
        name = ev.name
        if name == "nobkl_store":
            self.process_store(ev)
            return
        self.cur_event = ev
        st = self.hb_stamps.pop(ev.lineno, None) if self.hb_stamps else None
        self.hb_cur_ev, self.hb_cur = ev, st
        if self.first_ts is None:
            self.first_ts = ev.ts
        self.last_ts = ev.ts
        self.last_ts_cpu[ev.cpu] = ev.ts
        con = self.consoles.get(ev.fields["con"])
        if con is None:
            con = self.con(ev.fields["con"])
            con.first_event = ev
            if st is not None:
                self.keep_stamp(ev)
        con.events += 1
        if name == "nobkl_emit" or name == "nobkl_commit":
            self.console_seq_seen(ev)
        if con.pending_after:
            s = self.fmt_event(ev)
            keep = []
            for v in con.pending_after:
                v["events_after"].append(s)
                if len(v["events_after"]) < AFTER:
                    keep.append(v)
            con.pending_after = keep
        model = self.model
        if model.history(con, ev):
            con.recent.append(ev)
            if st is not None:
                self.hb_done(ev, st)
            return
        handler = model.HANDLERS[name]
        why = self.field_problem(ev)
        if why is not None:
            self.bad_event(con, ev, ValueError(why))
            return
        try:
            handler(model, con, ev)
        except (KeyError, ValueError) as e:
            self.bad_event(con, ev, e)
        else:
            model.applied(con, ev)
            if st is not None:
                # (a damaged event's stream may be wrong: not its last)
                self.hb_done(ev, st)
        model.transition_seen(con, ev)
        con.recent.append(ev)
        if self.on_event is not None:
            self.on_event(ev, con)

    def field_problem(self, ev):
        """Why a console event's fields are not what the tracepoints print
        (a value outside its set, a number that is not an unsigned
        decimal, a CPU the trace does not have, a console name that is
        none, a seq far above every stored record, a dropped count above
        the seq), or None."""
        cpus = self.cpus
        if cpus is not None and ev.cpu is not None and not 0 <= ev.cpu < cpus:
            return "event on CPU %d of a trace of %d CPUs" % (ev.cpu, cpus)
        f = ev.fields
        con = f.get("con")
        if con is not None and CON_NAME_RE.match(con) is None:
            return "con=%r is not a console name" % con[:20]
        for k, v in f.items():
            ok = FIELD_VALUES.get(k)
            if ok is not None:
                if v not in ok:
                    return "%s=%s is not one of %s" % (k, v[:20], "/".join(sorted(ok)))
            elif k in NUMBER_FIELDS:
                if not (v.isdigit() and v.isascii()):
                    return "%s=%s is not an unsigned number" % (k, v[:20])
            elif k in CPU_FIELDS:
                if not (v.isdigit() and v.isascii()) or (cpus is not None and int(v) >= cpus):
                    return "%s=%s is not a CPU of the trace" % (k, v[:20])
        if ev.name == "nobkl_acquire":
            why = self.acquire_problem(f)
            if why is not None:
                return why
        seq = f.get("seq")
        if seq is not None:
            # records are stored (traced) before they are printed, and a
            # console cannot skip more records than there are
            seq = int(seq)
            if self.max_stored is not None and seq > self.max_stored + SEQ_FAR:
                return "seq=%d is far above every record stored in the trace (up to %d)" \
                    % (seq, self.max_stored)
            if int(f.get("dropped", 0)) > seq:
                return "dropped=%s is more than the records before seq %d" % (f["dropped"], seq)
            if ev.name == "nobkl_commit" and not self.arch32:
                # on 64-bit the commit installs seq + 1 in the state
                # word's low half: the record carries its seq twice, and
                # a kernel cannot make the copies disagree
                n = f.get("new_state")
                if n is not None and n != "0" and (int(n) - seq - 1) & SEQ_IN_STATE:
                    return "seq=%d but new_state=%s moves the console to seq %d, not %d" % (
                        seq, n, int(n) & SEQ_IN_STATE, (seq + 1) & SEQ_IN_STATE)
        return None

    def acquire_problem(self, f):
        """Why an acquire's prev_* fields contradict the record itself, or
        None.  The kernel takes the hostile path only for a locked state
        word, and its cmpxchg succeeds only on the word it read
        (__cons_try_acquire()): `how=hostile` with `prev_locked=0` is no
        record the tracepoint can write.  A direct or hostile acquire
        reports the word it replaced twice, decoded in prev_* and whole
        in old_state (state bits: locked 2, thread 4, cur_prio 5-6, cpu
        9-25; the high half of a 64-bit word): the two disagreeing is a
        damaged record, whatever the chain says."""
        how = f.get("how")
        if how == "hostile" and f.get("prev_locked") == "0":
            return "how=hostile with prev_locked=0 (a takeover replaces a locked state word)"
        o, n = f.get("old_state"), f.get("new_state")
        if how == "handover" or o is None or n is None or o == n:
            return None
        w = int(o) if self.arch32 else int(o) >> 32
        word = {"prev_locked": str(w >> 2 & 1), "prev_thread": str(w >> 4 & 1),
                "prev_prio": PRIO_NAME[w >> 5 & 3], "prev_cpu": str(w >> 9 & 0x1ffff)}
        for k, v in word.items():
            if f.get(k) != v:
                return "%s=%s but old_state=%s has %s" % (k, f.get(k), o, v)
        return None

    def on_drop(self, d):
        """Trace data was lost: forget per-console state and resync.  The
        loss happened after the dropping CPU's last event before the
        marker."""
        self.trace_loss(d.cpu, None, d.text)

    def on_damage(self, d):
        """A nobkl event that could not be read (traceparse.Damage): the
        trace lost that event, at its own time when that was readable."""
        self.trace_loss(d.cpu, d.ts, d.text)

    def trace_loss(self, cpu, ts, text, place=None):
        """Events are missing from the trace here (on `cpu`, from `ts` on
        when known): forget per-console state and resync.  Violations
        found after the loss could have started are not the kernel's.
        `place`: the place before the loss in chain order
        (happens_before.py); None: loss_place(cpu), before the last
        events processed of that CPU (a drop marker, a damaged event:
        the damaged one is not processed)."""
        if place is None:
            place = self.loss_place(cpu)
        self.loss_at = place if self.loss_at is None else meet(self.loss_at, place)
        if ts is None:
            if cpu is not None and cpu in self.last_ts_cpu:
                ts = self.last_ts_cpu[cpu]
            elif cpu is not None:
                ts = self.first_ts if self.first_ts is not None else 0.0
            else:
                ts = min(self.last_ts_cpu.values()) if self.last_ts_cpu else 0.0
        if self.loss_start_ts is None or ts < self.loss_start_ts:
            self.loss_start_ts = ts
        self.loss_seen = True
        self.model.forget()
        self.store_holes.clear()
        if self.facts is not None:
            self.facts.mark("trace-loss", None, cpu, self.last_ts or 0.0, text)
        if self.serial is not None:
            self.serial.resync()

    # ------------------------------------------------------------- handlers
    def process_store(self, st):
        """process() of a nobkl_store (a Store): keep the record (time,
        text, level) until every console has passed it.  One function for
        the whole path, as three quarters of the events are stores."""
        self.cur_event = st
        _, cpu, ts, seq, length, level, caller, text = st
        if self.cpus is not None and not 0 <= cpu < self.cpus:
            self.bad_event(None, st, ValueError("nobkl_store on CPU %d of a trace of %d CPUs"
                                                % (cpu, self.cpus)))
            return
        if self.first_ts is None:
            self.first_ts = ts
        self.last_ts = ts
        self.last_ts_cpu[cpu] = ts
        if length != len(text):
            # the event's text is not the record (seen with an early
            # tracepoint that printed `caller=>c<84 text=9` for len=34)
            self.bad_event(None, st, ValueError(
                "nobkl_store seq=%d len=%d but the text has %d characters: %r"
                % (seq, length, len(text), text[:40])))
            return
        if text[:8] == "pstress ":
            why = stressor_text_damage(text)
            if why:
                self.bad_event(None, st, ValueError(
                    "nobkl_store seq=%d: the stressor record's own check fails (%s): %r"
                    % (seq, why, text[:60])))
                return
        if seq in self.dataless:
            self.bad_event(None, st, ValueError(
                "nobkl_store seq=%d of a record traced as data-less (nobkl_dataless)" % seq))
            return
        store = self.store
        if seq in store:
            self.store_continued(seq)
        else:
            self.records += 1
            if self.gave_up and seq in self.gave_up:
                self.store_after_overflow(seq)
            if not self.low_full or seq < self.low_seqs[-1]:
                self.keep_low_seq(seq)
            if caller[:1] == "T" and seq > self.task_store_max.get(cpu, -1):
                self.task_store_max[cpu] = seq
        store[seq] = (ts, text, level)
        self.stored_tail.append(st)
        if not self.pstress_printable and level < self.console_loglevel and \
                text.startswith("pstress "):
            self.pstress_printable = True
        if self.serial is not None:
            self.text_to_seq[text] = seq
        if self.store_min is None or seq < self.store_min:
            self.store_min = seq
        m = self.max_stored
        if not self.loss_seen:
            if self.first_stored is None or seq < self.first_stored:
                self.first_stored = seq
            if m is None or seq > m:
                if m is not None and seq > m + 1:
                    self.open_store_holes(m + 1, seq, ts)
                self.max_stored = seq
            elif self.store_holes:
                self.store_holes.pop(seq, None)
        elif m is None or seq > m:
            self.max_stored = seq
        if len(store) > self.store_cap:
            self.trim_store(force=True)
        if self.on_event is not None:
            self.on_event(st, None)

    def on_dataless(self, ev):
        """nobkl_dataless: prb_reserve() committed seq without text (the
        data ring had no room).  No nobkl_store comes for it; consoles
        skip it with a dropped count.  Its place in the order does not
        matter: check_store_holes() uses it at the end."""
        self.cur_event = ev
        seq = int_or_none(ev.fields.get("seq"))
        if seq is None or seq < 0:
            self.bad_event(None, ev, ValueError("seq=%r" % ev.fields.get("seq")))
            return
        if seq in self.store or seq in self.dataless:
            self.bad_event(None, ev, ValueError(
                "seq=%d is traced twice (a nobkl_store or nobkl_dataless before)" % seq))
            return
        self.dataless.add(seq)

    def open_store_holes(self, lo, hi, ts):
        """Seqs lo..hi-1 were not stored yet when seq hi was (at ts).  Two
        CPUs may commit their records in the other order than they
        reserved the seqs, so a hole may still be filled; what is left at
        the end is checked by check_store_holes()."""
        holes = self.store_holes
        for s in range(lo, min(hi, lo + HOLE_MAX)):
            holes[s] = ts

    def in_flight_max(self):
        """How many stores the trace's CPUs can have had in flight (reserved,
        not traced yet) at one moment."""
        cpus = self.cpus or (max(self.last_ts_cpu) + 1 if self.last_ts_cpu else 1)
        return IN_FLIGHT_PER_CPU * cpus

    def keep_low_seq(self, seq):
        """Keep the lowest in_flight_max() + 1 seqs stored (in order)."""
        low = self.low_seqs
        insort(low, seq)
        if len(low) > self.in_flight_max() + 1:
            low.pop()
            self.low_full = True

    def console_seq_seen(self, ev):
        """A console emitted or committed ev's seq on ev's CPU: the record
        and every one below it were stored before (a reader cannot pass a
        record that is reserved and not committed)."""
        seq = int_or_none(ev.fields.get("seq"))
        if seq is not None and seq > self.console_seq_max.get(ev.cpu, -1):
            self.console_seq_max[ev.cpu] = seq

    def hole_at_trace_edge(self, seq, cut_cpus):
        """Can the store of seq have fired outside the recorded trace, and
        not in it?  Every store in between went through the tracepoint,
        so a seq never stored between stored ones was stored
        - before tracing began: then every seq below it stored in the
          trace was reserved before and traced after the start, in flight
          then, so there are at most in_flight_max() of them;
        - after tracing ended: then no console event of the trace shows
          the record committed (a console's emission or commit of it or
          of a later seq);
        - or on a CPU whose recorded data ended before the trace's (in
          `cut_cpus`: the kernel buffer statistics count events of it not
          recorded; without statistics any CPU with events) after that
          end: then no event of that CPU shows it stored, no store of a
          later seq by a task there (only an NMI nests in the stretch
          between a store's reserve and its tracepoint) and no console
          emission or commit of it or a later seq there.
        None of these compares the clocks of two CPUs."""
        if bisect_left(self.low_seqs, seq) <= self.in_flight_max():
            return True
        if max(self.console_seq_max.values(), default=-1) < seq:
            return True
        for cpu in (self.last_ts_cpu if cut_cpus is None else cut_cpus):
            if self.task_store_max.get(cpu, -1) < seq and \
                    self.console_seq_max.get(cpu, -1) < seq:
                return True
        return False

    def check_store_holes(self, cut_cpus):
        """Every record is stored through the nobkl_store tracepoint
        (vprintk_store(), the only way into the ringbuffer), so a seq
        between two records stored in the trace must be stored in it too.
        A missing one means the trace lost that event (damaged input, not
        a kernel defect), unless its store can have fired before tracing
        began or after the recording of its CPU ended
        (hole_at_trace_edge()).  Not a hole: a record the kernel traced
        as data-less (nobkl_dataless) that no console emitted; one a
        console emitted had text, and its store, reserved while tracing
        (the data-less event fires in prb_reserve()), was lost."""
        for seq, ts in sorted(self.store_holes.items()):
            if seq in self.dataless:
                if seq not in self.emitted_unstored:
                    self.counts["store_holes_dataless"] += 1
                    continue
                # emitted, so it had text; reserved while traced, so its
                # store would be in the trace: lost
            elif self.hole_at_trace_edge(seq, cut_cpus):
                self.counts["store_holes_at_trace_edges"] += 1
                continue
            self.missing_store_count += 1
            if self.missing_store_ts is None or ts < self.missing_store_ts:
                self.missing_store_ts = ts
            if len(self.missing_stores) < 20:
                self.missing_stores.append((seq, ts))
        self.store_holes.clear()

    def untrusted_from(self):
        """The earliest time from which the trace may miss events (trace
        loss, damage, a missing store, a store listed after its event
        went on without it), or None: violations found later are not the
        kernel's.  By the CPUs' clocks: genuine() uses it only for a
        trace without the chain, which gives no other order."""
        ts = [t for t in (self.loss_start_ts, self.missing_store_ts, self.late_store_ts)
              if t is not None]
        return min(ts) if ts else None

    def stored_texts(self):
        """The texts of the records of the last STORED_TAIL stores, the
        last text of a seq stored again (LOG_CONT); ordered by seq."""
        last = {st[3]: st[7] for st in self.stored_tail}
        return [last[seq] for seq in sorted(last)]

    def store_continued(self, seq):
        """A continuation (LOG_CONT) extends the record: same seq again."""
        self.store_updates += 1
        old = self.store[seq][1]
        if self.text_to_seq.get(old) == seq:
            del self.text_to_seq[old]

    def trim_store(self, force=False):
        if not self.store:
            return
        if force:
            # keep the newest store_cap/2 records
            self.store_overflow += self.drop_store(None, self.store_cap // 2)
            return
        lo = None
        for c in self.consoles.values():
            if c.next_seq is None:
                continue
            v = c.next_seq
            if c.attempt is not None and c.attempt.outcome is None:
                v = min(v, c.attempt.seq)
            if lo is None or v < lo:
                lo = v
        if lo is None:
            return
        self.drop_store(lo, None)

    def drop_store(self, lo, keep):
        """Forget the lowest stored records: those below seq `lo` (None: no
        such bound), and more while over `keep` records (None: no limit).
        Returns how many were forgotten.  store_min stays the lowest
        stored seq (None when nothing is stored)."""
        store = self.store
        t2s = self.text_to_seq
        m = self.store_min
        n = 0
        while store and ((lo is not None and m < lo) or (keep is not None and len(store) > keep)):
            ent = store.pop(m, None)
            if ent is not None and t2s.get(ent[1]) == m:
                del t2s[ent[1]]
            n += 1
            m += 1
            if self.forgotten_below is None or m > self.forgotten_below:
                # an emission of a seq below it does not wait for its store
                self.forgotten_below = m
            if store and m not in store:
                m = min(store)
        self.store_min = m if store else None
        return n















    def late_damage(self, con, ev, why):
        """ev, an event processed earlier, is found damaged now: as
        bad_event() at ev's time, and the violations found since (they
        are not the kernel's) are marked as after the trace loss.  In
        chain order the loss is placed right before ev."""
        st = self.hb_of(ev)
        self.bad_event(con, ev, ValueError(why),
                       strictly_before(st) if st is not None else NOWHERE)
        for v in self.violations:
            if v["ts"] is not None and v["ts"] >= ev.ts:
                v["after_trace_loss"] = True

    def check_console_names(self):
        """A console whose only event in the trace comes after the events
        of another console whose name is one bit off its own is that
        console's event with a damaged name (`ttyS0` -> `ttyS4`, one
        flipped bit of a trace.dat): a console that is registered prints
        every record, as the other does, and the name of one that is not
        cannot be in an event.  Decided at the end of the trace."""
        for con in list(self.consoles.values()):
            ev = con.first_event
            if con.events != 1 or ev is None or ev.lineno in self.bad_lines:
                continue
            for other in self.consoles.values():
                fe = other.first_event
                if other is con or other.events < 2 or fe is None or fe.lineno > ev.lineno:
                    continue
                if one_bit_apart(con.name, other.name):
                    self.late_damage(con, ev, "con=%s, the only event of that console, is one "
                                     "bit off console %s (%d events from line %d on)"
                                     % (con.name, other.name, other.events, fe.lineno))
                    break








    # ----------------------------------------------------------------- end
    def finish(self, cut_cpus=None):
        """End of trace: settle pending state.  `cut_cpus`: the CPUs whose
        events were not all recorded (kernel buffer statistics), None
        when unknown (hole_at_trace_edge())."""
        self.flush_tie()
        self.flush_held()
        self.cur_event = None
        if len(self.consoles) > 1:
            self.check_console_names()
        self.check_store_holes(cut_cpus)
        self.model.finish(self.last_ts)

    def pending_records(self, con):
        """Stored records the console had not committed when the trace ended."""
        if con.next_seq is None:
            return []
        out = []
        for s in sorted(k for k in self.store if k >= con.next_seq):
            ts, text, level = self.store[s]
            if level < self.console_loglevel:
                out.append((s, text, ts))
        return out


def stressor_text_damage(text):
    """Why a stored stressor record text fails its own check (l= is the
    payload length, k= its crc, interfaces.md section 3), or None.  The
    stressor prints records that pass it, so a stored one that fails was
    damaged in the trace (a flipped bit): the trace is not trustworthy,
    the console is not to blame.  Texts of another shape are left to the
    serial check.  A version 2 record's k= covers all of it: any damage
    fails it."""
    if text[:12] == "pstress v=2 ":
        p = parse_pstress(text)
        return None if p[2] else p[3]
    i = text.find(" k=", 20)
    j = text.rfind(" l=", 20, i) if i > 0 else -1
    if j < 0 or text[i + 11:i + 12] != " ":
        return None
    ln = text[j + 3:i]
    crc = text[i + 3:i + 11]
    payload = text[i + 12:].encode("latin-1")
    if not ln.isdigit() or int(ln) != len(payload):
        return "payload length %d != l=%s" % (len(payload), ln)
    if "%08x" % (zlib.crc32(payload) ^ 0xFFFFFFFF) != crc:
        return "crc != k=%s" % crc
    return None


def one_bit_apart(a, b):
    """Whether names a and b differ in exactly one bit."""
    if len(a) != len(b):
        return False
    d = [x ^ y for x, y in zip(a.encode("latin-1"), b.encode("latin-1")) if x != y]
    return len(d) == 1 and d[0] & (d[0] - 1) == 0


def int_or_none(s):
    try:
        return int(s)
    except (TypeError, ValueError):
        return None
