# pns-description: a ringbuffer overrun whose first record after the gap is below the console loglevel: the dropped count must be carried past the suppressed records to the next record printed, also when an emergency context takes the console over from the printer thread in between
# pns-kind: workload
# pns-duration: 10
# pns-needs: CONFIG_PRINTK_NOBKL_DEBUG
# pns-expect-handoff: hostile emergency<-thread same-cpu reprinted
. /workloads/lib/common.sh

# A suppressed record (level >= the console loglevel, 7 here: loglevel=7)
# is committed without output. When it is the first record after a gap,
# the records dropped in front of it must still be counted: the notice
# goes in front of the next record printed, with the count of the gap.
#
# Forced, whatever the host's scheduling: with the printer thread held
# (console_ctl thread_hold) and the console's position in the trace (a
# flush at emergency priority, console_ctl flush), 800 records of 400
# bytes at level 7 go through /dev/kmsg (`<7>` prefix): 320 KB against
# the 128 KiB ringbuffer (LOG_BUF_SHIFT 17), so the oldest ones are
# overwritten before any console saw them and the oldest record left,
# the first after the gap, is one of them: suppressed. Then one record
# at the default level, the marker "first printed record after the
# gap": nothing else is printable between the gap and it, so its
# notice must count the whole gap, which the trace tells (the dropped
# count of the first suppressed emission after the console position).
#
# Three rounds, each with its own gap:
#  1. the flush prints it all at emergency priority: the suppressed
#     records, then the marker with the notice;
#  2. the thread prints it, and at the first byte it writes (the notice's;
#     suppressed records write none) a context nested on its CPU takes
#     the console over at emergency priority (fail_nested_takeover,
#     filtered to the thread, once): between the commit of the last
#     suppressed record and the marker's. The taker prints the notice and
#     the marker, the thread printed nothing of them: the count lives in
#     the console, not in the thread's context;
#  3. as 2, the takeover at the thread's 60th byte: after its notice
#     (about 37 bytes with the context mark and CR LF) and the line's
#     timestamp prefix (16), inside the marker's text. The taker prints
#     the same notice again with the marker: the count was neither lost
#     nor counted twice.
# The printer thread's byte count starts when the fault is armed, and
# the fault's times file says when it fired.

filler=xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx
filler="$filler$filler$filler$filler$filler$filler$filler$filler$filler$filler"

# debug_burst ROUND: 800 records of 400 bytes at level 7
debug_burst() {
	i=0
	while [ "$i" -lt 800 ]; do
		echo "<7>pns-kmsg n=$i overrun-suppressed round $1 $filler" > /dev/kmsg
		i=$((i + 1))
	done
}

# gap ROUND: the console's position in the trace, then the gap, the
# suppressed records and the marker, all pending, the thread held
gap() {
	nobkl_ctl thread_hold || exit 1
	pns_log "overrun-suppressed: round $1: console position"
	nobkl_ctl flush || exit 1
	debug_burst "$1"
	pns_log "overrun-suppressed: round $1: first printed record after the gap"
}

# thread_round ROUND BYTE: the thread prints, taken over at its BYTE-th byte
thread_round() {
	gap "$1"
	thread_nested_takeover "$2" 1 || exit 1
	nobkl_ctl thread_release || exit 1
	n=0
	until [ "$(cat /sys/kernel/debug/printk_nobkl/fail_nested_takeover/times)" = 0 ]; do
		n=$((n + 1))
		if [ "$n" -ge 150 ]; then
			echo "round $1: the nested takeover did not happen"
			exit 1
		fi
		sleep 0.2
	done
	# the takeover prints the marker and releases the console
	sleep 1
}

trace_start
gap 1
nobkl_ctl flush || exit 1
thread_round 2 1
thread_round 3 60
pns_log "overrun-suppressed: done"
nobkl_ctl flush || exit 1
# The flush is handed the console by the printer thread, which traces
# its grant after the waiter may already have traced the handover: an
# owner whose vCPU the host holds up would trace it after the stop. The
# hold returns once the thread is back in its wait, every event of its
# last record traced.
nobkl_ctl thread_hold || exit 1
trace_stop
nobkl_ctl thread_release || exit 1
save_dmesg
