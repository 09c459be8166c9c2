"""Streaming reader for `trace-cmd report` text output.

The trace is never loaded into memory: `iter_report()` yields one item per
line.  Event lines of the `printk` system (`nobkl_*`, `console`) are parsed
into `Event` tuples (the 6.12 target's `nbcon_*` and `vprintk_store`
into the same contract events, nbcon_events.py); markers for lost trace data become `Drop` tuples; the
`cpus=N` header becomes a `Header`.  Everything else is counted and skipped.

Accepted line shapes (trace-cmd 3.1.6, tracecmd/trace-read.c):

    <comm>-<pid> [<cpu>] <ts>: <event>: <fields>          (default)
    <comm>-<pid> <cpu><latflags> <ts>: <event>: <fields>  (report -l)
    <comm>-<pid> [<cpu>] <latflags> <ts>: <event>: ...    (kernel `trace` file)
    cpus=<n>
    CPU:<n> [<count> EVENTS DROPPED]      (record->missed_events > 0)
    CPU:<n> [EVENTS DROPPED]              (missed, count unknown)
    CPU:<n> [LOST <count> EVENTS]         (kernel trace file format)
    [<count> EVENTS DROPPED]
"""

import re
from collections import namedtuple

from . import nbcon_events

Event = namedtuple("Event", "lineno name cpu ts fields")
Drop = namedtuple("Drop", "lineno cpu count text")
# A nobkl event the reader could not read (a line or record that does not
# parse): the trace is damaged from there on, like after a Drop.  cpu and
# ts are None when they did not parse either.
Damage = namedtuple("Damage", "lineno cpu ts text")
Header = namedtuple("Header", "lineno key value")


class Store(namedtuple("Store", "lineno cpu ts seq len level caller text")):
    """A `nobkl_store` event, with its numbers as ints.  Three quarters of
    all events are stores and the checker looks at each: a plain tuple is
    what its hot path can afford (no dict, no number parsing).  `name`
    and `fields` make it look like an Event where that is convenient."""

    __slots__ = ()
    name = "nobkl_store"

    @property
    def fields(self):
        """The fields as `trace-cmd report` prints them (a new dict)."""
        return {"seq": str(self.seq), "len": str(self.len), "level": str(self.level),
                "caller": self.caller, "text": self.text}


def store_of(ev):
    """The Store of a nobkl_store Event; ValueError/KeyError when a field
    is missing or a number is not one."""
    f = ev.fields
    return Store(ev.lineno, ev.cpu, ev.ts, int(f["seq"]), int(f["len"]), int(f["level"]),
                 f["caller"], f["text"])


class InputError(Exception):
    """Input that cannot be analysed (missing, empty, truncated, foreign)."""


# The header part of an event line: everything up to the event name.
_HEAD_RE = re.compile(
    r"\s*(?P<comm>.*?)-(?P<pid>\d+)\s+"
    r"(?:\[(?P<cpu>\d+)\](?:\s+(?P<blat>[^\s\d][^\s]*))?|(?P<lcpu>\d+)(?P<lat>[^\s\d]\S*)"
    r"|(?P<ncpu>\d+))"
    r"\s+(?P<ts>\d+(?:\.\d+)?):\s*$"
)
_DROP_RE = re.compile(
    r"^\s*(?:CPU:\s*(?P<cpu>\d+)\s+)?\[(?:(?P<n1>\d+)\s+EVENTS DROPPED|EVENTS DROPPED|LOST\s+(?P<n2>\d+)\s+EVENTS)\]"
)
_FAST_LINE = re.compile(r"[^\[]*\[(\d+)\] +(?:[^\s\d]\S* +)?(\d+\.\d+): (nobkl_\w+|console): *")
_CPUS_RE = re.compile(r"^\s*cpus=(\d+)\s*$")

# The state words of the transition an event reports (interfaces.md
# section 1); kernels before the transition count do not have them.
TRANS_FIELDS = ("old_state", "new_state")
# Whether the acquired state carries the sticky mark of a takeover inside
# an unsafe section (nobkl_acquire); kernels before it do not have it.
MARK_FIELDS = ("unsafe_takeover",)
# The fields an older kernel's format may lack, newest first: a format
# lacks the MARK_FIELDS, or those and the TRANS_FIELDS.
OPTIONAL_FIELDS = MARK_FIELDS + TRANS_FIELDS

