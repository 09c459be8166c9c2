# pns-description: printk from user space (/dev/kmsg) under stress-ng load in the guest, traced
# pns-kind: workload
# pns-duration: 10
. /workloads/lib/common.sh

trace_start
guest_load
end=$(($(date +%s) + PNS_DURATION))
while [ "$(date +%s)" -lt "$end" ]; do
	kmsg_burst 20 "default scenario load"
	sleep 0.2
done
guest_load_stop
trace_stop
cat /proc/consoles
