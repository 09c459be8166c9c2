# pns-description: emergency sections from hrtimers while the printer thread prints a steady load on a slow line: friendly handovers, one owner that ignores the request (a timeout), traced
# pns-duration: 3
. /workloads/lib/common.sh

# A waiter requests a handover only from an owner of a lower priority:
# here the printer thread, printing task records from CPUs 0-1 (20 a
# second each), and an emergency section of one record from each CPU's
# hrtimer 10 times a second. An emergency section flushes the whole
# backlog with interrupts off, and a record takes up to 9 ms under TCG at
# 20 us a byte, so the load leaves the line idle most of the time. The
# thread is kept on CPU 3, away from the sections' CPUs: it writes a
# record with interrupts off (the port lock), so a section on its own
# CPU would only ever find the console free between two records.
# Both outcomes are forced: twice the thread holds the unsafe bit of a
# byte until a section requests a handover (fail_stall_unsafe with
# stall_until_request, for the thread only, armed once the load runs;
# at most 2 s, far longer than the sections' period). At the first
# request the thread grants it at its next safe point; a waiter spins up
# to 100 ms (spinwait_max_us), so the grant holds even when the host
# does not run the thread's vCPU for milliseconds. The second owner that
# sees a request is stuck for 300 ms (fail_ignore_handover, interval 2),
# longer than the waiter spins: a timeout.
pr=$(ps | awk '$NF == "[pr/ttyS0]" { print $1 }')
taskset -p 8 "$pr" || exit 1
insmod /lib/modules/printk_stress.ko || exit 1
echo task,emerg > $PS/contexts
echo hardirq > $PS/atomic_from
echo 0-1 > $PS/cpus
echo 20 > $PS/task_rate
echo 100000 > $PS/irq_period_us
echo 1 > $PS/emerg_every
echo 1 > $PS/atomic_burst
echo "$PNS_DURATION" > $PS/duration_s
nobkl_knob byte_delay_ns 20000
nobkl_knob spinwait_max_us 100000
nobkl_knob stall_unsafe_us 2000000
nobkl_knob stall_until_request 1
nobkl_fault fail_ignore_handover 2 1 && nobkl_knob ignore_handover_ms 300
trace_start
stress_start
thread_fault fail_stall_unsafe 1 2 || exit 1
stress_wait
trace_stop
stress_save
nobkl_knob stall_until_request 0
nobkl_knob spinwait_max_us 2000
nobkl_knob byte_delay_ns 0
sleep 2
save_dmesg
