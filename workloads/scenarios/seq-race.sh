# pns-description: the 32-bit sequence update race replayed: an old owner's late commit of the record its taker printed again, traced (i386; -EOPNOTSUPP on 64-bit)
# pns-duration: 1
. /workloads/lib/common.sh

ctl=/sys/kernel/debug/printk_nobkl/console_ctl
[ -w "$ctl" ] || { echo "no $ctl: kernel without CONFIG_PRINTK_NOBKL_DEBUG"; exit 1; }

trace_start
# The replay needs the console free (-EBUSY while the printer thread
# prints what came before, however long the host takes to let it).
until_staged 30 EBUSY seq_race write_value "$ctl" seq_race || exit 1
kmsg_burst 10 "seq-race after the replay"
sleep "$PNS_DURATION"
trace_stop
save_dmesg
