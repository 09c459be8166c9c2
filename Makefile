# printk-nobkl-stress: build the patched 6.1 kernel, boot it in QEMU, stress
# printk, analyse the trace. `make help` lists the targets.
#
# Settings (pass on the command line, e.g. `make run SCENARIO=warn CPUS=2`):
#   VARIANT=debug        kernel config variant (tools/configs/<variant>.config)
#   ARCH=x86_64          x86_64 or i386
#   SCENARIO=default     workloads/scenarios/<scenario>.sh
#   DURATION=            scenario run time in seconds (default: the scenario's)
#   CPUS=4 MEM=1024      guest CPUs and memory (MiB)
#   EXTRA_FRAGMENTS=     more Kconfig fragments to merge (paths)
#   EXTRA_CMDLINE=       more kernel command-line arguments
#   PNS_CACHE=~/.cache/printk-nobkl-stress   kernel tree, builds, logs
#   RESULTS=results      where run directories go
#   JOBS=<nproc>         parallel kernel build jobs
#   ACCEL=auto           auto (TCG unless KVM works), tcg, kvm
#   BOOT_TIMEOUT=90 GRACE=60   seconds allowed for boot, and after the scenario
#   BOOT_RETRIES=1             boots again after a boot that never reached /init

PYTHON := /usr/bin/python3
PNS := $(PYTHON) -m tools.pns

export VARIANT ARCH SCENARIO DURATION CPUS MEM EXTRA_FRAGMENTS EXTRA_CMDLINE \
	PNS_CACHE RESULTS JOBS ACCEL GRACE BOOT_TIMEOUT BOOT_RETRIES

.PHONY: help deps tree patches kernel module initramfs run shell test \
	test-unit check-series bench recheck scenarios variants clean

help:
	@sed -n 's/^## //p' $(MAKEFILE_LIST)

## make run        build what is missing, run SCENARIO in QEMU, print the verdict
run: deps
	$(PNS) run $(if $(SCENARIO),--scenario $(SCENARIO))

## make test       every test: host unit tests, then boot-to-verdict scenarios
test: deps
	$(PNS) initramfs
	ARCH=i386 $(PNS) initramfs
	$(PYTHON) -m pytest -q -p no:cacheprovider tools/tests $(wildcard analysis/tests)

## make test-unit  host-side tests only (no kernel build, no QEMU)
test-unit: deps
	PNS_SKIP_BOOT=1 $(PYTHON) -m pytest -q -p no:cacheprovider tools/tests $(wildcard analysis/tests)

## make bench      analysis speed on a real trace of over a million events,
##                 as a ratio to trace-cmd report on the same trace
bench: deps
	$(PNS) bench

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

## make tree       the kernel git tree in PNS_CACHE with patches/ applied
tree: deps
	$(PNS) tree $(if $(FORCE),--force)

## make patches    regenerate patches/ from the kernel tree's commits
patches: deps
	$(PNS) patches

## make check-series  checkpatch --strict every patch, build after each (bisectable)
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
