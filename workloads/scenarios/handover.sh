# pns-description: emergency sections from an hrtimer while the printer thread prints a steady load on a slow line: friendly handovers, one owner that ignores the request (a timeout), traced
# pns-duration: 3
# pns-baud: 500000
. /workloads/lib/common.sh

# A waiter requests a handover only from an owner of a lower priority:
# here the printer thread, printing task records from CPU 0 (20 a
# second), and an emergency section of one record from CPU 0's hrtimer
# 10 times a second. One CPU of sections: a section on a second CPU,
# finding the first one's request pending, would take the console over
# at a safe point instead of waiting, and the forced grant below would
# become a race between the two. An emergency section flushes the whole
# backlog with interrupts off, and a record takes up to 9 ms under TCG at
# 20 us a byte, so the load leaves the line idle most of the time. The
# thread is kept on CPU 3, away from the sections' CPUs: it writes a
# record with interrupts off (the port lock), so a section on its own
# CPU would only ever find the console free between two records.
# Both outcomes are forced, each once the load runs, by faults for the
# thread only, first the timeout, then the grant. Each time the thread
# holds the unsafe bit of a byte until a section requests a handover
# (fail_stall_unsafe with stall_until_request, at most 5 s, far longer
# than the sections' period). The first time it then ignores the
# request (fail_ignore_handover): it is stuck at its next safe point
# until the waiter, which spins its usual 2 ms, has timed out and
# withdrawn the request. The second time it grants the request at its
# next safe point, which it holds for half a second first
# (safe_after_request_us): the waiter sits out the owner's leaving the
# unsafe section in which its request came, a change of the state word
# that is no reason to give up. The waiters now spin up to 10 s (spinwait_max_us), so the
# grant holds even when the host does not run the thread's vCPU for a
# while; the spin ends at the grant.
pr=$(ps | awk '$NF == "[pr/ttyS0]" { print $1 }')
taskset -p 8 "$pr" || exit 1
insmod /lib/modules/printk_stress.ko || exit 1
echo task,emerg > $PS/contexts
echo hardirq > $PS/atomic_from
echo 0 > $PS/cpus
echo 20 > $PS/task_rate
echo 100000 > $PS/irq_period_us
echo 1 > $PS/emerg_every
echo 1 > $PS/atomic_burst
echo 60 > $PS/duration_s
nobkl_knob stall_unsafe_us 5000000
nobkl_knob stall_until_request 1
nobkl_knob ignore_handover_ms 10000
trace_start
stress_start
thread_fault fail_ignore_handover 1 1 || exit 1
thread_fault fail_stall_unsafe 1 1 || exit 1
fault_fired fail_ignore_handover || exit 1
# the stuck thread lets go once its waiter timed out, within ms; a waiter
# that came later would spin 10 s before it times out too
sleep 0.5
nobkl_knob spinwait_max_us 10000000
nobkl_knob safe_after_request_us 500000
thread_fault fail_stall_unsafe 1 1 || exit 1
fault_fired fail_stall_unsafe || exit 1
sleep "$PNS_DURATION"
echo stop > $PS/control
stress_wait
trace_stop
stress_save
nobkl_knob stall_until_request 0
nobkl_knob safe_after_request_us 0
nobkl_knob spinwait_max_us 2000
line_speed instant
sleep 2
save_dmesg
