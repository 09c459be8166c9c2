# pns-description: printk_stress on every CPU in task, hardirq and NMI context, with emergency/panic sections and hostile takeovers, traced
# pns-kind: workload
# pns-duration: 10
. /workloads/lib/common.sh

stress_load
stress_takeovers
stress_traced_run
save_dmesg
