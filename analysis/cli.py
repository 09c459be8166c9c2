"""Command line: python3 -m analysis {check,timeline,plot,synth,rules} ..."""

import argparse
import json
import os
import sys

from .api import analyse
from .emergency_report import LATE_FILE
from .intervals import FILE_NAME as MODEL_FILE, GZIP_NAME, ModelFileError, Recorder
from .report import render_text
from .rules import RULE_TABLE, units
from .traceparse import InputError
from .verdict import error_verdict, EXIT_UNUSABLE


def _add_input_args(p):
    p.add_argument("results", nargs="?", help="results directory (trace.dat or trace.txt, "
                   "console.log); a trace.dat or report file also works")
    p.add_argument("--report", metavar="FILE", help="use this pre-rendered `trace-cmd report` "
                   "text instead of running trace-cmd on trace.dat")
    p.add_argument("--serial", metavar="FILE", help="serial log (default RESULTS/console.log)")
    p.add_argument("--no-serial", action="store_true", help="skip the end-to-end serial check")
    p.add_argument("--serial-console", metavar="NAME", help="console whose output the serial "
                   "log holds (default: the first console in the trace)")
    p.add_argument("--trace-cmd", metavar="PATH", help="trace-cmd binary (default: "
                   "$ANALYSIS_TRACE_CMD, else trace-cmd on PATH)")
    p.add_argument("--reader", choices=("auto", "libtracecmd", "text"), default=None,
                   help="how to read trace.dat: libtracecmd (a C extension over it, built "
                        "on first use), text (parse `trace-cmd report`), auto (default, "
                        "$ANALYSIS_READER: libtracecmd when the extension builds and no "
                        "trace-cmd binary was named)")
    p.add_argument("--console-loglevel", type=int, default=None, metavar="N",
                   help="records with level >= N are not printed by the console (default: "
                        "first number of RESULTS/printk.txt, else 7)")
    p.add_argument("--order", choices=("chain", "timestamps"), default=None,
                   help="how events of different CPUs are ordered: chain (default: by the "
                        "console state words old_state/new_state; a trace without them is "
                        "incomplete) or timestamps (a trace without them is judged by the "
                        "CPUs' clocks, which an offset between CPUs can turn pass to fail)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--arch32", dest="arch32", action="store_true", default=None,
                   help="32-bit kernel: accept the documented late-commit duplicate of seed "
                        "patch 006 (default: detected from RESULTS/kernel.config)")
    g.add_argument("--arch64", dest="arch32", action="store_false",
                   help="64-bit kernel: no 32-bit exception")
    p.add_argument("--no-post-trace", action="store_true", help="do not require records "
                   "stored after the serial console's last traced commit on the serial log")


def _kw(a):
    return dict(report=a.report, serial=a.serial, no_serial=a.no_serial,
                serial_console=a.serial_console, trace_cmd=a.trace_cmd,
                check_post=not a.no_post_trace, console_loglevel=a.console_loglevel,
                arch32=a.arch32, reader=a.reader, order=a.order)


def _fail_input(msg, a=None):
    sys.stderr.write("analysis: unusable input: %s\n" % msg)
    if a is not None and getattr(a, "json_out", None):
        _write_json(a.json_out, error_verdict(msg))
    if a is not None and getattr(a, "json", False):
        sys.stdout.write(json.dumps(error_verdict(msg), indent=1) + "\n")
    return EXIT_UNUSABLE


def _write_json(path, v):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(v, f, indent=1, sort_keys=False)
        f.write("\n")
    os.replace(tmp, path)


def _remove(path):
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def cmd_check(a):
    rec = late = None
    if a.json_out:
        # next to the verdict: the model's intervals and marks
        # (intervals.py) and every emergency record past its bound
        # (emergency_report.py)
        out_dir = os.path.dirname(a.json_out) or "."
        rec = Recorder(os.path.join(out_dir, GZIP_NAME if a.gzip else MODEL_FILE))
        late = os.path.join(out_dir, LATE_FILE)
    try:
        v, _ = analyse(a.results, recorder=rec, late_file=late, **_kw(a))
    except BaseException as e:
        # no file of an earlier analysis stays next to this one's verdict
        if rec is not None:
            rec.abort()
            _remove(late)
        if isinstance(e, InputError):
            return _fail_input(str(e), a)
        raise
    if rec is not None:
        v["model_file"] = rec.close()
        _write_json(a.json_out, v)
    if a.json:
        sys.stdout.write(json.dumps(v, indent=1) + "\n")
    elif not a.quiet:
        sys.stdout.write(render_text(v, a.max_violations))
    return v["exit_code"]


def _checked_in(r):
    """The modules whose functions raise rule r."""
    mods = []
    for f in r.checked_by:
        m = f.split(".")[0]
        if m not in mods:
            mods.append(m)
    return mods


