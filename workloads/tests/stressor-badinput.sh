#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# printk_stress: every bad input to the debugfs files is refused with the
# right error and changes nothing (control and all knobs read the same
# before and after). Loads the module if needed, unloads it if it did.
# Output: one "PASS name" / "FAIL name" per check, then "N passed, N failed".
# Exit status 0 when everything passed.

. "$(dirname "$0")/stressor-lib.sh"

ps_mount_debugfs
loaded_here=0
if ! ps_loaded; then
	ps_insmod || { echo "FAIL insmod"; echo "0 passed, 1 failed"; exit 1; }
	loaded_here=1
fi

# refuse NAME FILE VALUE ERRNO [esc]: the write must fail with ERRNO, no
# change; with "esc", VALUE has echo -e escapes (\0 for a NUL byte)
refuse() {
	_name=$1 _file=$PS_DIR/$2 _val=$3 _want=$4
	_before=$(ps_snapshot)
	if [ "$5" = esc ]; then
		_err=$(ps_write_esc "$_file" "$_val")
	else
		_err=$(ps_write "$_file" "$_val")
	fi
	_after=$(ps_snapshot)
	if [ -z "$_err" ]; then
		fail "$_name" "accepted '$_val'"
	elif ! echo "$_err" | grep -Eq "$(ps_errtext "$_want")"; then
		fail "$_name" "got '$_err', want $_want"
	elif [ "$_before" != "$_after" ]; then
		fail "$_name" "state changed"
	else
		pass "$_name"
	fi
}

# accept NAME FILE VALUE EXPECTED-READBACK
accept() {
	_err=$(ps_write "$PS_DIR/$2" "$3")
	_got=$(cat "$PS_DIR/$2")
	if [ -n "$_err" ]; then
		fail "$1" "refused '$3': $_err"
	elif [ "$_got" != "$4" ]; then
		fail "$1" "reads '$_got', want '$4'"
	else
		pass "$1"
	fi
}

big=$(awk 'BEGIN { for (i = 0; i < 5000; i++) printf "a" }')
page=$(awk 'BEGIN { for (i = 0; i < 4096; i++) printf "1" }')

echo reset > "$PS_DIR/control"

# control
refuse control_unknown control "bogus" EINVAL
refuse control_upper control "START" EINVAL
refuse control_extra_word control "start now" EINVAL
refuse control_empty control "
" EINVAL
refuse control_too_long control "$big" EINVAL
refuse control_page control "$page" EINVAL
refuse control_nul control 'start\0junk' EINVAL esc
echo stop > "$PS_DIR/control"

# numeric knobs
refuse threads_zero threads_per_cpu "0" ERANGE
refuse threads_high threads_per_cpu "17" ERANGE
refuse threads_text threads_per_cpu "abc" EINVAL
refuse threads_negative threads_per_cpu "-1" EINVAL
refuse threads_trailing threads_per_cpu "1x" EINVAL
refuse threads_overflow threads_per_cpu "99999999999" ERANGE
refuse threads_empty threads_per_cpu "
" EINVAL
refuse threads_too_long threads_per_cpu "$big" EINVAL
refuse threads_nul threads_per_cpu '5\0x' EINVAL esc
refuse task_rate_high task_rate "100001" ERANGE
refuse burst_zero burst "0" ERANGE
refuse irq_period_low irq_period_us "49" ERANGE
refuse irq_burst_high irq_burst "101" ERANGE
refuse nmi_period_low nmi_period_us "99" ERANGE
refuse nmi_burst_zero nmi_burst "0" ERANGE
refuse emerg_every_zero emerg_every "0" ERANGE
refuse panic_every_zero panic_every "0" ERANGE
refuse atomic_burst_high atomic_burst "1001" ERANGE
refuse payload_zero payload_len "0" ERANGE
refuse payload_high payload_len "801" ERANGE
refuse level_high level "8" ERANGE
refuse duration_zero duration_s "0" ERANGE
refuse duration_high duration_s "3601" ERANGE
refuse duration_float duration_s "1.5" EINVAL
refuse stats_interval_high stats_interval_s "3601" ERANGE
refuse stats_interval_negative stats_interval_s "-1" EINVAL
refuse stutter_low stutter_ms "9" ERANGE
refuse stutter_high stutter_ms "60001" ERANGE

# sets
refuse contexts_unknown contexts "bogus" EINVAL
refuse contexts_empty_token contexts "task,,nmi" EINVAL
refuse contexts_empty contexts "
" EINVAL
refuse contexts_partly_bad contexts "task,bogus" EINVAL
refuse atomic_from_unknown atomic_from "bogus" EINVAL
refuse atomic_from_deferred atomic_from "deferred" EINVAL
refuse kinds_unknown takeover_kinds "bogus" EINVAL
refuse shapes_unknown shapes "stutter,bogus" EINVAL
if ps_has_nobkl; then
	refuse kinds_partly_bad takeover_kinds "emerg_nmi,panic" EINVAL
