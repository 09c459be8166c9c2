#!/bin/bash
# Install the Debian packages the harness needs, only when one is missing.
# Usage: tools/deps.sh [extra-package ...]
set -euo pipefail

PACKAGES=(
	linux-source-6.1 linux-source-6.12
	build-essential flex bison bc libelf-dev libssl-dev cpio xz-utils kmod
	git perl
	qemu-system-x86 busybox-static trace-cmd stress-ng
	python3 python3-pytest python3-matplotlib python3-ply python3-git
	libtracecmd1 libtraceevent1
	python3-dev libtracecmd-dev libtraceevent-dev libtracefs-dev
)
PACKAGES+=("$@")

missing=()
for p in "${PACKAGES[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
		missing+=("$p")
	fi
done

if [ ${#missing[@]} -eq 0 ]; then
	echo "[deps] all ${#PACKAGES[@]} packages present"
	exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
	echo "[deps] missing packages: ${missing[*]}" >&2
	echo "[deps] run as root, or: sudo apt-get install ${missing[*]}" >&2
	exit 1
fi

log=${PNS_CACHE:-$HOME/.cache/printk-nobkl-stress}/logs/deps.log
mkdir -p "$(dirname "$log")"
start=$(date +%s)
echo "[deps] installing ${missing[*]} (log: $log)"
export DEBIAN_FRONTEND=noninteractive
# A failed update can leave usable lists (apt ignores the index files it
# could not fetch); the install below says whether they are enough.
if ! "$(dirname "$0")/apt-update.sh" >"$log" 2>&1; then
	echo "[deps] warning: apt-get update failed, installing from the lists apt has; see $log" >&2
fi
if ! apt-get install -y --no-install-recommends "${missing[@]}" >>"$log" 2>&1; then
	# Name the packages that really cannot be installed.
	for p in "${missing[@]}"; do
		apt-get install -y --no-install-recommends "$p" >>"$log" 2>&1 ||
			echo "[deps] cannot install package: $p" >&2
	done
	echo "[deps] installation failed; see $log" >&2
	exit 1
fi
echo "[deps] done in $(($(date +%s) - start))s"
