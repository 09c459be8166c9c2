# pns-description: a long printk_stress run whose large trace.dat (over a million events) feeds make bench
# pns-kind: workload
# pns-duration: 40
. /workloads/lib/common.sh

stress_load
echo 0 > $PS/task_rate
echo 16 > $PS/burst
echo 200 > $PS/irq_period_us
stress_traced_run -b 32768
