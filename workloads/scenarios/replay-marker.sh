# pns-description: two records of the printer thread printed again by a new owner (a handover inside the record, a nested emergency takeover on the thread's CPU): each reprint has the replay marker line in front of it, traced
# pns-duration: 2
# pns-needs: CONFIG_PRINTK_NOBKL_DEBUG
# pns-expect-handoff: handover emergency<-thread other-cpu reprinted; hostile emergency<-thread same-cpu reprinted
# pns-baud: 500000
. /workloads/lib/common.sh

# A record which its owner did not finish is printed again from its
# start by the next owner, with `** replaying previous printk message **`
# in front of it (docs/interfaces.md section 2). Both ways a record is
# left unfinished are forced, for the printer thread only (task filter),
# pinned to CPU 0, on a slow line (20 us a byte) so that its records are
# long enough to be met inside:
#  1. a handover inside the record: the thread holds the unsafe bit of a
#     byte until a waiter requests the console (fail_stall_unsafe with
#     stall_until_request, at most 20 s), and once it is held there an
#     emergency section from CPU 1 (console_ctl flush) requests it; the thread grants it at its
#     next safe point and the section prints the record again;
#  2. a takeover on the thread's CPU: a context nested on it takes the
#     console over at emergency priority at a safe point in the record
#     and prints it again (fail_nested_takeover, the cover letter's WARN).
# The host checks that each reprint's line has the marker line in front
# of it and that no other line has one.
ctl=/sys/kernel/debug/printk_nobkl/console_ctl
[ -w "$ctl" ] || { echo "no $ctl: kernel without CONFIG_PRINTK_NOBKL_DEBUG"; exit 1; }
pin_printer_thread || exit 1
# The waiter spins until the held thread sees its request (10 s at most):
# a host that does not run the thread's vCPU for a while must not let the
# request time out unseen, or the thread stays held for all of its 20 s.
nobkl_knob spinwait_max_us 10000000
trace_start

nobkl_knob stall_unsafe_us 20000000
nobkl_knob stall_until_request 1
thread_fault fail_stall_unsafe 40 1 || exit 1
kmsg_burst 4 "replay-marker handover: a record long enough for the thread to be met inside it"
fault_fired fail_stall_unsafe || exit 1
taskset -c 1 sh -c "echo flush > $ctl" || exit 1
sleep 1
pns_log "replay-marker: handover done"

thread_nested_takeover 40 1 || exit 1
kmsg_burst 4 "replay-marker nested: a record long enough for the thread to be met inside it"
fault_fired fail_nested_takeover || exit 1
sleep "$PNS_DURATION"
pns_log "replay-marker: nested takeover done"
sleep 1
trace_stop
save_dmesg
