# Helpers for guest scenarios (busybox sh). Source with:
#   . /workloads/lib/common.sh

# Write a marker into the kernel log (and so to the console and the trace).
pns_log() {
	echo "pns: $*" > /dev/kmsg
}

# Start recording the printk events; trace_stop writes $PNS_RESULTS/trace.dat.
# Extra trace-cmd record arguments may be passed (e.g. more events).
# -k leaves the events enabled when trace-cmd ends: disabling them patches
# the tracepoints' static call trampolines (text_poke_bp) while the printer
# thread runs through them, and on i386 under TCG a vCPU then hit the
# temporary int3 after the patching had finished (an oops in
# __SCT__tp_func_nobkl_release). trace_stop turns tracing off instead.
# --file-version 6 (no compression): libtracecmd 3.1.6 keeps every
# decompressed chunk of a compressed trace.dat until the file is closed
# and walks that list at every page, so reading one costs memory and time
# that grow with the trace (2.7M records: 370 MB and 51 s against 12 MB
# and 9 s uncompressed, docs/analysis.md); an uncompressed file is read
# through mmap. It is about ten times larger (140 bytes per record).
# trace-cmd 3.1.6 then writes a version-7 file with compression "none".
# -b is each CPU's ring buffer (KiB): trace-cmd's recorders drain it
# only when the host runs their vCPUs, so a scenario whose run outpaces
# them passes a -b that holds its whole run (the last -b counts), and no
# event depends on when they ran.
trace_start() {
	trace-cmd record -q -k -C global -b 8192 --file-version 6 -e printk "$@" \
		-o /tmp/trace.dat > /tmp/trace-cmd.log 2>&1 &
	PNS_TRACE_PID=$!
	# trace-cmd enables the events before it starts its recorders. A
	# scenario whose trace never started has nothing to show: it ends
	# here, saying so, however long a loaded host takes (at most 60 s).
	local n=0
	until [ "$(cat /sys/kernel/tracing/tracing_on 2>/dev/null)" = 1 ] &&
		grep -q . /sys/kernel/tracing/set_event 2>/dev/null; do
		n=$((n + 1))
		if [ "$n" -gt 120 ]; then
			echo "trace_start: trace-cmd did not start recording within 60 s" >&2
			cat /tmp/trace-cmd.log >&2
			exit 1
		fi
		sleep 0.5
	done
}

trace_stop() {
	[ -n "$PNS_TRACE_PID" ] || return 0
	# Freeze every CPU's buffer at the same instant: trace-cmd stops its
	# per-CPU recorders one by one, and with tracing still on the CPUs'
	# data would end up to seconds apart (a tail with only some CPUs).
	echo 0 > /sys/kernel/tracing/tracing_on
	kill -INT "$PNS_TRACE_PID"
	wait "$PNS_TRACE_PID"
	cat /tmp/trace-cmd.log
	cp /tmp/trace.dat "$PNS_RESULTS/trace.dat"
	PNS_TRACE_PID=
}

# Count a printk event in the kernel's own histogram (a hist trigger),
# whatever trace-cmd does with the ring buffer, so that a scenario can
# run until a situation has happened: trace_count_start EVENT after
# trace_start (trace-cmd clears triggers when it starts), then
# trace_count EVENT prints how many there were so far.
trace_count_start() {
	echo 'hist:keys=common_pid' > "/sys/kernel/tracing/events/printk/$1/trigger"
}

trace_count() {
	awk '/^ *Hits:/ { print $2; exit }' "/sys/kernel/tracing/events/printk/$1/hist"
}

# run_until SECONDS CONDITION...: stressor runs (stress_run) one after
# another until the shell command CONDITION succeeds after one, for at
# most SECONDS; says how long it took. Fails when the time is up.
run_until() {
	limit=$1
	shift
	start=$(date +%s)
	while :; do
		stress_run
		took=$(($(date +%s) - start))
		if "$@"; then
			pns_log "run_until: '$*' after ${took}s"
			return 0
		fi
		if [ "$took" -ge "$limit" ]; then
			pns_log "run_until: '$*' not within ${limit}s"
			return 1
		fi
	done
}

