"""Scenarios: what a guest run does and what it needs.

A scenario is a busybox shell script, workloads/scenarios/NAME.sh, whose
header comments declare what the run needs and what its verdict expects
(docs/harness.md, "Adding a scenario"):

    # pns-description: one line for `make scenarios`
    # pns-kind: workload | selftest | breaker
    # pns-duration: 20
    # pns-cpus: 2
    # pns-fragments: tools/configs/x.config ...
    # pns-cmdline: printk_nobkl.show_ctx=0
    # pns-console-cmdline: earlycon=uart8250,io,0x2f8,115200 console=ttyS0
    # pns-serial-logs: console-ttyS0.log console.log
    # pns-baud: 115200
    # pns-needs: CONFIG_PRINTK_NOBKL_DEBUG ...
    # pns-expect-splat: warning
    # pns-expect-end: panic
    # pns-expect-rule: duplicate
    # pns-expect-handoff: hostile emergency<-thread same-cpu; handover panic<-thread other-cpu reprinted

Kinds: a `workload` is what users run to find bugs and must pass on a
correct kernel; a `selftest` checks the harness or the stressor itself
(a hang it must report, the stressor's interface); a `breaker` arms one
of the series' correctness breakers and passes only when the analysis
reports the rule it breaks.

`pns-console-cmdline` replaces the console's part of the kernel command
line (tools/cmdline/nobkl.txt or console.txt, the CONSOLE setting): a
scenario about the consoles' configuration brings its own.
`pns-serial-logs` gives the guest one UART per file, in QEMU's order
(ttyS0 at 0x3f8, ttyS1 at 0x2f8, ...); the file of each UART in the
results directory. `console.log`, which the boot watch and the verdict
read, must be one of them; without the header the guest has one UART,
ttyS0, into console.log.  `pns-baud` is the line the scenario is
written for (a baud rate or `instant`, the default), which the BAUD
setting overrides; the guest sets it before the scenario starts
(workloads/lib/common.sh, line_speed), and a line slower than instant
needs the series' debug interface.  workloads/scenarios/CFLIST names the
scenarios a default batch runs, like rcutorture's CFLIST.
"""

import re
from dataclasses import dataclass, field
from pathlib import Path

from .common import REPO, HarnessError

SCENARIOS = REPO / "workloads" / "scenarios"
CFLIST = SCENARIOS / "CFLIST"
KINDS = ("workload", "selftest", "breaker")
CONSOLE_LOG = "console.log"
MAX_UARTS = 4                     # QEMU's ISA serial ports on a PC
# byte_delay_ns, which makes a line slower than instant: 6.1's series' debug
# interface (each target names its own: target.Target.line_option)
DEBUG_INTERFACE = "CONFIG_PRINTK_NOBKL_DEBUG"


def _words(val):
    return [v for v in re.split(r"[\s,]+", val) if v]


def _items(val):
    return [v.strip() for v in val.split(";") if v.strip()]


INSTANT = "instant"
# the emulated line's limits: the byte time (10^10 / baud ns, to 10 ns)
# must be at least 10 ns and fit the debug interface's 32 bits
BAUD_RANGE = (50, 100000000)


def parse_baud(val):
    """A line speed as written (`115200`, `instant`): the baud rate, or
    0 for instant. Raises ValueError with the reason."""
    if val == INSTANT:
        return 0
    if not re.fullmatch(r"\d+", val or "") or not BAUD_RANGE[0] <= int(val) <= BAUD_RANGE[1]:
        raise ValueError(f"{val!r} is no baud rate ({BAUD_RANGE[0]}-{BAUD_RANGE[1]}) "
                         f"nor {INSTANT}")
    return int(val)


def byte_time_ns(baud):
    """The time a byte of a 10-bit frame takes at `baud` (0: instant),
    as the guest computes it (line_speed: 32-bit arithmetic, to 10 ns)."""
    return 1000000000 // baud * 10 if baud else 0


