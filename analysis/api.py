"""Run the whole analysis on a results directory and build the verdict.

analyse() is one pass, in this order:
  1. the inputs (inputs.py): the trace (trace.dat, else a `trace-cmd
     report` text), the serial log, what the run saved next to them
     (kernel.config, source.json, printk.txt, stats.txt); input that
     cannot be read raises InputError, whose verdict is error_verdict();
  2. the trace's events, read by libtracecmd or parsed from the text
     (traceparse.py, tracedat.py), go through the ordering stage
     (ordering.CausalOrder: the console events in chain order) to the
     checker (checker.Analyzer and its model), which raises the rules'
     violations, with the serial check (serialcheck.SerialChecker)
     following the commits on the serial log; the intervals and marks
     the model emits go to `recorder` (intervals.Recorder).  The checker
     names nothing that follows it: the serial check and the emergency
     figures read it through narrow views built here (SerialRecords,
     CheckerConsoles), and it hands its events on through the
     callables registered on it here;
  3. the stressor's end lines (selfcheck.check()) and its records in
     fragments, from the stores the checker handed on (cont_fragments.py);
  4. the verdict: what was collected (verdict.Collected) is judged by
     the table of verdict.py and folded into one outcome (fold.py),
     then the dict is written around it (verdict.build_verdict());
     figures that judge nothing (latencies, findings, hand-offs, the
     CPUs' buffer statistics) are added to it last, and every emergency
     record past the RFC's bound goes to `late_file` when it is given.
"""

import os
import time

from .checker import Analyzer
from .console_output import OUTPUT
from .emergency import EmergencyDelay
from .emergency_report import named_only, write_late
from .cont_fragments import Fragments, read_expected
from .handoffs import Handoffs
from .inputs import (choose_reader, cpus_ended_early, cut_cpus, detect_arch32, detect_loglevel,
                     detect_target, read_cpu_stats, read_stressor_stats, resolve_inputs,
                     unrecorded, validate_serial)
from .nbcon_order import NbconOrder
from .ordering import CausalOrder
from .rules import NBCON_612, RFC_61
from .serialcheck import Records, SerialChecker
from . import selfcheck
from .report_source import ReportSource
from .traceparse import Damage, Drop, InputError, ReportStats, parse_lines
from . import nbcon_events
from . import tracedat
from . import tracedat_layout
from .verdict import Collected, build_verdict, error_verdict


# how the events of different CPUs may be ordered: "chain" (default) only
# by the console state words; "timestamps" also by the CPUs' clocks for a
# trace without them, which only the user may ask for (a clock offset
# between CPUs can make such a verdict pass or fail)
ORDERS = ("chain", "timestamps")


def trace_target(named, stats):
    """The target of the trace read: its events' (stats.target), which
    must be the one source.json names (`named`) when it names one."""
    seen = stats.target
    if named is not None and seen is not None and seen != named:
        raise InputError("source.json names the %s kernel but the trace has the %s "
                         "kernel's events" % (named, seen))
    return seen or named


# the model and the ordering stage of each target
TARGET_MODEL = {nbcon_events.RFC_TARGET: RFC_61, nbcon_events.NBCON_TARGET: NBCON_612}


class TargetFront:
    """In front of the ordering stage: the reader's items wait here until
    the target is known (source.json names it, or the first console event
    read tells it), which decides the checker's model and the ordering
    stage; a trace without console events is the 6.1 target's."""

    def __init__(self, an, stats, named, arch32):
        self.an, self.stats, self.named, self.arch32 = an, stats, named, arch32
        self.pending = []
        self.order = None

    def feed(self, item):
        if self.order is None:
            target = self.named or self.stats.target
            if target is None:
                self.pending.append(item)
                return
            self.start(target)
        self.order.feed(item)

    def start(self, target):
        an = self.an
        if TARGET_MODEL[target] != an.model_name:
            an.use_model(TARGET_MODEL[target])
        if target == nbcon_events.NBCON_TARGET:
            self.order = NbconOrder(an.feed, on_chain=an.take_causal_order)
        else:
            self.order = CausalOrder(an.feed, arch32=bool(self.arch32),
                                     on_read=an.check_read_order,
                                     on_chain=an.take_causal_order, notes=an.chain_notes,
                                     stamps=an.hb_stamps)
        an.read_order_here = False
        pending, self.pending = self.pending, []
        for item in pending:
            self.order.feed(item)

    def stage(self):
        """The ordering stage, once the whole trace is read."""
        if self.order is None:
            self.start(self.named or self.stats.target or nbcon_events.RFC_TARGET)
        return self.order


