# pns-description: the printer thread at an emulated 115200 baud on a CPU it shares with a busy task, emergency sections from hrtimers on its CPU and on another, traced
# pns-kind: workload
# pns-duration: 6
# pns-baud: 115200
. /workloads/lib/common.sh

# Where the printer thread writes: pr/ttyS0 is kept on CPU 3, where a
# busy loop competes with it for the CPU (the scheduler preempts one for
# the other every few ms) and an hrtimer opens an emergency section of
# one record 5 times a second; CPU 0's hrtimer does the same from
# another CPU. A task on each of the two CPUs stores 5 records a second,
# about 135 bytes each on the line (11.7 ms at 86.8 us a byte): with the
# emergency records about a quarter of what the line prints, so that the
# thread, which gets about half of its CPU, keeps up, and an emergency
# section flushes little besides its own record. The thread spends
# nearly all of a record inside the unsafe sections of its bytes, where
# emergency output may neither be handed the console nor take it over.
# The scheduler's switches are traced too, to see the busy loop
# preempting the thread.
pr=$(ps | awk '$NF == "[pr/ttyS0]" { print $1 }')
taskset -p 8 "$pr" || exit 1
taskset 8 sh -c 'while :; do :; done' &
hog=$!
insmod /lib/modules/printk_stress.ko || exit 1
echo task,emerg > $PS/contexts
echo hardirq > $PS/atomic_from
echo 0,3 > $PS/cpus
echo 5 > $PS/task_rate
echo 1 > $PS/burst
echo 200000 > $PS/irq_period_us
echo 1 > $PS/emerg_every
echo 1 > $PS/atomic_burst
echo "$PNS_DURATION" > $PS/duration_s
# A waiter spins up to 10 s (spinwait_max_us): every request to the
# thread is answered by a grant, even when the host does not run the
# thread's vCPU for a while; the spin ends at the grant.
nobkl_knob spinwait_max_us 10000000
stress_traced_run -e sched:sched_switch
kill "$hog"
nobkl_knob spinwait_max_us 2000
line_speed instant
sleep 2
save_dmesg
