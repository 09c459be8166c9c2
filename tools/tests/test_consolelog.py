"""The splat classifier: every class is recognised in a real-looking log,
and a clean boot log has none."""

import pytest

from tools.pns import consolelog

CLEAN = """\
[    0.000000] Linux version 6.1.192 (root@host) (gcc (Debian 12.2.0-14) 12.2.0) #1 SMP PREEMPT
[    0.000000] Command line: panic=-1 printk.time=1 console=ttyS0,115200
[    0.412345] smp: Bringing up secondary CPUs ...
T[    1.203040] pns: init ok mode=scenario scenario=default cpus=4 kernel=6.1.192
[    1.300000] printk: console [ttyS0] enabled
[    2.000000] WARNING_COUNT is a word in a message, not a splat
"""

SPLATS = {
    "warning": "[    3.1] WARNING: CPU: 1 PID: 57 at drivers/misc/lkdtm/bugs.c:91 lkdtm_WARNING+0x1c/0x30",
    "panic": "[    4.2] Kernel panic - not syncing: dumptest",
    "lockdep": "[    5.3] WARNING: possible circular locking dependency detected",
    "atomic-sleep": "[    6.4] BUG: sleeping function called from invalid context at kernel/locking/mutex.c:580",
    "rcu-stall": "[   30.5] rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:",
    "soft-lockup": "[   40.6] watchdog: BUG: soft lockup - CPU#2 stuck for 26s! [pr/ttyS0:15]",
    "hung-task": "[  120.7] INFO: task kworker/0:1:12 blocked for more than 120 seconds.",
    "oops": "[    7.8] BUG: unable to handle page fault for address: ffff888000000000",
    "bug": "[    8.9] kernel BUG at kernel/printk/printk_nobkl.c:321!",
    "kasan": "[    9.0] BUG: KASAN: slab-out-of-bounds in cons_emit_record+0x55/0x120",
    "kcsan": "[    9.1] BUG: KCSAN: data-race in cons_state_try_cmpxchg / cons_release",
}


def test_clean_log_has_no_splat():
    counts, _ = consolelog.scan(CLEAN.splitlines())
    assert counts == {}


@pytest.mark.parametrize("cls", sorted(SPLATS))
def test_each_class_is_recognised(cls):
    log = CLEAN + SPLATS[cls] + "\n"
    counts, examples = consolelog.scan(log.splitlines())
    assert counts == {cls: 1}
    assert SPLATS[cls].strip() in examples[cls]


def test_prefixed_lines_are_recognised():
    counts, _ = consolelog.scan(["A" + SPLATS["warning"]])
    assert counts == {"warning": 1}


def test_reprinted_line_counts_once_but_distinct_splats_count_twice():
    partial = "T[    3.100000] WARNING: CPU: 1 PID: 57 at drivers/misc/lkdtm/bugs.c:91 lk"
    full = "A[    3.100000] WARNING: CPU: 1 PID: 57 at drivers/misc/lkdtm/bugs.c:91 lkdtm_WARNING+0x1c/0x30"
    other = "A[    9.100000] WARNING: CPU: 2 PID: 58 at drivers/misc/lkdtm/bugs.c:91 lkdtm_WARNING+0x1c/0x30"
    counts, _ = consolelog.scan([partial, full, other])
    assert counts == {"warning": 2}


def test_strip_prefix():
    assert consolelog.strip_prefix("A[    1.000000] hello") == "hello"
    assert consolelog.strip_prefix("[    1.000000] hello") == "hello"
    assert consolelog.strip_prefix("hello") == "hello"


# kmemleak prints no report by itself: the guest's kmemleak_scan writes
# /sys/kernel/debug/kmemleak to the kernel log a line a record, after the
# kernel's own summary of the scan.
KMEMLEAK_REPORT = """\
[   31.100000] kmemleak: 2 new suspected memory leaks (see /sys/kernel/debug/kmemleak)
T[   37.200001] pns: kmemleak report: unreferenced object 0xffff888004a1c380 (size 64):
T[   37.200102] pns: kmemleak report:   comm "insmod", pid 112, jiffies 4294905123 (age 21.232s)
T[   37.200203] pns: kmemleak report:   hex dump (first 32 bytes):
T[   37.200304] pns: kmemleak report:     6b 6b 6b 6b 6b 6b 6b 6b 6b 6b 6b 6b 6b 6b 6b 6b  kkkkkkkkkkkkkkkk
T[   37.200405] pns: kmemleak report:   backtrace:
T[   37.200506] pns: kmemleak report:     [<ffffffff81234567>] __kmalloc+0x4b/0x140
T[   37.200607] pns: kmemleak report:     [<ffffffffa0001234>] ps_ctl_write+0x1c4/0x2e0 [printk_stress]
T[   37.200708] pns: kmemleak report: unreferenced object 0xffff888004a1c400 (size 128):
T[   37.200809] pns: kmemleak report:   comm "sh", pid 113, jiffies 4294905200 (age 21.100s)
T[   37.201000] pns: kmemleak scan done: 2 object(s) reported, 14s
"""


def test_kmemleak_report_counts_each_object_and_the_summary():
    counts, examples = consolelog.scan((CLEAN + KMEMLEAK_REPORT).splitlines())
    assert counts == {"kmemleak": 3}
    assert examples["kmemleak"] == ("[   31.100000] kmemleak: 2 new suspected memory leaks "
                                    "(see /sys/kernel/debug/kmemleak)")


def test_kmemleak_summary_alone_is_a_splat():
    # A report the guest did not get out still fails the run.
    counts, _ = consolelog.scan(KMEMLEAK_REPORT.splitlines()[:1])
    assert counts == {"kmemleak": 1}


def test_a_clean_kmemleak_scan_is_no_splat():
    log = ("T[   30.000000] pns: scenario storm end rc=0\n"
           "T[   44.000000] pns: kmemleak scan done: 0 object(s) reported, 14s\n")
    assert consolelog.scan((CLEAN + log).splitlines()) == ({}, {})
