"""Human-readable rendering of a verdict dict."""

from .emergency_report import describe, summarize_late

LATE_SHOWN = 5                # late emergency records the text names per console


def _lat(d):
    if not d or not d.get("count"):
        return "n=0"
    return "n=%d min=%.1f p50=%.1f p90=%.1f p99=%.1f max=%.1f %s" % (
        d["count"], d["min"], d["p50"], d["p90"], d["p99"], d["max"], d["unit"])


def _p(d, key):
    x = d.get(key)
    return "-" if x is None else "%.0f" % x


def _store_to_console(w, d, finding):
    """Per console: emergency/panic store-to-console p50/p99, the wait
    behind a lower-priority owner, and the finding when there is one."""
    if not d:
        return
    for kind in ("emergency", "panic"):
        k, wt = d.get(kind) or {}, d.get(kind + "_wait_behind_lower_prio") or {}
        if not k.get("count") and not k.get("not_committed"):
            continue
        w("    %s records: store to console n=%d p50=%s p99=%s us, not committed %d; "
          "behind a lower-priority owner n=%d p99=%s max=%s us" % (
              kind, k.get("count", 0), _p(k, "p50"), _p(k, "p99"), k.get("not_committed", 0),
              wt.get("count", 0), _p(wt, "p99"), _p(wt, "max")))
    if finding:
        ex = finding["examples"][0]
        w("    FINDING: %d record(s) waited behind a lower-priority owner for more than %.0f us "
          "(%d record times), longest seq %d (%s) %.0f us behind %s" % (
              finding["count"], finding["threshold_us"], finding.get("records", 0),
              ex["seq"], ex["kind"], ex["wait_us"], ex["owner_at_store"]))


def _past_bound(w, rep, late_file=None):
    """Per console: the emergency records past the RFC's bound, the
    furthest LATE_SHOWN of them named, and where the others are: the
    late file when the analysis wrote one (`emergency_late_file`)."""
    if not rep or not rep.get("past_bound"):
        return
    w("    against the RFC's bound: %s" % summarize_late(rep))
    for r in rep["late"][:LATE_SHOWN]:
        w("      %s" % describe(r))
    more = rep["past_bound"] - min(LATE_SHOWN, len(rep["late"]))
    if not more:
        return
    if late_file:
        w("      ... %d more (every one in %s)" % (more, late_file["name"]))
    else:
        w("      ... %d more (%d named in the JSON verdict, latency.emergency_past_bound)" % (
            more, len(rep["late"])))


def stressor_line(v):
    """The stressor's end line as the verdict read it (`stressor`), or
    None when no stressor run ended."""
    s = v.get("stressor")
    if not s:
        return None
    if s["result"] is None:
        return "stressor: no SUCCESS/FAILURE line of run %s" % ", ".join(
            str(m["run"]) for m in s["missing_result"])
    line = "stressor: run=%d %s checks=%s" % (s["run"], s["result"], ",".join(s["checks"]))
    if s["failed"]:
        line += " failed: %s" % s["failed"]
    if len(s["runs"]) > 1:
        line += " (%d runs, %d FAILURE)" % (
            len(s["runs"]), sum(r["result"] == "FAILURE" for r in s["runs"]))
    return line


