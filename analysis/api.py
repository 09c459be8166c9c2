"""Run the whole analysis on a results directory and build the verdict.

analyse() is one pass, in this order:
  1. the inputs: the trace (trace.dat, else a `trace-cmd report` text),
     the serial log, what the run saved next to them (kernel.config,
     printk.txt, stats.txt); input that cannot be read raises
     InputError, whose verdict is error_verdict();
  2. the trace's events, read by libtracecmd or parsed from the text
     (traceparse.py, tracedat.py), go through the ordering stage
     (ordering.CausalOrder: the console events in chain order) to the
     checker (checker.Analyzer and its model), which raises the rules'
     violations, with the serial check (serialcheck.SerialChecker)
     following the commits on the serial log; the intervals and marks
     the model emits go to `facts` (intervals.Recorder).  The checker
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
     CPUs' buffer statistics) are added to it last.
"""

import json
import os
import time

from .checker import Analyzer
from .console_output import OUTPUT
from .emergency import EmergencyDelay
from .cont_fragments import Fragments, read_expected
from .handoffs import Handoffs
from .nbcon_order import NbconOrder
from .ordering import CausalOrder
from .rules import NBCON_612, RFC_61
from .serialcheck import Records, SerialChecker
from . import selfcheck
from .serial import scan_serial, REC
from .traceparse import Damage, Drop, InputError, ReportSource, ReportStats, parse_lines
from . import nbcon_events
from . import tracedat
from .verdict import Collected, build_verdict, error_verdict

READERS = ("auto", "libtracecmd", "text")

# how the events of different CPUs may be ordered: "chain" (default) only
# by the console state words; "timestamps" also by the CPUs' clocks for a
# trace without them, which only the user may ask for (a clock offset
# between CPUs can make such a verdict pass or fail)
ORDERS = ("chain", "timestamps")

TRACE_TEXT_NAMES = ("trace.txt", "trace.report", "report.txt")

def resolve_inputs(path, report=None, serial=None, no_serial=False):
    """(trace_dat, report_file, serial_path) for a results dir or files."""
    trace_dat = None
    if report is None:
        if path is None:
            raise InputError("no results directory or --report given")
        if os.path.isfile(path):
            if path.endswith(".dat"):
                trace_dat = path
            else:
                report = path
            path = os.path.dirname(path) or "."
        elif not os.path.isdir(path):
            raise InputError("results directory %s does not exist" % path)
        else:
            cand = os.path.join(path, "trace.dat")
            if os.path.exists(cand):
                trace_dat = cand
            else:
                for n in TRACE_TEXT_NAMES:
                    if os.path.exists(os.path.join(path, n)):
                        report = os.path.join(path, n)
                        break
                else:
                    raise InputError("missing trace: no trace.dat (or %s) in %s"
                                     % (" / ".join(TRACE_TEXT_NAMES), path))
    if report is not None and not os.path.isfile(report):
        raise InputError("missing report file %s" % report)
    if no_serial:
        serial = None
    elif serial is None:
        base = path if path is not None and os.path.isdir(path) else os.path.dirname(report or "") or "."
        serial = os.path.join(base, "console.log")
        if not os.path.isfile(serial) and os.path.isfile(serial + ".xz"):
            serial += ".xz"     # a run kept compressed (tests/data)
        if not os.path.isfile(serial):
            raise InputError("missing serial log %s (use --no-serial to check the trace only)" % serial)
    elif not os.path.isfile(serial):
        raise InputError("missing serial log %s" % serial)
    return trace_dat, report, serial


def choose_reader(trace_dat, trace_cmd=None, reader=None):
    """How to read the trace: "libtracecmd" (trace.dat through the C extension _datreader) or
    "text" (`trace-cmd report` output).  `reader` (else $ANALYSIS_READER,
    else "auto"): "auto" reads a trace.dat with libtracecmd unless a
    trace-cmd binary was named (--trace-cmd, $ANALYSIS_TRACE_CMD) or the
    library cannot be loaded; a report file is always text."""
    reader = reader or os.environ.get("ANALYSIS_READER") or "auto"
    if reader not in READERS:
        raise InputError("unknown reader %r (one of: %s)" % (reader, ", ".join(READERS)))
    if trace_dat is None or reader == "text":
        return "text"
    if reader == "libtracecmd":
        why = tracedat.unavailable_reason()
        if why:
            raise InputError(why)
        return "libtracecmd"
    if trace_cmd or os.environ.get("ANALYSIS_TRACE_CMD"):
        return "text"
    return "libtracecmd" if tracedat.available() else "text"


def read_cpu_stats(trace_dat):
    """tracedat.cpu_summary() of a trace.dat (whichever reader reads the
    events), or None without the library or for a report file."""
    if trace_dat is None or not tracedat.available():
        return None
    try:
        return tracedat.cpu_summary(trace_dat)
    except (OSError, ValueError):
        return None


def unrecorded(d):
    """Events of one CPU that the kernel buffer statistics count but
    trace-cmd did not record (left in the buffer, overwritten, dropped)."""
    return d.get("entries", 0) + d.get("overrun", 0) + d.get("dropped_events", 0)