# Fields of every nobkl event (interfaces.md section 1), in order; the
# OPTIONAL_FIELDS among them may be missing.
EVENT_FIELDS = {
    "nobkl_acquire": ("con", "how", "prio", "thread", "ctx", "prev_locked",
                      "prev_cpu", "prev_prio", "prev_thread", "prev_unsafe")
    + MARK_FIELDS + TRANS_FIELDS,
    "nobkl_handover_request": ("con", "prio", "thread", "ctx", "owner_cpu", "owner_prio")
    + TRANS_FIELDS,
    "nobkl_handover_grant": ("con", "prio", "thread", "ctx", "to_cpu", "to_prio") + TRANS_FIELDS,
    "nobkl_handover_timeout": ("con", "prio", "thread", "ctx", "owner_cpu", "owner_prio",
                               "waited_us") + TRANS_FIELDS,
    "nobkl_release": ("con", "prio", "thread", "ctx", "handover") + TRANS_FIELDS,
    "nobkl_lost": ("con", "prio", "thread", "ctx", "where", "owner_cpu", "owner_prio"),
    "nobkl_emit": ("con", "seq", "len", "dropped", "prio", "thread", "ctx"),
    "nobkl_commit": ("con", "seq", "prio", "thread", "ctx") + TRANS_FIELDS,
    "nobkl_store": ("seq", "len", "level", "caller", "text"),
    "nobkl_dataless": ("seq",),
}
# the 6.12 target's events as they print: read like those above, then
# translated into them (nbcon_events.translate())
EVENT_FIELDS.update(nbcon_events.TEXT_FIELDS)
# The fields each event's format may lack: the OPTIONAL_FIELDS, and for a
# 6.12 event those of one of its formats only (nbcon_events.FORMATS).
EVENT_OPTIONAL = {name: OPTIONAL_FIELDS + nbcon_events.OPTIONAL_FIELDS.get(name, ())
                  for name in EVENT_FIELDS}


class ReportStats:
    def __init__(self):
        self.lines = 0
        self.events = 0          # printk-system events parsed
        self.other_events = 0    # event lines of other systems
        self.malformed = 0       # nobkl lines that could not be parsed
        self.malformed_examples = []
        self.unknown = 0         # lines that are neither events nor headers
        self.cpus = None
        self.drops = []          # Drop tuples (bounded)
        self.drop_count = 0
        self.continuations = 0   # text lines glued to the previous store
        self.first_ts = None
        self.last_ts = None
        self.truncated_last_line = False
        self.cpu_last_ts = {}    # cpu -> timestamp of its last event read
        self.target = None       # the kernel target its events are of (nbcon_events)

    def saw_target(self, name):
        """Note the target of a console event read; InputError when a
        trace mixes the two targets' events."""
        t = nbcon_events.target_of_event(name)
        if t is None or t == self.target:
            return
        if self.target is not None:
            raise InputError("the trace has events of both the %s and the %s kernel "
                             "(%s)" % (self.target, t, name))
        self.target = t

    def add_drop(self, d):
        """Count a trace-loss marker (Drop); keeps the first 100."""
        self.drop_count += 1
        if len(self.drops) < 100:
            self.drops.append(d)
        return d


def _fast_re(name, keys):
    parts = []
    for k in keys:
        if k == "text":
            # greedy up to the line end (a lazy `.*?` before `$` costs a
            # backtracking step per character); a text with a CR inside
            # takes the slow path
            parts.append("text=(?P<text>[^\r\n]*)")
        else:
            parts.append("%s=(?P<%s>\\S+)" % (k, k))
    return re.compile(r"\s*" + " ".join(parts) + (r"\s*$" if keys[-1] != "text" else r"\r?\n?$"), re.S)


def _fast_matcher(name, keys):
    """The fast fields regex of an event; for an event with optional
    fields one that also takes the line of an older kernel without them
    (without the MARK_FIELDS, then without the TRANS_FIELDS as well)."""
    variants = [keys]
    for older in (MARK_FIELDS, TRANS_FIELDS):
        if all(k in variants[-1] for k in older):
            variants.append(tuple(k for k in variants[-1] if k not in older))
    matchers = [_fast_re(name, v).match for v in variants]
    if len(matchers) == 1:
        return matchers[0]

    def match(s, pos=0):
        for m in matchers:
            r = m(s, pos)
            if r is not None:
                return r
        return None
    return match


_FAST = {n: _fast_matcher(n, k) for n, k in EVENT_FIELDS.items()}


