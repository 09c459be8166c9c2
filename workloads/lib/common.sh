# Helpers for guest scenarios (busybox sh). Source with:
#   . /workloads/lib/common.sh

# Write a marker into the kernel log (and so to the console and the trace).
pns_log() {
	echo "pns: $*" > /dev/kmsg
}

# Start recording the printk events; trace_stop writes $PNS_RESULTS/trace.dat.
# Extra trace-cmd record arguments may be passed (e.g. more events).
trace_start() {
	trace-cmd record -q -C global -b 8192 -e printk "$@" -o /tmp/trace.dat \
		> /tmp/trace-cmd.log 2>&1 &
	PNS_TRACE_PID=$!
	# trace-cmd enables the events before it starts its recorders.
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		[ "$(cat /sys/kernel/tracing/tracing_on 2>/dev/null)" = 1 ] &&
			grep -q . /sys/kernel/tracing/set_event 2>/dev/null && break
		sleep 0.5
	done
}

trace_stop() {
	[ -n "$PNS_TRACE_PID" ] || return 0
	kill -INT "$PNS_TRACE_PID"
	wait "$PNS_TRACE_PID"
	cat /tmp/trace-cmd.log
	cp /tmp/trace.dat "$PNS_RESULTS/trace.dat"
	PNS_TRACE_PID=
}

# Print N records through /dev/kmsg, numbered, as fast as possible.
kmsg_burst() {
	i=0
	while [ "$i" -lt "$1" ]; do
		echo "pns-kmsg n=$i $2" > /dev/kmsg
		i=$((i + 1))
	done
}

# Save the kernel's view of its log for the host's boot-log check. The
# pause lets the printer thread finish what dmesg shows before poweroff.
save_dmesg() {
	cat /proc/sys/kernel/printk > "$PNS_RESULTS/printk.txt"
	dmesg -r > "$PNS_RESULTS/dmesg.txt"
	sleep 1
}

# Set a knob of the series' debug interface when this kernel has it.
nobkl_knob() {
	f=/sys/kernel/debug/printk_nobkl/$1
	[ -w "$f" ] && echo "$2" > "$f"
	return 0
}
