# pns-description: the storm under stress-ng CPU, scheduler and memory load in the guest (x86_64; the i386 guest has no stress-ng and runs the storm alone)
# pns-kind: workload
# pns-duration: 10
. /workloads/lib/common.sh

stress_load
stress_loaded_storm
save_dmesg
