# pns-description: printk_stress interface tests: bad input refused, load/start/unload/reload, the end-of-run checks, all contexts on every CPU
# pns-kind: selftest
# pns-duration: 90
# Each test prints PASS/FAIL lines and "N passed, N failed"; the host reads them from guest.log.
failed=0
for t in badinput lifecycle checks; do
	echo "== stressor-$t"
	PS_INSMOD_ARGS=level=7 sh /workloads/tests/stressor-$t.sh || failed=$((failed + 1))
done
echo "== stressor-smoke"
sh /workloads/tests/stressor-smoke.sh 10 || failed=$((failed + 1))
exit $failed
