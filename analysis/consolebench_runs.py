"""What one run of the console benchmark left, as figures.

A benchmark directory holds a run per mode and round (<mode>-<round>/,
tools/pns/bench.py).  run_figures() reads one of them: the stressor's
histograms (consolebench_hist.py), the records on the serial log, and
from the files the run's trace analysis wrote (analysis.json and the
intervals file next to it, intervals.py) the records' stores and the
console's commits, and the explanation of emergency records past their
bound; load_rounds() reads them all, by round.  The analysis does not
run again: a run whose trace has no analysis files, or files of an
analysis that did not record what is read here, is an error
(RunFilesError) that names `make recheck`, which writes them.
"""

import json
import os
import re

from . import consolelog, emergency_bound, emergency_report, intervals
from .consolebench_hist import latency_figures, read_latency
from .pstress import parse_pstress


MODES = ("nobkl", "legacy", "floor")


_DROP = re.compile(r"\*\* (\d+) printk messages dropped \*\*")


def console_output(log_path):
    """What reached the console: complete stressor records and their
    bytes, the records the console said it dropped, and the span of the
    stressor records' timestamps (s; when they were stored, not printed)."""
    records = nbytes = dropped = 0
    first = last = None
    for line in consolelog.lines(log_path):
        m = _DROP.search(line.raw)
        if m:
            dropped += int(m.group(1))
            continue
        # a stressor record on a line of its own, as the kernel prints it
        if line.stamp is None or line.caller is not None or line.glued or \
                not line.text.startswith("pstress "):
            continue
        rec = parse_pstress(line.text)
        if rec is None or not rec[2]:
            continue
        records += 1
        nbytes += len(line.raw) + len(line.end)
        ts = float(line.stamp)
        first = ts if first is None else first
        last = ts
    span = (last - first) if first is not None else 0.0
    return {"records": records, "bytes": nbytes, "dropped": dropped, "span_s": span}


class RunFilesError(Exception):
    """A run with a trace whose analysis' files (analysis.json and the
    intervals file next to it) are missing, foreign, cut short or of an
    analysis that did not record what the benchmark reads: one line,
    naming the run and the command that writes them again."""


def recheck(res):
    """What writes a run's analysis files again: the harness's recheck,
    which also rewrites the verdict.json the benchmark reads."""
    return "run `make recheck RESULTS=%s`" % res


def run_model(res):
    """The model file (intervals.ModelFile) of the run's trace analysis:
    what the console's figures are read from, so that the analysis does
    not run again.  None when the run has nothing they could come from:
    no trace.dat and no analysis.json, or an analysis.json that holds no
    analysis (the legacy console's runs: the trace has no NOBKL console
    events).  RunFilesError otherwise when the files are not there or
    not whole."""
    try:
        with open(os.path.join(res, intervals.VERDICT_NAME)) as f:
            verdict = json.load(f)
    except FileNotFoundError:
        if not os.path.exists(os.path.join(res, "trace.dat")):
            return None
        raise RunFilesError("no %s next to %s: %s" % (
            intervals.VERDICT_NAME, os.path.join(res, "trace.dat"), recheck(res)))
    except (OSError, ValueError):
        verdict = None          # read_results() says what is wrong with it
    if isinstance(verdict, dict) and verdict.get("error"):
        return None
    try:
        return intervals.read_results(res, recheck(res))[1]
    except intervals.ModelFileError as e:
        raise RunFilesError(str(e)) from None


# What a record adds to the console's output besides its text: its
# "[  sec.usec] " prefix and CR LF
LINE_EXTRA = 17


class ConsoleTrace:
    """What the trace says about records and the console, as the run's
    analysis recorded it (the store and commit events of its model file):
    each record's store (time, length of its text, stored in an
    emergency section or not) and when the NOBKL console finished
    printing it (its earliest commit of the seq, on any console).  The
    legacy console of 6.1 traces no output time (its printk:console
    event fires when the record is stored), so its figures here are
    left out.

    The figures depend on the times of the stores and first commits
    only, never on the order the events come in (emergency_bound.py):
    the model file's events, in the order the model took them, give
    what `trace-cmd report`'s, in time order, gave; the earliest commit
    is the first one the report lists."""

    def __init__(self):
        self.stored = {}         # seq -> (ts, length, emergency)
        self.committed = {}      # seq -> ts of its first commit

    def store(self, seq, ts, length, emergency):
        """A record stored; a seq stored again (a continuation) is the
        last store's."""
        self.stored[seq] = (ts, length, emergency)

    def commit(self, seq, ts):
        if seq not in self.committed or ts < self.committed[seq]:
            self.committed[seq] = ts

    @classmethod
    def of_model(cls, model):
        """The ConsoleTrace of a model file.  A record is an emergency one
        by the stressor's header (emergency_bound.is_emergency(), within
        the text's first characters the file keeps).  RunFilesError for a
        file of an analysis whose store rows have no `len`."""
        trace = cls()
        for e in model.events():
            if e.name == "store":
                length = e.fields.get("len")
                if length is None:
                    res = os.path.dirname(model.path) or "."
                    raise RunFilesError("%s has no record lengths (`len` of its stores): "
                                        "an older analysis wrote it: %s"
                                        % (model.path, recheck(res)))
                trace.store(e.seq, e.ts, int(length),
                            emergency_bound.is_emergency(e.fields.get("text", "")))
            elif e.name == "commit" and e.seq is not None:
                trace.commit(e.seq, e.ts)
        return trace

    def stored_at(self):
        """{seq: ts} of the stores."""
        return {s: ts for s, (ts, _, _) in self.stored.items()}

    def record_time(self):
        """The console's time per record while it is busy: from printing
        one record to printing the next where the next was already stored
        when the first was printed.  None when the trace does not tell."""
        return emergency_report.record_time(self.stored_at(), self.committed)

    def throughput(self):
        """Records and bytes per second while the console is busy."""
        per = self.record_time()
        lengths = [self.stored[s][1] for s in self.committed if s in self.stored]
        if not per or not lengths:
            return None
        mean_len = sum(n + LINE_EXTRA for n in lengths) / len(lengths)
        return {"record_s": per, "records_per_s": 1.0 / per,
                "bytes_per_s": mean_len / per, "samples": len(lengths)}

    def emergency_rows(self):
        """([(seq, delay, bound, pending)], time per record) of the records
        stored in emergency sections (stressor records x=emerg) that the
        console committed: each one's store-to-console delay against the
        time the console needed for the records pending when it was
        stored (stored before it, not yet printed) plus itself
        (emergency_bound.py); times in s.  None without the NOBKL
        console's commits."""
        per = self.record_time()
        if not self.committed or not per:
            return None
        marked = [s for s, (_, _, emergency) in self.stored.items() if emergency]
        return emergency_report.delay_rows(self.stored_at(), self.committed, marked, per), per

    def emergency_delays(self):
        """The figures of emergency_rows() (emergency_report.delay_summary());
        None without such records or without the NOBKL console's
        commits."""
        got = self.emergency_rows()
        return emergency_report.delay_summary(*got) if got else None


