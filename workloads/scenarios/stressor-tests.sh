# pns-description: printk_stress interface tests: bad input refused, load/start/unload/reload, the end-of-run checks, all contexts on every CPU
# pns-kind: selftest
# pns-duration: 300
# Each test prints PASS/FAIL lines and "N passed, N failed"; the host reads them from guest.log.
#
# The tests have no run time of their own (about 110 s on an idle host):
# pns-duration sets only the host's hang detector, which counts a guest
# still running BOOT_TIMEOUT + pns-duration + GRACE seconds after its
# start as hung. It is generous, so that a loaded host's slower guest is
# only slower; how long the tests took is printed as a figure.
t0=$(cut -d. -f1 /proc/uptime)
failed=0
for t in badinput lifecycle checks; do
	echo "== stressor-$t"
	PS_INSMOD_ARGS=level=7 sh /workloads/tests/stressor-$t.sh || failed=$((failed + 1))
done
echo "== stressor-smoke"
sh /workloads/tests/stressor-smoke.sh 10 || failed=$((failed + 1))
echo "figure stressor_tests_s $(($(cut -d. -f1 /proc/uptime) - t0))"
exit $failed
