"""The ownership model's output besides the verdict: one file,
intervals.jsonl, next to analysis.json.

`check RESULTS -o RESULTS/analysis.json` writes both in one run of the
analysis; `plot`, `timeline` and the console benchmark
(consolebench_runs.py) read them and never run the analysis again.
The model (model_rfc.py) feeds a Recorder: an interval when an owner's
ownership ends, a mark when it is raised, and every event after the
model took it, with the owner it left.

Invariants:
- one run writes one file, atomically (a .PID.tmp renamed at the end), and
  analysis.json names its id (`model_file`); a reader refuses a file of
  another run, of another version or without its end line, whole;
- rows are in the order the model emitted them: events in the order
  the model took them (chain order), intervals in the order they ended,
  marks in the order they were raised;
- rows go out a batch at a time, and a reader streams them: memory does
  not grow with the trace.

Layout, version 1 (JSON Lines; every line one JSON value):

  line 1   {"format": FORMAT, "version": 1, "id": ..., "rows": {...}}
           ("rows" names the columns below)
  ["O", [[k, label], ...]]   owner labels: "cpu1/hardirq/panic (handover)"
                             or "-" (free)
  ["K", [[k, [name, ...]], ...]]  the field names of an event
  ["E", [event, ...]]        [line, ts, cpu, name, seq, owner, fields,
                             values] + [violations, rules] when the model
                             raised violations since the event before:
                             their number and the rules of those raised
                             on this event's trace line.  name without
                             "nobkl_"; seq null for an event without
                             one; owner (the owner the event left, an
                             "O" number) null for a store; fields a "K"
                             number, values the fields' values as the
                             trace printed them, but a store's: caller,
                             the text's first 70 characters and len,
                             the whole text's length as a number (the
                             console benchmark's bytes per record; a
                             file of an older analysis has no len)
  ["I", [interval, ...]]     [con, cpu, ctx, thread, prio, how, t0, t1, end]
  ["M", [mark, ...]]         [kind, con, cpu, ts, info, line]: kind
                             hostile, handover, timeout, violation (info
                             the rule, line its event's trace line) or
                             trace-loss
  last     ["end", {"events": n, "intervals": n, "marks": n}]

"O" and "K" rows come before the first "E" row that uses them.  The
events are about half of the size of the trace's report text.

Compressed: a Recorder whose path ends in ".gz" (`check -o FILE --gzip`,
intervals.jsonl.gz, what the harness writes for every run) writes the
same lines through gzip; a reader tells the two apart by the file's
first bytes, and read_results() opens the one analysis.json's
`model_file` names.  Writing one name removes a file of the other.
"""

import gzip
import io
import json
import os
import time
import zlib
from collections import namedtuple

FORMAT = "printk-nobkl-stress model intervals"
VERSION = 1
FILE_NAME = "intervals.jsonl"
GZIP_NAME = FILE_NAME + ".gz"
NAMES = (FILE_NAME, GZIP_NAME)   # the names a model file may have
VERDICT_NAME = "analysis.json"
GZIP_LEVEL = 6               # 4-5 times smaller; level 9 is 3 times slower for 1 % less
GZIP_MAGIC = b"\x1f\x8b"

BATCH = 2048                 # rows per line of the file
STORE_TEXT = 70              # characters of a store's text kept (the timeline's)
STORE_FIELDS = ("caller", "text", "len")

ROWS = {
    "O": ["owner", "label"],
    "K": ["fields", "names"],
    "E": ["line", "ts", "cpu", "name", "seq", "owner", "fields", "values", "violations",
          "rules"],
    "I": ["con", "cpu", "ctx", "thread", "prio", "how", "t0", "t1", "end"],
    "M": ["kind", "con", "cpu", "ts", "info", "line"],
}


Event = namedtuple("Event", "line ts cpu name seq con owner fields violations rules")


class ModelFileError(Exception):
    """analysis.json or intervals.jsonl missing, foreign, of another run
    or version, or cut short: one line saying which and what writes it."""


def writes_it(results):
    """The command that writes analysis.json and intervals.jsonl."""
    return "python3 -m analysis check %s -o %s" % (results, os.path.join(results, VERDICT_NAME))


