# pns-description: the nobkl console unregistered and registered again without CON_PRINTBUFFER: it starts with the next record
# pns-duration: 1
. /workloads/lib/common.sh

ctl=/sys/kernel/debug/printk_nobkl/console_ctl
[ -w "$ctl" ] || { echo "no $ctl: kernel without CONFIG_PRINTK_NOBKL_DEBUG"; exit 1; }

# The console has printed everything up to here when it is unregistered.
pns_log "reregister: unregistering the console"
sleep 1
echo unregister > "$ctl" || exit 1
pns_log "reregister: stored while unregistered"
# A late console without CON_PRINTBUFFER begins with the next record.
echo register > "$ctl" || exit 1
pns_log "reregister: registered again"
sleep "$PNS_DURATION"
