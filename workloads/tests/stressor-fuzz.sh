#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# printk_stress fuzz: random and malformed writes at every debugfs file
# (knobs, control, stats, fail_takeover/) and module parameter, idle and
# while a run is going. Every write is either refused with one of the
# documented errors and changes nothing (control, with every knob, and
# the file itself read the same), or taken, and then only that file
# changed and it reads back a valid value. No splat in the kernel log.
# Usage: stressor-fuzz.sh [writes]   (default 200 idle, a third of that
# while running, 8 loads with a random parameter)
# Loads the module if needed, unloads it if it did.
# Output: "PASS name"/"FAIL name" lines, then "N passed, N failed".

. "$(dirname "$0")/stressor-lib.sh"

writes=${1:-200}
ps_mount_debugfs
loaded_here=0
if ! ps_loaded; then
	ps_insmod || { echo "FAIL insmod"; echo "0 passed, 1 failed"; exit 1; }
	loaded_here=1
fi
mark=$(ps_dmesg_mark)
FZ=/tmp/ps-fuzz.$$
DOCUMENTED="$(ps_errtext EINVAL)|$(ps_errtext ERANGE)|$(ps_errtext EBUSY)|$(ps_errtext EOPNOTSUPP)"

FILES="control stats $PS_KNOBS"
[ -d "$PS_DIR/fail_takeover" ] && FILES="$FILES $(cd "$PS_DIR" && ls -d fail_takeover/*)"

# fz_rand N: a random number 0..N-1
fz_rand() { echo $((RANDOM % $1)); }

# fz_value: a random value in $FZ: raw bytes, characters a parser could
# half accept, or a number at an edge
fz_value() {
	case $(fz_rand 4) in
	0) head -c $(($(fz_rand 24) + 1)) /dev/urandom > "$FZ" ;;
	1) head -c 256 /dev/urandom | tr -dc '0-9a-z,:.x+ -' |
		head -c $(($(fz_rand 12) + 1)) > "$FZ" ;;
	2) set -- 0 -1 4294967295 4294967296 18446744073709551616 99999999999 \
		017 0x10 "1 2" "1," ",1" "0-" "-0" "3-1" "all," "none,task" " " "\n"
		shift "$(fz_rand $#)"
		printf "$1" > "$FZ" ;;
	3) printf '%s\n' "$(head -c 8 /dev/urandom | od -An -tu4 | tr -s ' ' '\n' |
		sed -n 2p)" > "$FZ" ;;
	esac
}

# fz_valid FILE VALUE: VALUE is what FILE may read back
fz_valid() {
	_k=$(sed -n "s|^knob $1=[^ ]* ||p" "$PS_DIR/control")
	case $_k in
	range=*)
		_lo=${_k#range=}; _hi=${_lo#*-}; _lo=${_lo%-*}
		echo "$2" | grep -Eq '^[0-9]+$' && [ "$2" -ge "$_lo" ] && [ "$2" -le "$_hi" ] ;;
	set=*)
		[ "$2" = none ] && return 0
		for _t in $(echo "$2" | tr ',' ' '); do
			echo ",${_k#set=}" | grep -q ",$_t," || return 1
		done
		[ -n "$2" ] ;;
	cpulist*)
		[ "$2" = all ] || echo "$2" | grep -Eq '^[0-9]+(-[0-9]+)?(,[0-9]+(-[0-9]+)?)*$' ;;
	*)	# the kernel's fault attribute files: a number, or Y/N
		echo "$2" | grep -Eq '^(-?[0-9]+|Y|N)$' ;;
	esac
}

fz_state() { grep -v '^elapsed_ms' "$PS_DIR/control"; }
# the file's value, beyond fz_state (stats counts on by itself while
# running: not a value; control is in fz_state)
fz_read() {
	case $1 in
	stats|control) ;;
	*) cat "$PS_DIR/$1" 2>/dev/null ;;
	esac
}

bad=0
# fz_bad MESSAGE: a failed write; @VAL@ in MESSAGE is the value written
fz_bad() {
	bad=$((bad + 1))
	[ "$bad" -le 5 ] || return 0
	_v=$(od -An -c "$FZ" | tr -s ' ' | head -c 60 | sed 's/[\\&|]/\\&/g')
	echo "fuzz: $*" | sed "s|@VAL@|'$_v'|"
}

