"""The verdict of an analysis: one fold over a table of judgements
(fold.py), written once as the verdict dict (analysis.json).

api.analyse() collects the results of a run (Collected: the checker
with its rules' violations, the trace's reading statistics, the serial
check, the stressor's end lines, the ordering stage); build_verdict()
asks every judgement of TABLE about them, folds what they said into the
verdict (fold.fold(): a firm incomplete, then a firm fail, then an
incomplete, then a fail, then a pass), and writes the dict around it:
the reasons of every judgement, in the table's order, and the counts,
consoles, latencies and violations the results hold.  The table:

  order            the events of different CPUs could be ordered: a
                   broken state chain, or a trace without one that the
                   clocks were not asked to order, is a firm incomplete
                   (nothing is proven without an order)
  trace            the trace was read in full: lost events, malformed or
                   damaged lines, a cut last line, timestamps going back,
                   stores missing or listed too late make it incomplete
  rules            every rule held; a violation is a fail, firm when it
                   is proven the kernel's whatever the trace lost
                   (Analyzer.genuine())
  serial log       the serial log was checked against the trace
  stressor result  every stressor run's own check (its SUCCESS/FAILURE
                   line) is known; a FAILURE line is a rule violation
                   (stressor-selfcheck), judged with the rules

trace.complete says whether the input judgements (trace, serial log,
stressor result) all passed.  Input that cannot be read at all has no
results: error_verdict() folds its one judgement, "input usable".
"""

from collections import namedtuple

from .bootlog import stored_lines
from .checker import HELD_MAX
from .fold import (EXIT, EXIT_FAIL, EXIT_PASS, EXIT_UNUSABLE, FAIL, INCOMPLETE,  # noqa: F401
                   PASSED, Judged, Judgement, decide, judge)
from .rules import RFC_61, rules_of

VERSION = 1

# what api.analyse() collected of a run: the checker (Analyzer), the
# reading statistics (ReportStats), the serial check (SerialChecker or
# None), selfcheck.check()'s (summary, why incomplete), the ordering
# stage (CausalOrder) and whether the clocks were asked to order it
Collected = namedtuple("Collected", "an stats sc stressor_end causal by_clocks")


def violation_total(an):
    return sum(an.vcount.values())


def judge_order(r):
    """A firm incomplete when nothing orders the events of different
    CPUs (ordering.CausalOrder.incomplete_reasons()): the violations
    stay listed, but none is proven, and no pass either."""
    why = r.causal.incomplete_reasons(r.by_clocks)
    return Judged(INCOMPLETE, why, firm=True) if why else PASSED


def judge_trace(r):
    """Incomplete when the trace was not read in full."""
    an, stats = r.an, r.stats
    complete = (an.loss_seen is False and stats.malformed == 0 and
                not stats.truncated_last_line and an.bad_events == 0 and
                an.missing_store_count == 0 and an.time_back_count == 0 and
                an.late_store_count == 0 and an.gave_up_full == 0)
    reasons = []
    if an.loss_seen and stats.drop_count:
        # (a loss without a marker is a damaged event: reasons below)
        reasons.append("trace lost events (%d drop marker(s), first at %s)" %
                       (stats.drop_count, stats.drops[0].text if stats.drops else "?"))
    if stats.malformed:
        reasons.append("%d malformed nobkl line(s)" % stats.malformed)
    if an.bad_events:
        reasons.append("%d nobkl event(s) with bad field values (first: %s)"
                       % (an.bad_events, an.first_bad))
    if stats.truncated_last_line:
        reasons.append("report ends in the middle of a line (truncated)")
    if an.time_back_count:
        cpu, t1, t2, line = an.time_back
        reasons.append("%d time(s) a CPU's timestamps went back (a damaged page timestamp; "
                       "first: CPU %d from %.6f to %.6f at line %s)"
                       % (an.time_back_count, cpu, t1, t2, line))
    if an.missing_store_count:
        reasons.append("%d nobkl_store event(s) missing between records stored in the trace "
                       "(seq %s)" % (an.missing_store_count,
                                     ", ".join(str(q) for q, _ in an.missing_stores[:5])))
    if an.late_store_count:
        reasons.append("%d nobkl_store event(s) listed after an emission or commit of their "
                       "record had gone on without them, more than %d events having waited "
                       "(seq %s)" % (an.late_store_count, HELD_MAX,
                                     ", ".join(str(q) for q, _ in an.late_stores[:5])))
    if an.gave_up_full:
        reasons.append("%d emission(s) or commit(s) went on without their store after more "
                       "than %d events had waited, and too many to watch for their stores"
                       % (an.gave_up_full, HELD_MAX))
    return PASSED if complete else Judged(INCOMPLETE, reasons)


