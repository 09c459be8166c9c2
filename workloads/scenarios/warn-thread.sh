# pns-description: a WARN while the printer thread prints: atomic emergency output takes over, then the thread resumes
# pns-kind: workload
# pns-duration: 6
# pns-expect-splat: warning
. /workloads/lib/common.sh

# A slow console keeps the printer thread inside a record when the WARN hits.
nobkl_knob byte_delay_ns 20000
trace_start
kmsg_burst 150 "warn-thread backlog"
echo WARNING > /sys/kernel/debug/provoke-crash/DIRECT
kmsg_burst 20 "warn-thread after the warning"
sleep "$PNS_DURATION"
trace_stop
nobkl_knob byte_delay_ns 0
save_dmesg
