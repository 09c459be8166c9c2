# pns-description: the console benchmark's workload (make bench) with the console the kernel has (CONSOLE=nobkl or legacy), traced
# pns-kind: workload
# pns-duration: 180
# pns-baud: 115200
. /workloads/lib/common.sh

bench_console_load
stress_traced_run
bench_console_drain
