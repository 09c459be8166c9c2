# pns-description: a burst of records right before poweroff: every record stored before it must be on the serial console
# pns-duration: 1
# pns-baud: 38400
. /workloads/lib/common.sh

# A slow line leaves a backlog when the guest powers off right away.
kmsg_burst 100 "poweroff-burst"
# No pause: the records dmesg shows here must reach the console through
# the shutdown that follows (the boot-log check of the verdict).
cat /proc/sys/kernel/printk > "$PNS_RESULTS/printk.txt"
dmesg -r > "$PNS_RESULTS/dmesg.txt"
