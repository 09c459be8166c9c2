# pns-description: the first open of ttyS0 (stty, nobody holds the port) held with the divisor latch open while the printer thread, on another CPU, has a record to print (R5): the thread waits at its device lock, the divisor stays intact, every record reaches the console whole
# pns-kind: workload
# pns-duration: 1
# pns-cpus: 2
# pns-needs: CONFIG_PRINTK_NOBKL_DEBUG
# pns-cmdline: pns.tty_users=off
. /workloads/lib/common.sh

# The NOBKL earlycon without console=ttyS0 (tools/cmdline/nobkl.txt):
# /dev/console is not ttyS0 and nobody holds the port, so stty's open is
# a first open, which programs the divisor before the serial core marks
# the tty port initialized. console_ctl divisor_hold (interfaces.md
# section 4) holds that open in set_termios() right after the divisor
# was programmed, with the latch open, the port lock held and interrupts
# off: it stores a record, wakes the printer thread and waits until the
# thread is at its device lock (or printed), then 100 ms more, and
# prints what it saw and whether the divisor is intact. The shell, and
# so stty, runs on CPU 0 and the thread on CPU 1, so that the thread
# runs during the hold. A thread which waits for the 8250 driver prints
# nothing in the window; one which does not writes the record into the
# divisor latch, where it never reaches the line.
#
# The hold waits two seconds for the thread. A thread that did not come
# (its report says so: a vCPU the host did not run) met no open latch,
# so the port is opened again, each time a first open (stty closed it),
# for at most 30 s. The test judges the last open.
thread=$(pidof pr/ttyS0)
[ -n "$thread" ] || { echo "no printer thread pr/ttyS0"; exit 1; }
taskset -p 1 $$ > /dev/null || exit 1
taskset -p 2 "$thread" > /dev/null || exit 1
cat /proc/consoles > "$PNS_RESULTS/consoles.txt"

# held_open: one first open of ttyS0 with the hold armed; false when
# the printer thread did not come to the hold
held_open() {
	pns_log "divisor-hold: opening ttyS0"
	nobkl_ctl divisor_hold || exit 1
	stty -F /dev/ttyS0 115200 || exit 1
	pns_log "divisor-hold: ttyS0 closed"
	! dmesg | grep "divisor_hold: closing the divisor latch of ttyS0" | tail -n 1 |
		grep -q "did not come"
}

wait_until 30 "divisor-hold: the printer thread at the held latch" held_open || exit 1
kmsg_burst 10 "divisor-hold after the open"
sleep "$PNS_DURATION"
save_dmesg
