# pns-description: printk_stress records in fragments (the cont shape): every other record of each producer printed as printk() and KERN_CONT fragments, as pr_cont() does, from every context (two task kthreads a CPU, hardirq, softirq, deferred, NMI; emergency and panic sections from task, hardirq and NMI) on every CPU, so continuation lines interleave and other records split them; hostile takeovers, traced
# pns-kind: workload
# pns-duration: 10
. /workloads/lib/common.sh

stress_load
echo all > $PS/contexts || exit 1
# two task kthreads a CPU, at half the rate each: tasks of one CPU meet
# each other's records between two fragments, at the task load of stress
echo 2 > $PS/threads_per_cpu || exit 1
echo 50 > $PS/task_rate || exit 1
echo cont > $PS/shapes || exit 1
stress_takeovers
# the run traces about 10 MB a CPU: a buffer that holds it all
stress_traced_run -b 32768
save_dmesg
