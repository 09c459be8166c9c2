# pns-description: raises one WARN through lkdtm; proves splat detection
# pns-kind: selftest
# pns-duration: 5
# pns-expect-splat: warning
echo WARNING > /sys/kernel/debug/provoke-crash/DIRECT
