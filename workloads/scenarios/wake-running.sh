# pns-description: printk() bursts from tasks and NMIs while the printer thread is held inside a record: no thread wakeup is queued while it runs and none from NMI context; one record while it waits queues one (the series' wakeup counts)
# pns-duration: 2
# pns-needs: CONFIG_PRINTK_NOBKL_DEBUG
. /workloads/lib/common.sh

# Every printk() wakes the printer threads (cons_wake_threads()). A
# thread which prints, or is about to look for records, finds new ones
# by itself: a wakeup queued for it then is an irq work for nothing,
# which for a non-lazy work is a self interrupt, also from NMI context.
# Forced: the printer thread, pinned to CPU 0, holds the unsafe bit of a
# byte until a waiter requests the console (fail_stall_unsafe for its
# task only, once, stall_until_request, at most 30 s); once it is held
# there, 200 records come through /dev/kmsg from CPU 1 and the stressor
# prints from NMIs on CPUs 1-3 (100 a second each). The debug
# interface's wakeup counts (interfaces.md section 4), reset once the
# thread is held and read after the burst, go to wakeups-held.txt; the
# records stored before "reading the counts" were stored while the
# thread was held. An emergency section (console_ctl flush) then
# requests the console, which lets the thread go. The irq_work self
# interrupts traced on the CPUs (irq_vectors:irq_work_entry) are in the
# trace for reference. Then, with the thread waiting again, one record:
# its wakeup count goes to wakeups-idle.txt (tried up to ten times,
# since the thread may still be printing the last ones).
w=/sys/kernel/debug/printk_nobkl/wakeups
[ -r "$w" ] || { echo "no $w: kernel without the wakeup counts"; exit 1; }
pin_printer_thread || exit 1
insmod /lib/modules/printk_stress.ko || exit 1
echo nmi > $PS/contexts
echo 1-3 > $PS/cpus
echo 1-3 > $PS/nmi_cpus
echo 10000 > $PS/nmi_period_us
echo 60 > $PS/duration_s
trace_start -e irq_vectors:irq_work_entry
# before the hold: the stressor attaches its probes by patching code,
# which waits for every CPU
stress_start
nobkl_knob stall_unsafe_us 30000000
nobkl_knob stall_until_request 1
thread_fault fail_stall_unsafe 1 1 || exit 1
pns_log "wake-running: the thread is held inside this record"
fault_fired fail_stall_unsafe || exit 1
echo 0 > "$w"
taskset -c 1 sh -c '. /workloads/lib/common.sh; kmsg_burst 200 "wake-running burst"'
sleep 0.3
pns_log "wake-running: reading the counts"
cat "$w" > "$PNS_RESULTS/wakeups-held.txt"
# The section's waiter spins until the held thread sees its request (10 s
# at most), so that a host which does not run the thread's vCPU for a
# while cannot let the request time out unseen and the thread stay held.
nobkl_knob spinwait_max_us 10000000
nobkl_ctl flush || exit 1
nobkl_knob spinwait_max_us 2000
echo stop > $PS/control
sleep "$PNS_DURATION"
try=0
while :; do
	echo 0 > "$w"
	pns_log "wake-running: one record while the thread waits"
	sleep 0.5
	cat "$w" > "$PNS_RESULTS/wakeups-idle.txt"
	grep -q "queued=0 " "$PNS_RESULTS/wakeups-idle.txt" || break
	try=$((try + 1))
	[ "$try" -lt 10 ] || break
done
trace_stop
stress_save
save_dmesg
