# pns-description: the storm under stress-ng CPU, scheduler and memory load in the guest (x86_64; the i386 guest has no stress-ng and runs the storm alone)
# pns-kind: workload
# pns-duration: 10
. /workloads/lib/common.sh

stress_load
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