def _facts_of(r):
    """The facts the units of rule r consume, in their order."""
    facts = []
    for u in units(r.id):
        facts.extend(f for f in u.consumes if f not in facts)
    return facts


def _unit_row(u):
    return {"name": u.name, "rules": list(u.rules), "consumes": list(u.consumes),
            "models": list(u.models), "invariant": u.invariant}


def cmd_rules(a):
    """The rule registry (rules.py: the rules and their units), or the
    tolerance table (tolerances.py)."""
    from .tolerances import TOLERANCES
    if a.json:
        rows = ([dict(t._asdict()) for t in TOLERANCES] if a.tolerances else
                [dict(r._asdict(), checked_by=list(r.checked_by), models=list(r.models),
                      units=[_unit_row(u) for u in units(r.id)])
                 for r in RULE_TABLE])
        sys.stdout.write(json.dumps(rows, indent=1) + "\n")
    elif a.tolerances:
        print("%-40s %-18s %-10s %-42s %s" % ("tolerance", "rule", "order", "counter",
                                               "window"))
        for t in TOLERANCES:
            print("%-40s %-18s %-10s %-42s %s" % (t.name, t.rule, t.order, t.counter,
                                                   t.window or "-"))
    else:
        print("%-16s %-32s %s" % ("rule", "scope", "invariant"))
        for r in RULE_TABLE:
            print("%-16s %-32s %s  [models: %s; facts: %s; checked in: %s]"
                  % (r.id, r.scope, r.invariant, ", ".join(r.models),
                     ", ".join(_facts_of(r)), ", ".join(_checked_in(r))))
    return 0


def _on_written(run, a):
    """run(a) for a command that reads what `check -o` wrote: files
    missing, of another version or cut short are unusable input (exit
    2), the same for every such command."""
    try:
        return run(a)
    except ModelFileError as e:
        return _fail_input(str(e))


def cmd_timeline(a):
    from .timeline import run_timeline
    return _on_written(run_timeline, a)


def cmd_plot(a):
    from .plot import run_plot
    return _on_written(run_plot, a)


def _add_written_parser(sub, name, summary, description, shown):
    """The subcommand `name`, which reads what `check -o` wrote (the
    results argument): timeline and plot share that argument and the
    exit codes (_on_written()), so they are said once.  `description`
    is the start of the sentence that says where the command's input
    comes from; `shown` is what exit code 0 means."""
    p = sub.add_parser(name, help=summary,
                       description=description + "from what `check -o` wrote (the analysis "
                                                 "does not run again).",
                       epilog="exit codes: 0 %s, 1 the seq does not occur in the trace, "
                              "2 analysis.json or intervals.jsonl missing, of another "
                              "version or cut short" % shown)
    p.add_argument("results", help="results directory holding analysis.json and "
                   "intervals.jsonl (or intervals.jsonl.gz), as `check RESULTS -o "
                   "RESULTS/analysis.json` writes them, and the harness for every run "
                   "(or that analysis.json)")
    return p


def cmd_synth(a):
    from .synth import main_synth
    return main_synth(a)


def cmd_bench(a):
    from .bench import main_bench
    try:
        return main_bench(a)
    except InputError as e:
        return _fail_input(str(e))