class CheckerConsoles:
    """What the emergency figures read of the checker, and only that
    (emergency.EmergencyDelay's view): its consoles (name ->
    model.Console, the dict the checker never replaces) and the serial
    console's name, read when asked."""

    def __init__(self, an):
        self._an = an
        self.consoles = an.consoles

    @property
    def serial_console(self):
        return self._an.serial_console


class SerialRecords(Records):
    """What the serial alignment reads of the checker, and only that
    (serialcheck.Records): the alignment is handed this, never the
    checker.  The dicts are the checker's own (it never replaces them);
    the rest is read when asked, as the trace goes on."""

    def __init__(self, an):
        self._an = an
        self.text_to_seq = an.text_to_seq
        self.dropped_producer = an.dropped_producer
        self.console_loglevel = an.console_loglevel

    def level(self, seq):
        st = self._an.store.get(seq)
        return st[2] if st is not None else None

    @property
    def serial_console(self):
        return self._an.serial_console

    def serial_state(self):
        an = self._an
        return an.consoles.get(an.serial_console)

    @property
    def pstress_printable(self):
        return self._an.pstress_printable

    @property
    def loss_seen(self):
        return self._an.loss_seen


def _damaged_line(item, damage, stats):
    """The Damage the C reader found for the record the text reader read
    as `item`, counted as a malformed line (once)."""
    if type(item) is not Damage:
        stats.malformed += 1
        if len(stats.malformed_examples) < 5:
            stats.malformed_examples.append(damage.text)
    return damage


