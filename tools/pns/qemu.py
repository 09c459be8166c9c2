"""The guest: one table of what each architecture needs, the QEMU
command, and one boot watched until it ends, hangs or never reaches /init.
"""

import os
import re
import shlex
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from . import consolelog
from .common import HarnessError, setting


@dataclass(frozen=True)
class Arch:
    qemu: str        # the QEMU binary
    cpu: str         # its -cpu model (QEMU_CPU overrides)
    image: str       # the kernel image in the build directory
    word: int        # bytes in a stack word (guest-state.txt)


# TCG's "max" CPU says AuthenticAMD; a 32-bit SMP kernel then WARNs that the
# AMD model is not SMP-certified (init_amd()), so i386 guests get Intel's.
ARCHES = {
    "x86_64": Arch("qemu-system-x86_64", "max", "arch/x86/boot/bzImage", 8),
    "i386": Arch("qemu-system-i386", "max,vendor=GenuineIntel", "arch/x86/boot/bzImage", 4),
}


def arch(name=None):
    name = name or setting("ARCH")
    if name not in ARCHES:
        raise HarnessError(f"unknown ARCH '{name}'; have: {', '.join(ARCHES)}")
    return ARCHES[name]


def accel():
    """TCG unless KVM is asked for or a probe shows the CPU can do it."""
    want = setting("ACCEL")
    if want != "auto":
        return want
    try:
        flags = Path("/proc/cpuinfo").read_text()
        ok = os.access("/dev/kvm", os.R_OK | os.W_OK) and re.search(r"\b(vmx|svm)\b", flags)
    except OSError:
        ok = False
    return "kvm" if ok else "tcg,thread=multi"


def command(bdir, cpio, cmdline, share, serial, cpus, monitor=None):
    """The QEMU command line of a guest with the results directory
    `share` at 9p tag `host` and its serial ports on `serial`: one
    character device, or a list of them, one UART each (ttyS0, ttyS1...)."""
    a = arch()
    extra = ["-monitor", f"unix:{monitor},server,nowait"] if monitor else []
    serials = [serial] if isinstance(serial, str) else list(serial)
    uarts = [arg for dev in serials for arg in ("-serial", dev)]
    return [a.qemu, "-accel", accel(), "-cpu", setting("QEMU_CPU", a.cpu),
            "-smp", str(cpus), "-m", setting("MEM"),
            "-nodefaults", "-display", "none", "-no-reboot",
            "-kernel", str(bdir / a.image), "-initrd", str(cpio),
            "-append", cmdline] + uarts + [
            "-virtfs", f"local,path={share},mount_tag=host,security_model=none,id=host"
            ] + extra


def boot(bdir, cpio, cmdline, res, cpus, timeout, boot_timeout,
         serial_logs=("console.log",)):
    """Run the guest once, its serial ports into the files serial_logs
    names in res (ttyS0 first; console.log one of them). It is
    killed when it has not reached /init after boot_timeout seconds, or
    not finished after timeout seconds; before that, the monitor reports
    where its CPUs are (guest-state.txt).
    Returns (qemu exit code, hung, reached /init)."""
    mon_dir = Path(tempfile.mkdtemp(prefix="pns-qemu-"))
    monitor_path = mon_dir / "monitor"
    cmd = command(bdir, cpio, cmdline, res, [f"file:{res / n}" for n in serial_logs],
                  cpus, monitor=monitor_path)
    (res / "qemu.cmd").write_text(shlex.join(cmd) + "\n")
    watch = InitWatch(res / "console.log")
    t0 = time.monotonic()
    try:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL,
                                stdout=open(res / "qemu.log", "w"),
                                stderr=subprocess.STDOUT)
        while proc.poll() is None:
            waited = time.monotonic() - t0
            booted = watch.reached()
            if waited > timeout or (not booted and waited > boot_timeout):
                (res / "guest-state.txt").write_text(guest_state(monitor_path, bdir))
                proc.kill()
                return proc.wait(), True, booted
            time.sleep(1)
        return proc.returncode, False, watch.reached()
    finally:
        shutil.rmtree(mon_dir, ignore_errors=True)


class InitWatch:
    """Notices the guest init's first marker in a growing console.log
    without reading the whole file each time."""

    MARK = b"pns: init ok"

    def __init__(self, path):
        self.path = path
        self.offset = 0
        self.tail = b""
        self.seen = False

    def reached(self):
        if self.seen:
            return True
        try:
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                data = f.read()
        except OSError:
            return False
        self.offset += len(data)
        self.seen = self.MARK in self.tail + data
        self.tail = data[-len(self.MARK):] if data else self.tail
        return self.seen


def guest_state(monitor_path, bdir):
    from .monitor import guest_state as state
    return state(monitor_path, bdir / "System.map", arch().word)


def keep_boot_hang(res, attempt, boot_timeout, serial_logs=("console.log",)):
    """Move a boot that hung before /init aside (boot-hang-N/) for the
    next attempt, every serial log with it (QEMU truncates them when it
    starts again); return what the verdict says about it."""
    keep = res / f"boot-hang-{attempt}"
    keep.mkdir()
    for name in dict.fromkeys(("console.log", *serial_logs, "qemu.log", "guest-state.txt")):
        if (res / name).exists():
            shutil.move(str(res / name), str(keep / name))
    lines = consolelog.read_lines(keep / "console.log")
    return {"attempt": attempt, "after_s": boot_timeout,
            "last_console_line": lines[-1] if lines else "",
            "dir": keep.name}