def build_parser():
    p = argparse.ArgumentParser(
        prog="python3 -m analysis",
        description="Check a printk nobkl stress run: rebuild every console's ownership "
                    "timeline from the trace (trace-cmd report), check the correctness rules "
                    "and the serial log end to end.",
        epilog="exit codes: 0 all rules hold, 1 a rule is violated, 2 unusable input or "
               "incomplete trace (lost trace events). See docs/analysis.md.")
    sub = p.add_subparsers(dest="cmd", metavar="COMMAND")
    sub.required = True

    c = sub.add_parser("check", help="check all rules, print a verdict",
                       description="Check all rules; text verdict on stdout.",
                       epilog="exit codes: 0 pass, 1 fail (violation), 2 unusable input or "
                              "incomplete trace")
    _add_input_args(c)
    c.add_argument("--json", action="store_true", help="print the JSON verdict instead of text")
    c.add_argument("-o", "--json-out", metavar="FILE", help="also write the JSON verdict to FILE "
                   "(written for unusable input too), and the model's intervals, marks and "
                   "events to intervals.jsonl next to it (what plot and timeline read), "
                   "every emergency record past the RFC's bound to %s" % LATE_FILE)
    c.add_argument("-z", "--gzip", action="store_true", help="with -o: write the intervals "
                   "file gzip-compressed, as intervals.jsonl.gz (4-5 times smaller; what "
                   "the harness writes); plot and timeline read either")
    c.add_argument("--max-violations", type=int, default=10, metavar="N",
                   help="violations shown in the text report (default 10)")
    c.add_argument("-q", "--quiet", action="store_true", help="no text output")
    c.set_defaults(func=cmd_check)

    t = _add_written_parser(sub, "timeline", "show the events around one record seq",
                            "Print the per-console event timeline around record SEQ with "
                            "the owner after every event and violations marked, ", "shown")
    t.add_argument("--seq", type=int, required=True, help="record sequence number")
    t.add_argument("--console", help="only this console's events (default: all)")
    t.add_argument("--before", type=int, default=12, help="events shown before (default 12)")
    t.add_argument("--after", type=int, default=8, help="events shown after (default 8)")
    t.add_argument("--max-lines", type=int, default=400, help="stop after N lines (default 400)")
    t.set_defaults(func=cmd_timeline)

    g = _add_written_parser(sub, "plot", "draw the ownership timeline as PNG",
                            "Draw who owned which console when, per console and CPU; "
                            "handovers, hostile takeovers, timeouts and violations marked; ",
                            "drawn")
    g.add_argument("-o", "--output", default=None, help="PNG file (default RESULTS/timeline.png)")
    g.add_argument("--start", type=float, help="start time (trace seconds)")
    g.add_argument("--end", type=float, help="end time (trace seconds)")
    g.add_argument("--seq", type=int, help="zoom on the time around record SEQ")
    g.add_argument("--max-intervals", type=int, default=20000,
                   help="draw at most N ownership intervals (default 20000)")
    g.set_defaults(func=cmd_plot)

    s = sub.add_parser("synth", help="generate a synthetic results directory",
                       description="Write trace.txt (trace-cmd report format) and console.log "
                                   "for a simulated run; --break injects a rule violation.")
    s.add_argument("outdir")
    s.add_argument("--events", type=int, default=100000, help="approximate number of trace "
                   "events (default 100000)")
    s.add_argument("--cpus", type=int, default=4)
    s.add_argument("--seed", type=int, default=1)
    s.add_argument("--break", dest="breaks", action="append", default=[],
                   metavar="KIND", help="inject a violation (repeatable); see --list-breaks")
    s.add_argument("--list-breaks", action="store_true")
    s.add_argument("--drop-trace", action="store_true", help="add a trace-cmd "
                   "'[N EVENTS DROPPED]' marker in the middle")
    s.add_argument("--latency-format", action="store_true", help="write `report -l` style lines")
    s.add_argument("--no-console-log", action="store_true")
    s.set_defaults(func=cmd_synth)

    b = sub.add_parser("bench", help="time the analysis (lines/s; ratio to trace-cmd report)",
                       description="Time `check` on a synthetic run of --events events, or on "
                                   "--dir RESULTS (with trace.dat also times trace-cmd report).")
    b.add_argument("--events", type=int, default=1000000)
    b.add_argument("--seed", type=int, default=1)
    b.add_argument("--dir", help="existing results directory instead of a synthetic one")
    b.add_argument("--no-serial", action="store_true")
    b.add_argument("--trace-cmd", metavar="PATH")
    b.add_argument("--reader", choices=("auto", "libtracecmd", "text"), default=None,
                   help="trace reader to time (default: as check)")
    b.add_argument("--both-readers", action="store_true",
                   help="time the libtracecmd and the text reader on the same run")
    b.add_argument("--repeat", type=int, default=1, metavar="N",
                   help="rounds of timings, interleaved (medians are reported)")
    b.add_argument("--keep", action="store_true", help="keep the generated directory")
    b.set_defaults(func=cmd_bench)

    r = sub.add_parser("rules", help="list the rules (id, scope, invariant) or the tolerances",
                       description="The rule registry: id, what it is checked over, its "
                                   "invariant, the models of the console design it "
                                   "applies to (rfc-6.1: the RFC's nobkl consoles on "
                                   "Linux 6.1), the facts its units consume and the "
                                   "modules that check it (--json: every unit, with "
                                   "its invariant).  --tolerances: every tolerance the "
                                   "checker "
                                   "grants, with the rule it concerns, where it applies, "
                                   "its counter in verdict.json and the time window it "
                                   "still uses.")
    r.add_argument("--tolerances", action="store_true", help="list the tolerances instead")
    r.add_argument("--json", action="store_true", help="the table as JSON, with every column")
    r.set_defaults(func=cmd_rules)
    return p


def main(argv=None):
    p = build_parser()
    a = p.parse_args(argv)
    if getattr(a, "cmd", None) == "check" and not a.results and not a.report:
        p.error("give a results directory or --report FILE")
    if getattr(a, "cmd", None) == "check" and a.gzip and not a.json_out:
        p.error("--gzip compresses the intervals file that -o FILE writes: give -o")
    try:
        return a.func(a)
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        return 130
    except MemoryError:
        sys.stderr.write("analysis: out of memory\n")
        return EXIT_UNUSABLE
