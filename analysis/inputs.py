"""The inputs of an analysis: where a results directory keeps the trace
and the serial log, which reader reads the trace, and what the run saved
next to them (kernel.config, source.json, printk.txt, stats.txt, and the
CPUs' buffer statistics at the end of trace.dat).  Input that cannot be
used raises InputError."""

import json
import os

from . import nbcon_events
from . import tracedat
from .serial import scan_serial, REC
from .traceparse import InputError

READERS = ("auto", "libtracecmd", "text")

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
