# pns-description: the storm with every context (task, hardirq, softirq, NMI, deferred; emergency and panic sections from task, hardirq, softirq and NMI) under stress-ng load, traced; make soak repeats it for SOAK seconds
# pns-kind: workload
# pns-duration: 120
. /workloads/lib/common.sh

stress_load
echo all > $PS/contexts || exit 1
echo task,hardirq,nmi,softirq > $PS/atomic_from || exit 1
stress_takeovers
stress_stuck_owners
# The load starts once trace-cmd's recorders run.
trace_start
guest_load
stress_run
guest_load_stop
trace_stop
stress_save
save_dmesg
