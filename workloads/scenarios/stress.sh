# pns-description: printk_stress on every CPU in task, hardirq and NMI context, with emergency/panic sections and hostile takeovers, traced
# pns-duration: 10
. /workloads/lib/common.sh

insmod /lib/modules/printk_stress.ko || exit 1
ps=/sys/kernel/debug/printk_stress
echo all > $ps/contexts
echo "$PNS_DURATION" > $ps/duration_s
if grep -q "nobkl_debug: 1" $ps/control; then
	echo 100 > $ps/fail_takeover/probability
	echo 20 > $ps/fail_takeover/interval
	echo -1 > $ps/fail_takeover/times
fi
trace_start
echo start > $ps/control
while grep -q "state: running" $ps/control; do
	sleep 1
done
trace_stop
cat $ps/stats > "$PNS_RESULTS/stats.txt"
cat $ps/control > "$PNS_RESULTS/control.txt"
rmmod printk_stress
save_dmesg
