# pns-description: a long printk_stress run whose large trace.dat (over a million events) feeds make bench
# pns-duration: 40
. /workloads/lib/common.sh

insmod /lib/modules/printk_stress.ko || exit 1
ps=/sys/kernel/debug/printk_stress
echo all > $ps/contexts
echo 0 > $ps/task_rate
echo 16 > $ps/burst
echo 200 > $ps/irq_period_us
echo "$PNS_DURATION" > $ps/duration_s
trace_start -b 32768
echo start > $ps/control
while grep -q "state: running" $ps/control; do
	sleep 1
done
trace_stop
cat $ps/stats > "$PNS_RESULTS/stats.txt"
rmmod printk_stress
