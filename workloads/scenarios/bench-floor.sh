# pns-description: the console benchmark's workload (make bench) with the records below the console loglevel: printk() without console output, the floor
# pns-kind: workload
# pns-duration: 180
# pns-baud: 115200
. /workloads/lib/common.sh

bench_console_load
loglevel=$(cut -f1 /proc/sys/kernel/printk)
# Records (level 4) and banners stay in the ringbuffer only; printk.txt
# tells the analysis so.
echo 1 > /proc/sys/kernel/printk
cat /proc/sys/kernel/printk > "$PNS_RESULTS/printk.txt"
stress_traced_run
echo "$loglevel" > /proc/sys/kernel/printk
bench_console_drain
