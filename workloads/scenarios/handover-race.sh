# pns-description: a late handover waiter meets one that timed out (the debug interface's handover_race replay): the console is not handed to a waiter which made no request, and what is printed after the replay reaches the console; traced
# pns-kind: workload
# pns-duration: 2
# pns-cpus: 4
# pns-needs: CONFIG_PRINTK_NOBKL_DEBUG
. /workloads/lib/common.sh

# A waiter whose handover request timed out leaves it in two steps (its
# handover state, its request in the state word), and the owner knows the
# waiter only by the priority of the request. handover_race replays a
# second waiter of that priority, delayed since its decision to spin,
# which installs its handover state between the two steps (interfaces.md
# section 4): this CPU owns the console at normal priority, the late
# waiter (emergency, in an IPI on a second CPU) is held before its
# handover state, the early one (emergency, a third CPU) requests, times
# out and is held after it cleared its handover state, the late one
# installs its own and is held before its request, then the owner passes
# its safe point. Each step is a stage the held context advances: no
# timing decides the order. The write fails unless every step was staged.
# The replay's owner needs the console free: the printer thread starts no
# record meanwhile. Afterwards the thread prints what is pending, and an
# emergency section's end prints at emergency priority; a console left
# locked by nobody prints neither.
#
# The kernel holds each context at its step for a second at most. A
# step that did not come in that time (a vCPU the host did not run)
# lets the replay go on unstaged and answer ETIMEDOUT; EBUSY says the
# console was not free, or the waiters of such a replay still run. The
# replay is asked for again then, for at most 30 s. Each attempt logs a
# marker first: the test judges the events after the last one, those of
# the replay that staged every step.
f=/sys/kernel/debug/printk_nobkl/handover_race
[ -w "$f" ] || { echo "no $f: kernel without the handover race replay"; exit 1; }

replay() {
	pns_log "handover-race: replay"
	write_value "$f" 1
}

trace_start
nobkl_ctl thread_hold || exit 1
until_staged 30 "EBUSY ETIMEDOUT" handover_race replay || {
	nobkl_ctl thread_release
	exit 1
}
nobkl_ctl thread_release || exit 1
kmsg_burst 10 "handover-race after the replay"
nobkl_ctl flush || exit 1
sleep "$PNS_DURATION"
trace_stop
save_dmesg
