# pns-description: emergency flushes on two CPUs at once on a console whose per CPU allocation failed (R9): the console is free afterwards and prints on, traced
# pns-duration: 1
. /workloads/lib/common.sh

ctl=/sys/kernel/debug/printk_nobkl/console_ctl
[ -w "$ctl" ] || { echo "no $ctl: kernel without CONFIG_PRINTK_NOBKL_DEBUG"; exit 1; }

# The console registered again with its per CPU allocation failing
# (fail_percpu_alloc, once): it prints from the fallback write contexts.
# With the printer thread held, console_ctl wctxt_race (interfaces.md
# section 4) has this CPU's emergency flush own the console and, inside
# its first byte, another CPU's emergency flush try it in an IPI: the
# second finds the console owned at its own priority and gives up. It
# must not touch the owner's write context, else the owner backs out
# without releasing the console and nothing prints again. The command
# fails with EBUSY when the console is left locked.
pns_log "wctxt-race: registering the console without per CPU data"
sleep 1
nobkl_fault fail_percpu_alloc 1 1 || { echo "no fail_percpu_alloc in this kernel"; exit 1; }
echo unregister > "$ctl" || exit 1
echo register > "$ctl" || exit 1
pns_log "wctxt-race: registered again"
sleep 1
trace_start
nobkl_ctl thread_hold || exit 1
rc=0
echo wctxt_race > "$ctl" || rc=1
echo thread_release > "$ctl" || exit 1
kmsg_burst 10 "wctxt-race after the replay"
sleep "$PNS_DURATION"
trace_stop
save_dmesg
exit "$rc"
