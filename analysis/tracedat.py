"""Read trace.dat through libtracecmd / libtraceevent.

Debian 12 has no Python binding for trace.dat, but it ships the C
libraries trace-cmd itself is built on (`libtracecmd1`, `libtraceevent1`).
The per-record work is done in C: `_datreader.c`, a small CPython
extension over those libraries, built from this directory on first use
(see `_module()`).  `DatReader` walks the records of all CPUs in
timestamp order with `tracecmd_iterate_events()` (the merge `trace-cmd
report` does) and turns the printk nobkl records into the same `Store` /
`Event` / `Drop` / `Header` items as `traceparse.parse_lines()` does from
the report text, with the same field values, the same timestamps (report precision:
microseconds, rounded) and the same line numbers (the line the event has
in `trace-cmd report` output).  `checker.Analyzer` is the one place that
turns those items into the console model (model_rfc.py); this module only reads.

Numeric fields (`seq`, `len`, `dropped`, `level`, `waited_us`) and the
text come from the raw record.  The other fields (console name, symbolic
prio/ctx/how/where, CPU numbers, caller) are printed by libtraceevent
(`tep_print_event()`, the formatting `trace-cmd report` uses), parsed here
with the text reader's own parser (`render()`), once per distinct raw
value; the C side caches that.

Trace-level loss: a record with `missed_events != 0` (the ring buffer
dropped events on that CPU before it) becomes a `Drop` ahead of the record,
exactly where `trace-cmd report` prints `CPU:N [M EVENTS DROPPED]`.

Before either reader opens a trace.dat, the file's layout is checked
(tracedat_layout.py): some damage crashes libtracecmd.

Without a compiler or the -dev packages the module cannot be built;
`available()` is then False and the analysis reads `trace-cmd report`
text instead (inputs.choose_reader()).
"""

import hashlib
import importlib.util
import os
import subprocess
import sysconfig
import tempfile

from . import nbcon_events
from .traceparse import (EVENT_FIELDS, EVENT_OPTIONAL, Damage, Drop, Event, Header, InputError,
                         ReportStats, Store, _parse_fields)

# Fields printed as plain decimal numbers (TP_printk %llu/%u/%lu/%d):
# read from the raw record; and common_flags, which is not printed (the
# 6.12 events' context, nbcon_events.ctx_of_flags()).
NUMERIC = ("seq", "len", "dropped", "level", "waited_us", "waited_ns", "spins", "old_state",
           "new_state", "state", nbcon_events.COMMON_FLAGS)
# The fields read of each event: what it prints, and for a 6.12 event
# also the record fields the print folds into others or leaves out.
RECORD_FIELDS = dict(EVENT_FIELDS, **nbcon_events.RECORD_FIELDS)

SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_datreader.c")
BUILD_PACKAGES = "gcc python3-dev libtracecmd-dev libtraceevent-dev libtracefs-dev"
# no -Werror here: a newer compiler's new warning must not cost users the
# fast reader (tests/test_tracedat.py builds with -Werror)
_CFLAGS = ["-O2", "-Wall", "-Wextra", "-Wno-unused-parameter", "-shared",
           "-fPIC", "-I/usr/include/trace-cmd", "-I/usr/include/traceevent",
           "-I/usr/include/tracefs"]
_LIBS = ["-ltracecmd", "-ltraceevent"]

_mod = None
_mod_error = None


def build_dir():
    """Where the compiled module is kept: the harness's cache directory
    ($PNS_CACHE, else ~/.cache/printk-nobkl-stress), under analysis/."""
    base = os.environ.get("PNS_CACHE") or os.path.join(
        os.path.expanduser("~"), ".cache", "printk-nobkl-stress")
    return os.path.join(base, "analysis")


def _compile_command(src, out):
    cc = os.environ.get("CC") or "cc"
    return [cc] + _CFLAGS + ["-I" + sysconfig.get_paths()["include"], src, "-o", out] + _LIBS


def module_path():
    """The compiled module's file: named after a hash of the source, the
    compiler command and the Python ABI, so an edit of the source (or a
    different Python) builds a new one and a stale one is never loaded."""
    with open(SOURCE, "rb") as f:
        h = hashlib.sha256(f.read())
    h.update(" ".join(_compile_command("SRC", "OUT")).encode())
    suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    h.update(suffix.encode())
    return os.path.join(build_dir(), "_datreader-%s%s" % (h.hexdigest()[:16], suffix))


