"""The rules the analysis checks: one table (docs/analysis.md, "The rules").

Each row: the rule id, its scope (what it is checked over), its invariant
in one sentence (the text `python3 -m analysis rules` prints), and where
it is checked: the functions that raise it (test_rules.py checks that
each of them does, and that no other function raises a rule).  The
tolerances the checker grants against these rules are in tolerances.py.
"""

from collections import namedtuple

Rule = namedtuple("Rule", "id scope invariant checked_by")

TRACE = "console (trace)"
SERIAL = "serial log"
PRODUCERS = "stressor producers (serial log)"
STRESSOR = "stressor end line (serial log, dmesg.txt)"

# where each rule is raised: module.function or module.Class.method
CHECKED_BY = {
    "no-loss": ("trace_rules.no_loss_skip", "trace_rules.no_loss_first",
                "trace_rules.no_loss_commit_skip", "trace_rules.no_loss_unemitted",
                "trace_rules.no_loss_empty_emission"),
    "dropped-count": ("trace_rules.dropped_count",),
    "duplicate": ("trace_rules.duplicate_emission", "trace_rules.duplicate_commit"),
    "one-owner": ("trace_rules.one_owner_action", "trace_rules.one_owner_acquire"),
    "after-loss": ("trace_rules.after_loss",),
    "takeover-prio": ("trace_rules.takeover_prio",),
    "panic-protect": ("trace_rules.panic_protect_hostile", "trace_rules.panic_protect_handover"),
    "handover-target": ("trace_rules.handover_grant_not_taken", "trace_rules.handover_grant_late",
                        "trace_rules.handover_unrequested", "trace_rules.handover_wrong_target",
                        "trace_rules.handover_without_grant",
                        "trace_rules.handover_release_without_grant",
                        "trace_rules.handover_request_prio",
                        "trace_rules.handover_grant_to_acquirer",
                        "trace_rules.handover_grant_prio", "trace_rules.handover_grant_unclaimed",
                        "trace_rules.handover_acquire_ungranted"),
    "thread-takeover": ("trace_rules.thread_takeover", "trace_rules.handover_unrequested"),
    "serial-missing": ("serialcheck.SerialChecker._missing",
                       "serialcheck.SerialChecker._check_post"),
    "serial-corrupt": ("serialcheck.SerialChecker._corrupt",),
    "serial-order": ("serialcheck.SerialChecker._committed_synced",
                     "serialcheck.SerialChecker._late_line",
                     "serialcheck.SerialChecker._check_post"),
    "serial-partial": ("serialcheck.SerialChecker._copies_before",
                       "serialcheck.SerialChecker._early_copy",
                       "serialcheck.SerialChecker._interrupted",
                       "serialcheck.SerialChecker._repeat_or_forgery",
                       "serialcheck.SerialChecker._skip_checked",
                       "serialcheck.SerialChecker._unexplained"),
    "serial-extra": ("serialcheck.SerialChecker._forged",
                     "serialcheck.SerialChecker._repeat_or_forgery",
                     "serialcheck.SerialChecker._unexplained",
                     "serialcheck.SerialChecker._unplaced",
                     "serialcheck.SerialChecker.attempt"),
    "serial-dropped": ("serialcheck.SerialChecker._check_notice",
                       "serialcheck.SerialChecker._check_own_notice",
                       "serialcheck.SerialChecker._check_post",
                       "serialcheck.SerialChecker._explain_notice"),
    "producer-gap": ("serialcheck.SerialChecker._check_producer_gaps",),
    "producer-order": ("serialcheck.SerialChecker._writer_order",),
    "stressor-selfcheck": ("selfcheck.check",),
}

_INVARIANTS = {
    # trace side, per console
    "no-loss": "every seq from the first to the last emitted is committed; "
               "skipped seqs are covered by the dropped count of the next emission",
    "dropped-count": "the dropped count of an emission is exactly the number of "
                     "seqs it skips since the console's last commit (a reprint "
                     "after a takeover shows the same count again)",
    "duplicate": "a record is emitted/committed again only after the earlier "
                 "attempt lost ownership (handover or takeover) before its commit",
    "one-owner": "at most one owner at a time: acquire of an owned console only "
                 "as handover or hostile takeover; no emission/commit/release by "
                 "a context that never owned or already released it",
    "after-loss": "no emission, commit, grant or release by a context after it "
                  "lost ownership (taken over / handed over) until it re-acquires",
    "takeover-prio": "a hostile takeover comes only from a strictly higher "
                     "priority than the owner's",
    "panic-protect": "nothing takes a console away from a panic-priority owner "
                     "on another CPU (hostile, or a handover in the middle of its "
                     "record; its release may hand over to a waiter)",
    "handover-target": "a handover goes to the waiter that requested it: grant "
                       "to_cpu/to_prio matches a pending request, a handover "
                       "acquire matches a grant",
    "thread-takeover": "the printer thread (thread=1) never takes over: never "
                       "how=hostile, never a handover it did not request",
    # end to end, serial log
    "serial-missing": "every record the serial console emitted and committed "
                      "(and every record stored after the trace ended) appears "
                      "complete on the serial log",
    "serial-corrupt": "a complete line equals the stored record text; stressor "
                      "records have the right length and crc",
    "serial-order": "records appear on the serial log in seq order",
    "serial-partial": "a partial or repeated line only where the trace shows an "
                      "interrupted attempt (lost ownership) that is reprinted; no "
                      "other second copy of a record anywhere on the log (also "
                      "before its turn, before or after the trace)",
    "serial-extra": "no kernel line on the serial log that no emission explains, and "
                    "no stressor record the stressor did not make (an identity again "
                    "with another crc, or not made according to stats.txt)",
    "serial-dropped": "a `** N printk messages dropped **` line right before a record "
                      "exactly when its emission had dropped=N > 0, and nowhere else",
    "producer-gap": "stressor producer numbers n have no gaps on the serial log "
                    "except for records the console dropped (counted) or printk() "
                    "refused (stats.txt)",
    "producer-order": "the records of one stressor writer (a version 2 producer: run, "
                      "cpu, ctx, writer) get their seqs, and reach the serial log, in "
                      "n order",
    # the stressor's own view of its run
    "stressor-selfcheck": "every stressor run's end line says SUCCESS: printk() stored or refused "
                          "every record the module attempted, served every NMI it sent, accounted for every "
                          "takeover it injected and saw every producer run",
}

_SCOPES = {"serial": SERIAL, "producer": PRODUCERS, "stressor": STRESSOR}

RULE_TABLE = tuple(Rule(k, _SCOPES.get(k.split("-")[0], TRACE), v, CHECKED_BY[k])
                   for k, v in _INVARIANTS.items())

RULES = {r.id: r.invariant for r in RULE_TABLE}
RULE_IDS = tuple(RULES)
