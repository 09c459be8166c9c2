"""The ownership model's output besides the verdict: one file,
intervals.jsonl, next to analysis.json.

`check RESULTS -o RESULTS/analysis.json` writes both in one run of the
analysis; `plot` and `timeline` read them and never run the analysis
again.  The model (model_rfc.py) feeds a Recorder: an interval when
an owner's ownership ends, a mark when it is raised, and every event
after the model took it, with the owner it left.

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
                             trace printed them (a store's: caller and
                             the text's first 70 characters)
  ["I", [interval, ...]]     [con, cpu, ctx, thread, prio, how, t0, t1, end]
  ["M", [mark, ...]]         [kind, con, cpu, ts, info, line]: kind
                             hostile, handover, timeout, violation (info
                             the rule, line its event's trace line) or
                             trace-loss
  last     ["end", {"events": n, "intervals": n, "marks": n}]

"O" and "K" rows come before the first "E" row that uses them.  The
events are about half of the size of the trace's report text.
"""

import json
import os
import time
from collections import namedtuple

FORMAT = "printk-nobkl-stress model intervals"
VERSION = 1
FILE_NAME = "intervals.jsonl"
VERDICT_NAME = "analysis.json"

BATCH = 2048                 # rows per line of the file
STORE_TEXT = 70              # characters of a store's text kept (the timeline's)
STORE_FIELDS = ("caller", "text")

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
        self.out = open(self.tmp, "w")
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
                   [ev.caller, ev.text[:STORE_TEXT]]]
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
        self.out.close()
        os.replace(self.tmp, self.path)
        return {"name": os.path.basename(self.path), "format_version": VERSION, "id": self.id}

    def abort(self):
        """No file from a run that did not finish; none of an earlier run
        either (it would sit next to this run's analysis.json)."""
        self.out.close()
        for p in (self.tmp, self.path):
            try:
                os.unlink(p)
            except FileNotFoundError:
                pass


def read_results(results):
    """(verdict, ModelFile) of a directory holding analysis.json and
    intervals.jsonl (or of its analysis.json); ModelFileError when one
    is missing, foreign, of another version or run, or cut short."""
    d = os.path.dirname(results) if os.path.isfile(results) else results
    d = d or "."
    again = "run `%s`" % writes_it(d)
    vpath, mpath = os.path.join(d, VERDICT_NAME), os.path.join(d, FILE_NAME)
    for p in (vpath, mpath):
        if not os.path.isfile(p):
            raise ModelFileError("no %s in %s: %s first" % (os.path.basename(p), d, again))
    try:
        with open(vpath) as f:
            verdict = json.load(f)
    except (OSError, ValueError) as e:
        raise ModelFileError("%s is not a JSON verdict (%s): %s" % (vpath, e, again))
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


class ModelFile:
    """The reading side: the rows of an intervals.jsonl, streamed."""

    def __init__(self, path, again):
        self.path = path
        try:
            with open(path, "rb") as f:
                head = f.readline()
                f.seek(max(0, os.path.getsize(path) - 4096))
                last = f.read().rstrip(b"\n").rsplit(b"\n", 1)[-1]
            header = json.loads(head)
        except (OSError, ValueError) as e:
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

    def rows(self, kind):
        """The rows of one kind ("O", "K", "E", "I", "M"), in file order."""
        with open(self.path) as f:
            f.readline()
            for line in f:
                k, rows = json.loads(line)
                if k == kind:
                    yield from rows

    def events(self):
        """Event(line, ts, cpu, name, seq, con, owner, fields, violations,
        rules): owner the label (None for a store), fields a dict."""
        owners, names = {}, {}
        with open(self.path) as f:
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
