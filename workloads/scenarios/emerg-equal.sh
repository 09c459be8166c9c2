# pns-description: emergency sections on two CPUs at once on a slow line: waiters of the owner's own priority, traced
# pns-kind: workload
# pns-duration: 3
# pns-cpus: 2
. /workloads/lib/common.sh

# Every iteration of one task per CPU is an emergency section of four
# records, 20 a second per CPU, and a record takes about 2.5 ms on the
# line (20 us a byte): each section holds the console for about 10 ms,
# so the two CPUs' sections overlap often and one CPU's section finds the
# other's emergency owner printing. Below what the line prints, so no
# backlog builds up.
insmod /lib/modules/printk_stress.ko || exit 1
echo emerg > $PS/contexts
echo task > $PS/atomic_from
echo 0-1 > $PS/cpus
echo 20 > $PS/task_rate
echo 1 > $PS/emerg_every
echo 4 > $PS/atomic_burst
echo "$PNS_DURATION" > $PS/duration_s
nobkl_knob byte_delay_ns 20000
stress_traced_run
nobkl_knob byte_delay_ns 0
sleep 1
save_dmesg