# Waiting for a forced situation. A scenario that made a situation
# happen, or asked the kernel to stage one, waits for it by polling for
# the situation itself, not by a sleep a loaded host may not make long
# enough. The limit, tens of seconds of the guest's clock, is a hang
# detector: a vCPU the host does not run makes the wait longer, never
# the scenario fail. When it is reached, a FAIL line names what did not
# happen (and the scenario fails).

# uptime_s: whole seconds since boot, the guest's clock
uptime_s() {
	cut -d. -f1 /proc/uptime
}

# wait_until SECONDS WHAT CONDITION...: poll the shell command CONDITION
# (run in this shell) until it succeeds, at most SECONDS. Fails, printing
# "FAIL WHAT: not within SECONDS s", when the time is up.
wait_until() {
	local wait_limit=$1 wait_what=$2 wait_end
	shift 2
	wait_end=$(($(uptime_s) + wait_limit))
	until "$@"; do
		if [ "$(uptime_s)" -ge "$wait_end" ]; then
			echo "FAIL $wait_what: not within $wait_limit s"
			return 1
		fi
		sleep 0.1
	done
}

# errno_is TEXT NAME...: TEXT, the message of a failed write (busybox:
# "sh: write error: Device or resource busy"), is that of one of the
# errno NAMEs (EBUSY, ETIMEDOUT; glibc's or musl's wording)
errno_is() {
	local text=$1 name
	shift
	for name; do
		case "$name:$text" in
		EBUSY:*[Bb]usy*|ETIMEDOUT:*[Tt]imed\ out*) return 0 ;;
		esac
	done
	return 1
}

# until_staged SECONDS ERRNOS WHAT COMMAND...: run COMMAND (in a
# subshell), a command of a debug interface that stages a situation (a
# race replay, a hold), again while it fails with one of the errno names in ERRNOS ("EBUSY
# ETIMEDOUT"): the answers by which that command says that it could not
# stage its situation this time (the console was not free, a step did
# not come within the kernel's own limit), as a vCPU the host did not
# run makes it say. At most SECONDS (wait_until); says how many attempts
# it took when more than one. Fails, with COMMAND's message on stderr,
# when COMMAND fails otherwise, and when the time is up.
until_staged() {
	local limit=$1 errnos=$2 what=$3
	shift 3
	staged_attempts=0
	if ! wait_until "$limit" "$what: staged" staged_attempt "$errnos" "$@"; then
		echo "$what: the last answer: $staged_err"
		return 1
	fi
	if [ "$staged_rc" -ne 0 ]; then
		echo "$what: $staged_err" >&2
		return "$staged_rc"
	fi
	[ "$staged_attempts" -eq 1 ] || echo "$what: staged at attempt $staged_attempts"
}

# staged_attempt ERRNOS COMMAND...: one attempt of until_staged, which
# leaves COMMAND's exit status in $staged_rc and its error message in
# $staged_err: false when COMMAND could not stage its situation this
# time, true when it succeeded or failed otherwise
staged_attempt() {
	local errnos=$1
	shift
	staged_attempts=$((staged_attempts + 1))
	# the error message captured, the output passed on
	{ staged_err=$("$@" 2>&1 1>&3); } 3>&1
	staged_rc=$?
	[ "$staged_rc" -eq 0 ] || ! errno_is "$staged_err" $errnos
}

# Print N records through /dev/kmsg, numbered, as fast as possible.
kmsg_burst() {
	i=0
	while [ "$i" -lt "$1" ]; do
		echo "pns-kmsg n=$i $2" > /dev/kmsg
		i=$((i + 1))
	done
}

# Save the kernel's view of its log for the host's boot-log check. The
# pause lets the printer thread finish what dmesg shows before poweroff.
save_dmesg() {
	cat /proc/sys/kernel/printk > "$PNS_RESULTS/printk.txt"
	dmesg -r > "$PNS_RESULTS/dmesg.txt"
	sleep 1
}

# Set a knob of the series' debug interface when this kernel has it.
nobkl_knob() {
	local f=/sys/kernel/debug/printk_nobkl/$1
	[ -w "$f" ] && echo "$2" > "$f"
	return 0
}

