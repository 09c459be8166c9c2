# pns-description: a WARN while the printer thread prints: atomic emergency output takes over, then the thread resumes
# pns-kind: workload
# pns-duration: 6
# pns-expect-splat: warning
# pns-baud: 500000
. /workloads/lib/common.sh

# A slow console keeps the printer thread inside a record when the WARN
# hits; on 6.12 the thread is held there, inside the unsafe section of a
# byte, until the WARN's emergency output asks it for the console (the
# hold ends "request"), and the WARN waits up to a second for the
# handover (spinwait_max_us), however late the host runs the thread.
N=/sys/kernel/debug/printk_nbcon
trace_start
kmsg_burst 150 "warn-thread backlog"
if [ -e $N/hold ]; then
	echo 1000000 > $N/spinwait_max_us
	hold_printer_thread || exit 1
fi
echo WARNING > /sys/kernel/debug/provoke-crash/DIRECT
if [ -e $N/hold ]; then
	hold_result
	echo 0 > $N/spinwait_max_us
fi
kmsg_burst 20 "warn-thread after the warning"
sleep "$PNS_DURATION"
trace_stop
line_speed instant
save_dmesg
