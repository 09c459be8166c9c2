#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# printk_stress smoke test: all contexts on every online CPU, a run that
# ends by itself. Checks the stats show task, hardirq, NMI, softirq and
# deferred records attempted and stored on every CPU; with the nobkl
# series (nobkl_debug: 1) also emergency and panic sections from every
# origin and injected takeovers of each kind, each with exactly one
# outcome (how many acquired, hostile or not, is a figure: the host's
# timing decides whether an injection finds the owner between two
# bytes); the histograms' counts and maxima;
# the run's SUCCESS line; record lines in the kernel log have the
# interfaces.md section 3 format; no splat.
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
echo "$secs" > "$PS_DIR/duration_s"
echo 2 > "$PS_DIR/stats_interval_s"
echo 25 > "$PS_DIR/task_rate"
# A load the console keeps up with: every kind of section and takeover
# must show up within the run, and under a large backlog an atomic flush
# holds the console (and the one panic section at a time) for seconds;
# an emergency section in softirq flushing it for longer than 21 s is an
# RCU stall. The hardirq and softirq hrtimers together expire as often as
# the hardirq one alone did, the task records and the deferred ones
# together come as often as the task ones did.
echo 40000 > "$PS_DIR/irq_period_us"
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
run=$(ps_run_id)
i=0
while [ "$(ps_state)" = running ] && [ "$i" -lt $((secs + 30)) ]; do
	sleep 1
	i=$((i + 1))
done
check stop sh -c "echo stop > $PS_DIR/control"
check ended_by_duration [ "$(ps_last_stop)" = duration ]
check_success result_success
check result_line sh -c "dmesg | grep -q 'printk_stress: run=$run SUCCESS checks=stored,nmi,takeovers,records\$'"

cpus=$(awk '/^processor/ { n++ } END { print n }' /proc/cpuinfo)
check cpus_found [ "$cpus" -ge 1 ]
cpu=0
while [ "$cpu" -lt "$cpus" ]; do
	for ctx in task hardirq nmi softirq deferred; do
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
		for from in task hardirq nmi softirq; do
			# one panic section at a time: one that found another
			# running was skipped (panic_busy)
			n=$(ps_stat "section cpu=[0-9]* ctx=$ctx from=$from" count)
			[ "$ctx" = panic ] && n=$((n + $(ps_stat "panic_busy cpu=[0-9]* from=$from" count)))
			check "section_${ctx}_from_${from}" [ "$n" -gt 0 ]
		done
	done
	for kind in emerg_remote panic_remote emerg_nmi panic_nmi; do
		k="takeover kind=$kind"
		check "takeover_${kind}_injected" [ "$(ps_stat "$k" injected)" -gt 0 ]
		out=$(($(ps_stat "$k" taken) + $(ps_stat "$k" direct) + \
			$(ps_stat "$k" untraced) + $(ps_stat "$k" refused_policy) + \
			$(ps_stat "$k" refused_nested)))
		# every injection has exactly one outcome, or was not carried out
		check "takeover_${kind}_accounted" [ "$(ps_stat "$k" injected)" -eq \
			$((out + $(ps_stat "$k" dropped) + $(ps_stat "$k" merged))) ]
		# every call is timed
		check "takeover_${kind}_timed" \
			[ "$(ps_stat "takeover_time kind=$kind" count)" -eq "$out" ]
		# the acquire probe saw how each acquisition went
		check "takeover_${kind}_traced" [ "$(ps_stat "$k" untraced)" -eq 0 ]
		# A takeover is refused while the owner is inside an unsafe
		# section (only the final flush of a panic may take one over),
		# and the 8250 nobkl console writes every byte inside one: it is
		# mostly refused while the console has a backlog, and how often
		# it finds the owner between two bytes is the host's timing. It
		# must have been tried; how many acquired is a figure.
		check "takeover_${kind}_tried" [ "$out" -gt 0 ]
		echo "figure takeover_${kind}_acquired $(($(ps_stat "$k" taken) + $(ps_stat "$k" direct)))"
	done
	# hostile ones among them: a figure as well (forced ones: the
	# scenarios seed-demo and stress, fail_nested_takeover)
	echo "figure takeovers_hostile $(ps_stat "takeover kind=[a-z_]*" taken)"
	for kind in emerg_nmi panic_nmi; do
		check "takeover_${kind}_delivered" \
			[ "$(ps_stat "takeover kind=$kind" delivered)" -gt 0 ]
	done
	echo 0 > "$PS_DIR/fail_takeover/probability"
fi

log=$(ps_dmesg_since "$mark")
good='pstress v=2 r=[0-9]+ c=[0-9]+ x=(task|hardirq|nmi|emerg|panic|softirq|deferred) w=(task[0-9]+|hardirq|nmi|softirq) n=[0-9]+ l=[0-9]+ [0-9A-Za-z]+ k=[0-9a-f]{8}$'
check records_in_log [ "$(echo "$log" | grep -Ec "$good")" -gt 0 ]
bad=$(echo "$log" | grep 'pstress ' | grep -Evc "$good")
check records_well_formed [ "$bad" -eq 0 ]
check latency_histogram grep -q '^latency ctx=task count=[1-9][0-9]* max_ns=[1-9]' "$PS_DIR/stats"
# every histogram's buckets add up to its count, and its maximum lies
# in its highest bucket: <lower>:<n>, 1 ns wide below 2 * sub ns, else
# 2^(ilog2(lower) - ilog2(sub)) ns, the one at overflow_ns open-ended
check histogram_max awk '/ buckets:/ {
	n = 0; sub_ = 0; over = 0; sum = 0; lo = -1
	for (i = 1; i <= NF; i++) {
		if ($i ~ /^max_ns=/) max = substr($i, 8) + 0
		if ($i ~ /^count=/) n = substr($i, 7) + 0
		if ($i ~ /^sub=/) sub_ = substr($i, 5) + 0
		if ($i ~ /^overflow_ns=/) over = substr($i, 13) + 0
		if ($i ~ /^[0-9]+:[0-9]+$/) { split($i, a, ":"); lo = a[1] + 0; sum += a[2] }
	}
	w = 1
	if (lo >= 2 * sub_) { t = 2 * sub_; w = 2; while (t * 2 <= lo) { t *= 2; w *= 2 } }
	if (sum != n || !sub_ || !over) bad++
	if (n && (max < lo || (lo < over && max >= lo + w))) bad++
	if (!n && max) bad++
} END { exit bad != 0 }' "$PS_DIR/stats"
# the per-CPU latency lines add up to the per-context ones
for ctx in task hardirq nmi softirq deferred; do
	check "latency_${ctx}_per_cpu" [ "$(ps_stat "latency_cpu cpu=[0-9]* ctx=$ctx" count)" -eq \
		"$(ps_stat "latency ctx=$ctx" count)" ]
done
# the NMI handler is timed once per request it served
cpu=0
while [ "$cpu" -lt "$cpus" ]; do
	check "cpu${cpu}_nmi_timed" [ "$(ps_stat "nmi_time cpu=$cpu" count)" -eq \
		"$(ps_stat "nmi cpu=$cpu" handled)" ]
	cpu=$((cpu + 1))
done
splat=$(echo "$log" | grep -E "$PS_SPLAT")
if [ -n "$splat" ]; then
	fail no_splat "$(echo "$splat" | head -n 3)"
else
	pass no_splat
fi

echo reset > "$PS_DIR/control"
[ "$loaded_here" = 1 ] && rmmod printk_stress
summary