class Recorder:
    """The writing side: the facts sink of the model and the checker
    (interval(), mark()) and the event hook of api.analyse (event())."""

    def __init__(self, path):
        self.path = path
        # checks of one directory side by side (the two readers) each
        # write their own; the last one renamed stays
        self.tmp = "%s.%d.tmp" % (path, os.getpid())
        self.id = "%x-%x" % (time.time_ns(), os.getpid())
        if path.endswith(".gz"):
            self.raw = open(self.tmp, "wb")
            self.out = io.TextIOWrapper(
                gzip.GzipFile(os.path.basename(path)[:-3], "wb", GZIP_LEVEL, self.raw, 0),
                encoding="ascii")
        else:
            self.raw, self.out = None, open(self.tmp, "w")
        self.buf = {"O": [], "K": [], "E": [], "I": [], "M": []}
        self.counts = {"events": 0, "intervals": 0, "marks": 0}
        self.owners = {}             # (cpu, ctx, thread, prio, how) or None -> k
        self.names = {}              # field names -> k
        self.store_names = self.fields_number(STORE_FIELDS)
        self.viol = []               # (rule, line) raised since the last event row
        self.out.write(json.dumps({"format": FORMAT, "version": VERSION, "id": self.id,
                                   "rows": ROWS}) + "\n")

    def interval(self, con, cpu, ctx, thread, prio, how, t0, t1, endhow):
        self.counts["intervals"] += 1
        self.add("I", [con, cpu, ctx, thread, prio, how, t0, t1, endhow])

    def mark(self, kind, con, cpu, ts, info, line=None):
        self.counts["marks"] += 1
        if kind == "violation":
            self.viol.append((info, line))
        self.add("M", [kind, con, cpu, ts, info, line])

    def event(self, ev, con):
        self.counts["events"] += 1
        if con is None:
            row = [ev.lineno, ev.ts, ev.cpu, "store", ev.seq, None, self.store_names,
                   [ev.caller, ev.text[:STORE_TEXT], ev.len]]
        else:
            f = ev.fields
            seq = f.get("seq")
            row = [ev.lineno, ev.ts, ev.cpu, ev.name[6:],
                   int(seq) if seq is not None and seq.isdigit() else None,
                   self.owner_label(con.owner), self.fields_number(tuple(f)), list(f.values())]
        if self.viol:
            row += [len(self.viol), [r for r, line in self.viol if line == ev.lineno]]
            self.viol = []
        self.add("E", row)

    def owner_label(self, o):
        """The index of the owner's label, defined in an "O" row."""
        key = None if o is None else (o.cpu, o.ctx, o.thread, o.prio, o.how)
        k = self.owners.get(key)
        if k is None:
            k = self.owners[key] = len(self.owners)
            self.buf["O"].append([k, "-" if o is None else "%s (%s)" % (o.label(), o.how)])
        return k

    def fields_number(self, names):
        """The number of a tuple of field names, defined in a "K" row."""
        k = self.names.get(names)
        if k is None:
            k = self.names[names] = len(self.names)
            self.buf["K"].append([k, list(names)])
        return k

    def add(self, kind, row):
        b = self.buf[kind]
        b.append(row)
        if len(b) >= BATCH:
            self.flush(kind)

    def flush(self, kind):
        if kind == "E":
            self.flush("O")          # definitions before the events that use them
            self.flush("K")
        b = self.buf[kind]
        if b:
            self.out.write(json.dumps([kind, b], separators=(",", ":")) + "\n")
            b.clear()

    def close(self):
        """Write the rest and the end line, put the file in place; returns
        what analysis.json says of it (`model_file`)."""
        for kind in ("E", "I", "M"):
            self.flush(kind)
        self.out.write(json.dumps(["end", self.counts]) + "\n")
        self.close_out()
        os.replace(self.tmp, self.path)
        # an earlier run's file under the other name would sit next to
        # this run's analysis.json
        self.unlink(self.siblings())
        return {"name": os.path.basename(self.path), "format_version": VERSION, "id": self.id}

    def close_out(self):
        self.out.close()
        if self.raw is not None:
            self.raw.close()

    def siblings(self):
        """The model files of earlier runs: the other names of NAMES."""
        d, name = os.path.split(self.path)
        return [os.path.join(d, n) for n in NAMES if n != name]

    @staticmethod
    def unlink(paths):
        for p in paths:
            try:
                os.unlink(p)
            except FileNotFoundError:
                pass

    def abort(self):
        """No file from a run that did not finish; none of an earlier run
        either (it would sit next to this run's analysis.json)."""
        self.close_out()
        self.unlink([self.tmp, self.path] + self.siblings())


def model_name(d, verdict):
    """The model file's name in directory d: the one analysis.json names
    (`model_file`), else the first of NAMES there, else FILE_NAME."""
    named = verdict.get("model_file") if isinstance(verdict, dict) else None
    name = named.get("name") if isinstance(named, dict) else None
    if name in NAMES:
        return name
    return next((n for n in NAMES if os.path.isfile(os.path.join(d, n))), FILE_NAME)