def build(path=None):
    """Compile _datreader.c into `path` (default module_path()) unless it
    is there; returns the path.  The file appears atomically, so
    concurrent analyses never load a half-written module.  Raises OSError
    with the compiler's message."""
    path = path or module_path()
    if os.path.exists(path):
        return path
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".build-", suffix=".so", dir=os.path.dirname(path))
    os.close(fd)
    try:
        try:
            r = subprocess.run(_compile_command(SOURCE, tmp), capture_output=True, text=True,
                               check=False)
        except OSError as e:
            raise OSError("cannot run the C compiler (Debian packages: %s): %s"
                          % (BUILD_PACKAGES, e))
        if r.returncode != 0:
            msg = (r.stderr or r.stdout).strip().splitlines()
            raise OSError("cannot build the trace.dat reader %s (Debian packages: %s): %s"
                          % (SOURCE, BUILD_PACKAGES, " / ".join(msg[:3])))
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return path


def _module():
    """The _datreader extension, built if needed; raises OSError."""
    global _mod, _mod_error
    if _mod is not None:
        return _mod
    if _mod_error is not None:
        raise _mod_error
    try:
        path = build()
        spec = importlib.util.spec_from_file_location("_datreader", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
    except (OSError, ImportError) as e:
        _mod_error = OSError("libtracecmd reader not available: %s" % e)
        raise _mod_error
    _mod = mod
    return mod


def available():
    """True when the libtracecmd reader can be used."""
    try:
        _module()
        return True
    except OSError:
        return False


def unavailable_reason():
    try:
        _module()
        return None
    except OSError as e:
        return str(e)


def _open(path, event_fields):
    """A _datreader.Reader of path; InputError for unusable files."""
    mod = _module()
    if not os.path.isfile(path):
        raise InputError("missing trace file %s" % path)
    if os.path.getsize(path) == 0:
        raise InputError("empty trace file %s" % path)
    try:
        return mod.Reader(path, event_fields, NUMERIC, Event, Store, EVENT_OPTIONAL)
    except OSError as e:
        raise InputError(str(e))
    except ValueError as e:
        raise InputError("%s: %s" % (path, e))


class DatReader:
    """Iterate a trace.dat as traceparse items (see the module doc)."""

    def __init__(self, path):
        self.path = path
        self.description = "libtracecmd %s" % path
        self.stderr_lines = []
        self.reader = _open(path, RECORD_FIELDS)
        self.cpus = self.reader.cpus()
        # tests: pretend the record after this report line had lost
        # events before it, (line, count)
        self.test_missed = None

    def items(self, stats):
        """Header, then the Drop/Event items in trace order, as a list (for
        tests and small traces; the analysis streams with feed())."""
        out = []
        self.feed(out.append, stats)
        return out

    def feed(self, sink, stats):
        """Call sink(item) with the Header, then with each Drop/Event item
        in trace order; fill stats (a traceparse.ReportStats) like
        parse_lines() does.  An exception raised by the sink stops the
        iteration and is raised again from here."""
        stats.cpus = self.cpus
        sink(Header(1, "cpus", self.cpus))
        sink = _contract_sink(sink, stats)

        def on_drop(lineno, cpu, missed):
            sink(stats.add_drop(Drop(
                lineno, cpu, missed if missed > 0 else None,
                "CPU:%d [%s]" % (cpu, "%d EVENTS DROPPED" % missed if missed > 0
                                 else "EVENTS DROPPED"))))

        parse_error = [None]

        def render(name, lineno, info):
            """The fields of a record as `trace-cmd report` prints them,
            or None (on_damage() follows) when they do not parse."""
            try:
                return _parse_fields(name, info.decode("latin-1"))
            except ValueError as e:
                parse_error[0] = e
                return None

        def on_damage(lineno, cpu, rts, name, why):
            """A nobkl record that cannot be read: counted as malformed,
            and the checker treats the trace as lost there."""
            stats.malformed += 1
            if parse_error[0] is not None:
                why, parse_error[0] = str(parse_error[0]), None
            text = "line %d: %s (%s) on CPU %d" % (lineno, name, why, cpu)
            if len(stats.malformed_examples) < 5:
                stats.malformed_examples.append(text)
            sink(Damage(lineno, cpu, _report_ts(rts), text))

        kw = {}
        if self.test_missed is not None:
            kw = {"test_missed_at": self.test_missed[0], "test_missed": self.test_missed[1]}
        rc, lines, events, other, first_rts, last_rts, cpu_last = self.reader.feed(
            sink, on_drop, on_damage, render, **kw)
        stats.lines = lines
        stats.events += events
        stats.other_events += other
        stats.cpu_last_ts = {cpu: _report_ts(t) for cpu, t in cpu_last.items()}
        if first_rts is not None:
            stats.first_ts = _report_ts(first_rts)
            stats.last_ts = _report_ts(last_rts)
        if rc < 0:
            raise InputError("libtracecmd could not read all records of %s (error %d): "
                             "truncated trace" % (self.path, rc))

    def close(self):
        self.reader.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


def _contract_sink(sink, stats):
    """`sink` behind the translation of the 6.12 events into the contract
    (nbcon_events.translate(), the context from common_flags); a record
    that does not translate is Damage, as in the text reader."""
    translate = nbcon_events.translate
    nbcon = nbcon_events.TEXT_FIELDS

    def contract(item):
        if item.__class__ is Event:
            name = item.name
            if name in nbcon:
                stats.saw_target(name)
                f = item.fields
                try:
                    ctx = nbcon_events.ctx_of_flags(int(f[nbcon_events.COMMON_FLAGS]))
                    cname, fields = translate(name, f, ctx)
                except (KeyError, ValueError) as e:
                    stats.events -= 1
                    stats.malformed += 1
                    text = "line %d: %s (%s) on CPU %d" % (item.lineno, name, e, item.cpu)
                    if len(stats.malformed_examples) < 5:
                        stats.malformed_examples.append(text)
                    sink(Damage(item.lineno, item.cpu, item.ts, text))
                    return
                item = Event(item.lineno, cname, item.cpu, item.ts, fields)
            elif stats.target is None:
                stats.saw_target(name)
        sink(item)
    return contract


def _report_ts(raw):
    """A raw timestamp (ns) as the report prints it: microseconds,
    rounded (libtraceevent's "%6.1000d"), in seconds."""
    return ((raw + 500) // 1000) / 1e6


def record_damage(path):
    """{line number: Damage} of the records of a trace.dat that the C
    reader finds damaged where `trace-cmd report` prints a plausible
    event (a record longer than its event's fields: a flipped bit in its
    type) or one that differs from what the C reader reads (a store text
    with a NUL in it, which trace-cmd prints cut there), for the text
    reader: the two readers give the same line numbers, so it replaces
    those lines by the same Damage items and the readers agree.  {}
    without the library."""
    if not available():
        return {}
    out = {}

    def sink(item):
        if type(item) is Damage:
            out[item.lineno] = item
    try:
        with DatReader(path) as r:
            r.feed(sink, ReportStats())
    except (OSError, ValueError, InputError):
        # not a file libtracecmd reads (a stand-in of the tests): the
        # text reader's own checks are all there is
        return {}
    return out


def cpu_summary(path):
    """Per CPU of a trace.dat: the kernel ring-buffer statistics trace-cmd
    record saved at its end (`trace-cmd report --stat`: entries left in
    the buffer and not recorded, overrun, dropped and read events) and the
    first and last recorded timestamp (report precision).  {cpu: dict};
    None when the file cannot be opened."""
    try:
        r = _open(path, {})
    except InputError:
        return None
    try:
        out = {}
        for cpu in range(max(0, r.cpus())):
            rng = r.cpu_range(cpu)
            first, last = rng if rng is not None else (None, None)
            out[cpu] = {"first_ts": _report_ts(first) if first is not None else None,
                        "last_ts": _report_ts(last) if last is not None else None}
        cpu = None
        for line in r.cpustats().splitlines():
            k, _, v = line.partition(":")
            k, v = k.strip(), v.strip()
            if k == "CPU":
                cpu = int(v) if v.isdigit() else None
                if cpu is not None:
                    out.setdefault(cpu, {"first_ts": None, "last_ts": None})
            elif cpu is not None and k in ("entries", "overrun", "dropped events",
                                           "read events") and v.isdigit():
                out[cpu][k.replace(" ", "_")] = int(v)
        return out
    finally:
        r.close()
