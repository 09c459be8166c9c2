# pns-description: printk_stress fuzz: random and malformed writes at every debugfs file and module parameter, idle and while running
# pns-kind: selftest
# pns-duration: 180
# The test prints PASS/FAIL lines and "N passed, N failed"; the host reads them from guest.log.
echo "== stressor-fuzz"
PS_INSMOD_ARGS=level=7 sh /workloads/tests/stressor-fuzz.sh 120
