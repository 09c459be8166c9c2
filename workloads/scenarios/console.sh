# pns-description: nobkl console basics: /proc/consoles, the printer thread, the boot log complete on the serial console
# pns-kind: workload
# pns-duration: 6
. /workloads/lib/common.sh

cat /proc/consoles > "$PNS_RESULTS/consoles.txt"
ps > "$PNS_RESULTS/ps.txt"
trace_start
kmsg_burst 200 "console scenario load"
sleep "$PNS_DURATION"
trace_stop
save_dmesg
