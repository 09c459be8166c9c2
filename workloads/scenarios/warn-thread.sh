# pns-description: a WARN while the printer thread prints: atomic emergency output takes over, then the thread resumes
# pns-kind: workload
# pns-duration: 6
# pns-expect-splat: warning
# pns-baud: 500000
. /workloads/lib/common.sh

# A slow console keeps the printer thread inside a record when the WARN
# hits; on 6.12 the thread is held there, inside the unsafe section of a
# byte, until the WARN's emergency output asks it for the console (the
# hold ends "request").
trace_start
kmsg_burst 150 "warn-thread backlog"
if [ -e /sys/kernel/debug/printk_nbcon/hold ]; then
	hold_printer_thread || exit 1
fi
echo WARNING > /sys/kernel/debug/provoke-crash/DIRECT
[ -e /sys/kernel/debug/printk_nbcon/hold ] && hold_result
kmsg_burst 20 "warn-thread after the warning"
sleep "$PNS_DURATION"
trace_stop
line_speed instant
save_dmesg
