# pns-description: a burst of printk_stress records on a slow line, then a real panic (sysrq c): every record stored before the panic must reach the serial console, the ones still pending printed by the panic
# pns-kind: workload
# pns-duration: 1
# pns-expect-splat: panic
# pns-expect-end: panic
. /workloads/lib/common.sh

# The trace cannot leave a guest that has panicked, so it stops before
# the panic, after the producers: it holds the store of every record, and
# the analysis requires each one the console had not printed by the end
# of the trace on the serial log after it (the post-trace check).
#
# Task, hardirq and NMI records only: no emergency or panic sections and
# no injected takeovers, so until the panic only the printer thread prints
# (`T`), and every stressor line printed atomically (`A`) is the panic's.
stress_load
echo task,hardirq,nmi > $PS/contexts
echo 1 > $PS/duration_s
echo 20 > $PS/task_rate
echo 4 > $PS/burst
echo 50000 > $PS/irq_period_us
echo 50000 > $PS/nmi_period_us
# About 450 records of 130 bytes in one second, well within the 128 KiB
# ringbuffer (nothing dropped), on a line that prints about 25 of them a
# second: most are still pending when the trace has been copied.
nobkl_knob byte_delay_ns 300000
stress_traced_run
cat /proc/sys/kernel/printk > "$PNS_RESULTS/printk.txt"
dmesg -r > "$PNS_RESULTS/dmesg.txt"
pns_log "panic-end: panic now"
# The panic prints the backlog at a faster line rate, so it does not take
# many seconds; the printer thread gets a few lines further meanwhile
# (about 150 a second: at 5 us a byte it printed all of the backlog
# before the panic once, on a loaded host).
nobkl_knob byte_delay_ns 50000
sync
echo c > /proc/sysrq-trigger
# not reached
echo "the panic did not end the guest"
exit 1