def _parse_fields(name, rest):
    """key=value pairs; `text=` (nobkl_store only) runs to the end of line."""
    m = _FAST[name](rest)
    if m is not None:
        return m.groupdict()
    if name == "nobkl_store":
        i = rest.find(" text=")
        if i >= 0:
            head, text = rest[:i], rest[i + 6:]
        elif rest.startswith("text="):
            head, text = "", rest[5:]
        else:
            raise ValueError("no text= field")
        f = dict(t.split("=", 1) for t in head.split())
        f["text"] = text
    else:
        f = dict(t.split("=", 1) for t in rest.split())
    for k in EVENT_FIELDS[name]:
        if k not in f and k not in EVENT_OPTIONAL[name]:
            raise ValueError("missing field %s" % k)
    if (TRANS_FIELDS[0] in f) != (TRANS_FIELDS[1] in f):
        raise ValueError("missing field %s" % (TRANS_FIELDS[0] if TRANS_FIELDS[1] in f
                                               else TRANS_FIELDS[1]))
    return f


def parse_lines(lines, stats=None):
    """Parse an iterable of report text lines.  Yields Event/Drop/Header.

    Every printk event line is first reduced to (name, cpu, ts, fields) -
    by the fast regex for the default report layout, else by the general
    header regex - and then goes through one common tail that counts it
    and holds a `nobkl_store` back one line (its text may continue on the
    following raw lines); the further lines of a multi-line
    `printk:console` message are part of that event."""
    if stats is None:
        stats = ReportStats()
    head_match = _HEAD_RE.match
    last_store = None
    after_console = False   # the lines of a printk:console message go on
    lineno = 0
    raw = ""
    fast_match = _FAST_LINE.match
    fast_fields = _FAST
    cpu_cache = {}
    for raw in lines:
        lineno += 1
        name = None          # set for a printk event line
        fields = None        # its fields; None: not a nobkl event (or malformed)
        err = None
        broken_head = False  # ": nobkl_" in a line whose header does not parse
        translated = False   # a 6.12 event read into the contract
        m = fast_match(raw)
        if m is not None:
            # fast path: default `trace-cmd report` layout
            scpu, sts, name = m.groups()
            cpu = cpu_cache.get(scpu)
            if cpu is None:
                cpu = cpu_cache[scpu] = int(scpu)
            ts = float(sts)
            if name != "console":
                ff = fast_fields.get(name)
                fm = ff(raw, m.end()) if ff is not None else None
                if fm is not None:
                    fields = fm.groupdict()
                else:
                    name = None      # let the general path decide
        if name is None:
            line = raw.rstrip("\r\n")
            i = line.find(": nobkl_")
            if i < 0:
                i = _find_nbcon(line)
            if i < 0:
                i = line.find(": console:")
            if i >= 0:
                m = head_match(line, 0, i + 1)
                if m is not None:
                    j = line.find(":", i + 2)
                    name = line[i + 2:j] if j > 0 else ""
                    cpu = int(m.group("cpu") or m.group("lcpu") or m.group("ncpu"))
                    ts = float(m.group("ts"))
                    if name in EVENT_FIELDS:
                        try:
                            f = _parse_fields(name, line[j + 1:])
                            if name in nbcon_events.TEXT_FIELDS:
                                stats.saw_target(name)
                                translated = True
                                name, f = nbcon_events.translate(
                                    name, f, _latency_ctx(m, lineno))
                            fields = f
                        except ValueError as e:
                            err = e
                    elif name.startswith("nobkl_"):
                        err = ValueError("unknown event %s" % name[:40])
                elif line[i:i + 8] == ": nobkl_":
                    broken_head = True
        if name is not None:
            # a printk event line (console, nobkl_*, malformed nobkl_*)
            after_console = False
            if stats.first_ts is None:
                stats.first_ts = ts
            stats.last_ts = ts
            stats.cpu_last_ts[cpu] = ts
            if last_store is not None:
                yield _typed(last_store, stats)
                last_store = None
            if fields is None:
                if err is None:
                    # printk:console (recorded with -e printk): not used;
                    # the further lines of a multi-line message follow
                    stats.other_events += 1
                    after_console = name == "console"
                else:
                    yield _malformed(stats, lineno, cpu, ts, raw, err)
                continue
            stats.events += 1
            if not translated and stats.target != nbcon_events.RFC_TARGET:
                stats.saw_target(name)
            ev = Event(lineno, name, cpu, ts, fields)
            if name == "nobkl_store":
                # Hold it back one line: a record text with embedded
                # newlines continues on the following raw lines.
                last_store = ev
            else:
                yield ev
            continue
        # Not a printk event line.
        if "[UNKNOWN EVENT]" in line:
            # a record of no event the file describes: a damaged one
            if last_store is not None:
                yield _typed(last_store, stats)
                last_store = None
            yield _malformed(stats, lineno, None, None, raw,
                             ValueError("a record of no event in the file"))
            continue
        if after_console and line and not _looks_like_event(line) and \
                _DROP_RE.match(line) is None and _CPUS_RE.match(line) is None:
            continue
        after_console = False
        if last_store is not None and line and not _looks_like_event(line):
            dm = _DROP_RE.match(line)
            cm = _CPUS_RE.match(line)
            if dm is None and cm is None:
                last_store.fields["text"] += "\n" + line
                stats.continuations += 1
                continue
        if last_store is not None:
            yield _typed(last_store, stats)
            last_store = None
        if broken_head:
            yield _malformed(stats, lineno, None, None, raw,
                             ValueError("event header does not parse"))
            continue
        if not line.strip():
            continue
        dm = _DROP_RE.match(line)
        if dm is not None:
            n = dm.group("n1") or dm.group("n2")
            cpu = dm.group("cpu")
            yield stats.add_drop(Drop(lineno, int(cpu) if cpu is not None else None,
                                      int(n) if n is not None else None, line.strip()))
            continue
        cm = _CPUS_RE.match(line)
        if cm is not None:
            stats.cpus = int(cm.group(1))
            yield Header(lineno, "cpus", int(cm.group(1)))
            continue
        om = _ANY_EVENT_RE.match(line)
        if om is not None:
            stats.other_events += 1
            if om.group("cpu") is not None:
                stats.cpu_last_ts[int(om.group("cpu"))] = float(om.group("ts"))
        else:
            stats.unknown += 1
    if last_store is not None:
        yield _typed(last_store, stats)
    stats.lines = lineno
    if lineno and not raw.endswith("\n"):
        # the last line has no newline: the report was cut
        stats.truncated_last_line = True


