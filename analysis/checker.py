"""Per-console timeline reconstruction and rule checks.

`Analyzer.feed()` takes the items produced by `traceparse.parse_lines()` in
trace order.  State is kept per console (current owner, the contexts that
owned it, pending handover requests/grants, the open emission attempt and
the next seq to commit) plus a window of stored record texts that the
consoles have not printed yet, so memory does not grow with the trace.

Ordering tolerance.  A tracepoint fires some time before or after the
cmpxchg it reports, so with a global clock the trace order of events of
*different* CPUs (or of an NMI and the context it interrupted) near an
ownership change is not the order of the state changes.  The checker
therefore trusts the `prev_*` fields of `nobkl_acquire` (the state word at
the successful cmpxchg) and accepts these reorders:

  * release of the old owner reported after the next direct acquire
    (`prev_locked=0`): the old owner is "release-pending" and must not
    emit or commit any more;
  * `nobkl_lost` of the victim reported before the taker's acquire;
  * an acquire reported after the hostile/handover acquire that took the
    console from it (the taker's prev_cpu/prev_prio name it);
  * `nobkl_handover_grant` reported before the waiter's request, or the
    waiter's handover acquire reported before the grant.

Events of one context are always in program order.  Every tolerance
granted here is a row of tolerances.py with its counter in `counts`.
"""

import re
import zlib
from collections import deque

from .rules import RFC_61, RULE_IDS, dispatch_table
from .trace_rules import Emission, Skip, Takeover
from .model import (PRIO, PRIO_NAME, OWNER, GRANTED, HANDED, LOST, RELPEND, RELEASED,
                    prio_rank, Attempt, Ctx, Console)
from .stats import LogHist
from .ordering import state_req_prio
from .serial import parse_pstress, pstress_id
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

PHANTOM_WINDOW = 0.5         # s: how late an acquire event may be traced (a vCPU whose
                             #    clock lags: 19 ms on a real run)
HELD_MAX = 100000            # console events held at most while one waits for its store
TIE_MAX = 100000             # events of one timestamp reordered at most
GRANT_WAIT = 0.5             # s: how late a handover grant may be traced after the acquire
STORE_HOLE_EDGE = 0.5        # s: a store missing this close to the trace's start or to
                             #    the end of a CPU's recorded data is not a hole
HOLE_MAX = 100000            # seqs followed at most as holes of one jump
TS_JUMP = 1.0                # s: a CPU's timestamps jumping forward this far are
                             #    remembered (a damaged page may be dated too late)
MAX_DETAIL = 25              # violations kept in detail per rule
AFTER = 3                    # and after it

# fact -> the trace units that judge it (rules.py, the one registry)
TRACE_UNITS = dispatch_table("trace_rules", RFC_61)