def judge_rules(r):
    """A fail when a rule was violated (the stressor's FAILURE line is
    one, stressor-selfcheck), firm when a violation is proven the
    kernel's however incomplete the input: in chain order it happens
    before every trace loss, without the chain by the clocks
    (Analyzer.genuine())."""
    an = r.an
    if not violation_total(an):
        return PASSED
    bad = ", ".join("%s=%d" % kv for kv in an.vcount.items() if kv[1])
    first = an.violations[0]["message"] if an.violations else ""
    return Judged(FAIL, ["rule violations: %s; first: %s" % (bad, first)], firm=an.genuine())


def judge_serial(r):
    """Incomplete when the serial log, if there is one, could not be
    checked against the trace (SerialChecker.incomplete_reasons(), the
    serial console not in the trace, or none of its records matched on
    a run that broke no rule)."""
    an, sc = r.an, r.sc
    if sc is None:
        return PASSED
    why = sc.incomplete_reasons()
    if why:
        return Judged(INCOMPLETE, why)
    if an.serial_console not in an.consoles:
        return Judged(INCOMPLETE, [
            "serial log not checked: console %s does not occur in the trace (consoles: %s)"
            % (an.serial_console, ", ".join(sorted(an.consoles)))])
    if not violation_total(an) and sc.fed_commits and sc.stats["matched"] == 0 and \
            not sc.stats.get("unchecked_before_sync"):
        return Judged(INCOMPLETE, ["serial log not checked: no record of console %s matched "
                                   "(wrong --serial-console?)" % an.serial_console])
    return PASSED


def judge_stressor(r):
    """Incomplete when a stressor run ended without its SUCCESS/FAILURE
    line on any log (selfcheck.check())."""
    why = r.stressor_end[1]
    return Judged(INCOMPLETE, why) if why else PASSED


TABLE = (
    Judgement("order", judge_order),
    Judgement("trace", judge_trace),
    Judgement("rules", judge_rules),
    Judgement("serial log", judge_serial),
    Judgement("stressor result", judge_stressor),
)

# the judgements of the input read (trace.complete); not the order's:
# a trace read in full may have nothing that orders it
INPUT = ("trace", "serial log", "stressor result")


def input_complete(judged):
    return not any(j.outcome == INCOMPLETE for name, j in judged if name in INPUT)


