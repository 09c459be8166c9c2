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
# the hold: armed and disarmed with no backlog to print, so the printer
# thread never reaches it
check hold_idle is hold idle
check hold_disarm_when_idle_refused refused hold 0
check hold_refuses_text refused hold maybe
check hold_arms sh -c "echo 1 > $N/hold"
check hold_armed is hold armed
check hold_disarms sh -c "echo 0 > $N/hold"
check hold_idle_again is hold idle
# a record for the thread, which holds and, with nobody wanting the
# console, gives up after hold_ms
echo 100 > $N/hold_ms
check hold_arms_again sh -c "echo 1 > $N/hold"
echo "pns-kmsg nbcon-knobs: a record the printer thread holds in" > /dev/kmsg
i=0
while [ "$(cat $N/hold)" = armed ] || [ "$(cat $N/hold)" = holding ]; do
	i=$((i + 1))
	[ "$i" -le 100 ] || break
	sleep 0.1
done
check hold_times_out is hold timeout
check hold_rearms_after_an_end sh -c "echo 1 > $N/hold && echo 0 > $N/hold"
echo 2000 > $N/hold_ms
summary
