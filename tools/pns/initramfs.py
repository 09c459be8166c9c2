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
                     logs_dir, output, run, say, step)

BINARIES = {"/bin/busybox": "busybox-static",
            "/usr/bin/trace-cmd": "trace-cmd",
            "/usr/bin/stress-ng": "stress-ng"}
# i386 guests get Debian's i386 packages, unpacked into a sysroot; stress-ng
# is left out there (its dependency closure pulls in Mesa).
I386_BINARIES = {"/bin/busybox": "busybox-static", "/usr/bin/trace-cmd": "trace-cmd"}
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


def _copy(src, root, sysroot=Path("/")):
    dst = root / src.lstrip("/")
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2((sysroot / src.lstrip("/")).resolve(), dst)


def _has_candidate(pkg):
    """Whether apt's package lists offer a version of pkg."""
    policy = subprocess.run(["apt-cache", "policy", pkg], capture_output=True,
                            text=True).stdout
    m = re.search(r"Candidate:\s*(\S+)", policy)
    return bool(m) and m.group(1) != "(none)"


def i386_sysroot(log):
    """Unpack busybox-static, trace-cmd and their dependencies for i386.

    The packages are fetched with apt-get download (after enabling the
    i386 architecture), never installed on the host.
    """
    sysroot = cache_dir() / "sysroot-i386"
    pkgs = [f"{p}:i386" for p in sorted(set(I386_BINARIES.values()))]
    if "i386" not in output(["dpkg", "--print-foreign-architectures"]).split():
        run(["dpkg", "--add-architecture", "i386"], log=log, what="dpkg --add-architecture")
    # Not only right after adding the architecture: an update that failed
    # before (a mirror in sync) leaves i386 configured but without lists.
    # A failed update may still have fetched the lists these packages are
    # in (apt ignores an index file a mirror in sync serves damaged).
    if not all(_has_candidate(p) for p in pkgs):
        proc = run([str(REPO / "tools" / "apt-update.sh")], log=log, check=False)
        missing = [p for p in pkgs if not _has_candidate(p)]
        if missing:
            raise HarnessError(f"apt-get update failed (exit {proc.returncode}) and apt "
                               f"has no version of {' '.join(missing)}; full log: {log}")
        if proc.returncode:
            say(f"[initramfs] warning: apt-get update failed, using the lists apt has; "
                f"see {log}")
    closure = output(["apt-cache", "depends", "--recurse", "--no-recommends",
                      "--no-suggests", "--no-conflicts", "--no-breaks",
                      "--no-replaces", "--no-enhances", "--no-pre-depends", *pkgs])
    names = sorted({ln.strip() for ln in closure.splitlines()
                    if ln.strip().endswith(":i386") and not ln.startswith(" ")})
    stamp = Stamp(sysroot / "pns-sysroot.json")
    if stamp.matches(packages=names):
        return sysroot
    debs = cache_dir() / "debs-i386"
    shutil.rmtree(sysroot, ignore_errors=True)
    shutil.rmtree(debs, ignore_errors=True)
    debs.mkdir(parents=True)
    with step(f"i386 user space from {len(names)} Debian packages"):
        run(["apt-get", "download", *names], log=log, cwd=debs, what="apt-get download")
        for deb in sorted(debs.glob("*.deb")):
            run(["dpkg-deb", "-x", str(deb), str(sysroot)], log=log, what="dpkg-deb")
    stamp.write(packages=names)
    return sysroot


def sysroot_libs(sysroot, binary):
    """Shared objects of a binary in a foreign sysroot (readelf NEEDED)."""
    libdirs = ["lib/i386-linux-gnu", "usr/lib/i386-linux-gnu", "lib", "usr/lib"]
    found, todo = {}, [binary]
    while todo:
        elf = sysroot / todo.pop().lstrip("/")
        dyn = subprocess.run(["readelf", "-d", "-l", str(elf)], capture_output=True,
                             text=True).stdout
        interp = re.search(r"program interpreter: (\S+)\]", dyn)
        needs = re.findall(r"\(NEEDED\)\s+Shared library: \[(\S+)\]", dyn)
        if interp:
            found.setdefault(interp.group(1), True)
        for so in needs:
            hits = [f"/{d}/{so}" for d in libdirs if (sysroot / d / so).exists()]
            if not hits:
                raise HarnessError(f"{so} (needed by {binary}) is not in {sysroot}")
            if hits[0] not in found:
                found[hits[0]] = True
                todo.append(hits[0])
    return list(found)


def build(variant, arch, ko=None, name=None):
    """Build the initramfs for a kernel build (`name`, the build
    directory's, default variant-arch); return the cpio path."""
    name = name or f"{variant}-{arch}"
    log = logs_dir() / f"initramfs-{name}.log"
    if arch == "i386":
        sysroot, binaries = i386_sysroot(log), I386_BINARIES
        libs_of = lambda b: sysroot_libs(sysroot, b)  # noqa: E731
    else:
        sysroot, binaries, libs_of = Path("/"), BINARIES, shared_libs
    for b, pkg in binaries.items():
        if not (sysroot / b.lstrip("/")).exists():
            raise HarnessError(f"{b} is missing: apt-get install {pkg} (or run tools/deps.sh)")
    out = cache_dir() / "initramfs" / f"{name}.cpio"
    stamp = Stamp(out.with_suffix(".json"))
    inputs = dict(pkgs=_pkg_versions(), workloads=hash_paths([WORKLOADS]),
                  module=hash_paths([ko]) if ko else "", sysroot=str(sysroot))
    if stamp.matches(**inputs) and out.exists():
        return out
    log.write_text("")
    root = out.with_suffix(".root")
    with step(f"initramfs {out.name}"):
        shutil.rmtree(root, ignore_errors=True)
        for d in ("bin", "sbin", "usr/bin", "usr/sbin", "dev", "proc", "sys",
                  "tmp", "host", "root", "etc", "lib/modules", "run"):
            (root / d).mkdir(parents=True, exist_ok=True)
        for b in binaries:
            _copy(b, root, sysroot)
            for lib in libs_of(b):
                _copy(lib, root, sysroot)
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
