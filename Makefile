# printk-nobkl-stress: build the patched 6.1 kernel, boot it in QEMU, stress
# printk, analyse the trace. `make help` lists the targets.
#
# Settings: pass them on the command line, e.g. `make run SCENARIO=warn
# CPUS=2`; `make help` lists them (their one table is SETTINGS in
# tools/pns/common.py).

PYTHON := /usr/bin/python3
PNS := $(PYTHON) -m tools.pns

export SCENARIO DURATION VARIANT KERNEL ARCH CONSOLE CPUS MEM TTY_USERS BAUD \
	EXTRA_FRAGMENTS EXTRA_CMDLINE PNS_CACHE RESULTS JOBS ACCEL QEMU_CPU \
	BOOT_TIMEOUT GRACE BENCH ROUNDS BOOT_RETRIES N CHECKERS SOAK COMPARE \
	LINK FORCE

.PHONY: help deps tree patches kernel module initramfs run shell test \
	test-unit test-repeat check-series bench batch recheck verdict-soak checkers soak \
	compare scenarios variants clean

help:
	@sed -n 's/^## //p' $(MAKEFILE_LIST)
	@echo
	@echo "settings (make run SCENARIO=warn CPUS=2 ...):"
	@$(PNS) settings

## make run        build what is missing, run SCENARIO in QEMU, print the verdict
run: deps
	$(PNS) run

## make batch      the default batch of scenarios (workloads/scenarios/CFLIST),
##                 each in its own guest, and a summary table
batch: deps
	$(PNS) run --scenario CFLIST

## make test       every test: host unit tests, then boot-to-verdict scenarios
##                 (the initramfs for ARCH and i386 first; the slowest tests last)
test: deps
	$(PNS) test

## make test-unit  host-side tests only (no kernel build, no QEMU)
test-unit: deps
	$(PNS) test --unit

## make test-repeat  make test's tests N times (default 3) with the host idle,
##                 then N times under stress-ng --cpu 2; a table of the rounds
##                 (RESULTS/test-repeat-TIME/test-repeat-summary.json; long: hours)
test-repeat: deps
	$(PNS) test-repeat

## make bench      the console benchmark (NOBKL, legacy, no console at 115200
##                 baud; ROUNDS rounds, about 40 minutes), then the analysis
##                 speed against trace-cmd report
##                 on a real trace of over a million events (BENCH=console|analysis)
bench: deps
	$(PNS) bench

## make verdict-soak  N=50 stress runs in a row on x86_64 and i386 while
##                 stress-ng loads the host; how many passed (long: hours)
verdict-soak: deps
	$(PNS) verdict-soak

## make checkers  SCENARIO (default storm) on each checker kernel (CHECKERS:
##                 debug + KASAN + kmemleak, debug + KCSAN; x86_64); a table of
##                 verdicts, splats, records, takeovers, handovers (long: builds)
checkers: deps
	$(PNS) checkers

## make soak       the soak scenario (every context, hostile takeovers, stuck
##                 owners, guest load) in fresh guests for SOAK seconds (default
##                 an hour), and the totals (RESULTS/soak-summary-TIME.json)
soak: deps
	$(PNS) soak

## make compare    COMPARE's scenarios once on each kernel target (6.1, 6.12),
##                 one guest at a time; one table of what each run's analysis
##                 counted (RESULTS/compare-TIME/compare.md; long: builds)
compare: deps
	$(PNS) compare

## make recheck    judge old results again with today's analysis
##                 (RESULTS="dir ...", default results/latest)
recheck: deps
	$(PNS) recheck $(or $(RESULTS),results/latest)

## make shell      the same guest with an interactive shell (host dir at /host)
shell: deps
	$(PNS) shell

## make deps       install the Debian packages the harness needs (apt-get)
deps:
	@tools/deps.sh

## make tree       the KERNEL target's git tree in PNS_CACHE, patches/KERNEL/ applied
tree: deps
	$(PNS) tree

## make patches    regenerate patches/KERNEL/ from the kernel tree's commits
patches: deps
	$(PNS) patches

## make check-series  checkpatch --strict every patch, build after each (bisectable);
##                 and vmlinux; LINK=0 builds only the touched directories
check-series: deps
	$(PNS) check-series

## make kernel     configure and build the kernel (VARIANT, ARCH)
kernel: deps
	$(PNS) kernel

## make module     build lib-printk-stress against the kernel
module: deps
	$(PNS) module

## make initramfs  kernel, module and the guest initramfs
initramfs: deps
	$(PNS) initramfs

## make scenarios  list the scenarios; make variants: the config variants
scenarios:
	@$(PNS) scenarios
variants:
	@$(PNS) variants

## make clean      remove results/ (the cache in PNS_CACHE stays)
clean:
	rm -rf results
