# pns-description: console_stop() while the nobkl console prints (as a UART suspend does), console_start(): what is printed after the start reaches the console
# pns-duration: 3
. /workloads/lib/common.sh

ctl=/sys/kernel/debug/printk_nobkl/console_ctl
[ -w "$ctl" ] || { echo "no $ctl: kernel without CONFIG_PRINTK_NOBKL_DEBUG"; exit 1; }

# A slow line and a producer faster than it, still storing when
# console_stop() has waited for the records stored before it (pr_flush()),
# so the printer thread owns the console when console_stop() disables it.
# With 40 records the producer was done by then and the stop found the
# console idle: the scenario passed with the fix of that defect reverted.
line_speed 200000 || exit 1
kmsg_burst 300 "console-stop load" &
load=$!
sleep 0.2
echo stop > "$ctl" || exit 1
sleep 0.2
echo start > "$ctl" || exit 1
wait "$load"
kmsg_burst 20 "console-stop after the start"
sleep "$PNS_DURATION"
line_speed instant
save_dmesg
