# pns-description: a ringbuffer overrun on purpose: the printer thread held while the producers and a burst store more than the ringbuffer holds, then printed: each record overwritten before it was printed is counted in a dropped notice, checked against the trace
# pns-duration: 2
. /workloads/lib/common.sh

# The printer thread is held (console_ctl thread_hold) while the
# stressor's producers run and 2000 lines of 100 bytes go through
# /dev/kmsg: over 200 KB against the 128 KiB ringbuffer (LOG_BUF_SHIFT
# 17), so records are overwritten before any console saw them, whatever
# the host's scheduling. Then the thread prints what is left, with the
# dropped notices, and a flush at emergency priority (console_ctl flush)
# prints what the thread has not reached yet, so the trace ends with
# every record printed. A flush before the load puts the console's
# position in the trace.
stress_load
echo task,hardirq,nmi > $PS/contexts
echo "$PNS_DURATION" > $PS/duration_s
trace_start
nobkl_ctl thread_hold || exit 1
pns_log "overrun: the printer thread is held"
nobkl_ctl flush || exit 1
echo start > $PS/control
kmsg_burst 2000 "overrun filler xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
while grep -q "state: running" $PS/control; do
	sleep 1
done
nobkl_ctl thread_release || exit 1
sleep 1
nobkl_ctl flush || exit 1
# The printer thread traces its grant to the flush after the flush may
# have traced its handover and returned: the hold returns once the
# thread is back in its wait, every event of its last record traced.
nobkl_ctl thread_hold || exit 1
trace_stop
nobkl_ctl thread_release || exit 1
stress_save
save_dmesg
