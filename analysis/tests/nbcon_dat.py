"""Synthetic 6.12 (nbcon) trace.dat files, for the trace.dat reader.

write_dat() turns the event lines of an NbconTrace (nbcon_trace.py)
into a trace.dat as `trace-cmd record` writes it (file format version
6, uncompressed): each event a record laid out as its TP_STRUCT__entry
is on x86_64, under the format tracefs shows for it
(patches/6.12/0001), in the series' current format or its first
(NbconTrace(first_format=True)).  So both readers can be run on the
same records in either format: the trace.dat reader on the file,
`trace-cmd report -l` on it for the text reader.

Only the ownership events the tests need are laid out (FORMATS); the
context becomes the common flags the latency column stands for.
"""

import re
import struct

from analysis.nbcon_events import PRIOS

PAGE = 4096
_PAGE_HEADER = 16          # u64 timestamp, local_t commit

_HEADER_PAGE = (b"\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
                b"\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
                b"\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
                b"\tfield: char data;\toffset:16;\tsize:4080;\tsigned:1;\n")
_HEADER_EVENT = (b"# compressed entry header\n\ttype_len    :    5 bits\n"
                 b"\ttime_delta  :   27 bits\n\tarray       :   32 bits\n\n"
                 b"\tpadding     : type == 29\n\ttime_extend : type == 30\n"
                 b"\ttime_stamp : type == 31\n\tdata max type_len  == 28\n")
_COMMON = ("\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
           "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
           "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
           "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n")

# TRACE_FLAG_IRQS_OFF, and the flags of each context (trace_events.h)
_FLAGS = {"task": 0x01, "softirq": 0x11, "hardirq": 0x09, "nmi": 0x49}

# (C type, field, size, signed) of TP_STRUCT__entry, in order
_CTXT = (("char", "con[16]", 16, 1), ("short", "index", 2, 1),
         ("unsigned char", "prio", 1, 0), ("bool", "thread", 1, 0))
_ACQUIRE_FIRST = _CTXT + (
    ("bool", "device", 1, 0), ("unsigned char", "how", 1, 0),
    ("unsigned char", "prev_prio", 1, 0), ("unsigned char", "prev_req_prio", 1, 0),
    ("bool", "prev_unsafe", 1, 0), ("bool", "unsafe_takeover", 1, 0),
    ("unsigned int", "prev_cpu", 4, 0), ("u32", "old_state", 4, 0),
    ("u32", "new_state", 4, 0))
_STRUCTS = {
    "nbcon_acquire": _CTXT + (
        ("bool", "device", 1, 0), ("bool", "reacquire", 1, 0), ("unsigned char", "how", 1, 0),
        ("unsigned char", "prev_prio", 1, 0), ("unsigned char", "prev_req_prio", 1, 0),
        ("bool", "prev_unsafe", 1, 0), ("bool", "unsafe_takeover", 1, 0),
        ("unsigned int", "prev_cpu", 4, 0), ("u32", "old_state", 4, 0),
        ("u32", "new_state", 4, 0)),
    "nbcon_handover_request": _CTXT + (
        ("unsigned char", "owner_prio", 1, 0), ("unsigned int", "owner_cpu", 4, 0),
        ("u32", "old_state", 4, 0), ("u32", "new_state", 4, 0)),
    "nbcon_handover_timeout": _CTXT + (
        ("bool", "aborted", 1, 0), ("bool", "removed", 1, 0),
        ("unsigned char", "owner_prio", 1, 0), ("unsigned int", "owner_cpu", 4, 0),
        ("unsigned int", "spins", 4, 0), ("u64", "waited_ns", 8, 0),
        ("u32", "old_state", 4, 0), ("u32", "new_state", 4, 0)),
    "nbcon_release": _CTXT + (
        ("bool", "handover", 1, 0), ("unsigned char", "to_prio", 1, 0),
        ("u32", "old_state", 4, 0), ("u32", "new_state", 4, 0)),
}
_FIRST_STRUCTS = dict(_STRUCTS, nbcon_acquire=_ACQUIRE_FIRST, nbcon_handover_timeout=_CTXT + (
    ("unsigned char", "owner_prio", 1, 0), ("unsigned int", "owner_cpu", 4, 0),
    ("unsigned int", "waited_us", 4, 0), ("u32", "old_state", 4, 0),
    ("u32", "new_state", 4, 0)))


