# pns-description: the NOBKL earlycon on the second UART (0x2f8) and console=ttyS0 on the first (0x3f8): the 8250 driver's ttyS0 console is not shadowed, each UART shows every record once
# pns-kind: workload
# pns-duration: 1
# pns-console-cmdline: printk_nobkl.show_ctx=1 earlycon=uart8250,io,0x2f8,115200 console=ttyS0,115200
# pns-serial-logs: console-ttyS0.log console.log
. /workloads/lib/common.sh

# R6 (docs/port.md). console.log is the second UART, where the NOBKL
# console prints from the first record on; console-ttyS0.log the first,
# where the 8250 driver's ttyS0 console prints from its registration on
# (it registers after the boot console, so without CON_PRINTBUFFER). The
# NOBKL console is named ttyS0 as well: its earlycon knows no line, so
# the name says nothing about its UART. /dev/console is ttyS0.
cat /proc/consoles > "$PNS_RESULTS/consoles.txt"
kmsg_burst 20 "shadow-other-uart"
sleep "$PNS_DURATION"
save_dmesg