def build_verdict(results, source_desc, serial, serial_counts, trace_dat, report):
    """The verdict dict of the Collected `results`: the fold of TABLE
    over them, and the figures they hold."""
    judged = judge(TABLE, results)
    decided = decide(judged)
    complete = input_complete(judged)
    an, stats, sc, stressor_end = results.an, results.stats, results.sc, results.stressor_end
    total = violation_total(an)
    consoles = {}
    for name, c in sorted(an.consoles.items()):
        pend = len(an.pending_records(c)) if c.next_seq is not None else 0
        consoles[name] = {
            "serial": name == an.serial_console,
            "first_seq": c.first_seq, "last_committed": c.last_commit,
            "emits": c.emits, "commits": c.commits, "reprints": c.reprints,
            "dropped_records": c.dropped_records, "acquires": dict(c.acquires),
            "ownership_intervals": c.intervals, "stored_not_committed_at_end": pend,
        }
    stored = an.stored_texts()
    counts = dict(an.counts)
    # these two go where verdict.json has always had them (below)
    del counts["suppressed_records"], counts["race32_late_commits"]
    counts["records"] = an.records
    counts["suppressed_records"] = an.suppressed
    counts["store_updates"] = an.store_updates
    counts["race32_late_commits"] = an.race32
    counts["takeovers"] = {
        "direct": counts["acquire"].get("direct", 0),
        "handover": counts["acquire"].get("handover", 0),
        "hostile": counts["acquire"].get("hostile", 0),
        "hostile_by_prio": counts.pop("hostile_by_prio"),
        "hostile_same_cpu": counts.pop("hostile_same_cpu"),
        "hostile_from_nmi": counts.pop("hostile_from_nmi"),
        "hostile_while_unsafe": counts.pop("hostile_unsafe"),
    }
    counts["handovers"] = {
        "requests": counts.pop("handover_requests"),
        "grants": counts.pop("handover_grants"),
        "completed": counts["acquire"].get("handover", 0),
        "timeouts": counts.pop("handover_timeouts"),
    }
    counts.pop("acquire")
    v = {
        "tool": "printk-nobkl-stress analysis",
        "format_version": VERSION,
        "verdict": decided.outcome,
        "reasons": decided.reasons,
        "judgements": decided.judgements,
        "inputs": {"trace": trace_dat or report, "read_with": source_desc, "serial": serial,
                   "serial_console": an.serial_console, "arch32": an.arch32,
                   "console_loglevel": an.console_loglevel},
        "trace": {
            "complete": complete,
            "lines": stats.lines,
            "nobkl_events": stats.events,
            "other_events": stats.other_events,
            "unknown_lines": stats.unknown,
            "malformed_lines": stats.malformed,
            "bad_field_events": an.bad_events,
            "malformed_examples": stats.malformed_examples,
            "cpus": stats.cpus,
            "drop_markers": stats.drop_count,
            "drops": [{"line": d.lineno, "cpu": d.cpu, "count": d.count, "text": d.text}
                      for d in stats.drops[:20]],
            "loss_starts_at_ts": an.loss_start_ts,
            "first_ts": stats.first_ts, "last_ts": stats.last_ts,
            "store_window_overflow": an.store_overflow,
            "missing_stores": an.missing_store_count,
            "stores_listed_after_use": an.late_store_count,
            "timestamps_back": an.time_back_count,
            "missing_store_seqs": [q for q, _ in an.missing_stores],
            "dataless_records": len(an.dataless),
            "stored_lines_crc32": stored_lines(stored),
            "stored_lines_records": len(stored),
            "text_continuation_lines": stats.continuations,
        },
        "counts": counts,
        "consoles": consoles,
        "latency": {
            "handover_wait": an.lat_handover.summary(),
            "handover_timeout_waited": an.lat_timeout.summary(),
            "store_to_commit": an.lat_store_commit.summary(),
        },
        "serial": (dict(sc.summary(), scan_first_lines=serial_counts,
                        stressor_stats_producers=len(sc.producers.expected))
                   if sc is not None else None),
        "stressor": stressor_end[0],
        "rules": rules_of(an.model_name),
        "violations_by_rule": dict(an.vcount),
        "violation_count": total,
        "violations": an.violations,
        "violations_detail_limit_per_rule": 25,
        "anomalies": {"count": an.anomaly_count, "examples": an.anomalies},
    }
    v["exit_code"] = decided.exit_code
    return v


def error_verdict(msg):
    """The verdict of input that cannot be analysed at all (InputError):
    no results to judge, one judgement that says so."""
    decided = decide([("input usable", Judged(INCOMPLETE, [msg], firm=True))])
    return {
        "tool": "printk-nobkl-stress analysis", "format_version": VERSION,
        "verdict": decided.outcome, "error": msg, "reasons": decided.reasons,
        "judgements": decided.judgements,
        "violations_by_rule": dict.fromkeys(rules_of(RFC_61), 0), "violation_count": 0,
        "violations": [], "exit_code": decided.exit_code,
    }