def _symbolic(field, names):
    return "__print_symbolic(REC->%s, %s)" % (field, ", ".join(
        '{ %d, "%s" }' % (i, n) for i, n in enumerate(names)))


def _prio(field):
    return _symbolic(field, PRIOS)


_HOW = ("direct", "handover", "takeover", "hostile")
_FIRST_HOW = ("direct", "handover", "hostile")
_CTXT_PRINT = ("con=%s%d prio=%s thread=%d",
               ["REC->con", "REC->index", _prio("prio"), "REC->thread"])
_OWNER_PRINT = ("owner_cpu=%u owner_prio=%s", ["REC->owner_cpu", _prio("owner_prio")])
_WORDS_PRINT = ("old_state=%u new_state=%u", ["REC->old_state", "REC->new_state"])


def _acquire_print(how, reacquire=True):
    extra = ("reacquire=%d ", ["REC->reacquire"]) if reacquire else ("", [])
    return ("con=%s%d how=%s prio=%s thread=%d device=%d " + extra[0] + "prev_cpu=%u "
            "prev_prio=%s prev_req_prio=%s prev_unsafe=%d unsafe_takeover=%d old_state=%u "
            "new_state=%u",
            ["REC->con", "REC->index", _symbolic("how", how), _prio("prio"), "REC->thread",
             "REC->device"] + extra[1] + [
             "REC->prev_cpu", _prio("prev_prio"), _prio("prev_req_prio"),
             "REC->prev_unsafe", "REC->unsafe_takeover", "REC->old_state", "REC->new_state"])


def _join(*parts):
    return (" ".join(p[0] for p in parts), [a for p in parts for a in p[1]])


_PRINTS = {
    "nbcon_acquire": _acquire_print(_HOW),
    "nbcon_handover_request": _join(_CTXT_PRINT, _OWNER_PRINT, _WORDS_PRINT),
    "nbcon_handover_timeout": _join(
        _CTXT_PRINT, _OWNER_PRINT,
        ("reason=%s removed=%d waited_ns=%llu spins=%u",
         ['REC->aborted ? "aborted" : "timeout"', "REC->removed", "REC->waited_ns",
          "REC->spins"]),
        _WORDS_PRINT),
    "nbcon_release": _join(_CTXT_PRINT, ("handover=%d to_prio=%s",
                                         ["REC->handover", _prio("to_prio")]), _WORDS_PRINT),
}
_FIRST_PRINTS = dict(_PRINTS, nbcon_acquire=_acquire_print(_FIRST_HOW, reacquire=False),
                     nbcon_handover_timeout=_join(_CTXT_PRINT, _OWNER_PRINT,
                                                  ("waited_us=%u", ["REC->waited_us"]),
                                                  _WORDS_PRINT))


def _layout(fields):
    """[(C type, field, offset, size, signed)] with natural alignment,
    and the record's size."""
    out, off = [], 8
    for ctype, name, size, signed in fields:
        align = 1 if "[" in name else size
        off = (off + align - 1) // align * align
        out.append((ctype, name, off, size, signed))
        off += size
    return out, off


def _format(name, event_id, fields, printed):
    text = "name: %s\nID: %d\nformat:\n%s" % (name, event_id, _COMMON)
    for ctype, field, off, size, signed in _layout(fields)[0]:
        text += "\tfield:%s %s;\toffset:%d;\tsize:%d;\tsigned:%d;\n" % (
            ctype, field, off, size, signed)
    fmt, args = printed
    return (text + '\nprint fmt: "%s", %s\n' % (fmt, ", ".join(args))).encode()