# The console line's speed: line_speed BAUD or line_speed instant. A
# byte of a 10-bit frame takes 10^10 / BAUD ns (computed in 32 bits, to
# 10 ns), spent where the UART drivers wait for the transmitter
# (byte_delay_ns, whichever console path prints). A scenario's line is
# its pns-baud header or the BAUD setting, set before the scenario
# starts; a scenario calls this for a phase of its own, or to drain its
# backlog at the end. Fails when the kernel has no debug interface.
line_speed() {
	local f ns=0
	case "$1" in
	instant) ;;
	''|*[!0-9]*|0) echo "line_speed: '$1' is no baud rate (or instant)" >&2; return 1 ;;
	*) ns=$((1000000000 / $1 * 10)) ;;
	esac
	# the 6.1 series' debug interface, else the 6.12 series' one
	for f in /sys/kernel/debug/printk_nobkl/byte_delay_ns \
		 /sys/kernel/debug/printk_nbcon/byte_delay_ns; do
		[ -w "$f" ] && break
	done
	[ -w "$f" ] || { echo "line_speed: no byte_delay_ns: kernel without CONFIG_PRINTK_NOBKL_DEBUG or CONFIG_NBCON_DEBUG" >&2; return 1; }
	echo "$ns" > "$f"
}

# Hold the printer thread inside a record (the 6.12 series' debug
# interface, printk_nbcon/hold): arm the hold and wait until the thread
# is in it, at the place byte_delay_safe selects, for at most 10 s. The
# thread then stays there until another context wants the console, so
# what the scenario provokes next meets it for certain. Needs a backlog
# for the thread to print. Fails when the kernel has no hold or the
# thread never got to it.
hold_printer_thread() {
	local f=/sys/kernel/debug/printk_nbcon/hold last
	[ -w "$f" ] || { echo "hold_printer_thread: no $f: kernel without CONFIG_NBCON_DEBUG" >&2; return 1; }
	# The thread holds with interrupts disabled: a shell queued on its CPU
	# would not run before the hold ends (the idle CPUs have no tick to
	# pull it over), and would see the hold end by timeout, never holding.
	# So the thread holds on the last CPU and this shell, with whatever it
	# provokes, runs on CPU 0.
	last=$(($(nproc) - 1))
	[ "$last" -ge 1 ] || { echo "hold_printer_thread: needs two CPUs" >&2; return 1; }
	taskset -p $((1 << last)) "$(pidof pr/ttyS0)" >/dev/null || return 1
	taskset -p 1 $$ >/dev/null || return 1
	echo "${1:-5000}" > /sys/kernel/debug/printk_nbcon/hold_ms
	hold_arms=0
	wait_until 60 "hold_printer_thread: the printer thread holding" hold_engaged "$f" || return 1
	[ "$hold_arms" -eq 1 ] || echo "hold_printer_thread: armed $hold_arms times"
}

# hold_engaged FILE: true once the printer thread holds; arms the hold
# when it is idle or a hold ended before this shell saw it holding (the
# host did not run the shell for the whole hold: arm it again). An armed
# hold engages in a record the thread prints: while it waits armed, the
# thread may have printed the whole backlog before the hold was armed
# (the host ran this shell late), so it is given a record to print.
hold_engaged() {
	case "$(cat "$1")" in
	holding) return 0 ;;
	armed)
		echo "pns: hold_printer_thread: a record to hold in" > /dev/kmsg
		return 1 ;;
	esac
	echo 1 > "$1" || return 1
	hold_arms=$((hold_arms + 1))
	return 1
}

# How the last hold ended, as "printer thread hold: request|lost|timeout"
# on the guest log, which the host's tests read.
hold_result() {
	echo "printer thread hold: $(cat /sys/kernel/debug/printk_nbcon/hold)"
}

