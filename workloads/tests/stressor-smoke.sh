#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# printk_stress smoke test: all contexts on every online CPU. Checks the
# stats show task, hardirq and NMI records attempted and stored on every
# CPU; with the nobkl series (nobkl_debug: 1) also emergency and panic
# sections and injected hostile takeovers of each kind; record lines in
# the kernel log have the interfaces.md section 3 format; no splat.
# Usage: stressor-smoke.sh [seconds]   (default 5)
# Output: "PASS name"/"FAIL name" lines, then "N passed, N failed".

. "$(dirname "$0")/stressor-lib.sh"

secs=${1:-5}
ps_mount_debugfs
loaded_here=0
if ! ps_loaded; then
	ps_insmod || { echo "FAIL insmod"; echo "0 passed, 1 failed"; exit 1; }
	loaded_here=1
fi
mark=$(ps_dmesg_mark)

echo reset > "$PS_DIR/control"
echo all > "$PS_DIR/contexts"
echo $((secs + 30)) > "$PS_DIR/duration_s"
echo 50 > "$PS_DIR/task_rate"
# A load the console keeps up with: every kind of section and takeover
# must show up within the run, and under a large backlog an atomic flush
# holds the console (and the one panic section at a time) for seconds.
echo 20000 > "$PS_DIR/irq_period_us"
echo 20000 > "$PS_DIR/nmi_period_us"
echo 5 > "$PS_DIR/emerg_every"
echo 10 > "$PS_DIR/panic_every"
nobkl=0
if ps_has_nobkl; then
	nobkl=1
	echo all > "$PS_DIR/takeover_kinds"
	echo 20 > "$PS_DIR/fail_takeover/probability"
	echo 1 > "$PS_DIR/fail_takeover/interval"
	echo -1 > "$PS_DIR/fail_takeover/times"
	echo 0 > "$PS_DIR/fail_takeover/verbose"
fi

check start sh -c "echo start > $PS_DIR/control"
sleep "$secs"
check stop sh -c "echo stop > $PS_DIR/control"

cpus=$(awk '/^processor/ { n++ } END { print n }' /proc/cpuinfo)
check cpus_found [ "$cpus" -ge 1 ]
cpu=0
while [ "$cpu" -lt "$cpus" ]; do
	for ctx in task hardirq nmi; do
		a=$(ps_stat "producer cpu=$cpu ctx=$ctx" attempted)
		s=$(ps_stat "producer cpu=$cpu ctx=$ctx" stored)
		check "cpu${cpu}_${ctx}_attempted" [ "$a" -gt 0 ]
		check "cpu${cpu}_${ctx}_stored" [ "$s" -gt 0 ]
	done
	check "cpu${cpu}_nmi_handled" [ "$(ps_stat "nmi cpu=$cpu" handled)" -gt 0 ]
	cpu=$((cpu + 1))
done

if [ "$nobkl" = 1 ]; then
	for ctx in emerg panic; do
		check "total_${ctx}_attempted" [ "$(ps_stat "total ctx=$ctx" attempted)" -gt 0 ]
		for from in task hardirq nmi; do
			check "section_${ctx}_from_${from}" \
				[ "$(ps_stat "section cpu=[0-9]* ctx=$ctx from=$from" count)" -gt 0 ]
		done
	done
	for kind in emerg_remote panic_remote emerg_nmi panic_nmi; do
		check "takeover_${kind}_injected" \
			[ "$(ps_stat "takeover kind=$kind" injected)" -gt 0 ]
	done
	# An emergency takeover is refused while the owner is inside an
	# unsafe section, and the 8250 nobkl console writes every byte inside
	# one: from a remote CPU, at a random moment, it is nearly always
	# refused. It must have been tried; panic ones must succeed.
	check takeover_emerg_remote_tried [ $(($(ps_stat "takeover kind=emerg_remote" taken) + \
		$(ps_stat "takeover kind=emerg_remote" refused))) -gt 0 ]
	for kind in panic_remote emerg_nmi panic_nmi; do
		check "takeover_${kind}_taken" \
			[ "$(ps_stat "takeover kind=$kind" taken)" -gt 0 ]
	done
	for kind in emerg_nmi panic_nmi; do
		check "takeover_${kind}_delivered" \
			[ "$(ps_stat "takeover kind=$kind" delivered)" -gt 0 ]
	done
	echo 0 > "$PS_DIR/fail_takeover/probability"
fi

log=$(ps_dmesg_since "$mark")
good='pstress v=2 r=[0-9]+ c=[0-9]+ x=(task|hardirq|nmi|emerg|panic) w=(task[0-9]+|hardirq|nmi) n=[0-9]+ l=[0-9]+ [0-9A-Za-z]+ k=[0-9a-f]{8}$'
check records_in_log [ "$(echo "$log" | grep -Ec "$good")" -gt 0 ]
bad=$(echo "$log" | grep 'pstress ' | grep -Evc "$good")
check records_well_formed [ "$bad" -eq 0 ]
check latency_histogram grep -q '^latency ctx=task count=[1-9]' "$PS_DIR/stats"
splat=$(echo "$log" | grep -E "$PS_SPLAT")
if [ -n "$splat" ]; then
	fail no_splat "$(echo "$splat" | head -n 3)"
else
	pass no_splat
fi

echo reset > "$PS_DIR/control"
[ "$loaded_here" = 1 ] && rmmod printk_stress
summary
