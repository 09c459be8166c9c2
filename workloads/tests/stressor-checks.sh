#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# printk_stress end-of-run line: a run that ends by itself prints
# "printk_stress: run=N SUCCESS checks=stored,nmi,takeovers,records";
# with break_check (test only) the broken check fails with its reason;
# a run stopped early leaves the records check out. Banners, stats and
# result lines are at KERN_ALERT whatever the level knob is. The module
# must not be loaded when this starts.
# Output: "PASS name"/"FAIL name" lines, then "N passed, N failed".

. "$(dirname "$0")/stressor-lib.sh"

ps_mount_debugfs
if ps_loaded; then
	echo "FAIL precondition: printk_stress already loaded"
	echo "0 passed, 1 failed"
	exit 1
fi

# a short run that ends by itself: task and hardirq on every CPU
GENTLE="contexts=task,hardirq task_rate=10 burst=1 irq_period_us=100000 duration_s=1 level=7"
ALL="stored,nmi,takeovers,records"
cpus=$(awk '/^processor/ { n++ } END { print n }' /proc/cpuinfo)
last=$((cpus - 1))

# ps_match TEXT REGEX
ps_match() { echo "$1" | grep -Eq "$2"; }

# ps_refused ARGS: insmod with ARGS fails
ps_refused() { ! ps_insmod "$@" 2>/dev/null; }

# ps_result_line RUN: the run's SUCCESS/FAILURE line from the kernel log
ps_result_line() {
	dmesg | grep -E "printk_stress: run=$1 (SUCCESS|FAILURE)" | tail -n 1
}

# raw kernel log: "<level>text"
ps_raw_level() { # ps_raw_level PATTERN: the level of the last matching line
	dmesg -r | grep -E "$1" | tail -n 1 | sed -n 's/^<\([0-9]*\)>.*/\1/p'
}

mark=$(ps_dmesg_mark)

# 1. a clean run
check load ps_insmod $GENTLE
echo start > "$PS_DIR/control"
ps_wait_idle
check clean_ended_by_duration [ "$(ps_last_stop)" = duration ]
check_success clean_result_success
line=$(ps_result_line 1)
check clean_line ps_match "$line" "printk_stress: run=1 SUCCESS checks=$ALL\$"
check stats_has_result grep -q "^run=1 state=idle last_stop=duration result=SUCCESS " "$PS_DIR/stats"
# level=7 records stay off the console; the lines about the run do not
check result_line_alert [ "$(ps_raw_level 'printk_stress: run=1 SUCCESS')" = 1 ]
check banner_alert [ "$(ps_raw_level 'printk_stress: start run=1 ')" = 1 ]
check end_banner_alert [ "$(ps_raw_level 'printk_stress: end run=1 ')" = 1 ]
check end_banner_counts ps_match "$(dmesg | grep 'printk_stress: end run=1 ' | tail -n 1)" \
	' reason=duration elapsed_ms=[0-9]+ attempted=[0-9]+ stored=[0-9]+ .* takeovers_taken=0 takeovers_direct=0 '

# 2. stats lines every stats_interval_s while running, none after the end
echo 1 > "$PS_DIR/stats_interval_s"
echo 4 > "$PS_DIR/duration_s"
mark2=$(ps_dmesg_mark)
echo start > "$PS_DIR/control"
ps_wait_idle
log=$(ps_dmesg_since "$mark2")
n=$(echo "$log" | grep -c 'printk_stress: stats run=2 elapsed_ms=[0-9]* attempted=[0-9]* stored=')
# one a second while it ran (on a loaded host the end can come late)
el=$(sed -n 's/^elapsed_ms: //p' "$PS_DIR/control")
check stats_lines [ "$n" -ge 1 -a "$n" -le $((el / 1000 + 1)) ]
check stats_line_alert [ "$(ps_raw_level 'printk_stress: stats run=2 ')" = 1 ]
check no_stats_after_end [ -z "$(echo "$log" | sed -n '/printk_stress: run=2 SUCCESS/,$p' | grep 'stats run=2')" ]
rmmod printk_stress

