# pns-description: the printer thread held up for 5 s while it fills its text buffer with a record, an emergency section from another CPU meanwhile: it waits (handover timeout) and takes nothing over from an owner still filling its buffer, traced
# pns-duration: 2
# pns-needs: CONFIG_PRINTK_NOBKL_DEBUG
. /workloads/lib/common.sh

# The owner fetches and formats a record into its text buffer inside an
# unsafe section: the atomic contexts of all CPUs share the console's
# builtin buffer when it has no per CPU data, and an owner taken over
# while still filling it would overwrite what the new owner writes out.
# Forced: the printer thread, pinned to CPU 0, stalls for 5 s while it
# fills its buffer (fail_stall_fill for its task only, once); once it is
# held there, an emergency section from CPU 1 (console_ctl flush)
# requests the console, spins 2 ms and times out. The host checks that no hostile
# acquire takes the console from the thread and that the thread loses
# nothing (no nobkl_lost of the thread).
ctl=/sys/kernel/debug/printk_nobkl/console_ctl
[ -w "$ctl" ] || { echo "no $ctl: kernel without CONFIG_PRINTK_NOBKL_DEBUG"; exit 1; }
pin_printer_thread || exit 1
[ -d /sys/kernel/debug/printk_nobkl/fail_stall_fill ] ||
	{ echo "no fail_stall_fill: kernel without it"; exit 1; }
trace_start
nobkl_knob stall_fill_us 5000000
thread_fault fail_stall_fill 1 1 || exit 1
pns_log "fill-unsafe: the thread fills its buffer for 5 s"
fault_fired fail_stall_fill || exit 1
taskset -c 1 sh -c "echo flush > $ctl" || exit 1
sleep "$PNS_DURATION"
pns_log "fill-unsafe: done"
sleep 1
trace_stop
save_dmesg
