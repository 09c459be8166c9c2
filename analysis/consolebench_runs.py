"""What one run of the console benchmark left, as figures.

A benchmark directory holds a run per mode and round (<mode>-<round>/,
tools/pns/bench.py).  run_figures() reads one of them: the stressor's
histograms (consolebench_hist.py), the records on the serial log, the
console's commits in the trace and the explanation of emergency records
past their bound; load_rounds() reads them all, by round.
"""

import json
import os
import re

from . import consolelog, emergency_bound, intervals
from .consolebench_hist import latency_figures, read_latency
from .serial import parse_pstress


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


_EV = re.compile(r"\[(\d+)\]\s+(\d+\.\d+): nobkl_(store|commit):\s+(?:con=\S+ )?seq=(\d+)"
                 r"(?:.*? text=(.*))?")


def report_lines(trace_dat, trace_cmd="trace-cmd"):
    """The `trace-cmd report` lines of a trace.dat, or [] without one."""
    import subprocess
    if not os.path.exists(trace_dat):
        return []
    proc = subprocess.run([trace_cmd, "report", "-i", trace_dat], capture_output=True,
                          text=True, errors="replace")
    return proc.stdout.splitlines()


class ConsoleTrace:
    """What the trace says about records and the console: each record's
    store (time, text) and when the NOBKL console finished printing it
    (its first commit of the seq).  The legacy console of 6.1 traces no
    output time (its printk:console event fires when the record is
    stored), so its figures here are left out."""

    def __init__(self, lines):
        self.stored, self.committed = {}, {}
        for line in lines:
            m = _EV.search(line)
            if not m:
                continue
            ts, kind, seq = float(m.group(2)), m.group(3), int(m.group(4))
            if kind == "store":
                self.stored[seq] = (ts, m.group(5) or "")
            elif seq not in self.committed:
                self.committed[seq] = ts

    def record_time(self):
        """The console's time per record while it is busy: from printing
        one record to printing the next where the next was already stored
        when the first was printed.  None when the trace does not tell."""
        return emergency_bound.record_time({s: ts for s, (ts, _) in self.stored.items()},
                                           self.committed)

    def throughput(self):
        """Records and bytes per second while the console is busy."""
        per = self.record_time()
        texts = [self.stored[s][1] for s in self.committed if s in self.stored]
        if not per or not texts:
            return None
        mean_len = sum(len(t) + 17 for t in texts) / len(texts)   # "[  sec.usec] " + LF
        return {"record_s": per, "records_per_s": 1.0 / per,
                "bytes_per_s": mean_len / per, "samples": len(texts)}

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
        marked = [s for s, (_, text) in self.stored.items() if emergency_bound.is_emergency(text)]
        stored = {s: ts for s, (ts, _) in self.stored.items()}
        return emergency_bound.delay_rows(stored, self.committed, marked, per), per

    def emergency_delays(self):
        """The figures of emergency_rows() (emergency_bound.delay_summary());
        None without such records or without the NOBKL console's
        commits."""
        got = self.emergency_rows()
        return emergency_bound.delay_summary(*got) if got else None


def serial_console(analysis):
    """The console the serial log holds, as the run's analysis named it."""
    cons = analysis.get("consoles") or {}
    return next((n for n, c in cons.items() if c.get("serial")), next(iter(cons), None))


def past_bound(res, analysis):
    """The emergency records of a run past the RFC's bound, every one
    explained (emergency_bound.evaluate()), from the model file the run's
    analysis wrote next to analysis.json: the analysis does not run
    again.  A run without one (or of an analysis before the model file)
    gives what its analysis.json says, if anything."""
    con = serial_console(analysis)
    try:
        _, model = intervals.read_results(res)
    except intervals.ModelFileError:
        return ((analysis.get("latency") or {}).get("emergency_past_bound") or {}).get(con)
    return emergency_bound.evaluate(emergency_bound.read_model(model), con) if con else None


def run_figures(res):
    """The figures of one benchmark run (a results directory); besides
    them (not in bench.json) the histograms (`hists`) and each emergency
    record's (seq, delay, bound, pending) (`emergency_rows`), for the
    pictures."""
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
    if fig.get("console", {}).get("records"):
        # Without output (the floor) there is nothing the console printed.
        trace = ConsoleTrace(report_lines(os.path.join(res, "trace.dat")))
        rows, per = trace.emergency_rows() or ([], None)
        for name, value in (("throughput", trace.throughput()),
                            ("emergency_delay", emergency_bound.delay_summary(rows, per)),
                            ("emergency_rows", rows)):
            if value:
                fig[name] = value
        late = past_bound(res, analysis)
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
