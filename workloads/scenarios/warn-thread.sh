# pns-description: a WARN while the printer thread prints: atomic emergency output takes over, then the thread resumes
# pns-kind: workload
# pns-duration: 6
# pns-expect-splat: warning
# pns-baud: 500000
. /workloads/lib/common.sh

# A slow console keeps the printer thread inside a record when the WARN hits.
trace_start
kmsg_burst 150 "warn-thread backlog"
echo WARNING > /sys/kernel/debug/provoke-crash/DIRECT
kmsg_burst 20 "warn-thread after the warning"
sleep "$PNS_DURATION"
trace_stop
line_speed instant
save_dmesg
