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
f=/sys/kernel/debug/printk_nobkl/handover_race
[ -w "$f" ] || { echo "no $f: kernel without the handover race replay"; exit 1; }

trace_start
nobkl_ctl thread_hold || exit 1
try=0
until err=$(echo 1 2>&1 > "$f"); do
	case "$err" in
	*[Bb]usy*) ;;
	*) echo "handover_race: $err"; nobkl_ctl thread_release; exit 1 ;;
	esac
	try=$((try + 1))
	[ "$try" -lt 20 ] || {
		echo "handover_race: the console never was free"
		nobkl_ctl thread_release
		exit 1
	}
	sleep 0.1
done
nobkl_ctl thread_release || exit 1
kmsg_burst 10 "handover-race after the replay"
nobkl_ctl flush || exit 1
sleep "$PNS_DURATION"
trace_stop
save_dmesg