class Analyzer:
    def __init__(self, serial_console=None, facts=None, on_event=None, store_cap=500000,
                 console_loglevel=7, arch32=False):
        self.console_loglevel = console_loglevel
        self.arch32 = arch32
        self.race32 = 0
        self.pstress_printable = False
        self.suppressed = 0
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
        self.records = 0
        self.first_stored = None     # lowest seq stored in the trace before any trace loss
        self.max_stored = None       # highest seq stored in the trace
        self.store_holes = {}        # seq -> ts: not stored, but a higher seq was (at ts)
        self.dataless = set()        # seqs of nobkl_dataless: records without text
        self.emitted_unstored = set()  # seqs a console emitted before any store of them
        self.missing_stores = []     # (seq, ts) of holes the trace never filled
        self.missing_store_count = 0
        self.missing_store_ts = None # the earliest of them opened then
        self.store_updates = 0
        self.vcount = dict.fromkeys(RULE_IDS, 0)
        self.violations = []
        self.anomalies = []
        self.anomaly_count = 0
        self.bad_events = 0
        self.first_bad = None        # the message of the first of them
        self.bad_lines = set()       # their trace lines
        self.lat_handover = LogHist()
        self.lat_store_commit = LogHist()
        self.lat_timeout = LogHist()
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
        self.last_ts_cpu = {}
        self.last_ts = None
        self.first_ts = None
        self.cpus = None
        self.cur_event = None
        self.dropped_producer = {}   # producer -> set of n the console dropped
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

    def judge(self, fact, con, *args):
        """Hand a fact of the ownership model to the units that judge it
        (rules.consumers()): each reports through violate()."""
        for fn in TRACE_UNITS[fact]:
            fn(self, con, *args)

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
        rules, serialcheck.Blame)."""
        if at is not None:
            later = True
        else:
            ev = ev if ev is not None else self.cur_event
            later = ev is not self.cur_event
            at = (ev.ts, ev.lineno, ev.cpu, None) if ev is not None else None
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

    def bad_event(self, con, ev, e):
        """An event with a field value that is not what interfaces.md says:
        the trace is damaged there (verdict incomplete), and what the
        event did is unknown: as after trace loss, the consoles' state is
        forgotten, so nothing after it blames the kernel."""
        self.bad_events += 1
        self.bad_lines.add(ev.lineno)
        msg = "bad field value in %s at line %d: %s" % (ev.name, ev.lineno, e)
        if self.first_bad is None:
            self.first_bad = msg
        self.anomaly(con, msg)
        self.trace_loss(ev.cpu, ev.ts, "bad field value at line %d" % ev.lineno)

    def anomaly(self, con, msg):
        self.anomaly_count += 1
        if len(self.anomalies) < 50:
            ev = self.cur_event
            self.anomalies.append({"console": con.name if con else None,
                                   "line": ev.lineno if ev else None,
                                   "ts": ev.ts if ev else None, "message": msg})

    def ctx_of(self, con, ev):
        f = ev.fields
        key = (ev.cpu, f["ctx"], f["thread"])
        c = con.ctxs.get(key)
        if c is None:
            c = con.ctxs[key] = Ctx(key)
        c.prio = f["prio"]
        return c

    def end_interval(self, con, c, ts, how):
        c.end_how = how
        con.intervals += 1
        if self.facts is not None and c.since is not None:
            self.facts.interval(con.name, c.cpu, c.ctx, c.thread, c.prio, c.how,
                                c.since, ts, how)

    def finish_attempt(self, att, outcome):
        if att is None or att.outcome is not None:
            return
        att.outcome = outcome
        self.counts["attempts"][outcome] += 1
        if att.ctx.attempt is att:
            att.ctx.attempt = None
        if att.len == 0 and outcome == "commit":
            st = self.store.get(att.seq)
            if st is not None and st[2] < self.console_loglevel:
                self.judge("empty-commit", self.con(att.con), att, st[2])
        if self.serial is not None and att.con == self.serial_console:
            if att.len == 0:
                self.suppressed += 1      # nothing written (suppressed record)
                if outcome == "commit":
                    self.serial.suppressed(att)
            else:
                self.serial.attempt(att)

    def lose(self, con, c, state, ts, how):
        """Context c stops owning the console (state LOST/HANDED/...)."""
        if con.owner is c:
            con.owner = None
        c.state = state
        c.noticed = False
        self.end_interval(con, c, ts, how)
        c.lost_mid = c.attempt is not None and c.attempt.outcome is None
        if c.attempt is not None:
            self.finish_attempt(c.attempt, "lost" if state == LOST else
                                "handover" if state in (HANDED, GRANTED) else "abandoned")

    def adopt(self, con, c, ev):
        """First sight of a console: c owned it before the trace started."""
        con.last_owner = c
        c.state = OWNER
        c.how = "pre-trace"
        c.since = ev.ts
        c.lineno = ev.lineno
        c.pretrace = True
        con.owner = c
        con.started = True

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
        self.trace_loss(item.cpu, start, "CPU:%d timestamps go back from %.6f to %.6f at "
                        "line %s" % (item.cpu, last, item.ts, item.lineno))

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
        if self.first_ts is None:
            self.first_ts = ev.ts
        self.last_ts = ev.ts
        self.last_ts_cpu[ev.cpu] = ev.ts
        con = self.consoles.get(ev.fields["con"])
        if con is None:
            con = self.con(ev.fields["con"])
            con.first_event = ev
        con.events += 1
        if con.pending_after:
            s = self.fmt_event(ev)
            keep = []
            for v in con.pending_after:
                v["events_after"].append(s)
                if len(v["events_after"]) < AFTER:
                    keep.append(v)
            con.pending_after = keep
        if con.phantoms and name != "nobkl_acquire":
            # the named context goes on without the acquire the state
            # word promised: that acquire never comes
            k = (ev.cpu, ev.fields.get("prio"), int(ev.fields.get("thread", 0)))
            ph = con.phantoms.pop(k, None)
            if ph is not None and ph[3] is not None:
                self.owner_unexplained(con, ph[3])
        if con.late_commits:
            f = ev.fields
            lc = con.late_commits.get(con.ctxs.get((ev.cpu, f.get("ctx"), f.get("thread"))))
            if lc is not None and not (name == "nobkl_commit" and f.get("seq") == str(lc[1])):
                # the old owner's next event is not that commit
                self.late_commit_missing(con, lc[0])
        if self.chain_notes and self.chain_notes.get(ev.lineno) == "pre-chain":
            del self.chain_notes[ev.lineno]
            f = ev.fields
            o = con.owner
            if o is None or o.key != (ev.cpu, f.get("ctx"), f.get("thread")):
                # a transition from before the console's first traced one,
                # traced late (ordering.py): history before the trace, as
                # if the trace had begun after it
                self.counts["pre_chain_events"] += 1
                con.recent.append(ev)
                return
        handler = self.HANDLERS[name]
        why = self.field_problem(ev)
        if why is not None:
            self.bad_event(con, ev, ValueError(why))
            return
        try:
            handler(self, con, ev)
        except (KeyError, ValueError) as e:
            self.bad_event(con, ev, e)
        else:
            if con.lost_names and name == "nobkl_acquire":
                self.lost_owner_due(con, ev)
        if name == "nobkl_acquire" or (name == "nobkl_commit" and not self.arch32):
            # the owner's own transition: requests counted from here on
            # came during its next record (in chain order)
            c = con.ctxs.get((ev.cpu, ev.fields.get("ctx"), ev.fields.get("thread")))
            if c is not None:
                c.req_mark = con.request_count
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

    def trace_loss(self, cpu, ts, text):
        """Events are missing from the trace here (on `cpu`, from `ts` on
        when known): forget per-console state and resync.  Violations
        found after the loss could have started are not the kernel's."""
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
        for con in self.consoles.values():
            if con.attempt is not None and con.attempt.outcome is None:
                # unknown outcome; do not check it on the serial log
                con.attempt.outcome = "open"
                self.counts["attempts"]["open"] += 1
            con.reset()
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
        _, cpu, ts, seq, length, level, _, text = st
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
        store[seq] = (ts, text, level)
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

    def check_store_holes(self, tail_start):
        """Every record is stored through the nobkl_store tracepoint
        (vprintk_store(), the only way into the ringbuffer), so a seq
        between two records stored in the trace must be stored in it too.
        A missing one means the trace lost that event (damaged input, not
        a kernel defect).  Tolerated: holes opened within STORE_HOLE_EDGE
        of the trace's first event (a record committed just before tracing
        began, after a lower seq reserved earlier) and of `tail_start`,
        where the first CPU's recorded data ends (its records after that
        are in no trace).  Not a hole: a record the kernel traced as
        data-less (nobkl_dataless) that no console emitted."""
        first = self.first_ts if self.first_ts is not None else 0.0
        for seq, ts in sorted(self.store_holes.items()):
            if seq in self.dataless and seq not in self.emitted_unstored:
                self.counts["store_holes_dataless"] += 1
                continue
            if ts < first + STORE_HOLE_EDGE or \
                    (tail_start is not None and ts > tail_start - STORE_HOLE_EDGE):
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
        kernel's."""
        ts = [t for t in (self.loss_start_ts, self.missing_store_ts, self.late_store_ts)
              if t is not None]
        return min(ts) if ts else None

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

    def on_acquire(self, con, ev):
        f = ev.fields
        how = f["how"]
        if how == "handover":
            why = self.handover_prev_problem(con, ev)
            if why is not None:
                raise ValueError(why)
        c = self.ctx_of(con, ev)
        prio = f["prio"]
        thread = c.thread
        prev_locked = f["prev_locked"] == "1"
        prev_cpu = int(f["prev_cpu"])
        prev_prio = f["prev_prio"]
        prev_thread = int(f["prev_thread"])
        self.counts["acquire"][how] = self.counts["acquire"].get(how, 0) + 1
        con.acquires[how] = con.acquires.get(how, 0) + 1
        ts = ev.ts

        if how == "hostile":
            self.judge("hostile-acquire", con, Takeover(
                c, ev.cpu, prio, prev_locked, prio_rank(prev_prio),
                "cpu%d/%s" % (prev_cpu, prev_prio), prev_cpu, None))
        mark = f.get("unsafe_takeover")
        prev_unsafe = f.get("prev_unsafe") == "1"
        self.judge("acquire", con, c, how, prev_unsafe,
                   None if mark is None else mark == "1")
        con.unsafe_mark = con.unsafe_mark or mark == "1"     # sticky

        note = self.chain_notes.pop(ev.lineno, None) if self.chain_notes else None
        # A late acquire event: the console was already taken from it.
        ph = con.phantoms.pop((ev.cpu, prio, thread), None) if con.phantoms else None
        if ph is not None and self.acquire_traced_late(ph, how, ts, note):
            self.counts["acquires_traced_after_takeover"] += 1
            # taken by handover: its grant and release handover=1 follow
            c.late_grant = ph[1] == "handover"
            c.state = HANDED if c.late_grant else LOST
            c.how = how
            c.since = ts
            c.lineno = ev.lineno
            self.end_interval(con, c, ph[0], "handed over (acquire traced late)" if c.late_grant
                              else "taken over (acquire traced late)")
            self.owner_seen(con, ev.cpu, prio)
            return

        # A still-pending grant that nobody took?
        g = con.grant
        grant_lost = False
        if g is not None and not (how == "handover" and g["to_cpu"] == ev.cpu):
            if prev_locked and prev_cpu == g["to_cpu"] and prev_prio == g["to_prio"]:
                # The grant took effect (the state word names its target),
                # but the target had not picked the console up yet (its
                # vCPU not running) when a higher priority took it over;
                # the target then gives up (handover timeout).
                grant_lost = True
                self.counts["grants_taken_before_pickup"] += 1
                self.anomaly(con, "cpu%d/%s took the console (how=%s) that cpu%d had granted "
                             "to cpu%d/%s before the target picked it up"
                             % (ev.cpu, prio, how, g["from"].cpu, g["to_cpu"], g["to_prio"]))
            else:
                self.judge("handover:bypassed-grant", con, g, ev, how)
            con.grant = None
        if con.awaiting_grant and not self.causal_order:
            # the old owner's grant tracepoint fires after its cmpxchg and
            # may be traced late (its vCPU preempted in between: 41 ms on
            # a real run); by timestamps it must come within GRANT_WAIT.
            # In chain order only a handover acquire the chain could not
            # place waits (note "unchained": it saw a state from before its
            # console's first transition); its grant can only be a
            # transition from before the chain, listed anywhere, so it
            # waits for it until the trace ends (handover_acquire_ungranted
            # in finish()) or loses events, not for a time
            for vcpu, (w, wts) in list(con.awaiting_grant.items()):
                if ts - wts > GRANT_WAIT:
                    del con.awaiting_grant[vcpu]
                    self.judge("handover:overdue-grant", con, w, vcpu, ev, GRANT_WAIT)

        O = con.owner
        victim = O
        last = con.last_owner
        # A last owner that released cannot be the owner the state word
        # names: that is a new ownership of the same context whose acquire
        # is listed later (its CPU's clock lags behind)
        known_prev = (last is not None and last.cpu == prev_cpu and
                      last.thread == prev_thread and last.state != RELEASED)
        if O is c:
            self.judge("owner-acquire", con, Takeover(
                c, ev.cpu, prio, True, prio_rank(prio), c.label(), ev.cpu, c), how)
            victim = None
        elif prev_locked and con.started and not known_prev and \
                (O is None or O.cpu != prev_cpu or O.thread != prev_thread):
            # the state word names an owner whose acquire is not traced yet
            # (a grant's target: only its handover acquire can be that one).
            # The acquire that named it is kept to report it if it never
            # comes (owner_unexplained()), unless a grant installed that
            # owner (its target gave up before picking the console up), a
            # direct acquire found the word locked (one-owner judges
            # that), or a handover acquire's request-time state names the
            # last owner, which released (handover-target judges that)
            explained = grant_lost or how == "direct" or (
                how == "handover" and last is not None and
                (last.cpu, last.prio, last.thread) == (prev_cpu, prev_prio, prev_thread))
            con.phantoms[(prev_cpu, prev_prio, prev_thread)] = (
                ts, how, "handover" if grant_lost else None, None if explained else ev)
            if O is not None:
                self.anomaly(con, "acquire by cpu%d: state word owner cpu%d/%s, tracked owner %s"
                             % (ev.cpu, prev_cpu, prev_prio, O.label()))
        if O is None and con.expected_taker is not None:
            victim = con.expected_taker[2]
        elif O is None and prev_locked and known_prev and last.state in (GRANTED, HANDED, LOST):
            victim = last

        if how != "handover" and con.requests:
            # a waiter on this CPU that acquires otherwise gave up its request
            r = con.requests.get(ev.cpu)
            if r is not None and r["ctx"] == c.ctx:
                del con.requests[ev.cpu]
        if how == "direct":
            if prev_locked:
                self.judge("owner-acquire", con, Takeover(
                    c, ev.cpu, prio, True, prio_rank(prev_prio),
                    "cpu%d/%s" % (prev_cpu, prev_prio), prev_cpu, O), how)
                if O is not None and O is not c:
                    self.lose(con, O, RELPEND, ts, "overlapped by direct acquire")
            elif O is not None and O is not c:
                # release of O not traced yet
                self.counts["releases_traced_after_next_acquire"] += 1
                O.state = RELPEND
                con.owner = None
                self.end_interval(con, O, ts, "released")
        elif how == "hostile":
            # (always prev_locked: field_problem() takes a hostile acquire
            # of a free state word for a damaged record)
            self.counts["hostile_by_prio"][prio] = self.counts["hostile_by_prio"].get(prio, 0) + 1
            if f.get("ctx") == "nmi":
                self.counts["hostile_from_nmi"] += 1
            if prev_unsafe:
                self.counts["hostile_unsafe"] += 1
                if prev_locked and (mark is None or (mark == "1" and prio == "panic")):
                    # The old owner may still write the byte of its unsafe
                    # section (the documented last resort of panic output)
                    # until it notices the loss; where the kernel marks the
                    # takeovers it allows, only after those.
                    con.unsafe_victims[prev_cpu] = [victim, None, None]
                if prio != "panic":
                    self.anomaly(con, "hostile takeover by cpu%d/%s of an owner inside an unsafe "
                                 "section (the series allows that to panic output only)"
                                 % (ev.cpu, prio))
            vprio = prio_rank(prev_prio) if prev_locked else 0
            vlabel = "cpu%d/%s" % (prev_cpu, prev_prio)
            vcpu = prev_cpu if prev_locked else None
            if victim is not None and victim is not c:
                if prio_rank(victim.prio) > vprio:
                    vprio = prio_rank(victim.prio)
                vlabel = victim.label()
                vcpu = victim.cpu
            if vcpu == ev.cpu:
                self.counts["hostile_same_cpu"] += 1
            t = Takeover(c, ev.cpu, prio, prev_locked or victim is not None, vprio, vlabel,
                         vcpu, victim)
            self.judge("takeover", con, t)
            if self.facts is not None:
                self.facts.mark("hostile", con.name, ev.cpu, ts, "%s<-%s" % (prio, vlabel))
            if victim is not None and victim is not c and victim.state in (OWNER, GRANTED):
                self.lose(con, victim, LOST, ts, "taken over (hostile, %s cpu%d)" % (prio, ev.cpu))
            if victim is not None and victim is not c:
                victim.lost_to_cpu = ev.cpu
            elif victim is not None and victim is not c and victim.state == LOST:
                pass
        elif how == "handover":
            req = con.requests.pop(ev.cpu, None)
            self.judge("handover:acquire", con, c, ev, prev_cpu, req, prio)
            if req is not None and req["prio"] == prio and req["thread"] == thread:
                self.lat_handover.add((ts - req["ts"]) * 1e6)
            g = con.grant
            if g is not None:
                self.judge("handover:granted-acquire", con, g, c, ev, prio)
                con.grant = None
            elif O is not None and O is not c:
                if self.causal_order and note != "unchained":
                    # in chain order the grant that installed the state a
                    # handover acquire saw comes before it: none did
                    self.judge("handover:ungranted-acquire", con, c, ev, O)
                else:
                    con.awaiting_grant[O.cpu] = (c, ts)
            if victim is not None:
                # The series hands over mid-record only to a higher priority
                # (none above panic), but every release hands the console
                # to a pending waiter.
                t = Takeover(c, ev.cpu, prio, True, prio_rank(victim.prio), victim.label(),
                             victim.cpu, victim)
                self.judge("handover-takeover", con, t)
            if victim is not None and victim is not c and victim.state in (OWNER, GRANTED):
                self.lose(con, victim, HANDED, ts, "handed over to cpu%d" % ev.cpu)
            if self.facts is not None:
                self.facts.mark("handover", con.name, ev.cpu, ts, prio)
        else:
            self.anomaly(con, "unknown how=%s" % how)

        con.expected_taker = None
        c.acq_idx = con.owners_seen
        self.owner_seen(con, ev.cpu, prio)
        con.last_owner = c
        c.state = OWNER
        c.how = how
        c.since = ts
        c.lineno = ev.lineno
        c.pretrace = False
        c.lost_to_cpu = None
        con.owner = c
        con.started = True

    @staticmethod
    def handover_prev_problem(con, ev):
        """Why a handover acquire's prev_* fields contradict the trace
        itself, or None.  They describe the state the waiter saw when it
        requested the handover (the kernel's req_state), so they name the
        owner it requested from, which is the one that grants: an owner
        changes only by an acquire, which clears the request.  When the
        waiter's request names the granting owner (nobkl_handover_request
        owner_cpu, owner_prio) and the acquire another, two events of
        the trace agree against the acquire: it is damaged."""
        f = ev.fields
        g = con.grant
        grantor = g["from"] if g is not None and g["to_cpu"] == ev.cpu else con.owner
        req = con.requests.get(ev.cpu)
        if grantor is None or req is None or req["owner"] != (grantor.cpu, grantor.prio):
            return None
        if (int(f["prev_cpu"]), f["prev_prio"]) == req["owner"]:
            return None
        return ("prev_cpu=%s prev_prio=%s, but the waiter requested the console from %s "
                "(line %d), which granted it" % (f["prev_cpu"], f["prev_prio"],
                                                 grantor.label(), req["lineno"]))

    def acquire_traced_late(self, ph, how, ts, note):
        """Is this acquire the late event of the owner that an earlier
        acquire (phantom ph: time, how, "handover" when a grant to it was
        taken before pickup) named as the one it took the console from?
        In chain order only a handover acquire can be listed after the
        transition that ended its ownership (a transition links in its
        place), and the chain says it was: the state it saw had already
        been replaced.  In timestamp order (traces without the chain) it
        must come within PHANTOM_WINDOW."""
        if ph[2] is not None and ph[2] != how:
            return False
        if self.causal_order:
            return how == "handover" and note == "replaced"
        return ts - ph[0] < PHANTOM_WINDOW

    def check_owner(self, con, c, ev, what):
        """c does something only an owner may do.  Returns True when OK."""
        if con.owner is c and c.state == OWNER:
            return True
        if not con.started:
            self.adopt(con, c, ev)
            return True
        if (self.arch32 and c.state == LOST and ev.name == "nobkl_commit" and
                c.lost_to_cpu is not None and c.lost_to_cpu != ev.cpu and
                str(c.last_seq) == ev.fields.get("seq") and con.next_seq == c.last_seq):
            # seed patch 006: on 32-bit the seq is outside the state word;
            # an owner delayed (NMI) between its state check and the seq
            # cmpxchg commits after a remote takeover.  Documented
            # duplicate, never a loss.
            self.race32 += 1
            return False
        self.judge("action", con, c, ev, what)
        return False

    def on_release(self, con, ev):
        c = self.ctx_of(con, ev)
        self.counts["releases"] += 1
        handover = ev.fields["handover"] == "1"
        if c.attempt is not None and c.attempt.outcome is None:
            # Released in the middle of a record.  The series does that
            # when a higher-priority waiter requested a handover
            # (console_can_proceed) even if the waiter gave up meanwhile:
            # the reprint by the next owner is then a documented one.
            outcome = self.release_outcome(con, c.attempt, ev)
            if outcome == "handover":
                self.counts["releases_mid_record_on_request"] += 1
            self.finish_attempt(c.attempt, outcome)
        if c.state == RELPEND:
            c.state = RELEASED
            return
        if c.state in (HANDED, GRANTED) and handover:
            c.state = HANDED
            return
        if con.owner is c and c.state == OWNER:
            if handover:
                self.judge("handover:release", con, c, ev)
            self.lose(con, c, RELEASED, ev.ts, "released")
            return
        if not con.started:
            self.adopt(con, c, ev)
            self.lose(con, c, RELEASED, ev.ts, "released")
            return
        self.check_owner(con, c, ev, "release")
        if c.state != LOST:
            c.state = RELEASED

    def release_outcome(self, con, a, ev=None):
        """An owner released in the middle of record a: asked to (a
        waiter's request came during the record), else abandoned.  The
        proof is causal: the released state word still carries the
        request (`req_prio`), or in chain order a request came after the
        owner's last own transition before the record (on 64-bit its
        previous commit, on 32-bit its acquire).  Only a trace without
        the chain compares timestamps."""
        old = ev.fields.get("old_state") if ev is not None else None
        if con.requests or state_req_prio(old, self.arch32):
            return "handover"
        if self.causal_order and a.req_mark is not None:
            asked = con.request_count > a.req_mark
        else:
            asked = con.last_request_ts is not None and con.last_request_ts >= a.ts
        return "handover" if asked else "abandoned"

    def on_lost(self, con, ev):
        f = ev.fields
        c = self.ctx_of(con, ev)
        where = f["where"]
        lost = self.counts["lost"]
        lost[where] = lost.get(where, 0) + 1
        c.noticed = True
        self.check_lost_owner(con, c, ev)
        uv = con.unsafe_victims.get(ev.cpu)
        if uv is not None:
            # in chain order its byte may have hit any emission of the
            # owner its loss names: the loss is no transition, the chain
            # does not order it against that owner's emissions
            # (stray_possible()); in timestamp order the loss ends it
            op = f.get("owner_prio")
            if (not self.causal_order or op in (None, "none") or
                    not f.get("owner_cpu", "").isdigit()):
                del con.unsafe_victims[ev.cpu]
            else:
                uv[1] = (int(f["owner_cpu"]), op)
        if con.owner is c and c.state == OWNER:
            # the taker's acquire is not traced yet
            self.counts["losses_traced_before_takeover"] += 1
            self.lose(con, c, LOST, ev.ts, "lost (%s) to cpu%s/%s" % (where, f["owner_cpu"], f["owner_prio"]))
            c.lost_to_cpu = int(f["owner_cpu"])
            con.expected_taker = (int(f["owner_cpu"]), f["owner_prio"], c)
        elif c.state in (LOST, HANDED, GRANTED, RELPEND):
            if c.attempt is not None:
                self.finish_attempt(c.attempt, "lost")
        elif not con.started:
            self.adopt(con, c, ev)
            self.lose(con, c, LOST, ev.ts, "lost (%s)" % where)
        else:
            self.anomaly(con, "%s reported lost ownership it did not have" % c.label())

    def on_request(self, con, ev):
        f = ev.fields
        self.counts["handover_requests"] += 1
        thread = int(f["thread"])
        con.requests[ev.cpu] = {"prio": f["prio"], "thread": thread, "ts": ev.ts,
                                "ctx": f["ctx"], "lineno": ev.lineno,
                                "owner": (int(f["owner_cpu"]), f["owner_prio"])}
        con.last_request_ts = ev.ts
        con.request_count += 1
        g = con.grant
        if g is not None and not g["matched"] and g["to_cpu"] == ev.cpu:
            self.judge("handover:request-after-grant", con, g, ev, f["prio"])
            g["matched"] = True

    def on_timeout(self, con, ev):
        f = ev.fields
        self.counts["handover_timeouts"] += 1
        req = con.requests.pop(ev.cpu, None)
        con.last_request_ts = ev.ts
        try:
            self.lat_timeout.add(float(f["waited_us"]))
        except ValueError:
            pass
        if self.facts is not None:
            self.facts.mark("timeout", con.name, ev.cpu, ev.ts, f["prio"])

    def on_grant(self, con, ev):
        f = ev.fields
        c = self.ctx_of(con, ev)
        self.counts["handover_grants"] += 1
        to_cpu = int(f["to_cpu"])
        to_prio = f["to_prio"]
        aw = con.awaiting_grant.pop(ev.cpu, None) if con.awaiting_grant else None
        if aw is not None:
            # the waiter's acquire was traced first; c is the old owner
            self.counts["grants_traced_after_pickup"] += 1
            self.judge("handover:grant-after-acquire", con, c, ev, to_cpu, to_prio, aw[0])
            if c.state not in (HANDED, GRANTED, OWNER):
                self.check_owner(con, c, ev, "handover grant")
            c.state = HANDED
            return
        if c.late_grant and c.state == HANDED:
            # its acquire was traced after the waiter's handover acquire
            # that named it (see on_acquire): the grant is that handover
            c.late_grant = False
            return
        if not self.check_owner(con, c, ev, "handover grant"):
            return
        req = con.requests.get(to_cpu)
        matched = False
        if req is not None:
            matched = True
            self.judge("handover:grant", con, c, ev, to_cpu, to_prio, req)
        con.grant = {"from": c, "to_cpu": to_cpu, "to_prio": to_prio, "ts": ev.ts,
                     "matched": matched, "lineno": ev.lineno}
        self.owner_seen(con, to_cpu, to_prio)
        self.lose(con, c, GRANTED, ev.ts, "handed over to cpu%d" % to_cpu)

    def owner_seen(self, con, cpu, prio):
        """The trace shows (cpu, prio) owning the console (an acquire, or
        a grant to it): a loss that named it is explained."""
        con.owner_last[(cpu, prio)] = con.owners_seen
        con.owners_seen += 1
        if con.lost_names:
            con.lost_names = [x for x in con.lost_names if x[1] != (cpu, prio)]

    def check_lost_owner(self, con, c, ev):
        """A nobkl_lost names the owner the state word showed when the
        context noticed its loss (owner_cpu, owner_prio; none: free):
        the context itself (a failed seq update) or one that owned the
        console after the context acquired it.  Not known before the
        context's first traced acquire (the owner may have acquired
        before the trace).  One not shown yet waits in lost_names:
        (context, (cpu, prio), the loss)."""
        f = ev.fields
        op = f["owner_prio"]
        if op == "none" or c.acq_idx is None:
            return
        named = (int(f["owner_cpu"]), op)
        if named == (c.cpu, c.prio) or con.owner_last.get(named, -1) >= c.acq_idx:
            return
        con.lost_names.append((c, named, ev))

    def lost_owner_due(self, con, ev):
        """After acquire ev: a loss of the acquiring context whose named
        owner the trace has not shown never will be.  That owner took
        the console before the loss was noticed, so before this acquire:
        in chain order its acquire (or the grant to it) is a transition
        before this one; in timestamp order an acquire listed late is
        a phantom by now (this acquire, or the one before it, named it;
        owner_unexplained() reports it if it never comes)."""
        key = (ev.cpu, ev.fields.get("ctx"), ev.fields.get("thread"))
        late = {(k[0], k[1]) for k in con.phantoms}
        for x in [x for x in con.lost_names if x[0].key == key]:
            con.lost_names.remove(x)
            if x[1] not in late:
                self.owner_unexplained(con, x[2])

    def owner_unexplained(self, con, ev):
        """A state word named an owner that the trace never shows
        acquiring the console (no acquire of it, no grant to it): the
        prev_* fields of acquire ev or the owner_* of loss ev.  Every
        acquire is traced, so the trace lost that event or the name is
        damaged: incomplete input from ev on, not a kernel violation.
        After trace loss the model does not know every owner any more
        (the input is incomplete already): not judged there."""
        if self.loss_start_ts is not None and ev.ts >= self.loss_start_ts:
            return
        f = ev.fields
        if ev.name == "nobkl_lost":
            why = "owner_cpu=%s owner_prio=%s" % (f.get("owner_cpu"), f.get("owner_prio"))
        else:
            why = "prev_cpu=%s prev_prio=%s prev_thread=%s" % (
                f.get("prev_cpu"), f.get("prev_prio"), f.get("prev_thread"))
        self.late_damage(con, ev, "%s names an owner that the trace never shows acquiring "
                         "the console (no acquire, no grant to it)" % why)

    def late_damage(self, con, ev, why):
        """ev, an event processed earlier, is found damaged now: as
        bad_event() at ev's time, and the violations found since (they
        are not the kernel's) are marked as after the trace loss."""
        self.bad_event(con, ev, ValueError(why))
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

    def late_commit_missing(self, con, old):
        """The old owner's commit that would explain a skipped seq did not
        come as its next event: the skip is a loss after all."""
        lc = con.late_commits.pop(old)
        self.judge("skip", con, lc[3])

    def stray_possible(self, con):
        """May an owner taken over inside an unsafe section still write its
        byte into an emission starting now?  Until it traces its loss,
        however late that is (a preempted victim writes its byte when it
        runs again); if that was listed before the takeover (equal
        timestamps), only into the taker's first emission.  In chain
        order a loss that names the owner it saw (`owner_cpu`,
        `owner_prio`) ends it only with that owner's ownership: the loss
        is no transition, so only the clocks order it against that
        owner's emissions (the stress run of 2026-12-04 17:28 listed with CPU 1
        50 ms late has it before the emission of CPU 1 whose line the
        byte hit)."""
        stray = False
        o = con.owner
        for cpu, uv in list(con.unsafe_victims.items()):
            victim, named, seen = uv
            if named is not None:
                if o is not None and (o.cpu, o.prio) == named:
                    uv[2] = o
                elif seen is not None:
                    # that owner's emissions are over
                    del con.unsafe_victims[cpu]
                    continue
            elif victim is not None and victim.noticed:
                del con.unsafe_victims[cpu]
            stray = True
        return stray

    def on_emit(self, con, ev):
        f = ev.fields
        c = self.ctx_of(con, ev)
        seq = int(f["seq"])
        dropped = int(f["dropped"])
        self.counts["emits"] += 1
        con.emits += 1
        if seq not in self.store and self.first_stored is not None and \
                seq > self.first_stored and len(self.emitted_unstored) < HOLE_MAX:
            # not a data-less record, whatever the trace says (readers skip those)
            self.emitted_unstored.add(seq)
        if c.state == LOST and not c.noticed and con.started:
            # Taken over between its last ownership check and this
            # tracepoint: the old owner has not noticed yet and will at
            # its next check, before it writes a byte (the driver writes
            # inside unsafe sections).  Not an attempt of its own; a
            # commit by it is still an after-loss violation, and any
            # byte it printed shows up in the serial check.
            self.counts["stale_emits"] += 1
            return
        self.check_owner(con, c, ev, "emission of seq %d" % seq)
        if con.ghost_commit is not None and con.next_seq is not None and \
                seq == con.ghost_commit + 1 == con.next_seq + 1:
            con.committed = seq      # the non-owner's commit took effect (below)
        if con.committed is not None:
            self.judge("emission", con, ev, c, seq, dropped, con.committed)
        prev = con.attempt
        if prev is not None and prev.outcome is None:
            pc = prev.ctx
            if pc is c:
                self.finish_attempt(prev, "abandoned")
            elif pc.state == LOST:
                self.finish_attempt(prev, "lost")
            elif pc.state in (HANDED, GRANTED):
                self.finish_attempt(prev, "handover")
            else:
                self.finish_attempt(prev, self.release_outcome(con, prev))
        if con.first_seq is None:
            con.first_seq = seq
        reprint = False
        if con.ghost_commit is not None:
            if con.next_seq is not None and seq == con.ghost_commit + 1 == con.next_seq + 1:
                # the non-owner's commit took effect: already reported
                con.next_seq = seq
            con.ghost_commit = None
        if con.next_seq is None:
            self.first_record(con, seq, dropped, c, ev, "emission")
            con.next_seq = seq
        elif seq < con.next_seq:
            self.judge("reprint", con, Emission(c, ev.cpu, seq, con.next_seq, None))
        elif seq > con.next_seq:
            gap = seq - con.next_seq
            con.dropped_reported += dropped
            if dropped < gap:
                skip = Skip(ev, c, seq, dropped, con.next_seq)
                if prev is not None and prev.outcome == "lost" and prev.ctx is not c and \
                        prev.seq == con.next_seq and gap - dropped == 1:
                    # The old owner may have committed prev.seq just before
                    # the takeover and traced its commit late (seen on a
                    # real run: an NMI's commit traced 2 ms after the
                    # panic-priority taker's first emission of the next
                    # seq; a hardirq under a panic NMI on its own CPU
                    # traced it 2 s later).  Program order decides, not
                    # time: the commit must be that context's next event.
                    if prev.ctx in con.late_commits:
                        self.late_commit_missing(con, prev.ctx)
                    con.late_commits[prev.ctx] = (prev.ctx, prev.seq, ev.ts, skip)
                else:
                    self.judge("skip", con, skip)
            self.account_dropped(con, con.next_seq, seq)
            con.dropped_records += gap
            self.counts["dropped_records"] += gap
            con.next_seq = seq
        elif prev is not None and prev.seq == seq:
            # a reprint of the record the last attempt wrote
            self.judge("reprint", con, Emission(c, ev.cpu, seq, con.next_seq, prev))
            reprint = True
        if reprint:
            self.counts["reprints"] += 1
            con.reprints += 1
        st = self.store.get(seq)
        att = Attempt(con.name, seq, dropped, int(f["len"]), c, ev.ts, ev.lineno,
                      st[1] if st is not None else None)
        att.reprint = reprint
        att.req_mark = c.req_mark
        if con.unsafe_victims:
            att.stray_ok = self.stray_possible(con)
        con.attempt = att
        c.attempt = att
        c.last_seq = seq

    def first_record(self, con, seq, dropped, c, ev, what):
        """The console's first traced emission (or commit) is of `seq`.
        A record whose nobkl_store is in the trace was stored after the
        trace began, so the console cannot have printed it before: every
        seq from the first one stored in the trace up to `seq` must be
        counted by this emission's dropped count (the ringbuffer overwrote
        them before the console got there), else it is lost.  Not checked
        after trace loss (the console's state is unknown then)."""
        lo = self.first_stored
        if lo is None or self.loss_seen or seq <= lo:
            return
        gap = seq - lo
        counted = min(dropped, gap)
        if counted:
            self.account_dropped(con, seq - counted, seq)
            con.dropped_records += counted
            self.counts["dropped_records"] += counted
        self.judge("first-emission", con, ev, c, seq, dropped, lo, what)

    def account_dropped(self, con, lo, hi):
        if con.name != self.serial_console:
            return
        get = self.store.get
        acc = self.dropped_producer
        for s in range(lo, min(hi, lo + 100000)):
            st = get(s)
            if st is None:
                continue
            p = pstress_id(st[1])
            if p is not None:
                ns = acc.get(p[0])
                if ns is None:
                    ns = acc[p[0]] = set()
                ns.add(p[1])

    def on_commit(self, con, ev):
        f = ev.fields
        c = self.ctx_of(con, ev)
        seq = int(f["seq"])
        self.counts["commits"] += 1
        con.commits += 1
        lc = con.late_commits.get(c) if con.late_commits else None
        if lc is not None and lc[1] == seq:
            del con.late_commits[c]
            con.committed = max(con.committed or 0, seq + 1)
            self.counts["late_commits_after_takeover"] += 1
            con.dropped_records -= 1
            self.counts["dropped_records"] -= 1
            self.anomaly(con, "commit of seq %d by %s traced after the takeover by %s, whose "
                         "first emission (seq %d) shows the commit took effect before it"
                         % (seq, c.label(), lc[3].ctx.label(), seq + 1))
            return
        owner_ok = self.check_owner(con, c, ev, "commit of seq %d" % seq)
        att = c.attempt
        if att is None and con.attempt is not None and con.attempt.seq == seq and con.attempt.ctx is c:
            att = con.attempt
        if not owner_ok:
            # reported above; a commit by a non-owner does not move the
            # console's seq in our model (the owner's reprint is legal)
            if att is not None and att.outcome is None and att.seq == seq:
                self.finish_attempt(att, "lost")
            if con.next_seq is not None and seq == con.next_seq:
                con.ghost_commit = seq
            return
        first = con.next_seq is None
        if first:
            self.first_record(con, seq, 0, c, ev, "commit")
            con.next_seq = seq
        if seq < con.next_seq:
            self.judge("recommit", con, Emission(c, ev.cpu, seq, con.next_seq, None))
        else:
            self.judge("commit", con, ev, c, seq, con.next_seq)
        if att is None and first and c.pretrace:
            # the trace began between the emission and its commit: the
            # context owned the console before the trace (adopt())
            self.counts["commits_of_pretrace_emission"] += 1
        elif att is None or att.seq != seq:
            st = self.store.get(seq)
            if st is not None and st[2] >= self.console_loglevel:
                self.suppressed += 1      # below the console loglevel: not printed
            else:
                self.judge("unemitted-commit", con, ev, c, seq,
                           None if st is None else st[2])
        elif att.outcome is None:
            self.finish_attempt(att, "commit")
        if seq >= con.next_seq:
            con.next_seq = seq + 1
        con.committed = seq + 1
        con.last_commit = seq
        st = self.store.get(seq)
        if st is not None:
            self.lat_store_commit.add((ev.ts - st[0]) * 1e6)
        if self.store and self.store_min is not None and self.store_min < seq:
            self.trim_store()

    HANDLERS = {
        "nobkl_acquire": on_acquire,
        "nobkl_release": on_release,
        "nobkl_lost": on_lost,
        "nobkl_handover_request": on_request,
        "nobkl_handover_timeout": on_timeout,
        "nobkl_handover_grant": on_grant,
        "nobkl_emit": on_emit,
        "nobkl_commit": on_commit,
    }

    # ----------------------------------------------------------------- end
    def finish(self, tail_start=None):
        """End of trace: settle pending state.  `tail_start`: where the
        first CPU's recorded data ends, if some CPU's events were not all
        recorded (default: the earliest last event of a CPU)."""
        self.flush_tie()
        self.flush_held()
        self.cur_event = None
        if len(self.consoles) > 1:
            self.check_console_names()
        if tail_start is None and self.last_ts_cpu:
            tail_start = min(self.last_ts_cpu.values())
        self.check_store_holes(tail_start)
        for con in self.consoles.values():
            for old in list(con.late_commits):
                self.late_commit_missing(con, old)
            named = [ph[3] for ph in con.phantoms.values() if ph[3] is not None] + \
                [x[2] for x in con.lost_names]
            con.phantoms = {}
            con.lost_names = []
            for ev in named:
                self.owner_unexplained(con, ev)
            if con.grant is not None and not con.grant["matched"]:
                self.judge("trace-end:grant", con, con.grant)
            for w, _ in con.awaiting_grant.values():
                self.judge("trace-end:awaited-grant", con, w)
            if con.attempt is not None and con.attempt.outcome is None:
                self.finish_attempt(con.attempt, "open")
            for c in con.ctxs.values():
                if c.state == OWNER and con.owner is c:
                    self.end_interval(con, c, self.last_ts, "trace end")
        for name, con in self.consoles.items():
            pass

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