def _values(fields, how):
    """The struct's values of an event's printed fields."""
    v = dict(fields)
    con = re.match(r"(.*?)(\d+)$", v.pop("con"))
    v["con"], v["index"] = con.group(1).encode(), int(con.group(2))
    for k in ("prio", "prev_prio", "prev_req_prio", "owner_prio", "to_prio"):
        if k in v:
            v[k] = PRIOS.index(v[k])
    if "how" in v:
        v["how"] = how.index(v["how"])
    if "reason" in v:
        v["aborted"] = int(v.pop("reason") == "aborted")
    return {k: x if isinstance(x, (bytes, int)) else int(x) for k, x in v.items()}


_PACK = {1: "B", 2: "h", 4: "I", 8: "Q"}
_LINE = re.compile(r"\s*(\S+)-(\d+)\s+(\d+)(\S{5})\s+([\d.]+): (\w+): (.*)$")
_LATENCY_CTX = {"z": "nmi", "h": "hardirq", "s": "softirq", ".": "task"}


def _record(event_id, fields, values, flags, pid):
    layout, size = _layout(fields)
    rec = bytearray(size)
    struct.pack_into("<HBBi", rec, 0, event_id, flags, 1, pid)
    for _, name, off, fsize, _ in layout:
        name = name.split("[")[0]
        if name == "con":
            rec[off:off + len(values[name])] = values[name]
        else:
            struct.pack_into("<" + _PACK[fsize], rec, off, values[name])
    return bytes(rec) + bytes(-len(rec) % 4)


def _page(events):
    """One ring-buffer page of a CPU's [(ts_ns, record)]."""
    data = b""
    last = events[0][0]
    for ts, rec in events:
        delta = ts - last
        last = ts
        assert len(rec) <= 28 * 4 and delta < 1 << 27
        data += struct.pack("<I", len(rec) // 4 | delta << 5) + rec
    assert len(data) <= PAGE - _PAGE_HEADER
    page = struct.pack("<QQ", events[0][0], len(data)) + data
    return page + bytes(PAGE - len(page))


def write_dat(trace, path):
    """Write the events of `trace` (an NbconTrace) as a trace.dat."""
    structs = _FIRST_STRUCTS if trace.first_format else _STRUCTS
    prints = _FIRST_PRINTS if trace.first_format else _PRINTS
    how = _FIRST_HOW if trace.first_format else _HOW
    ids = {name: 1000 + i for i, name in enumerate(structs)}
    per_cpu = {cpu: [] for cpu in range(trace.cpus)}
    comms = {}
    for line in trace.lines[1:]:
        comm, pid, cpu, lat, ts, name, rest = _LINE.match(line).groups()
        fields = dict(kv.split("=", 1) for kv in rest.split())
        comms[int(pid)] = comm
        per_cpu[int(cpu)].append((round(float(ts) * 1e9), _record(
            ids[name], structs[name], _values(fields, how), _FLAGS[_LATENCY_CTX[lat[2]]],
            int(pid))))

    out = bytearray(b"\x17\x08\x44tracing6\0" + struct.pack("<BBI", 0, 8, PAGE))
    for section, text in ((b"header_page\0", _HEADER_PAGE), (b"header_event\0", _HEADER_EVENT)):
        out += section + struct.pack("<Q", len(text)) + text
    out += struct.pack("<I", 0)                               # ftrace events
    out += struct.pack("<I", 1) + b"printk\0" + struct.pack("<I", len(structs))
    for name in structs:
        fmt = _format(name, ids[name], structs[name], prints[name])
        out += struct.pack("<Q", len(fmt)) + fmt
    out += struct.pack("<II", 0, 0)                           # kallsyms, trace_printk
    cmdlines = "".join("%d %s\n" % kv for kv in sorted(comms.items())).encode()
    out += struct.pack("<Q", len(cmdlines)) + cmdlines
    out += struct.pack("<I", trace.cpus)
    out += b"options  \0" + struct.pack("<H", 0)
    out += b"flyrecord\0"
    table = len(out)
    out += bytes(16 * trace.cpus)
    for cpu, events in per_cpu.items():
        if not events:
            continue
        out += bytes(-len(out) % PAGE)
        struct.pack_into("<QQ", out, table + 16 * cpu, len(out), PAGE)
        out += _page(events)
    with open(path, "wb") as f:
        f.write(out)
    return path
