"""Classify kernel splats in a serial console log, rcutorture-style.

Each line is matched against the classes below in order and counted once,
under the first class that matches. The patterns follow the kernel's own
headers (panic(), __warn(), lockdep, RCU stall, watchdog, KASAN, ...).

kmemleak reports nothing on the console by itself: the guest's end of a
run (kmemleak_scan in workloads/lib/common.sh) scans and writes the
report to the kernel log. Each `unreferenced object 0x...` line of that
report counts, and so does the kernel's own summary of a scan that found
some (`kmemleak: N new suspected memory leaks`): a report of two objects
counts three.

The log is read by analysis.consolelog, the one reader of it.
"""

import re
from pathlib import Path

from analysis import consolelog as log

# (class, regex) - order matters: more specific classes first.
SPLAT_CLASSES = [
    ("lockdep", re.compile(
        r"WARNING: (possible circular locking dependency|possible recursive locking"
        r"|inconsistent lock state|suspicious RCU usage|lock held when returning"
        r"|bad unlock balance|held lock freed|possible irq lock inversion"
        r"|HARDIRQ-safe -> HARDIRQ-unsafe|SOFTIRQ-safe -> SOFTIRQ-unsafe)")),
    ("kasan", re.compile(r"BUG: KASAN: ")),
    ("kcsan", re.compile(r"BUG: KCSAN: ")),
    ("kmemleak", re.compile(
        r"unreferenced object 0x[0-9a-f]+ \(size \d+\)"
        r"|kmemleak: \d+ new suspected memory leaks")),
    ("atomic-sleep", re.compile(
        r"BUG: (sleeping function called from invalid context|scheduling while atomic"
        r"|using smp_processor_id\(\) in preemptible|using __this_cpu_\w+\(\) in preemptible)")),
    ("soft-lockup", re.compile(r"BUG: soft lockup|watchdog: BUG: soft lockup")),
    ("hard-lockup", re.compile(r"Watchdog detected hard LOCKUP")),
    ("rcu-stall", re.compile(
        r"rcu: INFO: \w+ (self-)?detected stall|rcu_\w+ (self-)?detected stall"
        r"|INFO: rcu_\w+ detected stalls")),
    ("hung-task", re.compile(r"INFO: task .* blocked for more than \d+ seconds")),
    ("oops", re.compile(r"\bOops: |general protection fault|BUG: unable to handle")),
    ("bug", re.compile(r"kernel BUG at |\bBUG: ")),
    ("warning", re.compile(r"WARNING: CPU: \d+ PID: \d+ at ")),
    ("panic", re.compile(r"Kernel panic - not syncing")),
]


def read_lines(path):
    """The lines of a console log as text, as a terminal shows them
    (str.splitlines(): a CR alone ends one too), decoded as open() does
    with bad bytes replaced; [] without the log."""
    if not Path(path).exists():
        return []
    return [part for line in log.lines(path, encoding=None, errors="replace")
            for part in (line.raw + line.end).splitlines()]


def strip_prefix(line):
    """Drop the A/T context marker, the printk timestamp (and caller) of
    a kernel line."""
    p = log.parse(line)
    return p.text if p.stamp is not None else line


def classify_line(line):
    """The splat class of one console line, or None."""
    for name, rx in SPLAT_CLASSES:
        if rx.search(line):
            return name
    return None


def scan(lines):
    """Count splats by class; return (counts, first example line per class).

    A line that a console reprinted after a takeover carries the same
    printk timestamp as its partial first attempt: it is counted once.
    """
    counts, examples, seen = {}, {}, set()
    for raw in lines:
        line = raw.rstrip("\r\n")
        cls = classify_line(line)
        if cls is None:
            continue
        stamp = log.find_stamp(line)
        if stamp:
            if (cls, stamp) in seen:
                continue
            seen.add((cls, stamp))
        counts[cls] = counts.get(cls, 0) + 1
        examples.setdefault(cls, line.strip())
    return counts, examples


def scan_file(path):
    """scan() of the log at `path`, its lines split at LF, CR and CRLF
    (as open() in text mode does)."""
    return scan(part for line in log.lines(path, encoding=None, errors="replace")
                for part in line.raw.split("\r"))
