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

Without a compiler or the -dev packages the module cannot be built;
`available()` is then False and the analysis reads `trace-cmd report`
text instead (api.choose_reader()).
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


# ------------------------------------------------------- file structure
MAGIC = b"\x17\x08\x44tracing"
_OPT_DONE, _OPT_BUFFER = 0, 3
_SEC_COMPRESSED = 1
_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


def _zstd():
    """libzstd through ctypes (Debian libzstd1, which libtracecmd itself
    links), or None."""
    import ctypes
    import ctypes.util
    name = ctypes.util.find_library("zstd")
    if not name:
        return None
    try:
        lib = ctypes.CDLL(name)
    except OSError:
        return None
    lib.ZSTD_decompress.restype = ctypes.c_size_t
    lib.ZSTD_decompress.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p,
                                    ctypes.c_size_t)
    lib.ZSTD_isError.restype = ctypes.c_uint
    lib.ZSTD_isError.argtypes = (ctypes.c_size_t,)
    return lib


class _File:
    """Bounds-checked little/big-endian reads of a trace.dat."""

    def __init__(self, f, size, endian):
        import struct
        self.f, self.size, self.struct, self.endian = f, size, struct, endian

    def read(self, off, n, what):
        if off < 0 or off + n > self.size:
            raise ValueError("%s at %d..%d is beyond the end of the file (%d bytes)"
                             % (what, off, off + n, self.size))
        self.f.seek(off)
        return self.f.read(n)

    def unpack(self, fmt, off, what):
        fmt = self.endian + fmt
        return self.struct.unpack(fmt, self.read(off, self.struct.calcsize(fmt), what))


def structure_problem(path):
    """Why the trace.dat at `path` is damaged, checked from its own layout
    (trace-cmd.dat.v7(5)) before libtracecmd opens it, or None.

    libtracecmd 3.1.6 trusts the chunk table of a compressed file: a
    compressed size one bit off or a chunk count too large crashes
    tracecmd_open() (SIGSEGV), and a chunk whose declared size is larger
    than its content is read with whatever memory follows it (one reader
    then stops that CPU, `trace-cmd report` does not).  Checked: every
    BUFFER option's per-CPU data lies inside the file; for compressed
    data, its chunks fill it exactly, each is a zstd frame that
    decompresses to the size the table says (when libzstd can be
    loaded).  Version 6 files (uncompressed) are not checked."""
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as f:
            head = f.read(64)
            if not head.startswith(MAGIC):
                return None          # not a trace.dat: the readers say so
            rest = head[len(MAGIC):]
            version, _, rest = rest.partition(b"\0")
            if version != b"7":
                return None
            endian = ">" if rest[0:1] == b"\x01" else "<"
            pos = len(MAGIC) + len(version) + 1 + 2 + 4
            comp, _, tail = head[pos:].partition(b"\0")
            cver, _, tail = tail.partition(b"\0")
            pos += len(comp) + 1 + len(cver) + 1
            fl = _File(f, size, endian)
            zstd = _zstd() if comp == b"zstd" else None
            compressed = comp not in (b"", b"none")
            for cpu, off, dsize in _buffer_cpus(fl, fl.unpack("Q", pos, "options offset")[0],
                                                zstd):
                if not dsize:
                    continue
                fl.read(off, dsize + (4 if compressed else 0), "CPU %d data" % cpu)
                if compressed:
                    _check_chunks(fl, cpu, off, dsize, zstd if comp == b"zstd" else None)
    except ValueError as e:
        return "damaged trace.dat %s: %s" % (path, e)
    except OSError:
        return None
    return None


def _section(fl, off, zstd, what):
    """The data of the section at `off` (decompressed), or None when it
    is compressed and libzstd is not there."""
    sid, flags, _, ssize = fl.unpack("HHIQ", off, what + " header")
    if not flags & _SEC_COMPRESSED:
        return fl.read(off + 16, ssize, what)
    if zstd is None:
        return None
    csize, usize = fl.unpack("II", off + 16, what + " compression header")
    data = fl.read(off + 24, csize, what)
    return _decompress(zstd, data, usize, what)


def _decompress(zstd, data, usize, what):
    import ctypes
    out = ctypes.create_string_buffer(max(usize, 1))
    n = zstd.ZSTD_decompress(out, usize, data, len(data))
    if zstd.ZSTD_isError(n) or n != usize:
        raise ValueError("%s does not decompress to its %d bytes" % (what, usize))
    return out.raw[:usize]


def _buffer_cpus(fl, opt_off, zstd):
    """(cpu, offset, size) of each BUFFER option's per-CPU data."""
    import struct
    seen = set()
    out = []
    while opt_off and opt_off not in seen and len(seen) < 64:
        seen.add(opt_off)
        data = _section(fl, opt_off, zstd, "options section at %d" % opt_off)
        if data is None:
            return out
        p, nxt = 0, 0
        while p + 6 <= len(data):
            oid, osize = struct.unpack_from(fl.endian + "HI", data, p)
            body = data[p + 6:p + 6 + osize]
            if len(body) != osize:
                raise ValueError("option %d at %d runs past its section" % (oid, opt_off))
            p += 6 + osize
            if oid == _OPT_DONE:
                nxt = struct.unpack_from(fl.endian + "Q", body)[0] if osize >= 8 else 0
                break
            if oid == _OPT_BUFFER:
                out.extend(_buffer_option(fl, body))
        opt_off = nxt
    return out


def _buffer_option(fl, body):
    import struct
    q = 8
    for _ in range(2):                        # instance name, clock
        e = body.find(b"\0", q)
        if e < 0:
            raise ValueError("BUFFER option without its strings")
        q = e + 1
    page, cpus = struct.unpack_from(fl.endian + "II", body, q)
    q += 8
    if len(body) < q + 20 * cpus:
        raise ValueError("BUFFER option lists %d CPUs but has room for %d"
                         % (cpus, (len(body) - q) // 20))
    return [struct.unpack_from(fl.endian + "IQQ", body, q + 20 * i) for i in range(cpus)]


def _check_chunks(fl, cpu, off, dsize, zstd):
    """A CPU's compressed data: u32 count, then per chunk u32 compressed
    size, u32 size and the frame; the chunks must fill the data (whose
    size in the BUFFER option does not count the count word)."""
    count, = fl.unpack("I", off, "CPU %d chunk count" % cpu)
    p, end = off + 4, off + 4 + dsize
    for i in range(count):
        what = "CPU %d chunk %d of %d" % (cpu, i, count)
        if p + 8 > end:
            raise ValueError("%s starts past the end of the CPU's data" % what)
        csize, usize = fl.unpack("II", p, what + " header")
        if p + 8 + csize > end:
            raise ValueError("%s (%d bytes compressed) runs past the end of the CPU's data"
                             % (what, csize))
        frame = fl.read(p + 8, csize, what)
        if not frame.startswith(_ZSTD_MAGIC):
            raise ValueError("%s is not a zstd frame" % what)
        if zstd is not None:
            _decompress(zstd, frame, usize, what)
        p += 8 + csize
    if p != end:
        raise ValueError("the %d chunks of CPU %d end %d bytes before its data does"
                         % (count, cpu, end - p))
