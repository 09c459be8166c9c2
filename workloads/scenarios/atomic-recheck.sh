# pns-description: no printer thread (printk_nobkl.force_atomic): a record stored while another context owns the console at the same priority is printed by that owner after its release, not left for the next printk (R3); traced
# pns-duration: 1
# pns-cmdline: printk_nobkl.force_atomic
# pns-needs: CONFIG_PRINTK_NOBKL_DEBUG
. /workloads/lib/common.sh

# Without a printer thread every printk() prints in its own context, up
# to the records that were stored when it started. A context which finds
# the console owned at its own priority leaves its record to the owner.
# Forced: the owner, a shell on CPU 1, is held for 10 s inside the first
# byte it writes (fail_stall_unsafe for its task only, once); once it is
# held, a shell on CPU 2 stores a record, finds the console owned at its
# priority and returns. The owner must print that record too before it
# returns: the host checks that the record's emission is on CPU 1 and
# that nothing is emitted on CPU 2. This shell stays off CPU 1, and what
# it prints after the owner returned comes from CPU 3.
trace_start
atomic_owner_hold "atomic-recheck: the owner, held inside this record" || exit 1
taskset -c 2 sh -c 'echo "atomic-recheck: stored while the owner holds the console" > /dev/kmsg'
wait "$owner"
pns_log "atomic-recheck: the owner returned"
sleep "$PNS_DURATION"
trace_stop
save_dmesg
