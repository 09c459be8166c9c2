# Other users of the console's port (the TTY_USERS setting, kernel
# argument pns.tty_users=RATES): while the scenario runs, user space
# keeps /dev/ttyS0 open, writes a line to it every 20 ms and changes its
# baud rate with stty every 200 ms, cycling through RATES (115200,9600).
# It goes on until it is stopped and has written at least TTY_USERS_LINES
# lines (and so made a tenth as many baud changes), however slowly the
# host runs the guest; "complete 1" in the counts says it got there,
# "complete 0" that it gave up TTY_USERS_WAIT seconds after the stop.
# The lines start with "tty-user", which the serial checker counts as
# foreign lines; a kernel record they cut or a byte the port's settings
# swallowed is still a violation. /init starts it before the scenario
# and stops it after; the counts go to $PNS_RESULTS/tty-users.txt.
#
#   tty_users_start RATES    tty_users_stop

TTY_USERS_LINES=40
TTY_USERS_WAIT=30

tty_users_start() {
	rates=$(echo "$1" | tr , ' ')
	(
		exec 3> /dev/ttyS0
		lines=0 changes=0 stop= complete=1
		trap 'stop=$(date +%s)' TERM
		going() {
			[ -z "$stop" ] && return 0
			[ "$lines" -ge "$TTY_USERS_LINES" ] && return 1
			[ $(($(date +%s) - stop)) -lt "$TTY_USERS_WAIT" ] && return 0
			complete=0
			return 1
		}
		while going; do
			for rate in $rates; do
				going || break
				stty -F /dev/ttyS0 "$rate" && changes=$((changes + 1))
				i=0
				while [ "$i" -lt 10 ] && going; do
					echo "tty-user n=$lines baud=$rate" >&3 &&
						lines=$((lines + 1))
					i=$((i + 1))
					sleep 0.02
				done
			done
		done
		set -- $rates
		stty -F /dev/ttyS0 "$1"
		echo "rates $rates" > "$PNS_RESULTS/tty-users.txt"
		echo "lines $lines" >> "$PNS_RESULTS/tty-users.txt"
		echo "stty $changes" >> "$PNS_RESULTS/tty-users.txt"
		echo "complete $complete" >> "$PNS_RESULTS/tty-users.txt"
	) &
	PNS_TTY_USERS_PID=$!
}

tty_users_stop() {
	[ -n "$PNS_TTY_USERS_PID" ] || return 0
	kill -TERM "$PNS_TTY_USERS_PID"
	wait "$PNS_TTY_USERS_PID"
	PNS_TTY_USERS_PID=
}
