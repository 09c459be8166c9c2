"""The guest initramfs: busybox, trace-cmd, stress-ng, the module, workloads/.

Dynamic binaries are copied with the shared libraries ldd names, so the
guest runs Debian's own trace-cmd and stress-ng. The archive is an
uncompressed newc cpio (the test kernels have no decompressors).
"""

import re
import shutil
import subprocess
from pathlib import Path

from .common import (REPO, HarnessError, Stamp, cache_dir, hash_paths,
                     logs_dir, output, step)

BINARIES = {"/bin/busybox": "busybox-static",
            "/usr/bin/trace-cmd": "trace-cmd",
            "/usr/bin/stress-ng": "stress-ng"}
WORKLOADS = REPO / "workloads"


def _pkg_versions():
    pkgs = sorted(set(BINARIES.values()))
    return output(["dpkg-query", "-W", "-f=${Package}=${Version}\n", *pkgs]).strip()


def shared_libs(binary):
    """The shared objects (and loader) a dynamic binary needs, per ldd."""
    proc = subprocess.run(["ldd", binary], capture_output=True, text=True)
    if proc.returncode != 0:  # static binary
        return []
    libs = []
    for line in proc.stdout.splitlines():
        m = re.search(r"(/\S+)\s+\(0x", line)
        if m:
            libs.append(m.group(1))
    return libs


def _copy(src, root):
    dst = root / src.lstrip("/")
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(Path(src).resolve(), dst)


def build(variant, arch, ko=None):
    """Build the initramfs for a kernel build; return the cpio path."""
    if arch != "x86_64":
        raise HarnessError(f"the initramfs has only x86_64 user space so far (ARCH={arch})")
    for b, pkg in BINARIES.items():
        if not Path(b).exists():
            raise HarnessError(f"{b} is missing: apt-get install {pkg} (or run tools/deps.sh)")
    out = cache_dir() / "initramfs" / f"{variant}-{arch}.cpio"
    stamp = Stamp(out.with_suffix(".json"))
    inputs = dict(pkgs=_pkg_versions(), workloads=hash_paths([WORKLOADS]),
                  module=hash_paths([ko]) if ko else "")
    if stamp.matches(**inputs) and out.exists():
        return out
    log = logs_dir() / f"initramfs-{variant}-{arch}.log"
    log.write_text("")
    root = out.with_suffix(".root")
    with step(f"initramfs {out.name}"):
        shutil.rmtree(root, ignore_errors=True)
        for d in ("bin", "sbin", "usr/bin", "usr/sbin", "dev", "proc", "sys",
                  "tmp", "host", "root", "etc", "lib/modules", "run"):
            (root / d).mkdir(parents=True, exist_ok=True)
        for b in BINARIES:
            _copy(b, root)
            for lib in shared_libs(b):
                _copy(lib, root)
        shutil.copytree(WORKLOADS, root / "workloads",
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        shutil.copy2(WORKLOADS / "init", root / "init")
        (root / "init").chmod(0o755)
        if ko:
            shutil.copy2(ko, root / "lib/modules" / Path(ko).name)
        (root / "etc/passwd").write_text("root:x:0:0:root:/root:/bin/sh\n")
        (root / "etc/group").write_text("root:x:0:\n")
        tmp = out.with_suffix(".tmp")
        with open(tmp, "wb") as f:
            files = subprocess.run(["find", "."], cwd=root, check=True,
                                   capture_output=True).stdout
            proc = subprocess.run(["cpio", "-o", "-H", "newc", "-R", "0:0", "--quiet"],
                                  cwd=root, input=files, stdout=f,
                                  stderr=open(log, "a"))
        if proc.returncode != 0:
            raise HarnessError(f"cpio failed; see {log}")
        tmp.rename(out)
    stamp.write(**inputs)
    return out
