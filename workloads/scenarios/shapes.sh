# pns-description: printk_stress load shapes: the stress load in idle/burst phases of random length (stutter) with records at the ringbuffer's line limit, two of five cut (truncate), of one to four lines (multiline), hostile takeovers, traced
# pns-kind: workload
# pns-duration: 10
. /workloads/lib/common.sh

stress_load
stress_takeovers
echo stutter,truncate,multiline > $PS/shapes
echo 500 > $PS/stutter_ms
stress_traced_run
save_dmesg
