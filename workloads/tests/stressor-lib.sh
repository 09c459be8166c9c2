#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Helpers shared by the printk_stress guest tests (busybox sh).
# Source it: . "$(dirname "$0")/stressor-lib.sh"

PS_DIR=${PS_DIR:-/sys/kernel/debug/printk_stress}
PS_MODULE=${PS_MODULE:-/lib/modules/printk_stress.ko}
# extra module parameters for every insmod, e.g. "level=7"
PS_INSMOD_ARGS=${PS_INSMOD_ARGS:-}
PS_KNOBS="contexts atomic_from cpus nmi_cpus threads_per_cpu task_rate burst
irq_period_us irq_burst nmi_period_us nmi_burst emerg_every panic_every
atomic_burst payload_len level duration_s stats_interval_s takeover_kinds shapes
stutter_ms"

ps_pass=0
ps_fail=0

pass() { echo "PASS $1"; ps_pass=$((ps_pass + 1)); }
fail() { echo "FAIL $1${2:+: $2}"; ps_fail=$((ps_fail + 1)); }
check() { # check NAME CONDITION-COMMAND...
	_n=$1; shift
	if "$@"; then pass "$_n"; else fail "$_n"; fi
}
summary() {
	echo "$ps_pass passed, $ps_fail failed"
	[ "$ps_fail" -eq 0 ]
}

ps_mount_debugfs() {
	[ -d /sys/kernel/debug/tracing ] || [ -n "$(ls /sys/kernel/debug 2>/dev/null)" ] ||
		mount -t debugfs none /sys/kernel/debug 2>/dev/null
}

ps_loaded() { [ -d "$PS_DIR" ]; }

# ps_write FILE VALUE: write VALUE (no newline added) in one write();
# prints the kernel's error text ("" on success). The echo builtin
# reports write errors ("sh: write error: <strerror>"), printf does not.
ps_write() {
	( echo -n "$2" > "$1" ) 2>&1 | sed -n 's/.*write error: //p'
}

# ps_write_esc FILE VALUE: the same with echo's escapes (\0 is a NUL byte)
ps_write_esc() {
	( echo -ne "$2" > "$1" ) 2>&1 | sed -n 's/.*write error: //p'
}

# The strerror() text of an errno name, as glibc/musl busybox prints it
ps_errtext() {
	case $1 in
	EINVAL) echo "Invalid argument" ;;
	ERANGE) echo "Numerical result out of range|Result not representable" ;;
	EBUSY) echo "Device or resource busy|Resource busy" ;;
	EOPNOTSUPP) echo "Operation not supported|Not supported" ;;
	EOVERFLOW) echo "Value too large" ;;
	*) echo "$1" ;;
	esac
}

ps_state() { sed -n 's/^state: //p' "$PS_DIR/control"; }
ps_run_id() { sed -n 's/^run: //p' "$PS_DIR/control"; }
ps_last_stop() { sed -n 's/^last_stop: //p' "$PS_DIR/control"; }
ps_result() { sed -n 's/^result: //p' "$PS_DIR/control"; }
# ps_failure_reasons: the reasons of the last FAILURE line, one a line
# ("<check> <why>")
ps_failure_reasons() {
	dmesg | grep 'printk_stress: run=[0-9]* FAILURE' | tail -n 1 |
		sed 's/.* failed: //' |
		awk '{ n = split($0, r, "; "); for (i = 1; i <= n; i++) print r[i] }'
}
# check_success NAME [FIGURE-CHECK]: the last run's result is SUCCESS;
# a FAIL line carries the module's reasons. A failure of FIGURE-CHECK
# alone (one whose outcome the host's timing decides in that run) is
# printed as a figure and passes.
check_success() {
	if [ "$(ps_result)" = SUCCESS ]; then
		pass "$1"
		return
	fi
	_r=$(ps_failure_reasons)
	if [ -n "$2" ] && [ -n "$_r" ] && [ -z "$(echo "$_r" | grep -v "^$2 ")" ]; then
		echo "figure $1 $(echo "$_r" | tr '\n' ';' | sed 's/;$//')"
		pass "$1"
	else
		fail "$1" "$(echo "$_r" | tr '\n' ';' | sed 's/;$//')"
	fi
}
# ps_wait_idle [SECONDS]: until the run has ended by itself (at most
# SECONDS, 20 by default)
ps_wait_idle() {
	_i=0
	while [ "$(ps_state)" = running ] && [ "$_i" -lt "${1:-20}" ]; do
		sleep 1
		_i=$((_i + 1))
	done
}
ps_has_nobkl() { grep -q '^nobkl_debug: 1' "$PS_DIR/control"; }

# Everything a refused write must leave unchanged
ps_snapshot() {
	grep -v '^elapsed_ms' "$PS_DIR/control"
	for k in $PS_KNOBS; do
		printf '%s=' "$k"; cat "$PS_DIR/$k"
	done
}

# Sum of a stats field over lines matching a pattern:
# ps_stat 'producer cpu=0 ctx=task' attempted
ps_stat() {
	grep "^$1 " "$PS_DIR/stats" | sed -n "s/.* $2=\([0-9-]*\).*/\1/p" |
		awk '{ s += $1 } END { print s + 0 }'
}

# uptime in centiseconds
ps_now_cs() { awk '{ split($1, a, "."); print a[1] * 100 + a[2] }' /proc/uptime; }

# Kernel log lines that mean something went wrong
PS_SPLAT='WARNING:|BUG:|Oops|Call Trace|general protection|Uhhuh|NMI received for unknown reason|blocked for more than|rcu_.*stall|soft lockup|hard LOCKUP|list_del corruption|refcount_t|KASAN|UBSAN|kmemleak'

# ps_dmesg_mark: log a unique marker line, print it
ps_dmesg_mark() {
	_m="ps-test-mark-$$-$(ps_now_cs)"
	echo "$_m" > /dev/kmsg
	echo "$_m"
}

# ps_dmesg_since MARK: the kernel log after MARK (all of it when the
# marker was already overwritten)
ps_dmesg_since() {
	dmesg > /tmp/ps-dmesg.$$
	if grep -q "$1" /tmp/ps-dmesg.$$; then
		sed -n "/$1/,\$p" /tmp/ps-dmesg.$$
	else
		cat /tmp/ps-dmesg.$$
	fi
	rm -f /tmp/ps-dmesg.$$
}

ps_insmod() { insmod "$PS_MODULE" $PS_INSMOD_ARGS "$@"; }

# printk_stress.<param>=<value> from the kernel command line, as
# "<param>=<value> ..." for insmod (which, unlike modprobe, ignores them)
ps_cmdline_args() {
	tr ' ' '\n' < /proc/cmdline | sed -n 's/^printk_stress\.//p' | tr '\n' ' '
}
