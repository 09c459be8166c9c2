# pns-description: emergency sections from hrtimers while the printer thread prints a steady load on a slow line: friendly handovers, one owner that ignores the request (a timeout), traced
# pns-duration: 3
. /workloads/lib/common.sh

# A waiter requests a handover only from an owner of a lower priority:
# here the printer thread, printing task records from CPUs 0-1 (100 a
# second, about 2 ms each at 20 us a byte: the line is busy a fifth of
# the time), and an emergency section of one record from each CPU's
# hrtimer 20 times a second. An emergency section flushes the whole
# backlog, so the load must not build one. The thread is kept on CPU 3,
# away from the sections' CPUs: it writes a record with interrupts off
# (the port lock), so a section on its own CPU would only ever find the
# console free between two records. A waiter spins up to 100 ms
# (spinwait_max_us), so the thread grants its request even when the host
# does not run the thread's vCPU for milliseconds. The first owner that
# sees a request is stuck there for 300 ms (fail_ignore_handover), longer
# than the waiter spins: one timeout, whatever the record's length.
# Whether a section meets the thread inside a record is the host's
# timing: the runs go on until the trace has a grant and a timeout.
pr=$(ps | awk '$NF == "[pr/ttyS0]" { print $1 }')
taskset -p 8 "$pr" || exit 1
insmod /lib/modules/printk_stress.ko || exit 1
echo task,emerg > $PS/contexts
echo hardirq > $PS/atomic_from
echo 0-1 > $PS/cpus
echo 50 > $PS/task_rate
echo 50000 > $PS/irq_period_us
echo 1 > $PS/emerg_every
echo 1 > $PS/atomic_burst
echo "$PNS_DURATION" > $PS/duration_s
nobkl_knob byte_delay_ns 20000
nobkl_knob spinwait_max_us 100000
nobkl_fault fail_ignore_handover 1 1 && nobkl_knob ignore_handover_ms 300
trace_start
trace_count_start nobkl_handover_grant
trace_count_start nobkl_handover_timeout
handed_over() {
	[ "$(trace_count nobkl_handover_grant)" -gt 0 ] &&
		[ "$(trace_count nobkl_handover_timeout)" -gt 0 ]
}
run_until 45 handed_over || exit 1
trace_stop
stress_save
nobkl_knob spinwait_max_us 2000
nobkl_knob byte_delay_ns 0
sleep 2
save_dmesg
