"""Rule ids checked by the analysis (see docs/analysis.md)."""

RULES = {
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
}

RULE_IDS = tuple(RULES)
