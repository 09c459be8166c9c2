# pns-description: the printer thread at an emulated 115200 baud on a CPU it shares with a busy task, emergency sections from hrtimers on its CPU and on another, traced
# pns-kind: workload
# pns-duration: 6
. /workloads/lib/common.sh

# Where the printer thread writes: pr/ttyS0 is kept on CPU 3, where a
# busy loop competes with it for the CPU (the scheduler preempts one for
# the other every few ms) and an hrtimer opens an emergency section of
# one record 10 times a second; CPU 0's hrtimer does the same from
# another CPU. A task on each of the two CPUs stores 10 records a second,
# about 120 bytes each (10.4 ms on the line at 86.8 us a byte): with the
# emergency records about 40 % of what the line prints, so no backlog
# builds up and an emergency record waits only for the record the thread
# is printing. The thread spends nearly all of a record inside the
# unsafe sections of its bytes, where emergency output may neither be
# handed the console nor take it over.
pr=$(ps | awk '$NF == "[pr/ttyS0]" { print $1 }')
taskset -p 8 "$pr" || exit 1
taskset 8 sh -c 'while :; do :; done' &
hog=$!
insmod /lib/modules/printk_stress.ko || exit 1
echo task,emerg > $PS/contexts
echo hardirq > $PS/atomic_from
echo 0,3 > $PS/cpus
echo 10 > $PS/task_rate
echo 1 > $PS/burst
echo 100000 > $PS/irq_period_us
echo 1 > $PS/emerg_every
echo 1 > $PS/atomic_burst
echo "$PNS_DURATION" > $PS/duration_s
nobkl_knob byte_delay_ns 86800
stress_traced_run
kill "$hog"
nobkl_knob byte_delay_ns 0
sleep 2
save_dmesg