# fz_write idle|running: one random write at a random file, checked
fz_write() {
	mode=$1
	set -- $FILES
	shift "$(fz_rand $#)"
	f=$1
	fz_value
	before=$(fz_state)
	old=$(fz_read "$f")
	err=$( (cat "$FZ" > "$PS_DIR/$f") 2>&1 | sed -n 's/.*write error: //p')
	after=$(fz_state)
	new=$(fz_read "$f")
	val=@VAL@
	if [ -n "$err" ]; then
		echo "$err" | grep -Eq "$DOCUMENTED" ||
			fz_bad "$f $val: undocumented error '$err'"
		[ "$mode" = running ] && echo " $PS_KNOBS " | grep -q " $f " &&
			! echo "$err" | grep -Eq "$(ps_errtext EBUSY)" &&
			fz_bad "$f $val while running: '$err', want EBUSY"
		[ "$before" = "$after" ] && [ "$old" = "$new" ] ||
			fz_bad "$f $val refused ($err) but changed the state"
		return
	fi
	case $f in
	control) # only the commands are taken
		tr -d ' \n\t' < "$FZ" | grep -Eqx 'start|stop|reset' ||
			fz_bad "control took $val" ;;
	stats) fz_bad "stats took $val" ;;
	*)
		fz_valid "$f" "$new" || fz_bad "$f took $val, reads '$new'"
		[ "$(echo "$before" | grep -v "^knob $f=")" = \
		  "$(echo "$after" | grep -v "^knob $f=")" ] ||
			fz_bad "$f $val changed more than $f"
		if [ "$mode" = idle ]; then
			echo reset > "$PS_DIR/control"
		else
			case $f in
			fail_takeover/*) echo "$old" > "$PS_DIR/$f" ;;
			*) fz_bad "$f $val taken while running" ;;
			esac
		fi ;;
	esac
}

echo reset > "$PS_DIR/control"
i=0
while [ "$i" -lt "$writes" ]; do
	fz_write idle
	i=$((i + 1))
done
check fuzz_idle [ "$bad" -eq 0 ]

# while running: slow producers, a run that outlasts the writes
bad=0
echo reset > "$PS_DIR/control"
echo 600 > "$PS_DIR/duration_s"
echo 10 > "$PS_DIR/task_rate"
echo 20000 > "$PS_DIR/irq_period_us"
echo 100000 > "$PS_DIR/nmi_period_us"
if echo start > "$PS_DIR/control"; then
	i=0
	while [ "$i" -lt $((writes / 3)) ]; do
		fz_write running
		i=$((i + 1))
	done
	check fuzz_running_still_running [ "$(ps_state)" = running ]
	echo stop > "$PS_DIR/control"
	check fuzz_running [ "$bad" -eq 0 ]
else
	fail fuzz_running "could not start"
fi
echo reset > "$PS_DIR/control"

# module parameters: a bad value fails the load, a taken one reads valid
bad=0
[ "$loaded_here" = 1 ] && rmmod printk_stress
i=0
while [ "$i" -lt 8 ]; do
	set -- $PS_KNOBS
	shift "$(fz_rand $#)"
	p=$1
	v=$(head -c 64 /dev/urandom | tr -dc '0-9a-z,x-' | head -c $(($(fz_rand 10) + 1)))
	if ps_insmod "$p=$v" 2>/dev/null; then
		got=$(cat "/sys/module/printk_stress/parameters/$p")
		fz_valid "$p" "$got" || fz_bad "parameter $p=$v taken, reads '$got'"
		rmmod printk_stress
	elif ps_loaded; then
		fz_bad "parameter $p=$v refused, but the module is there"
	fi
	i=$((i + 1))
done
check fuzz_parameters [ "$bad" -eq 0 ]
[ "$loaded_here" = 1 ] || ps_insmod

rm -f "$FZ"
splat=$(ps_dmesg_since "$mark" | grep -E "$PS_SPLAT")
if [ -n "$splat" ]; then
	fail no_splat "$(echo "$splat" | head -n 3)"
else
	pass no_splat
fi
[ "$loaded_here" = 1 ] && ps_loaded && rmmod printk_stress
summary
