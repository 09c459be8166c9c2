"""Violations as reported: every violation of the trace rules (a unit
calls Analyzer.violate() at the event in hand) and of the serial rules
(at a place spelled out: serial_rules.Blame) is counted per rule, kept
in detail for the first MAX_DETAIL of each rule with the console's
events before it and the AFTER events after it, and marked for the
intervals file; anomalies (what the model notes without judging it) are
kept the same way.

Invariants: a violation is counted whether or not its detail is kept;
one found before any trace loss at a stamped event keeps its
happens-before stamp (violation_stamp(), before_loss.py), so that the
verdict can tell whether it is the kernel's.

A class of Analyzer (checker.py): the state is the checker's.
"""

MAX_DETAIL = 25              # violations kept in detail per rule
AFTER = 3                    # and after it


class Violations:
    """Analyzer's reporting (a class of it: the state is the checker's)."""

    def fmt_event(self, ev):
        f = ev.fields
        if ev.name == "nobkl_store":
            body = "seq=%s caller=%s text=%s" % (f.get("seq"), f.get("caller"), f.get("text", "")[:60])
        else:
            body = " ".join("%s=%s" % kv for kv in f.items() if kv[0] != "con")
        cpu = "[%03d]" % ev.cpu if ev.cpu is not None else "[---]"
        ts = "%.6f" % ev.ts if ev.ts is not None else "-"
        return "line %s %s %s %s %s %s" % (
            ev.lineno, ts, cpu, ev.name, f.get("con", ""), body)

    def violate(self, rule, con, msg, seq=None, cpus=(), ctxs=(), ev=None, extra=None,
                at=None):
        """ev: the event the violation is placed at (default: the current
        one); at: instead of an event, (ts, trace line, cpu, text) of the
        place, for a violation found outside the event stream (the serial
        rules, serial_rules.Blame)."""
        if at is not None:
            later = True
        else:
            ev = ev if ev is not None else self.cur_event
            later = ev is not self.cur_event
            at = (ev.ts, ev.lineno, ev.cpu, None) if ev is not None else None
            if ev is not None and not self.loss_seen:
                self.violation_stamp(ev)
        ts, line, cpu, shown = at if at is not None else (None, None, None, None)
        self.vcount[rule] += 1
        if not self.loss_seen and at is not None and ts is not None:
            if self.first_violation_ts is None or ts < self.first_violation_ts:
                self.first_violation_ts = ts
        if self.recorder is not None and at is not None:
            self.recorder.mark("violation", con.name if con else None, cpu, ts, rule, line)
        if self.vcount[rule] > MAX_DETAIL:
            return None
        v = {
            "rule": rule,
            "console": con.name if con else None,
            "seq": seq,
            "ts": ts,
            "line": line,
            "cpus": sorted(set(c for c in cpus if c is not None)),
            "contexts": list(ctxs),
            "message": msg,
            "after_trace_loss": self.loss_seen,
            "events_before": [self.fmt_event(e) for e in con.recent] if con else [],
            "event": None if at is None else shown if shown is not None else self.fmt_event(ev),
            "events_after": [],
        }
        late = (later and line is not None and
                con is not None and con.recent and con.recent[-1].lineno > line)
        if late:
            # found after the fact (serial rules check an attempt when it
            # has ended, or later): the console's latest events are not
            # its surroundings
            v["events_before"] = [self.fmt_event(e) for e in con.recent
                                  if e.lineno < line] if con else []
            v["context_note"] = ("checked at trace line %d; run `timeline --seq %s` for the "
                                 "events around it" % (con.recent[-1].lineno, seq))
        if extra:
            v.update(extra)
        self.violations.append(v)
        if con is not None and not late:
            con.pending_after.append(v)
        return v

    def raised(self, con, v):
        """A unit raised v (rules.Violation) on a fact about console con."""
        self.violate(v.rule, con, v.msg, seq=v.seq, cpus=v.cpus, ctxs=v.ctxs, ev=v.ev,
                     extra=v.extra)

    def anomaly(self, con, msg):
        self.anomaly_count += 1
        if len(self.anomalies) < 50:
            ev = self.cur_event
            self.anomalies.append({"console": con.name if con else None,
                                   "line": ev.lineno if ev else None,
                                   "ts": ev.ts if ev else None, "message": msg})
