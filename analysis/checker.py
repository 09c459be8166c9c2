"""The checker: it takes the trace's items, checks the fields of each
event, keeps the record window and the order of events, drives the
ownership model (model_rfc.py, model_nbcon.py) and hands it what it
reads of the trace and its sinks (model_io.py), never itself: among
them the sink for its facts (tell: the registry's dispatcher,
rules.Dispatch, which hands each fact to the units that judge it and
reports what they raise through raised()).

`Analyzer.feed()` takes the items produced by `traceparse.parse_lines()` in
trace order (or in chain order, ordering.py).  Besides the model's state
it keeps a window of stored record texts that the consoles have not
printed yet, so memory does not grow with the trace; events of one
timestamp (flush_tie()) and emissions whose store is listed later
(admit(), must_wait()) wait here before the model sees them.  Every
violation is reported here (violate()), with the console's events
around it; input found damaged (bad_event()) is trace loss, after which
the model forgets every console's state.

The checker is one object, Analyzer: its state is set up here (__init__
says what each part is), with the way in (feed(), admit(), process(),
finish()), what the model is handed (trace_state(), model_sinks()) and
what it hands back (attempt_ended()), and the way out to those who
follow it: callables the caller registers (on_model, on_serial_attempt,
on_trace_loss; api.py registers the serial alignment's), so the checker
names none of them.
Its jobs are classes of their own modules, each the methods of one job
over that state:

  validation.py     the fields of each event and stored record, input
                    found damaged or cut (bad_event(), trace_loss()):
                    incomplete input with a reason;
  admission.py      the order events reach the model in: a timestamp's
                    events (the tie), emissions waiting for their store;
  record_window.py  the records stored and not yet printed, the seqs
                    never stored (store holes);
  violations.py     a violation or anomaly as reported, with the events
                    around it;
  before_loss.py    whether a violation happened before every trace loss
                    (happens-before, or the clocks without the chain).

HELD_MAX stays here with admit(), the one place that reads it.
"""

from collections import OrderedDict, deque

from . import model_nbcon, model_rfc
from .admission import Admission
from .before_loss import HB_RECENT, BeforeLoss
from .bootlog import STORED_TAIL
from .record_window import RecordWindow
from .rules import NBCON_612, RFC_61, Dispatch, rules_of
from .tolerances import Tally
from .model import Console
from .model_io import Sinks, TraceState
from .traceparse import Damage, Drop, Event, Store
from .validation import Validation
from .violations import AFTER, Violations

HELD_MAX = 100000            # console events held at most while one waits for its store

# each kernel model's class (its facts go to the units that apply to it:
# rules.Dispatch)
MODELS = {
    RFC_61: model_rfc.RfcModel,
    NBCON_612: model_nbcon.NbconModel,
}


class Analyzer(Validation, Admission, RecordWindow, Violations, BeforeLoss):
    """The checker of one trace: its state, the way in and what the model
    hands back are here, its jobs are the classes it is made of (the
    module doc)."""

    def __init__(self, serial_console=None, recorder=None, on_event=None, store_cap=500000,
                 console_loglevel=7, arch32=False):
        self.console_loglevel = console_loglevel
        self.arch32 = arch32
        self.pstress_printable = False
        self.unwritten = 0            # followed serial console attempts that wrote nothing
        self.consoles = {}
        self.serial_console = serial_console
        # who follows the checker, each a list of callables the caller
        # registers (the checker knows none of them): the model applied
        # (name; use_model()), each emission attempt of the serial console
        # as it ended (att; attempt_ended()), trace loss (no argument;
        # trace_loss()); and whether a follower reads text_to_seq
        self.on_model = []
        self.on_serial_attempt = []
        self.on_trace_loss = []
        self.keep_texts = False
        # what the model emits besides the verdict: the ownership
        # intervals and marks (recorder.interval(), recorder.mark(); intervals.py)
        self.recorder = recorder
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
            "pre_chain_events": 0, "suppressed_records": 0, "race32_late_commits": 0,
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
        # producer -> set of n the serial console dropped: the analyzer's,
        # not a model's, since the serial alignment takes it before the
        # target (and so the model) is known; whichever model runs adds to it
        self.dropped_producer = {}
        # the ownership model: it keeps the consoles' state and hands
        # back facts (tell()), attempts and intervals
        self.use_model(RFC_61)

    def use_model(self, name):
        """Apply the ownership model `name` (rules.MODELS) to the events,
        before the first of them is fed."""
        m = self.model = MODELS[name](self.trace_state(), self.model_sinks(name),
                                      self.consoles, self.counts, self.recorder)
        self.model_name = name
        self.vcount = dict.fromkeys(rules_of(name), 0)
        self.lat_handover = m.lat_handover
        self.lat_store_commit = m.lat_store_commit
        self.lat_timeout = m.lat_timeout
        for fn in self.on_model:
            fn(name)

    def trace_state(self):
        """What a model reads of the trace (model_io.TraceState): what
        the trace changes as it goes on is read when the model asks."""
        return TraceState(
            arch32=self.arch32, console_loglevel=self.console_loglevel,
            store=self.store, chain_notes=self.chain_notes,
            first_stored=lambda: self.first_stored,
            loss_seen=lambda: self.loss_seen,
            serial_console=lambda: self.serial_console,
            causal_order=lambda: self.causal_order,
            not_before_loss=self.not_before_loss)

    def model_sinks(self, name):
        """Where what model `name` sees goes (model_io.Sinks): its facts
        to the units of that model (a dispatcher of its own), the
        tolerances it grants to the counter of the checker's counts,
        the rest to the checker."""
        return Sinks(
            tell=Dispatch(name, self.raised, Tally(self.counts)), anomaly=self.anomaly,
            late_damage=self.late_damage, keep_stamp=self.keep_stamp,
            emitted=self.emitted, attempt_ended=self.attempt_ended,
            records_passed=self.records_passed, dropped_producer=self.dropped_producer)

    @property
    def race32(self):
        """Late commits after a remote takeover that 32-bit allows."""
        return self.counts["race32_late_commits"]

    @property
    def suppressed(self):
        """Records the console did not print: below the console
        loglevel, or followed attempts of the serial console that wrote
        nothing."""
        return self.counts["suppressed_records"] + self.unwritten

    def con(self, name):
        c = self.consoles.get(name)
        if c is None:
            c = self.consoles[name] = Console(name)
            if self.serial_console is None:
                # the serial log belongs to the first ttyS* console; a trace
                # whose first console is something else uses that one
                self.serial_console = name
        return c

    def attempt_ended(self, att):
        """An emission attempt ended (att.outcome): the serial console's
        go to its followers (on_serial_attempt)."""
        if not self.on_serial_attempt or att.con != self.serial_console:
            return
        if att.len == 0:
            self.unwritten += 1           # nothing written (suppressed record)
        for fn in self.on_serial_attempt:
            fn(att)

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
