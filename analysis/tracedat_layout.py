"""The layout of a trace.dat (trace-cmd.dat.v7(5)), checked before
libtracecmd opens the file: some damage crashes tracecmd_open()."""

import os

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
    loaded).  In a version 6 file (trace-cmd.dat.v6(5), uncompressed:
    what the guest records) whose sections lead to its flyrecord table,
    every CPU's data lies inside the file: libtracecmd crashes reading a
    file cut short (a guest killed while it copied its trace); one whose
    headers cannot be walked is left to the readers, which refuse it."""
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as f:
            head = f.read(64)
            if not head.startswith(MAGIC):
                return None          # not a trace.dat: the readers say so
            rest = head[len(MAGIC):]
            version, _, rest = rest.partition(b"\0")
            if version == b"6":
                endian = ">" if rest[0:1] == b"\x01" else "<"
                fl = _File(f, size, endian)
                try:
                    cpus = _flyrecord_cpus(fl, len(MAGIC) + 2 + 1 + 1 + 4)
                except ValueError:
                    return None      # no table to check: the readers say what is wrong
                for cpu, off, dsize in cpus:
                    if dsize:
                        fl.read(off, dsize, "CPU %d data" % cpu)
                return None
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


def _sized(fl, pos, fmt, what):
    """The position after a block whose size (fmt) is at pos."""
    n = fl.unpack(fmt, pos, what + " size")[0]
    end = pos + (8 if fmt == "Q" else 4) + n
    if end > fl.size:
        raise ValueError("%s runs past the end of the file (%d bytes)" % (what, fl.size))
    return end


def _name(fl, pos, what):
    """(name, position after its NUL) of a NUL-terminated name at pos."""
    data = fl.read(pos, min(256, fl.size - pos), what)
    name, nul, _ = data.partition(b"\0")
    if not nul:
        raise ValueError("%s at %d has no end" % (what, pos))
    return name, pos + len(name) + 1


def _flyrecord_cpus(fl, pos):
    """(cpu, offset, size) of each CPU's data in a version 6 file, whose
    header part starts at pos (after the page size): the sections
    before the flyrecord table, each with its size, walked in order."""
    for want in (b"header_page", b"header_event"):
        name, pos = _name(fl, pos, "section name")
        if name != want:
            raise ValueError("%s where %s belongs" % (name[:20], want.decode()))
        pos = _sized(fl, pos, "Q", want.decode())
    n, pos = fl.unpack("I", pos, "ftrace event count")[0], pos + 4
    for _ in range(n):
        pos = _sized(fl, pos, "Q", "ftrace event format")
    systems, pos = fl.unpack("I", pos, "event system count")[0], pos + 4
    for _ in range(systems):
        _, pos = _name(fl, pos, "event system")
        n, pos = fl.unpack("I", pos, "event count")[0], pos + 4
        for _ in range(n):
            pos = _sized(fl, pos, "Q", "event format")
    pos = _sized(fl, pos, "I", "kallsyms")
    pos = _sized(fl, pos, "I", "trace_printk formats")
    pos = _sized(fl, pos, "Q", "cmdlines")
    cpus = fl.unpack("I", pos, "CPU count")[0]
    pos += 4
    while True:
        name, pos = _name(fl, pos, "section name")
        if name.rstrip() == b"options":
            while True:
                oid = fl.unpack("H", pos, "option id")[0]
                pos += 2
                if oid == 0:
                    break
                pos = _sized(fl, pos, "I", "option %d" % oid)
        elif name.rstrip() == b"latency":
            return []
        elif name == b"flyrecord":
            return [(cpu,) + fl.unpack("QQ", pos + 16 * cpu, "CPU %d table entry" % cpu)
                    for cpu in range(cpus)]
        else:
            raise ValueError("unknown section %r at %d" % (name[:20], pos))


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
