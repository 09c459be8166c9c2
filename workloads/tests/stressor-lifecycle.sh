#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# printk_stress life cycle: load, start, unload while running, reload,
# start/stop, auto-stop at the end of the duration, autostart at load,
# and no splat in the kernel log. The module must not be loaded when this
# starts. Output: "PASS name"/"FAIL name" lines, then "N passed, N failed".

. "$(dirname "$0")/stressor-lib.sh"

ps_mount_debugfs
if ps_loaded; then
	echo "FAIL precondition: printk_stress already loaded"
	echo "0 passed, 1 failed"
	exit 1
fi
mark=$(ps_dmesg_mark)

# gentle rates: the guest stays responsive and the kernel log keeps the
# banners (a few records per second per CPU)
GENTLE="task_rate=2 burst=2 irq_period_us=500000 nmi_period_us=500000 duration_s=60"

check load ps_insmod $GENTLE
check debugfs_dir ps_loaded
check idle_after_load [ "$(ps_state)" = idle ]
check run_zero [ "$(ps_run_id)" = 0 ]

check start_cmd sh -c "echo start > $PS_DIR/control"
check running [ "$(ps_state)" = running ]
check run_one [ "$(ps_run_id)" = 1 ]
sleep 2
check producing [ "$(ps_stat 'total ctx=task' attempted)" -gt 0 ]

t0=$(ps_now_cs)
check unload_while_running rmmod printk_stress
t1=$(ps_now_cs)
# how long the unload took is a figure; that it did not wait for the
# 60 s run to end is the check
echo "figure unload_cs $((t1 - t0))"
check unload_before_the_end [ $((t1 - t0)) -le 3000 ]
check debugfs_gone sh -c "! test -d $PS_DIR"
check end_banner_unload sh -c "dmesg | grep -q 'printk_stress: end run=1 .*reason=unload'"

check reload ps_insmod $GENTLE
check reload_idle [ "$(ps_state)" = idle ]
check start_again sh -c "echo start > $PS_DIR/control"
sleep 1
t0=$(ps_now_cs)
check stop_cmd sh -c "echo stop > $PS_DIR/control"
t1=$(ps_now_cs)
echo "figure stop_cs $((t1 - t0))"
check stop_before_the_end [ $((t1 - t0)) -le 3000 ]
check stopped [ "$(ps_state)" = idle ]
check stop_reason_command [ "$(ps_last_stop)" = command ]
n1=$(ps_stat 'total ctx=task' attempted)
sleep 1
n2=$(ps_stat 'total ctx=task' attempted)
check quiet_after_stop [ "$n1" = "$n2" ]
check stop_when_idle sh -c "echo stop > $PS_DIR/control"

echo 2 > "$PS_DIR/duration_s"
check start_short sh -c "echo start > $PS_DIR/control"
check run_two [ "$(ps_run_id)" = 2 ]
ps_wait_idle 30
check autostop [ "$(ps_state)" = idle ]
check stop_reason_duration [ "$(ps_last_stop)" = duration ]
check restart_after_autostop sh -c "echo start > $PS_DIR/control"
check run_three [ "$(ps_run_id)" = 3 ]
sleep 1
check stop_again sh -c "echo stop > $PS_DIR/control"
check unload_idle rmmod printk_stress

check autostart_load ps_insmod $GENTLE autostart=1 run_base=100
check autostart_running [ "$(ps_state)" = running ]
check autostart_run_id [ "$(ps_run_id)" = 101 ]
sleep 1
check autostart_unload rmmod printk_stress

# Nothing left behind by a load and unload: fault_create_debugfs_attr()
# keeps a reference to the fail_takeover/ directory's dentry, one leaked
# dentry per unload unless the module drops it. Counted after dropping
# the unused dentries, over enough cycles to stand out of the noise.
ps_dentries() {
	sync
	echo 2 > /proc/sys/vm/drop_caches
	awk '{ print $1 }' /proc/sys/fs/dentry-state
}
cycles=40
d0=$(ps_dentries)
i=0
while [ "$i" -lt "$cycles" ] && ps_insmod && rmmod printk_stress; do
	i=$((i + 1))
done
d1=$(ps_dentries)
check load_unload_cycles [ "$i" = "$cycles" ]
if [ $((d1 - d0)) -lt $((cycles / 2)) ]; then
	pass no_dentry_leak
else
	fail no_dentry_leak "$((d1 - d0)) more dentries after $cycles loads and unloads"
fi

check bad_param_refused sh -c "! insmod $PS_MODULE $PS_INSMOD_ARGS threads_per_cpu=0 2>/dev/null"
check bad_param_not_loaded sh -c "! test -d $PS_DIR"

check start_banners [ "$(ps_dmesg_since "$mark" | grep -c 'printk_stress: start run=')" -ge 4 ]
check end_banners [ "$(ps_dmesg_since "$mark" | grep -c 'printk_stress: end run=')" -ge 4 ]
splat=$(ps_dmesg_since "$mark" | grep -E "$PS_SPLAT")
if [ -n "$splat" ]; then
	fail no_splat "$(echo "$splat" | head -n 3)"
else
	pass no_splat
fi

summary
