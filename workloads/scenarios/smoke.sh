# pns-description: short printk_stress run on every CPU in task, hardirq and NMI context with emergency/panic sections, no injected faults, traced
# pns-kind: workload
# pns-duration: 5
. /workloads/lib/common.sh

stress_load
stress_traced_run
save_dmesg
