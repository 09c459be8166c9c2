# pns-description: the storm with every context (task, hardirq, softirq, NMI, deferred; emergency and panic sections from task, hardirq, softirq and NMI) under stress-ng load, traced; make soak repeats it for SOAK seconds
# pns-kind: workload
# pns-duration: 120
. /workloads/lib/common.sh

stress_load
echo all > $PS/contexts || exit 1
echo task,hardirq,nmi,softirq > $PS/atomic_from || exit 1
stress_loaded_storm
save_dmesg
