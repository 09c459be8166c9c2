#!/bin/bash
# apt-get update that survives a Debian mirror in the middle of a sync.
#
# A mirror being synced serves index files whose size or hash does not
# match its Release file ("Mirror sync in progress?"); apt-get update then
# fails although a minute later it would not. Try a few times, with a
# pause, before giving up.
# Usage: tools/apt-update.sh  (output on stdout/stderr; exit 0 or apt's code)
set -uo pipefail

tries=${PNS_APT_TRIES:-4}
pause=${PNS_APT_PAUSE:-20}
export DEBIAN_FRONTEND=noninteractive
for ((i = 1; ; i++)); do
	apt-get -o Acquire::Retries=3 update && exit 0
	rc=$?
	if ((i >= tries)); then
		echo "[apt-update] failed $i times, giving up" >&2
		exit "$rc"
	fi
	echo "[apt-update] attempt $i of $tries failed (exit $rc); again in ${pause}s" >&2
	sleep "$pause"
done
