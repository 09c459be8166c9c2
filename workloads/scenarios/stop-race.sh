# pns-description: console_stop() while the printer thread is in the middle of a record (R7): nothing writes to the console after console_stop() returned, with and without the console's device lock
# pns-duration: 1
. /workloads/lib/common.sh

ctl=/sys/kernel/debug/printk_nobkl/console_ctl
[ -w "$ctl" ] || { echo "no $ctl: kernel without CONFIG_PRINTK_NOBKL_DEBUG"; exit 1; }

# console_ctl stop_race (interfaces.md section 4) holds the printer
# thread at the first byte of a record until console_stop() has
# returned, then lets it go on: a console_stop() which does not wait for
# the record returns with the console owned and the thread writes the
# rest of its record afterwards. The command prints what it saw and fails
# with EBUSY then. The thread is kept on CPU 1 and the command runs on
# CPU 0, so that the thread's wakeup of the command (from inside the
# record, interrupts off with the device lock) never waits for the
# thread's own CPU. The command waits five seconds for the thread to
# start the record it stores and answers ETIMEDOUT when it did not (a
# vCPU the host did not run): it is asked again then, for at most 30 s.
pr=$(pidof pr/ttyS0)
[ -n "$pr" ] || { echo "no printer thread pr/ttyS0"; exit 1; }
taskset -p 2 "$pr" || exit 1
rc=0
for lock in with without; do
	if [ "$lock" = with ]; then
		nobkl_knob thread_no_device_lock 0
	else
		nobkl_knob thread_no_device_lock 1
	fi
	pns_log "stop-race: $lock the device lock"
	if until_staged 30 ETIMEDOUT "stop_race $lock the device lock" \
		taskset 1 sh -c "echo stop_race > $ctl"; then
		pns_log "stop-race: $lock the device lock: rc=0"
	else
		pns_log "stop-race: $lock the device lock: rc=1"
		rc=1
	fi
done
nobkl_knob thread_no_device_lock 0
kmsg_burst 10 "stop-race after the replays"
sleep "$PNS_DURATION"
save_dmesg
exit "$rc"
