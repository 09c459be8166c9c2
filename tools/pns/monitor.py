"""Where a hung guest's CPUs are: QEMU's human monitor plus System.map.

When a guest overruns its time the runner asks QEMU's monitor for every
vCPU's registers and the top of its stack before it kills the guest, and
names the kernel text addresses it finds (the test kernels have no KASLR,
so System.map applies as it is). The result is a plain text report next
to console.log: the instruction pointer of each CPU and the text
addresses on its stack, most recent first, like an unreliable backtrace.
"""

import bisect
import re
import socket
import time
from pathlib import Path

PROMPT = b"(qemu) "
_ANSI = re.compile(rb"\x1b\[[0-9;]*[A-Za-z]")
STACK_WORDS = 64


class Monitor:
    """A connection to QEMU's human monitor on a unix socket."""

    def __init__(self, path, timeout=10.0):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sock.connect(str(path))
        self._read_to_prompt()

    def _read_to_prompt(self):
        buf = b""
        while not buf.endswith(PROMPT):
            chunk = self.sock.recv(65536)
            if not chunk:
                break
            buf += chunk
        return _ANSI.sub(b"", buf).decode(errors="replace")

    def cmd(self, line):
        """Run one monitor command; return its output without the echo."""
        self.sock.sendall(line.encode() + b"\n")
        out = self._read_to_prompt().replace("\r", "")
        lines = out.splitlines()
        # the monitor echoes the command line first and ends with a prompt
        while lines and (line in lines[0] or not lines[0].strip()):
            lines.pop(0)
        if lines and lines[-1].startswith("(qemu)"):
            lines.pop()
        return "\n".join(lines)

    def close(self):
        self.sock.close()


class Symbols:
    """Kernel text symbols from System.map, looked up by address."""

    def __init__(self, system_map):
        addrs, names = [], []
        for line in Path(system_map).read_text(errors="replace").splitlines():
            parts = line.split()
            if len(parts) >= 3 and parts[1] in "TtWw":
                addrs.append(int(parts[0], 16))
                names.append(parts[2])
        order = sorted(range(len(addrs)), key=addrs.__getitem__)
        self.addrs = [addrs[i] for i in order]
        self.names = [names[i] for i in order]
        self.lo = self.addrs[0] if self.addrs else 0
        # the end of kernel text: _etext when the map has it
        self.hi = next((a for a, n in zip(self.addrs, self.names) if n == "_etext"),
                       self.addrs[-1] if self.addrs else 0)

    def lookup(self, addr):
        """'name+0xoff' for an address in kernel text, else None."""
        if not self.lo <= addr < self.hi:
            return None
        i = bisect.bisect_right(self.addrs, addr) - 1
        return f"{self.names[i]}+{addr - self.addrs[i]:#x}"


def _register(text, names):
    for name in names:
        m = re.search(rf"\b{name}=([0-9a-f]+)", text)
        if m:
            return int(m.group(1), 16)
    return None


def _cpu_indexes(mon):
    found = re.findall(r"CPU #(\d+)", mon.cmd("info cpus"))
    return [int(n) for n in found] or [0]


def cpu_report(mon, cpu, syms, word):
    """Registers, instruction pointer and stack text addresses of one vCPU."""
    mon.cmd(f"cpu {cpu}")
    regs = mon.cmd("info registers")
    ip = _register(regs, ("RIP", "EIP"))
    sp = _register(regs, ("RSP", "ESP"))
    out = [f"CPU {cpu}: ip {ip:#x} {syms.lookup(ip) or '(not kernel text)'}"
           if ip is not None else f"CPU {cpu}: no instruction pointer in 'info registers'"]
    if sp is not None:
        fmt = "g" if word == 8 else "w"
        dump = mon.cmd(f"x/{STACK_WORDS}{fmt}x {sp:#x}")
        frames = []
        for line in dump.splitlines():
            _, _, words = line.partition(":")
            for w in words.split():
                sym = syms.lookup(int(w, 16)) if w.startswith("0x") else None
                if sym:
                    frames.append(sym)
        out += [f"  stack {f}" for f in frames] or ["  stack: no kernel text addresses"]
    # the general purpose, segment and control registers; not the FPU/SIMD ones
    out += ["  " + ln for ln in regs.splitlines()
            if not re.match(r"\s*(FCW|FPR|XMM|YMM|ZMM|DR\d)", ln)]
    return out


def guest_state(socket_path, system_map, word):
    """A text report of every vCPU of a running guest, or of why there is none."""
    try:
        syms = Symbols(system_map)
        mon = Monitor(socket_path)
    except (OSError, ValueError) as e:
        return f"no guest state: {e}\n"
    try:
        out = [f"guest state at {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())} "
               f"(symbols: {system_map})"]
        for cpu in _cpu_indexes(mon):
            out += cpu_report(mon, cpu, syms, word)
        return "\n".join(out) + "\n"
    except OSError as e:
        return f"no guest state: monitor: {e}\n"
    finally:
        mon.close()