# Run a console_ctl command of the series' debug interface
# (interfaces.md section 4). Fails, with the reason on stderr, when the
# kernel has no such interface or refuses the command. thread_hold
# returns once the printer thread prints no more, however long the host
# takes to let it finish its record: the kernel waits for it a second
# and then answers ETIMEDOUT with the hold set, so it is asked again
# (until_staged, at most 30 s).
nobkl_ctl() {
	local f=/sys/kernel/debug/printk_nobkl/console_ctl
	[ -w "$f" ] || { echo "no $f: kernel without CONFIG_PRINTK_NOBKL_DEBUG" >&2; return 1; }
	if [ "$1" = thread_hold ]; then
		until_staged 30 ETIMEDOUT "console_ctl thread_hold" write_value "$f" "$1"
	else
		write_value "$f" "$1"
	fi
}

# write_value FILE VALUE: VALUE in one write; fails with the kernel's
# error message on stderr
write_value() {
	echo "$2" > "$1"
}

# Arm a fault of the series' debug interface (interfaces.md section 4):
# nobkl_fault NAME INTERVAL TIMES fires at every INTERVAL-th decision,
# TIMES times (-1: no limit). Fails when the kernel has no such fault.
# The probability is written last: it arms the fault, whose times and
# interval (and a task filter set before) then hold from its first firing.
nobkl_fault() {
	local d=/sys/kernel/debug/printk_nobkl/$1
	[ -d "$d" ] || return 1
	echo 0 > "$d/verbose"
	echo "$2" > "$d/interval"
	echo "$3" > "$d/times"
	echo 100 > "$d/probability"
}

# A context nested on the printer thread's CPU (as an NMI which WARNs)
# takes the console over from the thread inside a record, at emergency
# priority, and prints that record again (fail_nested_takeover, filtered
# to the thread's task): at every INTERVAL-th byte the thread writes,
# TIMES times. thread_nested_takeover INTERVAL TIMES; TIMES=0 disarms.
thread_nested_takeover() {
	thread_fault fail_nested_takeover "$1" "$2"
}

# Arm a fault of the series for the printer thread pr/ttyS0 only:
# thread_fault NAME INTERVAL TIMES (task filter and make-it-fail).
thread_fault() {
	local d=/sys/kernel/debug/printk_nobkl/$1
	[ -d "$d" ] ||
		{ echo "no $d: kernel without CONFIG_PRINTK_NOBKL_DEBUG" >&2; return 1; }
	local pr=$(pidof pr/ttyS0)
	[ -n "$pr" ] || { echo "no printer thread pr/ttyS0" >&2; return 1; }
	# the filter before the probability: armed, it fires for the thread only
	echo Y > "$d/task-filter"
	echo 1 > "/proc/$pr/make-it-fail"
	nobkl_fault "$1" "$2" "$3"
}

# Wait until an armed fault of the series has fired as often as it was
# armed for (its times count is down to 0), at most 20 s: a scenario
# goes on only once the situation the fault makes is there. Fails, with
# the reason on stderr, when it never fired.
fault_fired() {
	local t=/sys/kernel/debug/printk_nobkl/$1/times n=0
	until [ "$(cat "$t")" = 0 ]; do
		n=$((n + 1))
		[ "$n" -le 200 ] || { echo "$1 never fired" >&2; return 1; }
		sleep 0.1
	done
}

# Booted without printer threads (printk_nobkl.force_atomic), a shell on
# CPU 1 owns the console with the record TEXT, held for 10 s inside the
# first byte it writes (fail_stall_unsafe for its task only, once):
# atomic_owner_hold TEXT. Returns once it is held, with its pid in
# $owner; this shell moves to CPU 3, off the owner's CPU. Fails, with
# the reason, on a kernel with printer threads or without the debug
# interface.
atomic_owner_hold() {
	local f=/sys/kernel/debug/printk_nobkl/fail_stall_unsafe
	[ -z "$(pidof pr/ttyS0)" ] ||
		{ echo "a printer thread runs: not booted with printk_nobkl.force_atomic"; return 1; }
	[ -d "$f" ] || { echo "no $f: kernel without CONFIG_PRINTK_NOBKL_DEBUG"; return 1; }
	taskset -p 8 $$ > /dev/null || return 1
	nobkl_knob stall_unsafe_us 10000000
	nobkl_knob stall_until_request 0
	echo Y > "$f/task-filter"
	nobkl_fault fail_stall_unsafe 1 1 || return 1
	taskset -c 1 sh -c "echo 1 > /proc/self/make-it-fail; echo '$1' > /dev/kmsg" &
	owner=$!
	fault_fired fail_stall_unsafe
}

