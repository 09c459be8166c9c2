"""`timeline` subcommand: the events around one record seq, with the owner
after every event and the violations raised on it.

It reads what `check -o` wrote (analysis.json and intervals.jsonl,
intervals.py) and never runs the analysis: the events are the model's,
in the order it took them, each with the owner it left and the
violations raised on it."""

import sys
from collections import deque

from .intervals import read_results


def _owner(e):
    if e.owner is None:
        return ""
    return "owner: %s" % e.owner


def _short(e):
    f = e.fields
    if e.name == "store":
        return "store      seq=%s caller=%s text=%s" % (e.seq, f["caller"], f["text"][:70])
    body = " ".join("%s=%s" % kv for kv in f.items() if kv[0] != "con")
    return "%-10s %s %s" % (e.name, e.con or "", body)


def _line(e, marks):
    return "%s %12.6f [%03d] %-100s %s%s" % (
        ("%8d" % e.line), e.ts, e.cpu, _short(e)[:100], _owner(e),
        ("   <== " + ", ".join(marks)) if marks else "")


def _marks(e, pending):
    """The violations shown on event e: those raised since the event
    shown before it (`pending` of them), named where raised on e's line."""
    if not pending:
        return []
    return ["VIOLATION " + r for r in e.rules] or ["VIOLATION"]


def print_events(a, events, out):
    """The events around seq a.seq (a.before of them before its first
    event, then until a.after events after its last one, once a console
    committed it); False when the seq does not occur."""
    seq, want_con = a.seq, a.console
    before = deque(maxlen=max(1, a.before))
    active, after_left, printed, pending, committed = False, None, 0, 0, set()
    for e in events:
        pending += e.violations
        if want_con and e.con is not None and e.con != want_con:
            continue
        text = _line(e, _marks(e, pending))
        pending = 0
        hit = e.seq == seq
        if hit and not active:
            active = True
            out.write("timeline around seq %d%s (trace line, time, cpu, event, owner after "
                      "the event)\n" % (seq, (" on " + want_con) if want_con else ""))
            if before:
                out.write("   ...\n")
            for b in before:
                out.write(b + "\n")
        if not active:
            before.append(text)
            continue
        out.write(text + "\n")
        printed += 1
        if printed >= a.max_lines:
            out.write("   ... (--max-lines %d reached)\n" % a.max_lines)
            break
        if hit:
            after_left = a.after
            if e.name == "commit":
                committed.add(e.con)
        else:
            after_left -= 1
            if after_left <= 0 and committed:
                break
    return active


def run_timeline(a, out=None):
    """Exit 0, or 1 when the seq does not occur in the trace;
    intervals.ModelFileError when the files are not there."""
    out = out or sys.stdout
    verdict, model = read_results(a.results)
    if not print_events(a, model.events(), out):
        out.write("seq %d does not occur in the trace\n" % a.seq)
        return 1
    rel = [v for v in verdict.get("violations", ()) if v.get("seq") == a.seq]
    if rel:
        out.write("\nviolations on seq %d:\n" % a.seq)
        for v in rel:
            out.write("  [%s] %s\n" % (v["rule"], v["message"]))
    return 0
