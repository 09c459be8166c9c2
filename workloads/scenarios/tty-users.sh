# pns-description: other users of the console's port: user space writes lines to /dev/ttyS0 and stty cycles its baud rate (115200, 9600) while the printer thread prints the stressor's records at an emulated 115200 baud, traced
# pns-kind: workload
# pns-duration: 6
# pns-cmdline: pns.tty_users=115200,9600
. /workloads/lib/common.sh

# /init runs the port's other users (workloads/lib/tty-users.sh: a line
# every 20 ms, a baud change every 200 ms) for the whole scenario. The
# stressor's load is the console benchmark's without its emergency
# sections and with 64-byte payloads: task, hardirq and NMI records on 4
# CPUs, about 60 a second of about 140 bytes, over two thirds of what the
# line prints at 86.8 us a byte, all printed by the printer thread, which
# is busy most of the time the tty is used.
# (Emergency output, printed atomically, does not serialize with the
# tty: docs/port.md, D4.)
cat /proc/consoles > "$PNS_RESULTS/consoles.txt"
bench_console_load
echo task,hardirq,nmi > $PS/contexts
echo 64 > $PS/payload_len
stress_traced_run
bench_console_drain
save_dmesg