def serial_console(analysis):
    """The console the serial log holds, as the run's analysis named it."""
    cons = analysis.get("consoles") or {}
    return next((n for n, c in cons.items() if c.get("serial")), next(iter(cons), None))


def past_bound(model, analysis):
    """The emergency records of a run past the RFC's bound on its serial
    console, every one explained (emergency_report.evaluate()), from the
    model file of the run's analysis."""
    con = serial_console(analysis)
    return emergency_report.evaluate(emergency_report.read_model(model), con) if con else None


def run_figures(res):
    """The figures of one benchmark run (a results directory); besides
    them (not in bench.json) the histograms (`hists`) and each emergency
    record's (seq, delay, bound, pending) (`emergency_rows`), for the
    pictures.  RunFilesError when the run has a trace but not the files
    of its analysis (run_model())."""
    res = str(res)
    hists = read_latency(os.path.join(res, "stats.txt"))
    fig = {"results": res, "hists": hists, "latency": latency_figures(hists)}
    if os.path.exists(os.path.join(res, "console.log")):
        fig["console"] = console_output(os.path.join(res, "console.log"))
    try:
        with open(os.path.join(res, "verdict.json")) as f:
            analysis = json.load(f).get("analysis") or {}
    except (OSError, ValueError):
        analysis = {}
    # Without output (the floor) there is nothing the console printed.
    model = run_model(res) if fig.get("console", {}).get("records") else None
    if model is not None:
        trace = ConsoleTrace.of_model(model)
        rows, per = trace.emergency_rows() or ([], None)
        for name, value in (("throughput", trace.throughput()),
                            ("emergency_delay", emergency_report.delay_summary(rows, per)),
                            ("emergency_rows", rows)):
            if value:
                fig[name] = value
        late = past_bound(model, analysis)
        if late:
            fig["emergency_past_bound"] = late
    if analysis.get("counts"):
        c = analysis["counts"]
        fig["analysis"] = {
            "verdict": analysis.get("verdict"),
            "takeovers": c["takeovers"], "handovers": c["handovers"],
            "store_to_commit": (analysis.get("latency") or {}).get("store_to_commit"),
            "handover_wait": (analysis.get("latency") or {}).get("handover_wait"),
        }
    return fig


_RUN_DIR = re.compile(r"(%s)(?:-(\d+))?" % "|".join(MODES))


def load_rounds(root):
    """The runs of a benchmark directory, by round: [{"round": r, "modes":
    {mode: figures}, "verdicts": {mode: {"verdict", "problems"}}}] from
    its <mode>-<round>/ (a directory of one round before rounds: <mode>/).
    A run that gave no figures (a guest that hung before the stressor
    saved its stats, a damaged histogram) is a problem of its verdict."""
    rounds = {}
    for name in sorted(os.listdir(root)):
        m = _RUN_DIR.fullmatch(name)
        if not m or not os.path.isdir(os.path.join(root, name)):
            continue
        mode, r = m.group(1), int(m.group(2) or 1)
        rd = rounds.setdefault(r, {"round": r, "modes": {}, "verdicts": {}})
        try:
            with open(os.path.join(root, name, "verdict.json")) as f:
                v = json.load(f)
            verdict = {"verdict": v.get("verdict", "?"), "problems": list(v.get("problems", []))}
        except (OSError, ValueError):
            verdict = {"verdict": "none", "problems": ["no verdict.json"]}
        try:
            rd["modes"][mode] = run_figures(os.path.join(root, name))
        except (OSError, ValueError) as e:
            verdict["problems"].append("no figures: %s" % e)
            if verdict["verdict"] == "pass":
                verdict["verdict"] = "no figures"
        rd["verdicts"][mode] = verdict
    return [rounds[r] for r in sorted(rounds)]