def render_text(v, max_violations=10):
    out = []
    w = out.append
    if v.get("error"):
        w("VERDICT: INCOMPLETE (unusable input): %s" % v["error"])
        return "\n".join(out) + "\n"
    w("VERDICT: %s" % v["verdict"].upper())
    for r in v.get("reasons", []):
        if not r.startswith("rule violations:"):
            w("  note: %s" % r)
    t = v["trace"]
    w("")
    w("trace: %s" % v["inputs"]["read_with"])
    if v["inputs"].get("ordering"):
        w("  order: %s" % v["inputs"]["ordering"])
    w("  %d lines, %d nobkl events, cpus=%s, %s..%s s, complete=%s%s" % (
        t["lines"], t["nobkl_events"], t["cpus"],
        "%.6f" % t["first_ts"] if t["first_ts"] is not None else "-",
        "%.6f" % t["last_ts"] if t["last_ts"] is not None else "-",
        "yes" if t["complete"] else "NO",
        (", %d drop marker(s)" % t["drop_markers"]) if t["drop_markers"] else ""))
    c = v["counts"]
    tk = c["takeovers"]
    ho = c["handovers"]
    w("  records stored %d, emits %d, commits %d, reprints %d, dropped records %d" % (
        c["records"], c["emits"], c["commits"], c["reprints"], c["dropped_records"]))
    w("  acquires: direct %d, handover %d, hostile %d (by prio %s, same cpu %d, from nmi %d)" % (
        tk["direct"], tk["handover"], tk["hostile"],
        ",".join("%s=%d" % kv for kv in sorted(tk["hostile_by_prio"].items())) or "-",
        tk["hostile_same_cpu"], tk["hostile_from_nmi"]))
    w("  handover: requests %d, grants %d, completed %d, timeouts %d; lost events %s" % (
        ho["requests"], ho["grants"], ho["completed"], ho["timeouts"],
        ",".join("%s=%d" % kv for kv in sorted(c["lost"].items())) or "0"))
    a = c["attempts"]
    w("  emission attempts: committed %d, lost %d, handed over %d, abandoned %d, open %d" % (
        a["commit"], a["lost"], a["handover"], a["abandoned"], a["open"]))
    lat = v["latency"]
    w("  latency handover wait: %s" % _lat(lat["handover_wait"]))
    w("  latency store->commit: %s" % _lat(lat["store_to_commit"]))
    for name, cs in v["consoles"].items():
        w("  console %s%s: seq %s..%s, %d commits, %d reprints, %d dropped, %d intervals, "
          "%d stored but not committed at trace end" % (
              name, " (serial)" if cs["serial"] else "", cs["first_seq"], cs["last_committed"],
              cs["commits"], cs["reprints"], cs["dropped_records"], cs["ownership_intervals"],
              cs["stored_not_committed_at_end"]))
        _store_to_console(w, lat.get("store_to_console", {}).get(name),
                          v.get("findings", {}).get("emergency_behind_lower_prio", {}).get(name))
        _past_bound(w, lat.get("emergency_past_bound", {}).get(name),
                    v.get("emergency_late_file"))
    s = v.get("serial")
    if s:
        w("serial: %s: %d lines read, %d matched, %d partial, %d full reprints, %d dropped "
          "notices, %d stressor records, %d foreign lines, %d before / %d after the trace%s" % (
              v["inputs"]["serial"], s["lines_read"], s["matched"], s["partial_lines"],
              s["reprinted_full_lines"], s["dropped_lines"], s["stressor_records"],
              s["foreign_lines"], s["lines_before_trace"], s["lines_after_trace"],
              ("; GAVE UP: " + s["gave_up"]) if s.get("gave_up") else ""))
    if stressor_line(v):
        w(stressor_line(v))
    w("")
    vb = v["violations_by_rule"]
    bad = {k: n for k, n in vb.items() if n}
    if not bad:
        w("rules: all %d hold" % len(vb))
    else:
        w("rules violated: " + ", ".join("%s=%d" % kv for kv in bad.items()))
        shown = 0
        for viol in v["violations"]:
            if shown >= max_violations:
                w("... %d more in the JSON verdict (--json)" % (len(v["violations"]) - shown))
                break
            shown += 1
            w("")
            w("[%s] console %s seq %s at %s (trace line %s)%s" % (
                viol["rule"], viol["console"], viol["seq"],
                "%.6f" % viol["ts"] if viol["ts"] is not None else "-", viol["line"],
                " (after trace loss)" if viol.get("after_trace_loss") else ""))
            w("  %s" % viol["message"])
            if viol.get("cpus"):
                w("  cpus: %s  contexts: %s" % (viol["cpus"], ", ".join(viol["contexts"])))
            if viol.get("serial_line"):
                w("  serial line %d: %s" % (viol["serial_line"], viol["serial_text"]))
            for e in viol.get("events_before", []):
                w("      %s" % e)
            if viol.get("event"):
                w("   >> %s" % viol["event"])
            for e in viol.get("events_after", []):
                w("      %s" % e)
            if viol.get("context_note"):
                w("  (%s)" % viol["context_note"])
    an = v.get("anomalies", {})
    if an.get("count"):
        w("")
        w("anomalies (not rule violations, ordering/trace oddities): %d" % an["count"])
        for e in an["examples"][:5]:
            w("  line %s: %s" % (e["line"], e["message"]))
    return "\n".join(out) + "\n"


# Rules whose violations mean a record was lost, or printed again without
# the lost ownership that justifies a reprint: the two numbers a user of
# the console cares about first.
LOSS_RULES = ("no-loss", "serial-missing", "producer-gap")
DUPLICATE_RULES = ("duplicate", "serial-partial")


def headline(v):
    """The verdict in three or four lines: what was printed, how the
    console changed hands, lost and unjustified duplicate records, the
    rules, and the first violation in the words of its message."""
    if v.get("error"):
        return ["analysis: UNUSABLE INPUT: %s" % v["error"]]
    c, vb = v["counts"], v["violations_by_rule"]
    tk, ho = c["takeovers"], c["handovers"]
    s = v.get("serial") or {}
    on_log = ("%d on the serial log" % s["matched"]) if s else "no serial log checked"
    by_prio = ", ".join("%s %d" % kv for kv in sorted(tk["hostile_by_prio"].items()))
    out = [
        "analysis %s: %d records stored, %d printed, %s; reprints %d" % (
            v["verdict"].upper(), c["records"], c["commits"], on_log, c["reprints"]),
        "  takeovers: hostile %d%s, handovers %d (of %d requests, %d timed out), direct %d" % (
            tk["hostile"], " (%s)" % by_prio if by_prio else "", ho["completed"],
            ho["requests"], ho["timeouts"], tk["direct"]),
        "  lost %d, unjustified duplicates %d; rules: %s" % (
            sum(vb.get(r, 0) for r in LOSS_RULES),
            sum(vb.get(r, 0) for r in DUPLICATE_RULES),
            "all %d hold" % len(vb) if not any(vb.values()) else
            "violated " + ", ".join("%s=%d" % kv for kv in vb.items() if kv[1])),
    ]
    if stressor_line(v):
        out.append("  " + stressor_line(v))
    for r in v.get("reasons", []):
        if not r.startswith("rule violations:"):
            out.append("  note: %s" % r)
    if v.get("violations"):
        first = v["violations"][0]
        where = "console %s seq %s, trace line %s" % (first["console"], first["seq"],
                                                      first["line"])
        if first.get("serial_line"):
            where += ", serial line %d" % first["serial_line"]
        out.append("  first violation [%s] (%s): %s" % (first["rule"], where,
                                                        first["message"]))
    return out