# 3. break_check=stored: the first task record of each task kthread is
# not printed, so every task producer is one short
check load_break_stored ps_insmod $GENTLE break_check=stored
echo start > "$PS_DIR/control"
ps_wait_idle
check stored_result_failure [ "$(ps_result)" = FAILURE ]
line=$(ps_result_line 1)
check stored_reason ps_match "$line" \
	"FAILURE checks=$ALL failed: stored $cpus producers, first cpu=0 ctx=task writer=task0 attempted=[0-9]+ stored=[0-9]+ refused=0\$"
check stored_banner ps_match "$(dmesg | grep 'printk_stress: start run=1 ' | tail -n 1)" ' break_check=stored$'
rmmod printk_stress

# 4. break_check=records: the last CPU gets no hrtimer
check load_break_records ps_insmod $GENTLE break_check=records
echo start > "$PS_DIR/control"
ps_wait_idle
check records_result_failure [ "$(ps_result)" = FAILURE ]
line=$(ps_result_line 1)
check records_reason ps_match "$line" "FAILURE checks=$ALL failed: records cpu=$last ctx=hardirq none\$"
# stopped before its duration: the records check is left out
echo 30 > "$PS_DIR/duration_s"
echo start > "$PS_DIR/control"
sleep 1
echo stop > "$PS_DIR/control"
line=$(ps_result_line 2)
check records_unchecked_when_stopped ps_match "$line" "printk_stress: run=2 SUCCESS checks=stored,nmi,takeovers\$"
rmmod printk_stress

# 5. takeovers of an idle console (records at level 7, the console has
# nothing to print): acquired directly, not counted as taken over
ps_insmod $GENTLE contexts=task takeover_kinds=panic_remote fail_takeover=1,100,0,-1
if ps_has_nobkl; then
	echo start > "$PS_DIR/control"
	ps_wait_idle
	k="takeover kind=panic_remote"
	check_success direct_result_success
	check direct_injected [ "$(ps_stat "$k" injected)" -gt 0 ]
	check direct_acquired [ "$(ps_stat "$k" direct)" -gt 0 ]
	check direct_accounted [ "$(ps_stat "$k" injected)" -eq $(($(ps_stat "$k" taken) + \
		$(ps_stat "$k" direct) + $(ps_stat "$k" refused_policy) + \
		$(ps_stat "$k" refused_nested))) ]
	check direct_end_banner ps_match "$(dmesg | grep 'printk_stress: end run=1 ' | tail -n 1)" \
		" takeovers_injected=$(ps_stat "$k" injected) takeovers_taken=$(ps_stat "$k" taken) takeovers_direct=$(ps_stat "$k" direct) "
fi
rmmod printk_stress

