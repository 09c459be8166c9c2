# pns-description: the console at an emulated 115200 baud while producers flood it (records dropped on purpose), emergency bursts arriving during the backlog, traced
# pns-kind: workload
# pns-duration: 8
# pns-baud: 115200
. /workloads/lib/common.sh

stress_load
echo 20 > $PS/emerg_every
echo 8 > $PS/atomic_burst
echo 0 > $PS/task_rate
# Every record is two events (console, store), and most are dropped by
# the console, not by the trace: 6.12 stored 255,000 records in 8 s,
# which overflowed 8 MiB per CPU (a trace that lost events is incomplete).
stress_traced_run -b 32768
# The backlog drains at full speed before save_dmesg and poweroff.
line_speed instant
sleep 2
save_dmesg