else
	refuse contexts_emerg_unsupported contexts "task,emerg" EOPNOTSUPP
	refuse contexts_panic_unsupported contexts "panic" EOPNOTSUPP
	refuse kinds_unsupported takeover_kinds "emerg_remote" EOPNOTSUPP
fi

# cpumasks
refuse cpus_text cpus "bogus" EINVAL
refuse cpus_reversed cpus "3-1" EINVAL
refuse cpus_out_of_range cpus "9999" ERANGE
refuse cpus_empty cpus "
" EINVAL
refuse nmi_cpus_out_of_range nmi_cpus "9999" ERANGE
refuse cpus_overflow cpus "99999999999" ERANGE
refuse nmi_cpus_overflow nmi_cpus "4294967296" ERANGE

# A value split over two write() calls on one open file: the first one
# is the value, the second is not at offset 0 and refused.
_err=$( ( { echo -n 2; echo -n 5; } > "$PS_DIR/threads_per_cpu" ) 2>&1 |
	sed -n 's/.*write error: //p')
_got=$(cat "$PS_DIR/threads_per_cpu")
if [ "$_got" != 2 ]; then
	fail split_write "reads '$_got', want 2 (the first write)"
elif ! echo "$_err" | grep -Eq "$(ps_errtext EINVAL)"; then
	fail split_write "second write: '$_err', want EINVAL"
else
	pass split_write
fi
echo reset > "$PS_DIR/control"

# read-only stats
refuse stats_write stats "reset" EINVAL

# good input still works (and is restored by reset)
accept threads_ok threads_per_cpu "2
" "2"
accept contexts_ok contexts "hardirq,task" "task,hardirq"
accept cpus_ok cpus "0" "0"
accept cpus_all_ok cpus "all" "all"
echo reset > "$PS_DIR/control"
check reset_restores [ "$(cat "$PS_DIR/threads_per_cpu")" = 1 ]

# start with a configuration that produces nothing
echo task > "$PS_DIR/contexts"
echo none > "$PS_DIR/contexts"
refuse start_nothing_to_run control "start" EINVAL
echo reset > "$PS_DIR/control"

# start with a part that could do nothing (the stop: for a run that
# started anyway)
if ps_has_nobkl; then
	echo task,emerg > "$PS_DIR/contexts"
	echo none > "$PS_DIR/atomic_from"
	refuse start_sections_without_origin control "start" EINVAL
	echo stop > "$PS_DIR/control"
	echo reset > "$PS_DIR/control"
	if grep -q '^nmi: 1' "$PS_DIR/control"; then
		# takeovers are decided in task and hrtimer (hard or soft)
		# iterations only
		echo nmi > "$PS_DIR/contexts"
		echo all > "$PS_DIR/takeover_kinds"
		echo 10 > "$PS_DIR/fail_takeover/probability"
		refuse start_takeovers_without_decision_point control "start" EINVAL
		echo stop > "$PS_DIR/control"
		echo reset > "$PS_DIR/control"
	fi

	# fail_takeover: no budget at load (probability alone decides);
	# reset restores it, with the times that injections used up
	check fail_takeover_times_unlimited [ "$(cat "$PS_DIR/fail_takeover/times")" = -1 ]
	echo 5 > "$PS_DIR/fail_takeover/times"
	echo 7 > "$PS_DIR/fail_takeover/probability"
	echo reset > "$PS_DIR/control"
	check reset_restores_fail_takeover \
		[ "$(cat "$PS_DIR/fail_takeover/times")" = -1 -a \
		  "$(cat "$PS_DIR/fail_takeover/probability")" = 0 ]
fi

# while running: knobs, reset and start are busy. The run must outlast
# the checks: each one reads every knob twice, which took over 10 s per
# check in a loaded TCG guest, so a 60 s run ended in the middle of them.
echo 3600 > "$PS_DIR/duration_s"
echo 10 > "$PS_DIR/task_rate"
echo 10000 > "$PS_DIR/irq_period_us"
echo 100000 > "$PS_DIR/nmi_period_us"
if echo start > "$PS_DIR/control" && [ "$(ps_state)" = running ]; then
	refuse start_while_running control "start" EBUSY
	refuse reset_while_running control "reset" EBUSY
	refuse knob_while_running threads_per_cpu "2" EBUSY
	refuse bad_knob_while_running threads_per_cpu "0" EBUSY
	refuse nul_knob_while_running threads_per_cpu '2\0x' EBUSY esc
	refuse cpus_while_running cpus "0" EBUSY
	refuse unknown_while_running control "bogus" EINVAL
	echo stop > "$PS_DIR/control"
	check stopped [ "$(ps_state)" = idle ]
else
	fail start_for_busy_checks "could not start"
fi
echo reset > "$PS_DIR/control"

[ "$loaded_here" = 1 ] && rmmod printk_stress
summary
