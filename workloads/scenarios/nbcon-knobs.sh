# pns-description: the 6.12 series' debug interface (printk_nbcon/): each number knob takes its limit and refuses one more, leaving its value; the hold arms, disarms and refuses what it cannot do
# pns-kind: selftest
# pns-duration: 1
# pns-needs: CONFIG_NBCON_DEBUG
# Prints PASS/FAIL lines and "N passed, N failed"; the host reads them from guest.log.
. /workloads/lib/common.sh

. /workloads/tests/stressor-lib.sh

N=/sys/kernel/debug/printk_nbcon
refused() { ! sh -c "echo '$2' > $N/$1" 2>/dev/null; }
is() { [ "$(cat "$N/$1")" = "$2" ]; }

echo "== nbcon-knobs"
# knob limit: the limit is taken, one more refused and the value kept
for k in byte_delay_ns:10000000 hold_ms:10000 spinwait_max_us:10000000; do
	name=${k%%:*}
	max=${k#*:}
	old=$(cat "$N/$name")
	check "${name}_takes_its_limit" sh -c "echo $max > $N/$name"
	check "${name}_reads_it_back" is "$name" "$max"
	check "${name}_refuses_more" refused "$name" $((max + 1))
	check "${name}_kept_its_value" is "$name" "$max"
	check "${name}_refuses_text" refused "$name" fast
	echo "$old" > "$N/$name"
	check "${name}_restored" is "$name" "$old"
done
# The hold is armed and disarmed with no backlog to print, so that the
# printer thread does not reach it. Nothing keeps a kernel record from
# coming in between, though: the thread then holds inside it until
# hold_ms (100 ms here; nobody else wants the console), the hold reads
# back holding or how it ended, and the disarm is refused, nothing being
# armed. The checks take that course, said on the log, once the thread
# has run since the arm and the hold has ended; a disarm refused while
# the hold reads back armed, or a disarmed hold that does not read back
# idle, still fails.
pr=$(pidof pr/ttyS0)
[ -n "$pr" ] || { echo "no printer thread pr/ttyS0"; exit 1; }
# how often the printer thread went to sleep: once after each run
thread_sleeps() { awk '/^voluntary_ctxt_switches:/ { print $2 }' "/proc/$pr/status"; }
hold_reads_one_of() { case " $* " in *" $(cat $N/hold) "*) true ;; *) false ;; esac; }
hold_engaged() { hold_reads_one_of holding request lost timeout; }
hold_ended() { hold_reads_one_of request lost timeout; }
# the hold a kernel record engaged has ended, and the thread slept since
# the arm: it ran, the hold did not end without it
hold_ended_after_a_run() { hold_ended && [ "$(thread_sleeps)" != "$sleeps" ]; }

# hold_arm: the hold arms; $sleeps for hold_disarmed
hold_arm() {
	sleeps=$(thread_sleeps)
	echo 1 > $N/hold
}
# hold_disarm: the armed hold disarms, or the thread reached it first
# ($engaged says so)
hold_disarm() {
	engaged=
	refused hold 0 || return 0
	hold_engaged || return 1
	engaged=1
	echo "note: a kernel record reached the printer thread before the disarm: the hold reads $(cat $N/hold)"
}
# hold_disarmed: the hold reads back idle, or the one the thread reached ended
hold_disarmed() {
	if [ -n "$engaged" ]; then
		wait_until 30 "the end of the hold a kernel record engaged" hold_ended_after_a_run
	else
		is hold idle
	fi
}
hold_arm_and_disarm() { hold_arm && hold_disarm && hold_disarmed; }

check hold_idle is hold idle
check hold_disarm_when_idle_refused refused hold 0
check hold_refuses_text refused hold maybe
echo 100 > $N/hold_ms
check hold_arms hold_arm
check hold_armed hold_reads_one_of armed holding request lost timeout
check hold_disarms hold_disarm
check hold_idle_again hold_disarmed
# a record for the thread, which holds and, with nobody wanting the
# console, gives up after hold_ms
check hold_arms_again hold_arm
echo "pns-kmsg nbcon-knobs: a record the printer thread holds in" > /dev/kmsg
wait_until 30 "the end of the hold of the record" hold_ended
check hold_times_out is hold timeout
check hold_rearms_after_an_end hold_arm_and_disarm
echo 2000 > $N/hold_ms
summary