def _find_nbcon(line):
    """Where the name of a 6.12 event starts in an event line (at its
    ": "), or -1."""
    i = line.find(": nbcon_")
    return i if i >= 0 else line.find(": vprintk_store:")


def _latency_ctx(head, lineno):
    """The context of a 6.12 event from its line's latency column (the
    _HEAD_RE match); InputError without one: the events have no ctx
    field, only `trace-cmd report -l` shows it."""
    column = head.group("lat") or head.group("blat")
    if column is None:
        raise InputError("line %d: a 6.12 (nbcon) event without the latency column: "
                         "its context is in the common flags, read the trace with "
                         "`trace-cmd report -l`" % lineno)
    return nbcon_events.ctx_of_latency(column)


def _malformed(stats, lineno, cpu, ts, raw, err):
    """Count a nobkl line that does not parse; its Damage item."""
    stats.malformed += 1
    text = "line %d: %s (%s)" % (lineno, raw.rstrip("\r\n")[:160], err)
    if len(stats.malformed_examples) < 5:
        stats.malformed_examples.append(text)
    return Damage(lineno, cpu, ts, text)


def _typed(ev, stats):
    """A held-back nobkl_store Event as a Store; left an Event when its
    numbers do not parse (the checker reports the bad value); Damage when
    store_problem() finds one."""
    try:
        st = store_of(ev)
    except (KeyError, ValueError):
        return ev
    why = store_problem(st)
    if why is not None:
        return _malformed(stats, ev.lineno, ev.cpu, ev.ts, "nobkl_store: seq=%d level=%d"
                          % (st.seq, st.level), ValueError(why))
    return st


def store_problem(st):
    """Why a Store is no record the tracepoint can report, or None: the
    ringbuffer keeps a record's level in three bits (the C reader checks
    the same, store_level_ok())."""
    if not 0 <= st.level <= 7:
        return "level is no printk level (0-7)"
    return None


_ANY_EVENT_RE = re.compile(
    r"^\s*.*?-\d+\s+(?:\[(?P<cpu>\d+)\]|\d+\S*)\s+.*?(?P<ts>\d+(?:\.\d+)?):\s+[\w:]+:")


def _looks_like_event(line):
    return _ANY_EVENT_RE.match(line) is not None
