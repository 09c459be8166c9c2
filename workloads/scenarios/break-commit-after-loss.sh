# pns-description: test only: break_commit_after_loss under printk_stress takeovers; the analysis must report rule after-loss
# pns-kind: breaker
# pns-duration: 6
# pns-expect-rule: after-loss
. /workloads/lib/common.sh

# The breaker fires where an owner finds the console lost in the middle
# of a record, outside NMI context (the faults are not evaluated in NMI
# context). The loss is made to happen: task records only, so the
# printer thread prints them, and at the 300th byte it writes a context
# nested on its CPU takes the console over (fail_nested_takeover, the
# thread's task only); the injected takeovers come on top.
stress_load
echo task > $PS/contexts
stress_takeovers
break_fault break_commit_after_loss -1
thread_nested_takeover 300 1 || exit 1
stress_traced_run