# Pin the printer thread pr/ttyS0 to CPU 0 and keep this shell, and
# what it starts, off CPU 0: a thread held by a fault spins there with
# interrupts disabled (it prints under the port lock), and a task queued
# behind it, or a cross-CPU call to it, would wait for it. Fails when
# there is no printer thread.
pin_printer_thread() {
	local pr=$(pidof pr/ttyS0)
	[ -n "$pr" ] || { echo "no printer thread pr/ttyS0" >&2; return 1; }
	taskset -p 1 "$pr" > /dev/null && taskset -p e $$ > /dev/null
}

# Arm one of the series' correctness breakers (test only):
# break_fault NAME TIMES [INTERVAL]. TIMES=1 makes exactly one violation,
# at the INTERVAL-th record (default 1), so a value above 1 puts it in the
# middle of the traced load rather than at its first record.
break_fault() {
	nobkl_fault "$1" "${3:-1}" "$2" ||
		{ echo "no $1: kernel without CONFIG_PRINTK_NOBKL_DEBUG"; exit 1; }
}

# Stuck owners: every 200th byte the 8250 nobkl driver stalls 2 ms inside
# its unsafe region, and every 5th owner that sees a handover request is
# stuck there until its waiters timed out, at most 5 ms (they may then
# take over).
stress_stuck_owners() {
	nobkl_fault fail_stall_unsafe 200 -1 && nobkl_knob stall_unsafe_us 2000
	nobkl_fault fail_ignore_handover 5 -1 && nobkl_knob ignore_handover_ms 5
	return 0
}

# CPU, scheduler and memory load from stress-ng for PNS_DURATION seconds,
# in the background (the i386 guest has no stress-ng: no load, said so).
guest_load() {
	if command -v stress-ng >/dev/null; then
		stress-ng --cpu 0 --switch 1 --vm 1 --vm-bytes 64M \
			--timeout "${PNS_DURATION}s" --quiet &
		PNS_LOAD_PID=$!
	else
		echo "no stress-ng in this guest: no load"
	fi
}

guest_load_stop() {
	[ -n "$PNS_LOAD_PID" ] || return 0
	kill "$PNS_LOAD_PID" 2>/dev/null
	wait "$PNS_LOAD_PID"
	PNS_LOAD_PID=
}

# traced_kmsg_load [BREAKER TIMES INTERVAL]: printk load from user space, traced,
# with the console scenario's shape; the breaker is armed once the trace
# runs, so the violation it makes is in the trace.
traced_kmsg_load() {
	trace_start
	[ -n "$1" ] && break_fault "$1" "$2" "$3"
	kmsg_burst 100 "$PNS_SCENARIO load"
	sleep "$PNS_DURATION"
	trace_stop
}

# printk_stress helpers: load with the task, hardirq, NMI, emergency and
# panic contexts for PNS_DURATION seconds, optionally inject hostile
# takeovers, then one traced run. The softirq and deferred contexts
# (and sections from softirq) are left out: the stressor tests exercise
# them, these scenarios keep the load they were judged with.
PS=/sys/kernel/debug/printk_stress

stress_load() {
	insmod /lib/modules/printk_stress.ko || exit 1
	# the sections the console design has: emergency and panic (6.1's
	# series), emergency only (6.12's), none (a kernel without either)
	echo task,hardirq,nmi,emerg,panic > $PS/contexts 2>/dev/null ||
		echo task,hardirq,nmi,emerg > $PS/contexts 2>/dev/null ||
		echo task,hardirq,nmi > $PS/contexts
	echo task,hardirq,nmi > $PS/atomic_from
	echo "$PNS_DURATION" > $PS/duration_s
}

stress_takeovers() {
	grep -q "nobkl_debug: 1" $PS/control || return 0
	echo 100 > $PS/fail_takeover/probability
	echo 20 > $PS/fail_takeover/interval
	echo -1 > $PS/fail_takeover/times
}

# stress_traced_run [trace-cmd record args]: start, wait for the run to
# end by itself, save stats.txt and control.txt, unload.
stress_traced_run() {
	trace_start "$@"
	stress_run
	trace_stop
	stress_save
}

