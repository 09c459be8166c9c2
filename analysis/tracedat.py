"""Read trace.dat through libtracecmd / libtraceevent (ctypes).

Debian 12 has no Python binding for trace.dat, but it ships the C
libraries trace-cmd itself is built on (`libtracecmd1`, `libtraceevent1`).
`DatReader` opens the file with `tracecmd_open()`, walks the records of
all CPUs in timestamp order with `tracecmd_iterate_events()` (the merge
`trace-cmd report` does), and turns the printk nobkl records into the same
`Event` / `Drop` / `Header` items as `traceparse.parse_lines()` does from
the report text, with the same field strings, the same timestamps (report
precision: microseconds, rounded) and the same line numbers (the line the
event has in `trace-cmd report` output).  `checker.Analyzer` is the one
place that turns those items into the console model; this module only
reads.

Cost per record.  Crossings between Python and C are the expensive part,
so a record costs one: libtracecmd calls back into Python with it (a read
loop would cost two calls, read and free), and everything else is done in
place on the record's bytes (a memoryview over the address space) with
precompiled `struct` formats: the field offsets and sizes come once per event type from
libtraceevent (`tep_find_event_by_name`, `tep_find_field`), numeric fields
(`seq`, `len`, `dropped`, `level`, `waited_us`) are unpacked, and the text
of the other fields (console name, symbolic prio/ctx/how/where, CPU
numbers, caller) is rendered by libtraceevent itself (`tep_print_event`,
the formatting `trace-cmd report` uses) once per distinct raw value and
then taken from a cache.

Trace-level loss: a record with `missed_events != 0` (the ring buffer
dropped events on that CPU before it) becomes a `Drop` ahead of the record,
exactly where `trace-cmd report` prints `CPU:N [M EVENTS DROPPED]`.

Struct layouts below are those of the Debian 12 headers
(`/usr/include/traceevent/event-parse.h` of libtraceevent 1.7,
`struct tep_record` without DEBUG_RECORD; `trace-cmd.h` of libtracecmd
3.1.6); `tracecmd_cpus()` is exported by libtracecmd.so.1 although
trace-cmd.h does not declare it.
"""

import ctypes
import os
import struct

from .traceparse import EVENT_FIELDS, Drop, Event, Header, InputError, _parse_fields

# Fields printed as plain decimal numbers (TP_printk %llu/%u/%lu/%d):
# read from the raw record.  Every other field is rendered by
# libtraceevent once per distinct raw value.
NUMERIC = ("seq", "len", "dropped", "level", "waited_us")

# enum tep_loglevel: TEP_LOG_NONE
_LOG_NONE = 0
# struct tep_format_field flags
_FIELD_IS_DYNAMIC = 16
_FIELD_IS_RELATIVE = 256
_FIELD_IS_SIGNED = 4
_FIELD_IS_STRING = 8

_libs = None
_lib_error = None

_vp = ctypes.c_void_p


class _TepFormatField(ctypes.Structure):
    _fields_ = [("next", _vp), ("event", _vp), ("type", ctypes.c_char_p),
                ("name", ctypes.c_char_p), ("alias", ctypes.c_char_p),
                ("offset", ctypes.c_int), ("size", ctypes.c_int),
                ("arraylen", ctypes.c_uint), ("elementsize", ctypes.c_uint),
                ("flags", ctypes.c_ulong)]


class _TepEvent(ctypes.Structure):
    _fields_ = [("tep", _vp), ("name", ctypes.c_char_p), ("id", ctypes.c_int),
                ("flags", ctypes.c_int)]


class _TraceSeq(ctypes.Structure):
    _fields_ = [("buffer", _vp), ("buffer_size", ctypes.c_uint), ("len", ctypes.c_uint),
                ("readpos", ctypes.c_uint), ("state", ctypes.c_int)]


