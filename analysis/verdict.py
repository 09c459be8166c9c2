"""The verdict dict of an analysis (build_verdict()) and of unusable
input (error_verdict())."""

from .bootlog import stored_lines
from .checker import HELD_MAX
from .rules import RULES, RULE_IDS

VERSION = 1

EXIT_PASS, EXIT_FAIL, EXIT_UNUSABLE = 0, 1, 2


def build_verdict(an, stats, source_desc, serial, sc, serial_counts, trace_dat, report,
                  stressor_end=(None, ())):
    """The verdict dict.  stressor_end: selfcheck.check()'s (summary of
    the stressor's end lines, why they make the input incomplete)."""
    complete = (an.loss_seen is False and stats.malformed == 0 and
                not stats.truncated_last_line and an.bad_events == 0 and
                an.missing_store_count == 0 and an.time_back_count == 0 and
                an.late_store_count == 0 and an.gave_up_full == 0)
    total = sum(an.vcount.values())
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
    if total:
        bad = ", ".join("%s=%d" % kv for kv in an.vcount.items() if kv[1])
        first = an.violations[0]["message"] if an.violations else ""
        reasons.append("rule violations: %s; first: %s" % (bad, first))
    # an incomplete trace fails when a violation is proven the kernel's:
    # in chain order it happens before every trace loss, without the chain
    # by the clocks (Analyzer.genuine())
    genuine = an.genuine()
    serial_why = sc.incomplete_reasons() if sc is not None else []
    if serial_why:
        complete = False
        reasons.extend(serial_why)
    elif sc is not None and an.serial_console not in an.consoles:
        complete = False
        reasons.append("serial log not checked: console %s does not occur in the trace "
                       "(consoles: %s)" % (an.serial_console, ", ".join(sorted(an.consoles))))
    elif sc is not None and not total:
        if sc.fed_commits and sc.stats["matched"] == 0 and \
                not sc.stats.get("unchecked_before_sync"):
            complete = False
            reasons.append("serial log not checked: no record of console %s matched "
                           "(wrong --serial-console?)" % an.serial_console)
    if stressor_end[1]:
        complete = False
        reasons.extend(stressor_end[1])
    if complete:
        verdict = "fail" if total else "pass"
    else:
        verdict = "fail" if genuine else "incomplete"
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
        "verdict": verdict,
        "reasons": reasons,
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
        "rules": RULES,
        "violations_by_rule": dict(an.vcount),
        "violation_count": total,
        "violations": an.violations,
        "violations_detail_limit_per_rule": 25,
        "anomalies": {"count": an.anomaly_count, "examples": an.anomalies},
    }
    v["exit_code"] = {"pass": EXIT_PASS, "fail": EXIT_FAIL}.get(verdict, EXIT_UNUSABLE)
    return v


def error_verdict(msg):
    return {
        "tool": "printk-nobkl-stress analysis", "format_version": VERSION,
        "verdict": "incomplete", "error": msg, "reasons": [msg],
        "violations_by_rule": dict.fromkeys(RULE_IDS, 0), "violation_count": 0,
        "violations": [], "exit_code": EXIT_UNUSABLE,
    }
