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

# ps_wait_idle: until the run has ended by itself (at most 20 s)
ps_wait_idle() {
	_i=0
	while [ "$(ps_state)" = running ] && [ "$_i" -lt 20 ]; do
		sleep 1
		_i=$((_i + 1))
	done
}

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
check clean_result_success [ "$(ps_result)" = SUCCESS ]
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
	"FAILURE checks=$ALL failed: stored $cpus producers, first cpu=0 ctx=task writer=task0 attempted=[0-9]+ stored=[0-9]+\$"
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
	check direct_result_success [ "$(ps_result)" = SUCCESS ]
	check direct_injected [ "$(ps_stat "$k" injected)" -gt 0 ]
	check direct_acquired [ "$(ps_stat "$k" direct)" -gt 0 ]
	check direct_accounted [ "$(ps_stat "$k" injected)" -eq $(($(ps_stat "$k" taken) + \
		$(ps_stat "$k" direct) + $(ps_stat "$k" refused_policy) + \
		$(ps_stat "$k" refused_nested))) ]
	check direct_end_banner ps_match "$(dmesg | grep 'printk_stress: end run=1 ' | tail -n 1)" \
		" takeovers_injected=$(ps_stat "$k" injected) takeovers_taken=$(ps_stat "$k" taken) takeovers_direct=$(ps_stat "$k" direct) "
fi
rmmod printk_stress

# 6. break_check takes only the checks it can break
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