class _TepRecord(ctypes.Structure):
    _fields_ = [("ts", ctypes.c_ulonglong), ("offset", ctypes.c_ulonglong),
                ("missed_events", ctypes.c_longlong), ("record_size", ctypes.c_int),
                ("size", ctypes.c_int), ("data", _vp), ("cpu", ctypes.c_int)]


def _native_struct(cstruct, names):
    """A struct.Struct that unpacks the named members of a ctypes
    Structure (host layout) from its start."""
    codes = {ctypes.sizeof(ctypes.c_int): "i", 8: "q"}
    fmt, pos = "=", 0
    for name in names:
        f = getattr(cstruct, name)
        ctype = dict(cstruct._fields_)[name]
        if ctype is _vp:
            code = {4: "I", 8: "Q"}[ctypes.sizeof(_vp)]
        elif ctype is ctypes.c_ulonglong:
            code = "Q"
        elif ctype is ctypes.c_longlong:
            code = "q"
        else:
            code = codes[f.size]
        fmt += "x" * (f.offset - pos) + code
        pos = f.offset + f.size
    return struct.Struct(fmt)


# ts, missed_events, size, data, cpu of a struct tep_record
_REC = _native_struct(_TepRecord, ("ts", "missed_events", "size", "data", "cpu"))

# int callback(struct tracecmd_input *, struct tep_record *, int cpu, void *data)
_CALLBACK = ctypes.CFUNCTYPE(ctypes.c_int, _vp, _vp, ctypes.c_int, _vp)



def _memory_view():
    """A read-only view of the whole process address space, so a record
    and its data are read with struct.unpack_from() in place instead of
    one ctypes.string_at() copy each (None where Python's sizes do not
    allow it; then records are copied)."""
    if ctypes.sizeof(_vp) < 8:
        return None
    try:
        n = 1 << 47              # x86-64 user space ends below 2**47
        return memoryview((ctypes.c_ubyte * n).from_address(0)).cast("B").toreadonly()
    except (OverflowError, ValueError, TypeError, MemoryError):
        return None


_MEM = _memory_view()


def _load():
    """(libtracecmd, libtraceevent) with prototypes, or raise OSError."""
    global _libs, _lib_error
    if _libs is not None:
        return _libs
    if _lib_error is not None:
        raise _lib_error
    try:
        tc = ctypes.CDLL("libtracecmd.so.1")
        te = ctypes.CDLL("libtraceevent.so.1")
    except OSError as e:
        _lib_error = OSError("libtracecmd not available (Debian package libtracecmd1): %s" % e)
        raise _lib_error
    proto = [
        (tc, "tracecmd_open", _vp, [ctypes.c_char_p, ctypes.c_int]),
        (tc, "tracecmd_close", None, [_vp]),
        (tc, "tracecmd_get_tep", _vp, [_vp]),
        (tc, "tracecmd_cpus", ctypes.c_int, [_vp]),
        (tc, "tracecmd_iterate_events", ctypes.c_int,
         [_vp, _vp, ctypes.c_int, _CALLBACK, _vp]),
        (tc, "tracecmd_free_record", None, [_vp]),
        (tc, "tracecmd_read_cpu_first", _vp, [_vp, ctypes.c_int]),
        (tc, "tracecmd_read_cpu_last", _vp, [_vp, ctypes.c_int]),
        (tc, "tracecmd_get_cpustats", ctypes.c_char_p, [_vp]),
        (tc, "tracecmd_set_loglevel", None, [ctypes.c_int]),
        (te, "tep_set_loglevel", None, [ctypes.c_int]),
        (te, "tep_find_event_by_name", _vp, [_vp, ctypes.c_char_p, ctypes.c_char_p]),
        (te, "tep_find_field", _vp, [_vp, ctypes.c_char_p]),
        (te, "tep_find_common_field", _vp, [_vp, ctypes.c_char_p]),
        (te, "tep_is_file_bigendian", ctypes.c_int, [_vp]),
        (te, "trace_seq_init", None, [_vp]),
        (te, "trace_seq_reset", None, [_vp]),
        (te, "trace_seq_destroy", None, [_vp]),
        (te, "trace_seq_terminate", None, [_vp]),
    ]
    try:
        for lib, name, res, args in proto:
            fn = getattr(lib, name)
            fn.restype = res
            fn.argtypes = args
        # variadic: tep_print_event(tep, s, record, fmt, ...)
        te.tep_print_event.restype = None
    except AttributeError as e:
        _lib_error = OSError("libtracecmd/libtraceevent lack a needed function: %s" % e)
        raise _lib_error
    tc.tracecmd_set_loglevel(_LOG_NONE)
    te.tep_set_loglevel(_LOG_NONE)
    _libs = (tc, te)
    return _libs


