# pns-description: a WARN while the printer thread is held between two bytes of a record (in a safe state): the emergency output takes the console over without a handover, the thread loses it at its next byte, the record is replayed
# pns-kind: workload
# pns-duration: 3
# pns-expect-splat: warning
# pns-baud: 9600
# pns-needs: CONFIG_NBCON_DEBUG
. /workloads/lib/common.sh

# The line's time is spent after each byte's unsafe section, and the
# thread, printing the backlog, is held there (between two bytes, in a
# safe state) when the WARN comes, so the WARN's emergency printk()
# takes the console over directly (mainline nbcon: a higher priority
# takes a safe owner without a handover); the hold ends "lost".
echo Y > /sys/kernel/debug/printk_nbcon/byte_delay_safe
trace_start
kmsg_burst 40 "warn-takeover-safe backlog"
hold_printer_thread || exit 1
echo WARNING > /sys/kernel/debug/provoke-crash/DIRECT
hold_result
kmsg_burst 5 "warn-takeover-safe after the warning"
sleep "$PNS_DURATION"
trace_stop
line_speed instant
echo N > /sys/kernel/debug/printk_nbcon/byte_delay_safe
save_dmesg
