# pns-description: panic-priority sections on CPUs 1-3 while the printer thread on CPU 0 is held inside an unsafe section for a second: they wait for it (handover requests, timeouts) and never take the console over from inside that section, whose CPU still runs; traced
# pns-kind: workload
# pns-duration: 3
. /workloads/lib/common.sh

# panic() is at panic priority from its first printk on, long before it
# stops the other CPUs: an owner inside its unsafe section may still be
# writing to the device. Only the final flush, after the other CPUs are
# stopped, may take such an owner over. Here the stressor's panic-priority
# sections (the console path of panic(), without the end of the machine)
# come from task producers on CPUs 1-3, ten a second, while the printer
# thread, pinned to CPU 0, holds the unsafe bit of one byte for a second
# (fail_stall_unsafe for the thread only, armed once the load runs). Each
# section that meets it asks for a handover and times out after
# spinwait_max_us (2 ms); the trace must show such a timeout (the forced
# situation) and no hostile acquire with prev_unsafe=1.
thread=$(pidof pr/ttyS0)
[ -n "$thread" ] || { echo "no printer thread pr/ttyS0"; exit 1; }
taskset -p 1 "$thread" || exit 1
insmod /lib/modules/printk_stress.ko || exit 1
echo task,panic > $PS/contexts
echo 1-3 > $PS/cpus
echo 30 > $PS/task_rate
echo 1 > $PS/burst
echo 200 > $PS/payload_len
echo task > $PS/atomic_from
echo 10 > $PS/panic_every
echo "$PNS_DURATION" > $PS/duration_s
nobkl_knob stall_unsafe_us 1000000
nobkl_knob stall_until_request 0
trace_start
stress_start
thread_fault fail_stall_unsafe 1 1 || exit 1
stress_wait
trace_stop
stress_save
save_dmesg
