# Other users of the console's port (the TTY_USERS setting, kernel
# argument pns.tty_users=RATES): while the scenario runs, user space
# keeps /dev/ttyS0 open, writes a line to it every 20 ms and changes its
# baud rate with stty every 200 ms, cycling through RATES (115200,9600).
# The lines start with "tty-user", which the serial checker counts as
# foreign lines; a kernel record they cut or a byte the port's settings
# swallowed is still a violation. /init starts it before the scenario
# and stops it after; the counts go to $PNS_RESULTS/tty-users.txt.
#
#   tty_users_start RATES    tty_users_stop

tty_users_start() {
	rates=$(echo "$1" | tr , ' ')
	(
		exec 3> /dev/ttyS0
		lines=0 changes=0 stop=
		trap 'stop=1' TERM
		while [ -z "$stop" ]; do
			for rate in $rates; do
				[ -n "$stop" ] && break
				stty -F /dev/ttyS0 "$rate" && changes=$((changes + 1))
				i=0
				while [ "$i" -lt 10 ] && [ -z "$stop" ]; do
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
	) &
	PNS_TTY_USERS_PID=$!
}

tty_users_stop() {
	[ -n "$PNS_TTY_USERS_PID" ] || return 0
	kill -TERM "$PNS_TTY_USERS_PID"
	wait "$PNS_TTY_USERS_PID"
	PNS_TTY_USERS_PID=
}