@dataclass
class Scenario:
    name: str
    path: Path
    description: str = ""
    kind: str = "workload"
    duration: int = 10
    cpus: int = 0                 # 0: the CPUS setting decides
    fragments: list = field(default_factory=list)
    cmdline: str = ""
    console_cmdline: str = ""     # replaces the CONSOLE setting's console line
    serial_logs: list = field(default_factory=lambda: [CONSOLE_LOG])
    baud: int = 0                 # the line it is written for; 0: instant
    needs: list = field(default_factory=list)
    expect_splat: list = field(default_factory=list)
    expect_end: str = "finish"    # or "panic"
    expect_rule: str = ""         # the analysis must report this rule (breakers)
    # hand-offs (analysis/handoffs.py keys) the trace must show; a key
    # followed by " reprinted": with the interrupted record reprinted
    expect_handoffs: list = field(default_factory=list)

    # header key -> (attribute, how its value is read)
    KEYS = {
        "description": ("description", str),
        "kind": ("kind", str),
        "duration": ("duration", int),
        "cpus": ("cpus", int),
        "fragments": ("fragments", _words),
        "cmdline": ("cmdline", str),
        "console-cmdline": ("console_cmdline", str),
        "serial-logs": ("serial_logs", _words),
        "baud": ("baud", parse_baud),
        "needs": ("needs", _words),
        "expect-splat": ("expect_splat", _words),
        "expect-end": ("expect_end", str),
        "expect-rule": ("expect_rule", str),
        "expect-handoff": ("expect_handoffs", _items),
    }

    @classmethod
    def load(cls, name):
        path = SCENARIOS / f"{name}.sh"
        if not path.exists():
            have = ", ".join(s.name for s in scenarios())
            raise HarnessError(f"no scenario '{name}' (have: {have})")
        sc = cls(name=name, path=path)
        for n, line in enumerate(path.read_text().splitlines(), 1):
            m = re.match(r"#\s*pns-([\w-]+):\s*(.*)$", line)
            if not m:
                continue
            key, val = m.group(1), m.group(2).strip()
            if key not in cls.KEYS:
                raise HarnessError(f"{path}:{n}: unknown header pns-{key} "
                                   f"(have: {', '.join(cls.KEYS)})")
            attr, read = cls.KEYS[key]
            try:
                setattr(sc, attr, read(val))
            except ValueError as e:
                why = e if key == "baud" else f"not a number: {val!r}"
                raise HarnessError(f"{path}:{n}: pns-{key}: {why}")
        if sc.kind not in KINDS:
            raise HarnessError(f"{path}: pns-kind {sc.kind!r} is not one of {', '.join(KINDS)}")
        logs = sc.serial_logs
        if (logs.count(CONSOLE_LOG) != 1 or len(set(logs)) != len(logs)
                or len(logs) > MAX_UARTS
                or not all(re.fullmatch(r"[\w.-]+\.log", n) for n in logs)):
            raise HarnessError(f"{path}: pns-serial-logs {' '.join(logs)!r}: up to "
                               f"{MAX_UARTS} distinct NAME.log files, {CONSOLE_LOG} once")
        if sc.kind == "breaker" and not sc.expect_rule:
            raise HarnessError(f"{path}: a breaker names the rule it breaks (pns-expect-rule)")
        return sc

    def missing_needs(self, config, baud=0, line_option=DEBUG_INTERFACE):
        """The options this scenario needs, on a line of `baud` (0:
        instant) emulated by `line_option`, that a kernel .config (a
        dict of CONFIG_X -> value) does not have set to y."""
        needs = list(self.needs)
        if baud and line_option not in needs:
            needs.append(line_option)
        return [opt for opt in needs if config.get(opt) != "y"]


def scenarios():
    return [Scenario.load(p.stem) for p in sorted(SCENARIOS.glob("*.sh"))]


def parse_list(text):
    """Scenario names from a list like "3*storm backlog" (a count and `*`
    repeat a scenario; `CFLIST` stands for the default batch), in order."""
    names = []
    for word in text.split():
        m = re.fullmatch(r"(?:(\d+)\*)?([\w.-]+)", word)
        if not m:
            raise HarnessError(f"bad scenario list entry {word!r}: use NAME or N*NAME")
        count = int(m.group(1) or 1)
        if count < 1:
            raise HarnessError(f"bad scenario list entry {word!r}: the count must be >= 1")
        names += (default_batch() if m.group(2) == "CFLIST" else [m.group(2)]) * count
    if not names:
        raise HarnessError("empty scenario list")
    for name in dict.fromkeys(names):
        Scenario.load(name)      # a typo fails before the first guest boots
    return names


def default_batch():
    """The scenarios of workloads/scenarios/CFLIST (comments with #)."""
    text = "\n".join(ln.split("#", 1)[0] for ln in CFLIST.read_text().splitlines())
    names = []
    for word in text.split():
        if "CFLIST" in word:
            raise HarnessError(f"{CFLIST}: names CFLIST itself")
        names.append(word)
    return parse_list(" ".join(names))
