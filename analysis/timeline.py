"""`timeline` subcommand: the events around one record seq, with the owner
after every event and the violations raised on it."""

import sys
from collections import deque

from .api import analyse


class _Stop(Exception):
    pass


def _owner(con):
    if con is None:
        return ""
    o = con.owner
    if o is None:
        return "owner: -"
    return "owner: %s (%s)" % (o.label(), o.how)


def _short(ev):
    f = ev.fields
    if ev.name == "nobkl_store":
        return "store      seq=%s caller=%s text=%s" % (f["seq"], f["caller"], f["text"][:70])
    name = ev.name[6:]
    body = " ".join("%s=%s" % kv for kv in f.items() if kv[0] not in ("con",))
    return "%-10s %s %s" % (name, f.get("con", ""), body)


def run_timeline(a, kw, out=None):
    out = out or sys.stdout
    seq = a.seq
    want_con = a.console
    before = deque(maxlen=max(1, a.before))
    state = {"active": False, "after_left": None, "printed": 0, "vtotal": 0,
             "committed": set(), "seen": False}
    holder = {}

    def line_for(ev, con, marks):
        return "%s %12.6f [%03d] %-100s %s%s" % (
            ("%8d" % ev.lineno), ev.ts, ev.cpu, _short(ev)[:100], _owner(con),
            ("   <== " + ", ".join(marks)) if marks else "")

    def on_event(ev, con):
        an = holder["an"]
        if want_con and con is not None and con.name != want_con:
            return
        total = sum(an.vcount.values())
        marks = []
        if total != state["vtotal"]:
            new = [v for v in an.violations[-(total - state["vtotal"]):]
                   if v.get("line") == ev.lineno]
            marks = ["VIOLATION " + v["rule"] for v in new] or ["VIOLATION"]
            state["vtotal"] = total
        f = ev.fields
        hit = f.get("seq") == str(seq)
        text = line_for(ev, con, marks)
        if hit and not state["active"]:
            state["active"] = True
            state["seen"] = True
            out.write("timeline around seq %d%s (trace line, time, cpu, event, owner after "
                      "the event)\n" % (seq, (" on " + want_con) if want_con else ""))
            if before:
                out.write("   ...\n")
            for b in before:
                out.write(b + "\n")
        if state["active"]:
            out.write(text + "\n")
            state["printed"] += 1
            if state["printed"] >= a.max_lines:
                out.write("   ... (--max-lines %d reached)\n" % a.max_lines)
                raise _Stop()
            if hit:
                state["after_left"] = a.after
                if ev.name == "nobkl_commit":
                    state["committed"].add(f.get("con"))
            else:
                state["after_left"] -= 1
                if state["after_left"] <= 0 and state["committed"]:
                    raise _Stop()
        else:
            before.append(text)

    try:
        kw = dict(kw)
        kw["check_post"] = False
        analyse(a.results, on_event=on_event, on_start=lambda an: holder.update(an=an), **kw)
    except _Stop:
        pass
    if not state["seen"]:
        out.write("seq %d does not occur in the trace\n" % seq)
        return 1
    an = holder.get("an")
    if an is not None:
        rel = [v for v in an.violations if v.get("seq") == seq]
        if rel:
            out.write("\nviolations on seq %d:\n" % seq)
            for v in rel:
                out.write("  [%s] %s\n" % (v["rule"], v["message"]))
    return 0
