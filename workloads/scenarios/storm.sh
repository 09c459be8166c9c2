# pns-description: printk_stress on all CPUs and contexts with random hostile takeovers (emergency and panic, remote and by NMI), owners stalled inside unsafe regions and owners that ignore handover requests, traced
# pns-kind: workload
# pns-duration: 10
. /workloads/lib/common.sh

stress_load
stress_takeovers
stress_stuck_owners
stress_traced_run
save_dmesg
