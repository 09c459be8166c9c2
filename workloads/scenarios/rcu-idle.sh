# pns-description: printk() where RCU is not watching (as code on the idle path does), also inside an emergency section, under lockdep, traced: no RCU or lockdep report
# pns-duration: 1
. /workloads/lib/common.sh

# console_ctl printk_idle prints a record, and one in an emergency section
# (printed atomically), inside the idle loop's extended quiescent state.
# With the printk events enabled their probes run too, not only lockdep's
# check at each tracepoint. Once with the printer thread held (console_ctl
# thread_hold): the console is free, and the emergency section's flush
# prints both records where RCU is not watching. Once while the thread
# prints a backlog on a slow line: the emergency record then waits for
# the thread's handover or takes the console over, or, when the host
# keeps the thread's vCPU from running past the waiter's spin, leaves the
# record to the thread.
trace_start
nobkl_ctl thread_hold || exit 1
nobkl_ctl printk_idle || exit 1
nobkl_ctl thread_release || exit 1
line_speed 200000 || exit 1
kmsg_burst 20 "rcu-idle backlog"
nobkl_ctl printk_idle || exit 1
line_speed instant
sleep "$PNS_DURATION"
trace_stop
save_dmesg
