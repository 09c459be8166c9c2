# pns-description: the RFC cover letter's story, traced: the printer thread prints, an emergency context on its CPU (how a WARN prints) takes the console over, later a panic-priority section on another CPU gets the console by a friendly handover and reprints the line the thread was in
# pns-kind: workload
# pns-duration: 14
# pns-expect-splat: warning
# pns-expect-handoff: hostile emergency<-thread same-cpu; handover panic<-thread other-cpu reprinted
# pns-needs: CONFIG_PRINTK_NOBKL_DEBUG
. /workloads/lib/common.sh

# The verdict takes each step from the trace (the analysis' hand-off
# counts, pns-expect-handoff, and their split by the taker's context),
# never from this script. Two stressor runs, one for each step; the
# printer thread stays on CPU 0 and prints on the emulated UART without
# a byte delay.
thread=$(pidof pr/ttyS0)
[ -n "$thread" ] || { echo "no printer thread pr/ttyS0"; exit 1; }
taskset -p 1 "$thread" || exit 1
# a third of the run for the first step, which is forced
first=$((PNS_DURATION / 3))
second=$((PNS_DURATION - first))
line_speed instant || exit 1
insmod /lib/modules/printk_stress.ko || exit 1
trace_start

# 1. The WARN. Task records from CPUs 1-3 (10 records of 470 bytes a
# second) keep the thread on CPU 0 printing. At the 300th byte the
# thread writes, a context nested on CPU 0 (as an NMI which WARNs)
# interrupts it at the safe point before the byte and takes the console
# over at emergency priority (fail_nested_takeover, once, filtered to
# the thread's task): it prints the interrupted record again from its
# start, and the thread finds the console lost at its next byte. Forced
# so: the thread writes each record with interrupts off (the port lock),
# so only an NMI meets it inside a record on its own CPU, and then
# almost always inside the unsafe section of a byte, where no takeover
# is allowed. Real WARNs besides, in tasks on CPU 0 (by_ctx task in the
# counts); they find the thread between two records.
thread_nested_takeover 300 1 || exit 1
echo task > $PS/contexts
echo 1-3 > $PS/cpus
echo 5 > $PS/task_rate
echo 2 > $PS/burst
echo 400 > $PS/payload_len
echo "$first" > $PS/duration_s
echo start > $PS/control
for i in 1 2 3 4 5; do
	sleep 0.5
	taskset -c 0 sh -c 'echo WARNING > /sys/kernel/debug/provoke-crash/DIRECT'
done
while grep -q "state: running" $PS/control; do
	sleep 1
done
thread_nested_takeover 1 0

# 2. The panic. Task records from CPUs 1-3, 800 bytes of payload, keep
# the thread printing; now and then a producer enters a panic-priority
# section (the console path of panic(), without the end of the machine,
# which would take the trace with it). Forced once the load runs: the
# thread holds the unsafe bit of a byte inside a record until such a
# section asks it for the console (fail_stall_unsafe with
# stall_until_request, for the thread only, at most 2 s); it hands the
# console over at the next safe point, and the panic context prints the
# interrupted record again from its start. A waiter spins up to 10 s
# (spinwait_max_us), so the thread grants the request even when the host
# does not run its vCPU for a while; the spin ends at the grant.
echo task,panic > $PS/contexts
echo 100 > $PS/task_rate
echo 1 > $PS/burst
echo 800 > $PS/payload_len
echo task > $PS/atomic_from
echo 10 > $PS/panic_every
echo "$second" > $PS/duration_s
nobkl_knob spinwait_max_us 10000000
nobkl_knob stall_unsafe_us 2000000
nobkl_knob stall_until_request 1
stress_start
thread_fault fail_stall_unsafe 1 1 || exit 1
stress_wait
nobkl_knob stall_until_request 0
nobkl_knob spinwait_max_us 2000
trace_stop
stress_save
save_dmesg
