# pns-description: the RFC cover letter's story, traced: the printer thread prints, a WARN on its CPU takes the console over and reprints the interrupted line, later a panic-priority section on another CPU gets the console by a friendly handover and reprints the line the thread was in
# pns-kind: workload
# pns-duration: 4
# pns-expect-splat: warning
# pns-expect-handoff: hostile emergency<-thread same-cpu; handover panic<-thread other-cpu
. /workloads/lib/common.sh

# The verdict takes each step from the trace (the analysis' hand-off
# counts, pns-expect-handoff), never from this script.
#
# The printer thread stays on CPU 0, where the WARNs come from.
thread=$(pidof pr/ttyS0)
[ -n "$thread" ] || { echo "no printer thread pr/ttyS0"; exit 1; }
taskset -p 1 "$thread" || exit 1

trace_start

# 1. The thread prints a backlog; a WARN in a task on CPU 0 preempts it.
# The thread cannot answer a handover request from its own CPU, so the
# WARN's emergency section takes the console over, which the series
# allows only between two bytes (not inside the driver's unsafe section
# of a byte, where the WARN leaves its lines to the thread): several
# WARNs, each meeting the thread somewhere in a record. No byte delay,
# so that the gaps between the unsafe sections are not too short.
nobkl_knob byte_delay_ns 0
for i in 1 2 3 4 5 6; do
	kmsg_burst 150 "seed-demo backlog $i before a WARN"
	taskset -c 0 sh -c 'echo WARNING > /sys/kernel/debug/provoke-crash/DIRECT'
done
sleep 1

# 2. The thread prints the stressor's task records from CPUs 1-3 on a
# slow line (about 2.6 ms a line, so it is nearly always in the middle of
# one), and now and then one of them enters a panic-priority section (the
# console path of panic() without the end of the machine, which would
# take the trace with it): it asks the thread on CPU 0 for the console,
# the thread hands it over at the next byte and the panic context prints
# the interrupted record again from its start.
insmod /lib/modules/printk_stress.ko || exit 1
echo task,panic > $PS/contexts
echo task > $PS/atomic_from
echo 1-3 > $PS/cpus
echo 50 > $PS/task_rate
echo 2 > $PS/burst
echo 25 > $PS/panic_every
echo 2 > $PS/atomic_burst
echo "$PNS_DURATION" > $PS/duration_s
nobkl_knob byte_delay_ns 20000
stress_run
trace_stop
stress_save
nobkl_knob byte_delay_ns 0
save_dmesg
