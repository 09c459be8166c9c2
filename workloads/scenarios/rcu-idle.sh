# pns-description: printk() where RCU is not watching (as code on the idle path does), also inside an emergency section, under lockdep, traced: no RCU or lockdep report
# pns-duration: 1
. /workloads/lib/common.sh

ctl=/sys/kernel/debug/printk_nobkl/console_ctl
[ -w "$ctl" ] || { echo "no $ctl: kernel without CONFIG_PRINTK_NOBKL_DEBUG"; exit 1; }

# console_ctl printk_idle prints a record, and one in an emergency section
# (printed atomically), inside the idle loop's extended quiescent state.
# With the printk events enabled their probes run too, not only lockdep's
# check at each tracepoint. Once on an idle line, once while the printer
# thread prints a backlog on a slow one (the emergency record then
# waits for the thread's handover or takes the console over).
trace_start
echo printk_idle > "$ctl" || exit 1
nobkl_knob byte_delay_ns 50000
kmsg_burst 20 "rcu-idle backlog"
echo printk_idle > "$ctl" || exit 1
nobkl_knob byte_delay_ns 0
sleep "$PNS_DURATION"
trace_stop
save_dmesg
