# pns-description: a real panic (sysrq c) while the printer thread is held inside an unsafe section: the panic's final flush, after the other CPUs are stopped, takes the console over and prints every pending record and the panic's own lines
# pns-kind: workload
# pns-duration: 1
# pns-expect-splat: panic
# pns-expect-end: panic
. /workloads/lib/common.sh

# The printer thread holds the unsafe bit of the 20th byte of a record
# for 5 s (fail_stall_unsafe for the thread only), with interrupts off,
# when the panic comes. panic() asks it for a handover at each of its lines and
# times out: the thread's CPU still runs, so nothing may take the console
# from inside that section. smp_send_stop() stops that CPU (by NMI, as
# its interrupts are off); then the final flush takes the console over
# inside the section and prints the record the thread was in, the records
# stored after it and the panic's lines. The trace cannot leave a
# panicked guest: the test reads the serial log.
# The script runs on CPU 0, the thread on CPU 1: a task woken on the
# thread's CPU would wait there until the stall ends.
thread=$(pidof pr/ttyS0)
[ -n "$thread" ] || { echo "no printer thread pr/ttyS0"; exit 1; }
taskset -p 1 $$ || exit 1
taskset -p 2 "$thread" || exit 1
# The results go to the host first: the 9p transport's interrupts may
# come on the thread's CPU, where they wait for the stall's end.
cat /proc/sys/kernel/printk > "$PNS_RESULTS/printk.txt"
dmesg -r > "$PNS_RESULTS/dmesg.txt"
sync
nobkl_knob stall_unsafe_us 5000000
nobkl_knob stall_until_request 0
thread_fault fail_stall_unsafe 20 1 || exit 1
echo "pns-kmsg panic-unsafe-end: the record the thread is held in" > /dev/kmsg
sleep 0.5
kmsg_burst 20 "panic-unsafe-end: pending"
pns_log "panic-unsafe-end: panic now"
echo c > /proc/sysrq-trigger
# not reached
echo "the panic did not end the guest"
exit 1
