# pns-description: panics through lkdtm; proves panic detection and that the final messages reach the console
# pns-kind: workload
# pns-duration: 5
# pns-expect-splat: panic
# pns-expect-end: panic
echo PANIC > /sys/kernel/debug/provoke-crash/DIRECT
