# pns-description: printk from user space (/dev/kmsg) under stress-ng CPU load, traced
# pns-duration: 10
. /workloads/lib/common.sh

trace_start
if command -v stress-ng >/dev/null; then
	stress-ng --cpu 0 --timeout "${PNS_DURATION}s" --quiet &
else
	sleep "$PNS_DURATION" &
fi
load=$!
end=$(($(date +%s) + PNS_DURATION))
while [ "$(date +%s)" -lt "$end" ]; do
	kmsg_burst 20 "default scenario load"
	sleep 0.2
done
wait "$load"
trace_stop
cat /proc/consoles
