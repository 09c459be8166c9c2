# pns-description: a WARN while the printer thread restores the port after a record (the 8250's last unsafe section): the thread's last nbcon_exit_unsafe() grants the handover, and the release the core makes after it is not a loss
# pns-kind: workload
# pns-duration: 3
# pns-expect-splat: warning
# pns-baud: 115200
# pns-needs: CONFIG_NBCON_DEBUG
. /workloads/lib/common.sh

# The thread, printing the backlog, is held in the unsafe section in
# which the 8250 restores IER after a record's last byte when the WARN
# comes; the WARN's emergency printk() requests a handover and waits up
# to a second for it (spinwait_max_us), the hold ends "request", and the
# driver's last nbcon_exit_unsafe() hands the console over. The record
# was written whole but not committed: the waiter replays it.
N=/sys/kernel/debug/printk_nbcon
echo Y > $N/hold_at_restore
echo 1000000 > $N/spinwait_max_us
trace_start
kmsg_burst 40 "warn-restore backlog"
hold_printer_thread || exit 1
echo WARNING > /sys/kernel/debug/provoke-crash/DIRECT
hold_result
echo 0 > $N/spinwait_max_us
echo N > $N/hold_at_restore
kmsg_burst 5 "warn-restore after the warning"
sleep "$PNS_DURATION"
trace_stop
line_speed instant
save_dmesg
