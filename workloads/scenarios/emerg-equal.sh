# pns-description: emergency sections on two CPUs at once on a slow line: waiters of the owner's own priority, traced
# pns-kind: workload
# pns-duration: 3
# pns-cpus: 2
# pns-baud: 500000
. /workloads/lib/common.sh

# Every iteration of one task per CPU is an emergency section of four
# records, 20 a second per CPU, and a record takes about 2.5 ms on the
# line (20 us a byte): each section holds the console for about 10 ms.
# Below what the line prints, so no backlog builds up. The contention is
# forced: the first time CPU 0's producer task owns the console, it
# stalls 500 ms at the safe point before a byte (fail_stall_safe, once,
# filtered to that task), so CPU 1's sections of that half second find
# an emergency owner, of their own priority, printing, and leave their
# records to it.
insmod /lib/modules/printk_stress.ko || exit 1
echo emerg > $PS/contexts
echo task > $PS/atomic_from
echo 0-1 > $PS/cpus
echo 20 > $PS/task_rate
echo 1 > $PS/emerg_every
echo 4 > $PS/atomic_burst
echo "$PNS_DURATION" > $PS/duration_s
nobkl_fault fail_stall_safe 1 1 && nobkl_knob stall_safe_us 500000 ||
	{ echo "no fail_stall_safe: kernel without CONFIG_PRINTK_NOBKL_DEBUG"; exit 1; }
echo Y > /sys/kernel/debug/printk_nobkl/fail_stall_safe/task-filter
trace_start
echo start > $PS/control
producer=$(ps | awk '$NF == "[pstress/0:0]" { print $1 }')
[ -n "$producer" ] || { echo "no producer task pstress/0:0"; exit 1; }
echo 1 > "/proc/$producer/make-it-fail"
while grep -q "state: running" $PS/control; do
	sleep 1
done
trace_stop
stress_save
nobkl_fault fail_stall_safe 1 0
echo N > /sys/kernel/debug/printk_nobkl/fail_stall_safe/task-filter
line_speed instant
sleep 1
save_dmesg
