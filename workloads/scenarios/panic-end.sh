# pns-description: the printer thread held, a burst of printk_stress records, then a real panic (sysrq c): every record stored before the panic must reach the serial console, all of the burst printed by the panic
# pns-kind: workload
# pns-duration: 1
# pns-expect-splat: panic
# pns-expect-end: panic
# pns-baud: 2000000
# pns-needs: CONFIG_PRINTK_NOBKL_DEBUG
. /workloads/lib/common.sh

# The trace cannot leave a guest that has panicked, so it stops before
# the panic, after the producers: it holds the store of every record, and
# the analysis requires each one the console had not printed by the end
# of the trace on the serial log after it (the post-trace check).
#
# The printer thread is held (console_ctl thread_hold, as a thread that
# real-time tasks keep off its CPU) before the burst: it prints none of
# it, so every stressor record is pending when the panic comes, whatever
# the host's scheduling. A flush at emergency priority (console_ctl
# flush) prints what was pending before the burst, so the trace holds
# the console's position. Task, hardirq and NMI records only: no
# emergency or panic sections and no injected takeovers, so nothing
# prints a stressor record before the panic, and each one on the
# console is the panic's (`A`).
stress_load
echo task,hardirq,nmi > $PS/contexts
echo 1 > $PS/duration_s
echo 20 > $PS/task_rate
echo 4 > $PS/burst
echo 50000 > $PS/irq_period_us
echo 50000 > $PS/nmi_period_us
# About 450 records of 130 bytes in one second, well within the 128 KiB
# ringbuffer (nothing dropped). The panic prints them at 5 us a byte.
trace_start
nobkl_ctl thread_hold || exit 1
pns_log "panic-end: the printer thread is held"
nobkl_ctl flush || exit 1
stress_run
trace_stop
stress_save
cat /proc/sys/kernel/printk > "$PNS_RESULTS/printk.txt"
dmesg -r > "$PNS_RESULTS/dmesg.txt"
pns_log "panic-end: panic now"
sync
echo c > /proc/sysrq-trigger
# not reached
echo "the panic did not end the guest"
exit 1
