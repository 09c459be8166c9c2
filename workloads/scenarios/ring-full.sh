# pns-description: a writer held with its record reserved while another CPU stores records at the line limit: the ringbuffer fills up to the held record, printk() refuses the rest and leaves data-less records, the stressor counts them as refused; traced
# pns-duration: 1
# pns-needs: CONFIG_PRINTK_NOBKL_DEBUG
. /workloads/lib/common.sh
. /workloads/tests/stressor-lib.sh

# The data ring cannot free the space of a record that is reserved and
# not yet committed. Forced: a shell on CPU 1 is held for 6 s between
# the reservation of its record and the commit (fail_stall_store for its
# task only, once), as a writer delayed there by an NMI or by its
# hypervisor, while the stressor's task on CPU 2 stores records at the
# line limit (truncate), far more than the 128 KiB ring holds. The
# stressor starts first: starting it waits for every CPU, the held one
# too. Its records fill the ring up to the held one; from then on
# printk() refuses them, and each failed reservation that got a
# descriptor leaves a data-less record. The stressor counts the
# refusals; once it has counted some, the run is stopped, while the
# writer is still held (at most 5 s after the hold began). The
# printer thread and this shell stay off CPU 1: the held writer spins
# there with interrupts disabled.
f=/sys/kernel/debug/printk_nobkl/fail_stall_store
[ -d "$f" ] || { echo "no $f: kernel without CONFIG_PRINTK_NOBKL_DEBUG"; exit 1; }
taskset -p 8 $$ > /dev/null || exit 1
taskset -p 8 "$(pidof pr/ttyS0)" > /dev/null || exit 1
insmod /lib/modules/printk_stress.ko || exit 1
echo task > $PS/contexts
echo none > $PS/atomic_from
echo 2 > $PS/cpus
echo 0 > $PS/task_rate
echo 1 > $PS/burst
echo 800 > $PS/payload_len
echo truncate > $PS/shapes
echo 60 > $PS/duration_s
trace_start
nobkl_knob stall_store_us 6000000
echo Y > "$f/task-filter"
nobkl_fault fail_stall_store 1 1 || exit 1
stress_start
taskset -c 1 sh -c 'echo 1 > /proc/self/make-it-fail
	echo "ring-full: the record held reserved" > /dev/kmsg' &
writer=$!
fault_fired fail_stall_store || exit 1
n=0
until [ "$(ps_stat 'producer cpu=2 ctx=task' refused)" -ge 20 ]; do
	n=$((n + 1))
	[ "$n" -le 50 ] || { echo "ring-full: printk() refused no record while the writer was held"; exit 1; }
	sleep 0.1
done
echo stop > $PS/control
wait "$writer"
pns_log "ring-full: the held writer returned"
sleep "$PNS_DURATION"
trace_stop
stress_save
save_dmesg
