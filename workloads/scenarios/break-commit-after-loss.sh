# pns-description: test only: break_commit_after_loss under printk_stress takeovers; the analysis must report rule after-loss
# pns-kind: breaker
# pns-duration: 6
# pns-expect-rule: after-loss
. /workloads/lib/common.sh

stress_load
stress_takeovers
break_fault break_commit_after_loss -1
stress_traced_run