# The storm under stress-ng load (load, soak): hostile takeovers, stuck
# owners, then one traced run; the load starts once trace-cmd's recorders
# run.
stress_loaded_storm() {
	stress_takeovers
	stress_stuck_owners
	trace_start
	guest_load
	stress_run
	guest_load_stop
	trace_stop
	stress_save
}

# Start a run and wait until it ends by itself.
stress_run() {
	stress_start
	stress_wait
}

stress_start() {
	echo start > $PS/control
}

# Wait until the run ends by itself.
stress_wait() {
	while grep -q "state: running" $PS/control; do
		sleep 1
	done
}

# Save the run's stats.txt and control.txt, unload the module.
stress_save() {
	cat $PS/stats > "$PNS_RESULTS/stats.txt"
	cat $PS/control > "$PNS_RESULTS/control.txt"
	rmmod printk_stress
}

# The console benchmark's workload (make bench; tools/pns/bench.py runs it
# with the NOBKL console, the legacy console and no console output): the
# stressor in task, hardirq and NMI context and in emergency sections
# (from tasks only: from an hrtimer one flushed for over 21 s, RCU stall,
# docs/results.md), 20 records/s of each on 4 CPUs, 80 in all, about two
# thirds of what a 115200 baud UART prints: with 16-byte payloads a line
# is about 91 bytes, 7.9 ms at 86.8 us per byte (the scenarios' pns-baud,
# or BAUD), 126 lines/s. Short records give the most printk() calls, the
# samples of the benchmark, for the bytes the line can take. In the 180 s
# of a bench run (pns-duration) each context makes 3600 calls, over 2000
# even where a console that prints from the caller slows the producers
# down (legacy: 0.6 of the task records, docs/results.md). Above the
# UART's rate the backlog scenario shows what happens.
bench_console_load() {
	insmod /lib/modules/printk_stress.ko || exit 1
	echo task,hardirq,nmi,emerg > $PS/contexts
	echo task > $PS/atomic_from
	echo "$PNS_DURATION" > $PS/duration_s
	echo 16 > $PS/payload_len
	echo 5 > $PS/task_rate
	echo 1 > $PS/burst
	echo 200000 > $PS/irq_period_us
	echo 200000 > $PS/nmi_period_us
	echo 2 > $PS/emerg_every
	echo 2 > $PS/atomic_burst
}

# After a benchmark run: the console drains the backlog at full speed.
bench_console_drain() {
	line_speed instant
	sleep 2
}

# The end of every run (workloads/init calls it after the scenario): on a
# kernel with kmemleak (tools/configs/checkers/kmemleak.config, built
# without the scan thread) scan for leaks and put the report where the
# host reads it. kmemleak prints no report on the console by itself, and
# does not report an object younger than 5 s: the second scan, 6 s after
# the first (kmemleak.rst advises more than one), catches what the
# scenario freed or leaked last, the module's unload included. The report
# goes to kmemleak.txt and, a line a record, to the kernel log, where the
# console splat scan counts its `unreferenced object` lines (class
# kmemleak). The `done` marker tells the host that the scan ran: a kernel
# with kmemleak and a finished run without it fails the verdict.
KMEMLEAK=/sys/kernel/debug/kmemleak
kmemleak_scan() {
	[ -e $KMEMLEAK ] || return 0
	t0=$(cut -d. -f1 /proc/uptime)
	if ! echo scan > $KMEMLEAK || ! { sleep 6; echo scan > $KMEMLEAK; }; then
		pns_log "kmemleak scan failed (kmemleak disabled itself?)"
		return 0
	fi
	cat $KMEMLEAK > /tmp/kmemleak.txt
	cp /tmp/kmemleak.txt "$PNS_RESULTS/kmemleak.txt"
	while IFS= read -r line; do
		echo "pns: kmemleak report: $line" > /dev/kmsg
	done < /tmp/kmemleak.txt
	n=$(grep -c "^unreferenced object" /tmp/kmemleak.txt)
	pns_log "kmemleak scan done: $n object(s) reported, $(($(cut -d. -f1 /proc/uptime) - t0))s"
}