def available():
    """True when libtracecmd and libtraceevent can be loaded."""
    try:
        _load()
        return True
    except OSError:
        return False


def unavailable_reason():
    try:
        _load()
        return None
    except OSError as e:
        return str(e)


class _EventType:
    """How to turn the raw data of one nobkl event type into fields."""
    __slots__ = ("name", "id", "ptr", "order", "keyed", "key", "num", "num_names",
                 "text", "cache", "templates", "min_size")

    def __init__(self, name, ev_id, ptr):
        self.name = name
        self.id = ev_id
        self.ptr = ptr
        self.order = EVENT_FIELDS[name]
        self.keyed = []       # (offset, size, is a string) of fields rendered by
                              # libtraceevent
        self.key = None       # (unpack_from, offset): their raw bytes, the cache key
        self.num = None       # (unpack_from, offset) of the numeric fields and the
                              # text's dynamic-array word, in offset order
        self.num_names = ()   # their names ("text" for the word)
        self.text = None      # (offset of the dynamic-array word, relative)
        self.cache = {}       # raw bytes of the keyed fields -> field dict template
        self.templates = {}   # the keyed fields as printed -> field dict template
        self.min_size = 0     # the record data must cover every field


class DatReader:
    """Iterate a trace.dat as traceparse items (see the module doc)."""

    CACHE_MAX = 65536

    def __init__(self, path):
        self.path = path
        self.description = "libtracecmd %s" % path
        self.stderr_lines = []
        self.tc, self.te = _load()
        if not os.path.isfile(path):
            raise InputError("missing trace file %s" % path)
        if os.path.getsize(path) == 0:
            raise InputError("empty trace file %s" % path)
        self.handle = self.tc.tracecmd_open(os.fsencode(path), 0)
        if not self.handle:
            raise InputError("libtracecmd cannot open %s: truncated or not a trace.dat file"
                             % path)
        self.tep = self.tc.tracecmd_get_tep(self.handle)
        self.cpus = self.tc.tracecmd_cpus(self.handle)
        self.endian = ">" if self.te.tep_is_file_bigendian(self.tep) else "<"
        self.seq_buf = ctypes.create_string_buffer(ctypes.sizeof(_TraceSeq))
        self.te.trace_seq_init(self.seq_buf)
        self.types = {}
        self.type_fmt = None
        self.type_off = 0
        for name in EVENT_FIELDS:
            self._add_type(name)

    # ---------------------------------------------------------------- setup
    def _field(self, ev, name, common=False):
        fp = (self.te.tep_find_common_field if common else self.te.tep_find_field)(
            ev, name.encode())
        if not fp:
            return None
        return _TepFormatField.from_address(fp)

    def _add_type(self, name):
        ev = self.te.tep_find_event_by_name(self.tep, b"printk", name.encode())
        if not ev:
            return
        if self.type_fmt is None:
            ct = self._field(ev, "common_type", common=True)
            if ct is None:
                return
            self.type_fmt = struct.Struct(self.endian + {1: "B", 2: "H", 4: "I"}[ct.size])
            self.type_off = ct.offset
        t = _EventType(name, _TepEvent.from_address(ev).id, ev)
        nums = []
        for fname in t.order:
            f = self._field(ev, fname)
            if f is None:
                raise InputError("%s: event %s has no field %s (foreign tracepoint format)"
                                 % (self.path, name, fname))
            if fname == "text":
                if not f.flags & _FIELD_IS_DYNAMIC or f.size != 4:
                    raise InputError("%s: %s.text is not a dynamic array" % (self.path, name))
                t.text = (f.offset, bool(f.flags & _FIELD_IS_RELATIVE))
                nums.append((f.offset, 4, "I", fname))
            elif fname in NUMERIC:
                code = {1: "B", 2: "H", 4: "I", 8: "Q"}.get(f.size)
                if code is None:
                    raise InputError("%s: %s.%s has size %d" % (self.path, name, fname, f.size))
                if f.flags & _FIELD_IS_SIGNED:
                    code = code.lower()
                nums.append((f.offset, f.size, code, fname))
            else:
                t.keyed.append((f.offset, f.size, bool(f.flags & _FIELD_IS_STRING)))
        for off, size, _, _ in nums:
            t.min_size = max(t.min_size, off + size)
        for off, size, _ in t.keyed:
            t.min_size = max(t.min_size, off + size)
        if nums:
            t.num = self._struct_over([(n[0], n[1], n[2]) for n in sorted(nums)])
            t.num_names = tuple(n[3] for n in sorted(nums))
        # keyed fields: their bytes as one string per contiguous run
        runs = []
        for off, size, _ in sorted(t.keyed):
            if runs and runs[-1][1] >= off:
                runs[-1][1] = max(runs[-1][1], off + size)
            else:
                runs.append([off, off + size])
        if not runs:
            runs = [[0, 0]]
        t.key = self._struct_over([(a, b - a, "%ds" % (b - a)) for a, b in runs])
        self.types[t.id] = t

    def _struct_over(self, parts):
        """(unpack_from, offset) for [(offset, size, code)] in offset order."""
        fmt, pos = self.endian, parts[0][0]
        for off, size, code in parts:
            fmt += "x" * (off - pos) + code
            pos = off + size
        return struct.Struct(fmt).unpack_from, parts[0][0]

    def _render(self, t, rec_ptr):
        """The fields of this record as `trace-cmd report` prints them."""
        te = self.te
        te.trace_seq_reset(self.seq_buf)
        te.tep_print_event(_vp(self.tep), self.seq_buf, _vp(rec_ptr), b"%s", b"INFO")
        te.trace_seq_terminate(self.seq_buf)
        s = _TraceSeq.from_buffer(self.seq_buf)
        info = ctypes.string_at(s.buffer, s.len).decode("latin-1")
        return _parse_fields(t.name, info)

    def _template(self, t, rp, buf, base):
        """The keyed fields of a record whose raw bytes are not cached yet,
        rendered.  The tracepoints copy whole char arrays (console name,
        caller), so the bytes after a string's NUL are whatever the
        kernel's buffer held: records that print the same can differ in
        their raw bytes.  A second cache, keyed by the bytes as printed,
        leaves libtraceevent only the values not printed before."""
        key = tuple(bytes(buf[base + off:base + off + size]).split(b"\0", 1)[0] if is_str
                    else bytes(buf[base + off:base + off + size])
                    for off, size, is_str in t.keyed)
        tmpl = t.templates.get(key)
        if tmpl is None:
            tmpl = self._render(t, rp)
            if len(t.templates) >= self.CACHE_MAX:
                t.templates.clear()
            t.templates[key] = tmpl
        return tmpl

    def _builder(self, t):
        """f(template, buf, base, size) -> the fields of one record: a copy
        of the cached rendering of its keyed fields, plus its numbers (the
        decimal strings the report prints) and its text, all from one
        struct unpack.

        The function is generated per event type with one plain statement
        per field: a loop over the field names costs twice as much, and
        this runs once per event."""
        if t.num is None:
            return lambda tmpl, buf, base, size: tmpl.copy()
        unpack, noff = t.num
        code = ["def build(tmpl, buf, base, size):",
                "    v = unpack(buf, base + noff)",
                "    f = tmpl.copy()"]
        for i, name in enumerate(t.num_names):
            if name != "text":
                code.append("    f[%r] = str(v[%d])" % (name, i))
        env = {"unpack": unpack, "noff": noff}
        if t.text is not None:
            # __data_loc word: offset (from the record, or from the word's
            # end if relative) in the low 16 bits, length in the high 16;
            # the text ends at its NUL, or at the record's end at the latest
            toff_field, rel = t.text
            env["rel_add"] = toff_field + 4 if rel else 0
            code += ["    word = v[%d]" % t.num_names.index("text"),
                     "    toff = (word & 0xffff) + rel_add",
                     "    txt = bytes(buf[base + toff:base + min(toff + (word >> 16), size)])",
                     "    nul = txt.find(b'\\0')",
                     "    f['text'] = (txt[:nul] if nul >= 0 else txt).decode('latin-1')"]
        code.append("    return f")
        exec("\n".join(code), env)     # noqa: S102 - code built above from field names
        return env["build"]

    # ------------------------------------------------------------- iterate
    def items(self, stats):
        """Header, then the Drop/Event items in trace order, as a list (for
        tests and small traces; the analysis streams with feed())."""
        out = []
        self.feed(out.append, stats)
        return out

    def feed(self, sink, stats):
        """Call sink(item) with the Header, then with each Drop/Event item
        in trace order; fill stats (a traceparse.ReportStats) like
        parse_lines() does.

        libtracecmd drives the loop (`tracecmd_iterate_events()`, the same
        timestamp merge as `tracecmd_read_next_data()`) and calls back into
        Python once per record: one C-to-Python transition per record is
        cheaper than the two Python-to-C calls (read, free) of a read loop.
        An exception raised by the sink (or here) stops the iteration and
        is raised again from here."""
        stats.cpus = self.cpus
        sink(Header(1, "cpus", self.cpus))
        on_record, result = self._record_handler(sink, stats)
        try:
            rc = self.tc.tracecmd_iterate_events(self.handle, None, 0, _CALLBACK(on_record),
                                                 None)
        finally:
            lineno, events, other, first_rts, last_rts, error = result()
            stats.lines = lineno
            stats.events += events
            stats.other_events += other
            if first_rts is not None:
                stats.first_ts = ((first_rts + 500) // 1000) / 1e6
                stats.last_ts = ((last_rts + 500) // 1000) / 1e6
        if error is not None:
            raise error
        if rc < 0:
            raise InputError("libtracecmd could not read all records of %s (error %d): "
                             "truncated trace" % (self.path, rc))

    def _record_handler(self, sink, stats):
        """(on_record, result) for feed(): the per-record callback, and a
        function that returns what it counted (line number, events, other
        records, first and last raw timestamp, the exception that stopped
        it).  Everything the callback needs is bound to closure variables,
        since it runs once for each of millions of records."""
        lineno = 1               # the `cpus=N` header is line 1 of the report
        events = other = 0
        first_rts = last_rts = error = None
        last_usec = tsf = None
        string_at = ctypes.string_at
        rec_unpack_from = _REC.unpack_from
        rec_size = _REC.size
        mem = _MEM
        mem_len = len(mem) if mem is not None else 0
        rec_lim = mem_len - rec_size
        # per event id: (type, key unpack, key offset, cache, builder, min size, name)
        plan = {tid: (t, t.key[0], t.key[1], t.cache, self._builder(t), t.min_size, t.name)
                for tid, t in self.types.items()}
        plan_get = plan.get
        if self.type_fmt is not None:
            type_unpack, type_off, type_end = (self.type_fmt.unpack_from, self.type_off,
                                               self.type_off + self.type_fmt.size)
        else:
            # no nobkl event in the file: every record is another event
            type_unpack, type_off, type_end = (lambda data, off: (None,)), 0, 0
        cache_max = self.CACHE_MAX
        template = self._template
        new_tuple = tuple.__new__    # Event(...) without namedtuple's Python __new__

        def on_record(_handle, rp, _cpu, _data):
            nonlocal lineno, events, other, first_rts, last_rts, error, last_usec, tsf
            try:
                if rp <= rec_lim:
                    rts, missed, size, dp, cpu = rec_unpack_from(mem, rp)
                else:
                    rts, missed, size, dp, cpu = rec_unpack_from(string_at(rp, rec_size))
                if first_rts is None:
                    first_rts = rts
                last_rts = rts
                if missed:
                    lineno += 1
                    sink(stats.add_drop(Drop(
                        lineno, cpu, missed if missed > 0 else None,
                        "CPU:%d [%s]" % (cpu, "%d EVENTS DROPPED" % missed if missed > 0
                                         else "EVENTS DROPPED"))))
                lineno += 1
                if dp + size <= mem_len:
                    buf, base = mem, dp          # read in place
                else:
                    buf, base = string_at(dp, size), 0
                p = plan_get(type_unpack(buf, base + type_off)[0]) if size >= type_end \
                    else None
                if p is None or size < p[5]:
                    other += 1
                    return 0
                t, key_unpack, key_off, cache, build, _, name = p
                key = key_unpack(buf, base + key_off)
                tmpl = cache.get(key)
                if tmpl is None:
                    try:
                        tmpl = template(t, rp, buf, base)
                    except ValueError as e:
                        stats.malformed += 1
                        if len(stats.malformed_examples) < 5:
                            stats.malformed_examples.append(
                                "line %d: %s (%s)" % (lineno, name, e))
                        return 0
                    if len(cache) >= cache_max:
                        cache.clear()
                    cache[key] = tmpl
                fields = build(tmpl, buf, base, size)
                # report precision: microseconds, rounded (libtraceevent's
                # "%6.1000d" time format that trace-cmd report uses)
                usec = (rts + 500) // 1000
                if usec != last_usec:
                    last_usec = usec
                    tsf = usec / 1e6
                events += 1
                sink(new_tuple(Event, (lineno, name, cpu, tsf, fields)))
                return 0
            except BaseException as e:      # noqa: B036 - re-raised by feed()
                error = e
                return 1

        def result():
            return lineno, events, other, first_rts, last_rts, error

        return on_record, result

    def close(self):
        if self.handle:
            self.tc.tracecmd_close(self.handle)
            self.handle = None
        if self.seq_buf is not None:
            self.te.trace_seq_destroy(self.seq_buf)
            self.seq_buf = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False



def cpu_summary(path):
    """Per CPU of a trace.dat: the kernel ring-buffer statistics trace-cmd
    record saved at its end (`trace-cmd report --stat`: entries left in
    the buffer and not recorded, overrun, dropped and read events) and the
    first and last recorded timestamp (report precision).  {cpu: dict};
    None when the file cannot be opened."""
    tc, _ = _load()
    h = tc.tracecmd_open(os.fsencode(path), 0)
    if not h:
        return None
    try:
        out = {}
        for cpu in range(max(0, tc.tracecmd_cpus(h))):
            d = {"first_ts": None, "last_ts": None}
            for key, fn in (("first_ts", tc.tracecmd_read_cpu_first),
                            ("last_ts", tc.tracecmd_read_cpu_last)):
                rp = fn(h, cpu)
                if not rp:
                    # No record on this CPU. libtracecmd 3.1.6 crashes in
                    # tracecmd_read_cpu_last() on some empty CPUs: do not
                    # ask for the last record of one.
                    break
                ts = _REC.unpack_from(ctypes.string_at(rp, _REC.size))[0]
                d[key] = ((ts + 500) // 1000) / 1e6
                tc.tracecmd_free_record(rp)
            out[cpu] = d
        stats = tc.tracecmd_get_cpustats(h)
        cpu = None
        for line in (stats or b"").decode("latin-1", "replace").splitlines():
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
        tc.tracecmd_close(h)
