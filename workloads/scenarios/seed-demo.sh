# pns-description: the RFC cover letter's story, traced: the printer thread prints, an emergency context on its CPU (how a WARN prints) takes the console over, later a panic-priority section on another CPU gets the console by a friendly handover and reprints the line the thread was in
# pns-kind: workload
# pns-duration: 14
# pns-expect-splat: warning
# pns-expect-handoff: hostile emergency<-thread same-cpu; handover panic<-thread other-cpu reprinted
. /workloads/lib/common.sh

# The verdict takes each step from the trace (the analysis' hand-off
# counts, pns-expect-handoff, and their split by the taker's context),
# never from this script. Two stressor runs, one for each step; the
# printer thread stays on CPU 0 and prints on the emulated UART without
# a byte delay.
thread=$(pidof pr/ttyS0)
[ -n "$thread" ] || { echo "no printer thread pr/ttyS0"; exit 1; }
taskset -p 1 "$thread" || exit 1
# 60 % of the run for the first step, which succeeds less often
first=$((PNS_DURATION * 6 / 10))
second=$((PNS_DURATION - first))
nobkl_knob byte_delay_ns 0
insmod /lib/modules/printk_stress.ko || exit 1
trace_start

# 1. The WARN. Task records from CPUs 1-3 (30 records of 470 bytes a
# second) keep the thread busy; CPU 0 gets an NMI every 10 ms, and every
# 2nd prints a record inside an emergency section, the way a WARN prints
# (patch 14: cons_atomic_enter(CONS_PRIO_EMERGENCY)). The thread writes each
# record with interrupts off (the port lock), so only an NMI meets it
# inside a record on its own CPU, and it cannot answer a handover
# request from its own CPU: the section takes the console over, which
# the series allows only between two bytes, not inside the driver's
# unsafe section of a byte (the section then leaves its records to the
# thread). With the emulated UART's instant bytes, almost all of the
# thread's time in a record is the UART write inside the unsafe
# section, so a section would rarely find it between two bytes. The
# thread therefore stalls 200 us at the safe point before every 25th
# byte (fail_stall_safe; never in the NMI, where faults are not
# evaluated), as an owner whose CPU is held up between two bytes: about
# half of its time in a record, 7 ms or so. The records come at about
# half the rate the thread prints them: with more, the backlog grows,
# and a section (an NMI's, a WARN's with preemption off on CPU 0) prints
# all of it in one go, seconds in which the thread cannot run. A few
# real WARNs besides (by_ctx task in the counts).
nobkl_fault fail_stall_safe 25 -1 && nobkl_knob stall_safe_us 200 ||
	{ echo "no fail_stall_safe: kernel without CONFIG_PRINTK_NOBKL_DEBUG"; exit 1; }
echo task,emerg > $PS/contexts
echo 1-3 > $PS/cpus
echo 0 > $PS/nmi_cpus
echo 5 > $PS/task_rate
echo 2 > $PS/burst
echo 10000 > $PS/nmi_period_us
echo 400 > $PS/payload_len
echo nmi > $PS/atomic_from
echo 2 > $PS/emerg_every
echo 1 > $PS/atomic_burst
echo "$first" > $PS/duration_s
echo start > $PS/control
for i in 1 2 3 4 5; do
	sleep 0.5
	taskset -c 0 sh -c 'echo WARNING > /sys/kernel/debug/provoke-crash/DIRECT'
done
while grep -q "state: running" $PS/control; do
	sleep 1
done

nobkl_fault fail_stall_safe 1 0

# 2. The panic. Task records from CPUs 1-3, 800 bytes of payload (2-11
# ms each, depending on the host's load), keep the thread in the middle
# of a record most of the time; now and then a producer enters a panic-priority section (the
# console path of panic(), without the end of the machine, which would
# take the trace with it): it asks the thread on CPU 0 for the console,
# the thread hands it over at the next byte, and the panic context
# prints the interrupted record again from its start.
echo task,panic > $PS/contexts
echo 100 > $PS/task_rate
echo 1 > $PS/burst
echo 800 > $PS/payload_len
echo task > $PS/atomic_from
echo 10 > $PS/panic_every
echo "$second" > $PS/duration_s
stress_run
trace_stop
stress_save
save_dmesg