def cpus_ended_early(cpu_stats, cpu_last_ts):
    """CPUs whose records the reader stopped reading before the file's last
    record of that CPU (a damaged page: libtracecmd and `trace-cmd report`
    silently end that CPU there).  [(cpu, read up to, file's last)]."""
    out = []
    for cpu, d in sorted((cpu_stats or {}).items()):
        if d["first_ts"] is None:
            continue
        got = cpu_last_ts.get(cpu)
        if d["last_ts"] is None or got is None or got < d["last_ts"]:
            out.append((cpu, got, d["last_ts"]))
    return out


def cut_cpus(cpu_stats):
    """The CPUs whose recorded data may end before the trace's: the kernel
    buffer statistics count events of them that were not recorded; None
    without statistics."""
    if not cpu_stats:
        return None
    return {cpu for cpu, d in cpu_stats.items() if unrecorded(d)}


def detect_arch32(d):
    """True when RESULTS_DIR/kernel.config is a 32-bit config (the seq is
    then outside the console state word, seed patch 006)."""
    try:
        with open(os.path.join(d or ".", "kernel.config")) as f:
            cfg = f.read()
    except OSError:
        return False
    return "CONFIG_64BIT=y" not in cfg and ("CONFIG_X86_32=y" in cfg or "CONFIG_64BIT" in cfg)


def detect_target(d):
    """The kernel target RESULTS_DIR/source.json names (`target`: "6.1",
    "6.12"), or None when it names none (an older run, a report file)."""
    try:
        with open(os.path.join(d or ".", "source.json")) as f:
            t = json.load(f).get("target")
    except (OSError, ValueError, AttributeError):
        return None
    return t if t in (nbcon_events.RFC_TARGET, nbcon_events.NBCON_TARGET) else None


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


def detect_loglevel(d):
    """console_loglevel from RESULTS_DIR/printk.txt (/proc/sys/kernel/printk,
    saved by the scenarios), else the kernel default 7."""
    try:
        with open(os.path.join(d or ".", "printk.txt")) as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 7


def read_stressor_stats(d):
    """Producers of the stressor run from RESULTS_DIR/stats.txt (the
    module's `stats` file, docs/stressor.md): {(run, cpu, ctx, writer):
    (attempted, stored)} ((run, cpu, ctx) in a stats file of before the
    records named their writer), or None when there is no stats.txt or it
    names no producer.  A stats.txt that is not the module's (its first
    line is not `run=N ...`, a producer line does not parse, stores more
    than it attempted, or names a producer twice) is unusable input: the
    producers it would have told about are not checked, and that must not
    pass as a complete check (InputError)."""
    path = os.path.join(d or ".", "stats.txt")
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError:
        return None

    def bad(why):
        return InputError("%s is not the stressor's stats (%s): garbage or damaged file"
                          % (path, why))
    try:
        lines = raw.decode("ascii").splitlines()
    except UnicodeDecodeError:
        raise bad("not ASCII text")
    head = dict(t.split("=", 1) for t in lines[0].split() if "=" in t) if lines else {}
    if "run" not in head or not lines[0].startswith("run=") or not head["run"].isdigit():
        raise bad("its first line is not `run=N state=...`: %r" % (lines[0][:40] if lines
                                                                     else ""))
    run = int(head["run"])
    prods = {}
    for i, ln in enumerate(lines[1:], 2):
        if not ln.startswith("producer "):
            continue
        kv = dict(t.split("=", 1) for t in ln.split()[1:] if "=" in t)
        try:
            prod = (run, int(kv["cpu"]), kv["ctx"])
            if "writer" in kv:
                prod += (kv["writer"],)
            counts = (int(kv["attempted"]), int(kv["stored"]))
        except (KeyError, ValueError):
            raise bad("line %d: %r" % (i, ln[:60]))
        if not kv["ctx"].isidentifier() or min(counts) < 0 or counts[1] > counts[0] or \
                prod in prods:
            raise bad("line %d: %r" % (i, ln[:60]))
        prods[prod] = counts
    if not prods:
        return None
    return {"run": run, "producers": prods}


def _damaged_line(item, damage, stats):
    """The Damage the C reader found for the record the text reader read
    as `item`, counted as a malformed line (once)."""
    if type(item) is not Damage:
        stats.malformed += 1
        if len(stats.malformed_examples) < 5:
            stats.malformed_examples.append(damage.text)
    return damage


def validate_serial(serial):
    if os.path.getsize(serial) == 0:
        raise InputError("empty serial log %s" % serial)
    counts = scan_serial(serial)
    if counts[REC] == 0:
        counts = scan_serial(serial, limit=None)
    if counts[REC] == 0:
        raise InputError("serial log %s has no kernel console lines ('[  sec.usec] text'): "
                         "foreign or garbage file" % serial)
    return counts


def analyse(path=None, report=None, serial=None, no_serial=False, serial_console=None,
            trace_cmd=None, check_post=True, facts=None, console_loglevel=None, arch32=None,
            reader=None, order=None):
    """Run the analysis.  Returns (verdict dict, analyzer).  Raises
    InputError for unusable input.  `order` (ORDERS, default "chain"):
    "timestamps" judges a trace without the state words by the CPUs'
    clocks instead of calling it incomplete.  `facts` takes the ownership
    intervals and marks the model emits, and with event() every event
    after the model took it (intervals.Recorder)."""
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
    fact_event = getattr(facts, "event", None)

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
        if fact_event is not None:
            fact_event(item, con)
    an = Analyzer(serial_console=serial_console, facts=facts, on_event=hook,
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
        why = tracedat.structure_problem(trace_dat)
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
    verdict["latency"]["emergency_past_bound"] = emergency.past_bound()
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