def read_results(results, again=None):
    """(verdict, ModelFile) of a directory holding analysis.json and
    intervals.jsonl or intervals.jsonl.gz (or of its analysis.json);
    ModelFileError when one is missing, foreign, of another version or
    run, or cut short.  `again` ends its message: what writes the files
    again (default: run `writes_it()`)."""
    d = os.path.dirname(results) if os.path.isfile(results) else results
    d = d or "."
    again = again or "run `%s`" % writes_it(d)
    vpath = os.path.join(d, VERDICT_NAME)
    if not os.path.isfile(vpath):
        raise ModelFileError("no %s in %s: %s first" % (VERDICT_NAME, d, again))
    verdict, bad = None, None
    try:
        with open(vpath) as f:
            verdict = json.load(f)
    except (OSError, ValueError) as e:
        bad = e
    mpath = os.path.join(d, model_name(d, verdict))
    if not os.path.isfile(mpath):
        why = ""
        if isinstance(verdict, dict) and verdict.get("error"):
            why = " (%s holds no analysis: %s)" % (VERDICT_NAME, verdict["error"])
        raise ModelFileError("no %s in %s%s: %s first" % (os.path.basename(mpath), d, why,
                                                          again))
    if bad is not None:
        raise ModelFileError("%s is not a JSON verdict (%s): %s" % (vpath, bad, again))
    if not isinstance(verdict, dict):
        raise ModelFileError("%s is not a JSON verdict: %s" % (vpath, again))
    if verdict.get("error"):
        raise ModelFileError("%s holds no analysis (%s)" % (vpath, verdict["error"]))
    model = ModelFile(mpath, again)
    named = (verdict.get("model_file") or {}).get("id")
    if named != model.id:
        raise ModelFileError("%s and %s were written by different runs of the analysis: %s"
                             % (mpath, vpath, again))
    return verdict, model


def gzipped(path):
    """True when the file at path is gzip's (by its first bytes)."""
    with open(path, "rb") as f:
        return f.read(2) == GZIP_MAGIC


def tail(f, n=4096):
    """The last n bytes of binary file f, read to its end (a gzip file
    cannot seek there without reading it, and reading it to the end
    checks its CRC: a cut one raises EOFError)."""
    last = b""
    while True:
        chunk = f.read(1 << 20)
        if not chunk:
            return last
        last = (last + chunk)[-n:]


class ModelFile:
    """The reading side: the rows of an intervals.jsonl, plain or gzip,
    streamed."""

    def __init__(self, path, again):
        self.path = path
        try:
            self.gzip = gzipped(path)
            with self.open("rb") as f:
                head = f.readline()
                if self.gzip:
                    end = tail(f)
                else:
                    f.seek(max(0, os.path.getsize(path) - 4096))
                    end = f.read()
                last = end.rstrip(b"\n").rsplit(b"\n", 1)[-1]
            header = json.loads(head)
        except EOFError:
            raise ModelFileError("%s is cut short (its gzip stream ends early): %s"
                                 % (path, again))
        except (OSError, ValueError, zlib.error) as e:
            raise ModelFileError("%s is not an intervals file (%s): %s" % (path, e, again))
        if not isinstance(header, dict) or header.get("format") != FORMAT:
            raise ModelFileError("%s is not an intervals file: %s" % (path, again))
        if header.get("version") != VERSION:
            raise ModelFileError("%s is of version %s, this analysis reads version %d: %s"
                                 % (path, header.get("version"), VERSION, again))
        try:
            end = json.loads(last)
        except ValueError:
            end = None
        if not (isinstance(end, list) and end[:1] == ["end"]):
            raise ModelFileError("%s is cut short (no end line): %s" % (path, again))
        self.id = header.get("id")
        self.counts = end[1]

    def open(self, mode="r"):
        """The file, decompressed when it is gzip's; mode "r" or "rb"."""
        if not self.gzip:
            return open(self.path, mode)
        if mode == "rb":
            return gzip.open(self.path, "rb")
        return gzip.open(self.path, "rt", encoding="ascii")

    def rows(self, kind):
        """The rows of one kind ("O", "K", "E", "I", "M"), in file order."""
        with self.open() as f:
            f.readline()
            for line in f:
                k, rows = json.loads(line)
                if k == kind:
                    yield from rows

    def events(self):
        """Event(line, ts, cpu, name, seq, con, owner, fields, violations,
        rules): owner the label (None for a store), fields a dict."""
        owners, names = {}, {}
        with self.open() as f:
            f.readline()
            for line in f:
                k, rows = json.loads(line)
                if k == "O":
                    owners.update(rows)
                elif k == "K":
                    names.update(rows)
                elif k == "E":
                    for r in rows:
                        fields = dict(zip(names[r[6]], r[7]))
                        yield Event(r[0], r[1], r[2], r[3], r[4], fields.get("con"),
                                    owners.get(r[5]), fields, *(r[8:] or (0, ())))

    def intervals(self):
        return self.rows("I")

    def marks(self):
        return self.rows("M")