# 6. stop while an NMI handler flushes a backlog for seconds with a
# panic takeover NMI latched behind it: stop waits for that NMI, so it
# never arrives after the handlers are gone (an NMI for an unknown
# reason), and every NMI sent is handled. The backlog: the task kthread
# of CPU 0 stores 300 records at once, a 115200 baud console prints
# about 100 a second, and the first panic section (in the NMI of the
# last CPU) or panic takeover (in an NMI on the owner's CPU) flushes
# all of them, while the hrtimer of CPU 0 sends takeover NMIs to the
# owner's CPU. The hrtimer never waits, so stop reaches the NMI drain
# while that CPU still flushes. (When that CPU keeps the time, the
# guest's clock stands still while it is in NMI, and the stop may come
# only after the flush, or the run end by itself after 3 s.) The checks
# hold either way, but the records check of a run that ended by itself
# counts what each producer got to do, and the flush decides that here:
# a figure. (Stopping only by command does not work: with a longer
# duration the CPU in NMI stopped firing its timers, and the shell's
# sleep never ended.)
N=/sys/kernel/debug/printk_nobkl
if [ "$cpus" -ge 2 ] && [ -f "$N/byte_delay_ns" ]; then
	ps_insmod contexts=task,hardirq,nmi,panic atomic_from=nmi \
		panic_every=1 atomic_burst=1 cpus=0 nmi_cpus=$last task_rate=1 \
		burst=300 irq_period_us=50000 nmi_period_us=100000 level=4 \
		takeover_kinds=panic_nmi fail_takeover=1,100,0,-1 duration_s=3
	mark3=$(ps_dmesg_mark)
	echo 86800 > "$N/byte_delay_ns"
	echo start > "$PS_DIR/control"
	sleep 1
	echo stop > "$PS_DIR/control"
	echo 0 > "$N/byte_delay_ns"
	sleep 1
	log=$(ps_dmesg_since "$mark3")
	echo "drain: last_stop=$(ps_last_stop) $(grep '^nmi_time ' "$PS_DIR/stats" | sed 's/ buckets:.*//' | tr '\n' ' ')"
	# Whether an NMI got to flush the backlog for over a second is a
	# figure: the panic NMIs no longer take the console from an owner
	# inside its unsafe section (the 8250 writes every byte inside one),
	# so it takes a handover or an NMI at a safe point, which the host's
	# timing decides. The checks below hold either way.
	echo "figure drain_longest_nmi_ns $(awk '/^nmi_time / { sub(/.*max_ns=/, "");
		if ($1 + 0 > m) m = $1 + 0 } END { print m + 0 }' "$PS_DIR/stats")"
	check drain_no_unknown_nmi [ -z "$(echo "$log" | grep -E 'Uhhuh|unknown reason')" ]
	check drain_all_delivered [ -z "$(echo "$log" | grep 'not delivered')" ]
	check drain_nmi_handled awk '/^nmi cpu=/ { for (i = 1; i <= NF; i++) {
			if ($i ~ /^sent=/) s = substr($i, 6); if ($i ~ /^handled=/) h = substr($i, 9) }
		if (s != h) bad = 1 } END { exit bad }' "$PS_DIR/stats"
	check_success drain_result_success records
	rmmod printk_stress
fi

# 7. NMI quiet time: after a print request that took long (an
# emergency section in NMI flushing three records at 115200 baud, about
# 35 ms), a CPU gets no print request for as long (early=0 in its nmi
# line). CPU 0 keeps jiffies (the boot CPU, periodic tick), and they
# stand still while it is in NMI. One NMI CPU: the console keeps up.
if [ -f "$N/byte_delay_ns" ]; then
	ps_insmod contexts=nmi,emerg atomic_from=nmi emerg_every=1 atomic_burst=2 \
		nmi_cpus=0 nmi_period_us=1000 level=4 duration_s=3
	echo 86800 > "$N/byte_delay_ns"
	echo start > "$PS_DIR/control"
	ps_wait_idle
	echo 0 > "$N/byte_delay_ns"
	echo "quiet: $(grep -E '^nmi(_time)? ' "$PS_DIR/stats" | sed 's/ buckets:.*//' | tr '\n' ' ')"
	check quiet_long_requests awk '/^nmi_time / { sub(/.*max_ns=/, "");
		if ($1 + 0 > 10000000) long = 1 } END { exit !long }' "$PS_DIR/stats"
	check quiet_counted [ "$(grep -c '^nmi cpu=.* early=[0-9]*$' "$PS_DIR/stats")" -eq "$cpus" ]
	check quiet_no_early_request [ "$(ps_stat nmi early)" -eq 0 ]
	rmmod printk_stress
fi

# 8. break_check takes only the checks it can break
check break_bad_name ps_refused break_check=bogus
check break_unbreakable ps_refused break_check=nmi
ps_loaded && rmmod printk_stress

splat=$(ps_dmesg_since "$mark" | grep -E "$PS_SPLAT")
if [ -n "$splat" ]; then
	fail no_splat "$(echo "$splat" | head -n 3)"
else
	pass no_splat
fi
summary
