# pns-description: printk_stress on every CPU in task, hardirq and NMI context, with emergency/panic sections and hostile takeovers, traced
# pns-kind: workload
# pns-duration: 10
. /workloads/lib/common.sh

stress_load
stress_takeovers
# Besides the stressor's takeovers, which meet the printer thread inside
# a record only by chance: one nested takeover of the thread inside a
# record, so that the run has a loss (nobkl_lost) the thread notices.
thread_nested_takeover 500 1 || exit 1
stress_traced_run
save_dmesg
