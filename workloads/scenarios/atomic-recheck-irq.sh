# pns-description: no printer thread (printk_nobkl.force_atomic): records which interrupts store on the owner's CPU while it is inside an unsafe section are printed by that owner after its release, not left for the next printk (R3's interrupt case); traced
# pns-duration: 1
# pns-cmdline: printk_nobkl.force_atomic
# pns-needs: CONFIG_PRINTK_NOBKL_DEBUG
. /workloads/lib/common.sh

# Without a printer thread every printk() prints in its own context, up
# to the records that were stored when it started. An interrupt on the
# owner's CPU cannot wait for the owner it interrupted, and while the
# owner is inside an unsafe section not even an emergency section may
# take the console over: it leaves its records to the owner. Forced: the
# owner, a shell on CPU 1, is held for 10 s inside the first byte it
# writes (fail_stall_unsafe for its task only, once); once it is held,
# the stressor's hrtimer on CPU 1 stores a record in an emergency
# section at each expiry for 2 s, and stops. Only emergency records: a
# record the interrupt printed at the owner's own priority would nest
# into the owner's flush, which then flushes once more on its own (the
# nesting rounds), so the owner's release would not need to look again.
# The owner must print them all before its printk() returns: the host
# checks that their emissions are the owner's (CPU 1, task context) and
# that nothing took the console in hardirq context. This shell stays off
# CPU 1, and what it prints after the owner returned comes from CPU 3.
insmod /lib/modules/printk_stress.ko || exit 1
echo emerg > $PS/contexts
echo hardirq > $PS/atomic_from
echo 1 > $PS/cpus
echo 100000 > $PS/irq_period_us
echo 1 > $PS/emerg_every
echo 1 > $PS/atomic_burst
echo 2 > $PS/duration_s
trace_start
atomic_owner_hold "atomic-recheck-irq: the owner, held inside this record" || exit 1
stress_start
stress_wait
wait "$owner"
pns_log "atomic-recheck-irq: the owner returned"
sleep "$PNS_DURATION"
trace_stop
stress_save
save_dmesg
