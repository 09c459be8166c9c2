# pns-description: the NOBKL earlycon on the second UART (0x2f8) and console=ttyS1, the same UART under another name: the ttyS1 console is registered shadowed, the UART shows every record once
# pns-kind: workload
# pns-duration: 1
# pns-console-cmdline: printk_nobkl.show_ctx=1 earlycon=uart8250,io,0x2f8,115200 console=ttyS1,115200
# pns-serial-logs: console-ttyS0.log console.log
. /workloads/lib/common.sh

# R6 (docs/port.md). console.log is the second UART, where the NOBKL
# console (named ttyS0: its earlycon knows no line) prints and where the
# 8250 driver's ttyS1 console would print each record a second time
# unless it is shadowed; ttyS1 provides /dev/console either way. No
# console drives the first UART (console-ttyS0.log).
cat /proc/consoles > "$PNS_RESULTS/consoles.txt"
kmsg_burst 20 "shadow-same-uart"
sleep "$PNS_DURATION"
save_dmesg