def analyse(path=None, report=None, serial=None, no_serial=False, serial_console=None,
            trace_cmd=None, check_post=True, recorder=None, console_loglevel=None, arch32=None,
            reader=None, order=None, late_file=None):
    """Run the analysis.  Returns (verdict dict, analyzer).  Raises
    InputError for unusable input.  `order` (ORDERS, default "chain"):
    "timestamps" judges a trace without the state words by the CPUs'
    clocks instead of calling it incomplete.  `recorder` takes the
    ownership intervals and marks the model emits, and with event()
    every event after the model took it (intervals.Recorder).
    `late_file`: a path that gets every emergency record past the RFC's
    bound (emergency_report.write_late()); the verdict names the
    furthest of each console."""
    t0 = time.time()
    order = order or "chain"
    if order not in ORDERS:
        raise InputError("unknown order %r (one of: %s)" % (order, ", ".join(ORDERS)))
    path = os.fspath(path) if path is not None else None
    report = os.fspath(report) if report is not None else None
    serial = os.fspath(serial) if serial is not None else None
    trace_dat, report, serial = resolve_inputs(path, report, serial, no_serial)
    serial_counts = validate_serial(serial) if serial else None
    rdir = path if path and os.path.isdir(path) else os.path.dirname(trace_dat or report or "")
    if arch32 is None:
        arch32 = detect_arch32(rdir)
    if console_loglevel is None:
        console_loglevel = detect_loglevel(rdir)
    named_target = detect_target(rdir)
    handoffs = Handoffs()
    fragments = Fragments(read_expected(os.path.join(rdir or ".", "stats.txt")))
    frag_store = fragments.on_store
    record_event = getattr(recorder, "event", None)

    def hook(item, con):
        # called for every event (stores are most of them): keep it short;
        # em_store, em_event and ho_event are bound below, with the
        # emergency figures that read the checker's consoles
        if con is None:
            em_store(item)
            frag_store(item)
        else:
            ho_event(item, con)
            em_event(item, con)
        if record_event is not None:
            record_event(item, con)
    an = Analyzer(serial_console=serial_console, recorder=recorder, on_event=hook,
                  console_loglevel=console_loglevel, arch32=bool(arch32))
    emergency = EmergencyDelay(CheckerConsoles(an))
    em_store, em_event, ho_event = emergency.on_store, emergency.on_event, handoffs.on_event
    sc = None
    stressor = None
    if serial:
        sc = SerialChecker(serial, SerialRecords(an), an.violate, OUTPUT[an.model_name])
        an.keep_texts = True
        an.on_model.append(lambda name: sc.use_output(OUTPUT[name]))
        an.on_serial_attempt.append(sc.attempt_ended)
        an.on_trace_loss.append(sc.resync)
        stressor = read_stressor_stats(rdir)
        if stressor:
            sc.set_expected(stressor["producers"])
    stats = ReportStats()
    # the console events in causal order (ordering.py, or for the 6.12
    # target nbcon_order.py), then the checker with the target's model;
    # the items wait in `front` until the target is known
    front = TargetFront(an, stats, named_target, arch32)
    feed = front.feed
    if trace_dat is not None:
        # before libtracecmd opens it: some damage crashes tracecmd_open()
        why = tracedat_layout.structure_problem(trace_dat)
        if why:
            raise InputError(why)
    cpu_stats = read_cpu_stats(trace_dat)
    for cpu, d in sorted((cpu_stats or {}).items()):
        lost = unrecorded(d)
        if d["first_ts"] is None and lost:
            # a CPU whose events the kernel had but trace-cmd did not record
            feed(stats.add_drop(Drop(0, cpu, lost, "CPU:%d [NO EVENTS RECORDED: %d in the "
                                     "kernel buffer]" % (cpu, lost))))
    if choose_reader(trace_dat, trace_cmd, reader) == "libtracecmd":
        src = tracedat.DatReader(trace_dat)
        with src:
            src.feed(feed, stats)
        if stats.events == 0 and stats.other_events == 0:
            raise InputError("libtracecmd read no records from %s: truncated or empty "
                             "trace" % trace_dat)
    else:
        # the 6.12 events' context is only in the latency column
        src = ReportSource(trace_dat=trace_dat, report_file=report, trace_cmd=trace_cmd,
                           latency=named_target == nbcon_events.NBCON_TARGET)
        # records that `trace-cmd report` prints as plausible events but
        # the C reader finds damaged: the same Damage in both readers
        damaged = tracedat.record_damage(trace_dat) if trace_dat is not None else {}
        with src as lines:
            for item in parse_lines(lines, stats):
                if damaged and item.lineno in damaged:
                    item = _damaged_line(item, damaged.pop(item.lineno), stats)
                feed(item)
            src.finish()
    if stats.cpus is None and stats.events == 0:
        if trace_dat:
            raise InputError("trace-cmd report gave no data for %s: truncated or not a "
                             "trace.dat file" % trace_dat)
        raise InputError("%s is not a trace-cmd report (no cpus= header, no events)" % report)
    target = trace_target(named_target, stats)
    causal = front.stage()
    nobkl = stats.events
    if nobkl == 0:
        raise InputError("no nobkl_* events in the trace (kernel without the tracepoints, or "
                         "not recorded with -e printk)%s" %
                         ("; %d malformed nobkl lines" % stats.malformed if stats.malformed else ""))
    causal.finish()
    if not an.consoles and not an.held:
        raise InputError("the trace has %d nobkl_store events but no console events "
                         "(nobkl_acquire/emit/commit): events not enabled?" % an.records)
    for cpu, got, last in cpus_ended_early(cpu_stats, stats.cpu_last_ts):
        feed(stats.add_drop(Drop(stats.lines + 1, cpu, None, "CPU:%d [RECORDS END EARLY: "
                                 "read up to %s, the file's last record at %s]"
                                 % (cpu, got, last))))
    an.finish(cut_cpus(cpu_stats))
    serial_con = an.serial_console
    if sc is not None:
        post = []
        if serial_con in an.consoles:
            post = an.pending_records(an.consoles[serial_con])
        trace_ok = not an.loss_seen and not stats.truncated_last_line and not stats.malformed
        sc.finish(post, check_post=check_post and trace_ok)
    fragments.finish(an, an.loss_seen)
    stressor_end = selfcheck.check(an, rdir, serial)
    by_clocks = order == "timestamps"
    verdict = build_verdict(Collected(an, stats, sc, stressor_end, causal, by_clocks),
                            src.description, serial, serial_counts, trace_dat, report)
    causal.annotate(verdict, by_clocks=by_clocks)
    verdict["latency"]["emergency_store_to_console"] = emergency.summary()
    verdict["latency"]["store_to_console"] = emergency.per_console()
    past_bound = emergency.past_bound()
    verdict["latency"]["emergency_past_bound"] = named_only(past_bound)
    if late_file is not None:
        verdict["emergency_late_file"] = write_late(late_file, past_bound)
    verdict["findings"] = {"emergency_behind_lower_prio": emergency.findings()}
    verdict["handoffs"] = handoffs.summary()
    verdict["cont_fragments"] = fragments.summary()
    verdict["inputs"]["target"] = target
    verdict["trace"]["trace_cmd_stderr"] = src.stderr_lines
    if cpu_stats is not None:
        verdict["trace"]["cpu_stats"] = {str(c): d for c, d in sorted(cpu_stats.items())}
        ends = [d["last_ts"] for d in cpu_stats.values() if d["last_ts"] is not None]
        verdict["trace"]["recorded_end_spread_s"] = \
            round(max(ends) - min(ends), 6) if ends else None
    verdict["analysis_seconds"] = round(time.time() - t0, 3)
    return verdict, an


def check_results(path, **kw):
    """Analyse RESULTS_DIR and return the verdict dict (never raises for
    bad input: returns verdict "incomplete" with "error" and exit_code 2)."""
    try:
        verdict, _ = analyse(path, **kw)
        return verdict
    except InputError as e:
        return error_verdict(str(e))
