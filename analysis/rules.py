"""The rules the analysis checks: one registry (docs/analysis.md, "The
rules").

Each row (Rule): the rule id, its scope (what it is checked over), its
invariant in one sentence, where it is checked: the functions that
raise it (test_rules.py checks that each of them does, and that no
other function raises a rule), and the models of the console design it
applies to (MODELS).  `python3 -m analysis rules` prints it, `--json`
every column.  The trace rules' units (trace_rules.UNITS) are looked up
here; the tolerances the checker grants against these rules are in
tolerances.py.
"""

from collections import namedtuple

Rule = namedtuple("Rule", "id scope invariant checked_by models")

TRACE = "console (trace)"
SERIAL = "serial log"
PRODUCERS = "stressor producers (serial log)"
STRESSOR = "stressor end line (serial log, dmesg.txt)"

# the console designs the rules are written for
RFC_61 = "rfc-6.1"
MODELS = {
    RFC_61: "the nobkl consoles of the RFC \"printk: A new approach\" (2022), "
            "ported to Linux 6.1 (patches/6.1/)",
}

# checked_by: module.function or module.Class.method
RULE_TABLE = (
    # trace side, per console
    Rule("no-loss", TRACE,
        "every seq from the first to the last emitted is committed; skipped seqs "
        "are covered by the dropped count of the next emission",
        ("trace_rules.no_loss_skip", "trace_rules.no_loss_first",
         "trace_rules.no_loss_commit_skip", "trace_rules.no_loss_unemitted",
         "trace_rules.no_loss_empty_emission"),
        (RFC_61,)),
    Rule("dropped-count", TRACE,
        "the dropped count of an emission is exactly the number of seqs it skips "
        "since the console's last commit (a reprint after a takeover shows the "
        "same count again)",
        ("trace_rules.dropped_count",),
        (RFC_61,)),
    Rule("duplicate", TRACE,
        "a record is emitted/committed again only after the earlier attempt lost "
        "ownership (handover or takeover) before its commit",
        ("trace_rules.duplicate_emission", "trace_rules.duplicate_commit"),
        (RFC_61,)),
    Rule("one-owner", TRACE,
        "at most one owner at a time: acquire of an owned console only as "
        "handover or hostile takeover; no emission/commit/release by a context "
        "that never owned or already released it",
        ("trace_rules.one_owner_action", "trace_rules.one_owner_acquire"),
        (RFC_61,)),
    Rule("after-loss", TRACE,
        "no emission, commit, grant or release by a context after it lost "
        "ownership (taken over / handed over) until it re-acquires",
        ("trace_rules.after_loss",),
        (RFC_61,)),
    Rule("takeover-prio", TRACE,
        "a hostile takeover comes only from a strictly higher priority than the "
        "owner's",
        ("trace_rules.takeover_prio",),
        (RFC_61,)),
    Rule("unsafe-takeover", TRACE,
        "an owner inside its unsafe section is taken over only by the final flush "
        "of a panic (after the other CPUs are stopped), whose acquire marks the "
        "console for good (unsafe_takeover=1); kernels without the mark are not "
        "checked",
        ("trace_rules.unsafe_takeover",),
        (RFC_61,)),
    Rule("panic-protect", TRACE,
        "nothing takes a console away from a panic-priority owner on another CPU "
        "(hostile, or a handover in the middle of its record; its release may "
        "hand over to a waiter)",
        ("trace_rules.panic_protect_hostile",
         "trace_rules.panic_protect_handover"),
        (RFC_61,)),
    Rule("handover-target", TRACE,
        "a handover goes to the waiter that requested it: grant to_cpu/to_prio "
        "matches a pending request, a handover acquire matches a grant",
        ("trace_rules.handover_grant_not_taken",
         "trace_rules.handover_grant_late", "trace_rules.handover_unrequested",
         "trace_rules.handover_wrong_target",
         "trace_rules.handover_without_grant",
         "trace_rules.handover_release_without_grant",
         "trace_rules.handover_request_prio",
         "trace_rules.handover_grant_to_acquirer",
         "trace_rules.handover_grant_prio",
         "trace_rules.handover_grant_unclaimed",
         "trace_rules.handover_acquire_ungranted"),
        (RFC_61,)),
    Rule("thread-takeover", TRACE,
        "the printer thread (thread=1) never takes over: never how=hostile, never "
        "a handover it did not request",
        ("trace_rules.thread_takeover", "trace_rules.handover_unrequested"),
        (RFC_61,)),
    # end to end, serial log
    Rule("serial-missing", SERIAL,
        "every record the serial console emitted and committed (and every record "
        "stored after the trace ended) appears complete on the serial log",
        ("serialcheck.SerialChecker._missing",
         "serialcheck.SerialChecker._check_post"),
        (RFC_61,)),
    Rule("serial-corrupt", SERIAL,
        "a complete line equals the stored record text; stressor records have the "
        "right length and crc",
        ("serialcheck.SerialChecker._corrupt",),
        (RFC_61,)),
    Rule("serial-order", SERIAL,
        "records appear on the serial log in seq order",
        ("serialcheck.SerialChecker._committed_synced",
         "serialcheck.SerialChecker._late_line",
         "serialcheck.SerialChecker._check_post"),
        (RFC_61,)),
    Rule("serial-partial", SERIAL,
        "a partial or repeated line only where the trace shows an interrupted "
        "attempt (lost ownership) that is reprinted; no other second copy of a "
        "record anywhere on the log (also before its turn, before or after the "
        "trace)",
        ("serialcheck.SerialChecker._copies_before",
         "serialcheck.SerialChecker._early_copy",
         "serialcheck.SerialChecker._interrupted",
         "serialcheck.SerialChecker._repeat_or_forgery",
         "serialcheck.SerialChecker._skip_checked",
         "serialcheck.SerialChecker._unexplained"),
        (RFC_61,)),
    Rule("serial-extra", SERIAL,
        "no kernel line on the serial log that no emission explains, and no "
        "stressor record the stressor did not make (an identity again with "
        "another crc, or not made according to stats.txt)",
        ("serialcheck.SerialChecker._forged",
         "serialcheck.SerialChecker._repeat_or_forgery",
         "serialcheck.SerialChecker._unexplained",
         "serialcheck.SerialChecker._unplaced",
         "serialcheck.SerialChecker.attempt"),
        (RFC_61,)),
    Rule("serial-dropped", SERIAL,
        "a `** N printk messages dropped **` line right before a record exactly "
        "when N > 0, N its emission's dropped plus those of the records below the "
        "console loglevel committed since the last one printed, and nowhere else",
        ("serialcheck.SerialChecker._check_notice",
         "serialcheck.SerialChecker._check_own_notice",
         "serialcheck.SerialChecker._check_post",
         "serialcheck.SerialChecker._explain_notice"),
        (RFC_61,)),
    Rule("producer-gap", PRODUCERS,
        "stressor producer numbers n have no gaps on the serial log except for "
        "records the console dropped (counted) or printk() refused (stats.txt)",
        ("serialcheck.SerialChecker._check_producer_gaps",),
        (RFC_61,)),
    Rule("producer-order", PRODUCERS,
        "the records of one stressor writer (a version 2 producer: run, cpu, ctx, "
        "writer) get their seqs, and reach the serial log, in n order",
        ("serialcheck.SerialChecker._writer_order",),
        (RFC_61,)),
    # the stressor's own view of its run
    Rule("stressor-selfcheck", STRESSOR,
        "every stressor run's end line says SUCCESS: printk() stored or refused "
        "every record the module attempted, served every NMI it sent, accounted "
        "for every takeover it injected and saw every producer run",
        ("selfcheck.check",),
        (RFC_61,)),
)

RULES = {r.id: r.invariant for r in RULE_TABLE}
RULE_IDS = tuple(RULES)


def checked_by(rule, module):
    """The names of the functions of `module` (trace_rules, serialcheck,
    selfcheck) that raise `rule`, in the table's order."""
    prefix = module + "."
    return tuple(f[len(prefix):] for f in _BY_ID[rule].checked_by if f.startswith(prefix))


_BY_ID = {r.id: r for r in RULE_TABLE}
