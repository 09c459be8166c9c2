"""Synthetic results directories: a simulated nobkl console run written as
`trace-cmd report` text (trace.txt) and a serial log (console.log).

    /usr/bin/python3 -m analysis synth OUTDIR --events 1000000 [--break KIND]

The simulation follows interfaces.md: a printer thread (thread=1) on CPU 0
prints records stored by stressor producers on all CPUs; atomic contexts
(emergency, panic, NMI on the owner's CPU) take the console over hostile or
by friendly handover (request/grant), waiters time out, the ringbuffer
overwrites records (dropped counts), interrupted lines are left partial and
reprinted.  A few benign trace reorders (release traced after the next
acquire, victim's `lost` before the taker's acquire) are included, as a
real global-clock trace has them.

`--break KIND` injects one violation of a rule in the middle of the run
(see BREAKS).  The generator is also a library: `generate(outdir, ...)`.

Why one module of about 600 lines: `Sim` is a single state machine, the
simulated console (its owner, the records not yet printed, the seq it
prints next, the breaks still to inject), and its scenarios (session(),
interrupt(), _hostile()) interleave takeovers with the printing and the
events they write, each reading and changing that state.  Split, either
half would reach into the other's.  It writes test input; no verdict
depends on its code.
"""

import os
import random
import sys

from .pstress import pstress2_text

# break kind -> rule id the checker must report
BREAKS = {
    "skip-commit": "duplicate",
    "double-commit": "duplicate",
    "drop-uncounted": "no-loss",
    "overlap": "one-owner",
    "commit-after-loss": "after-loss",
    "low-prio-takeover": "takeover-prio",
    "panic-handover": "panic-protect",
    "grant-wrong": "handover-target",
    "thread-hostile": "thread-takeover",
    "serial-missing": "serial-missing",
    "serial-corrupt": "serial-corrupt",
    "serial-order": "serial-order",
    "serial-partial": "serial-partial",
    "serial-extra": "serial-extra",
    "producer-gap": "producer-gap",
    "producer-order": "producer-order",
}

CON = "ttyS0"
# the writer of each record context: the CPU's task kthread, hrtimer or
# NMI handler; emergency and panic sections run in a task kthread here
WRITER = {"task": "task0", "hardirq": "hardirq", "nmi": "nmi", "emerg": "task0",
          "panic": "task0"}


class Sim:
    def __init__(self, out, serial, cpus=4, seed=1, latency=False, breaks=(),
                 reorder=True):
        self.out = out
        self.serial = serial
        self.cpus = max(2, cpus)
        self.rnd = random.Random(seed)
        self.latency = latency
        self.breaks = set(breaks)
        self.done_breaks = set()
        self.reorder = reorder
        self.t = 10.0
        self.nev = 0
        self.seq = 1000
        self.pending = []          # [(seq, text)] stored, not printed
        self.next_seq = 1000       # console's next seq
        self.n = {}                # producer -> n
        self.rb_cap = 60
        self.owner = None          # (cpu, ctx, thread, prio)
        self.serial_lines = 0
        self.boot_ts = 5.0
        self.delayed = []          # events to write later (reorders)
        self.kinds = {}            # seq -> ("sup"|"ml", original text)

    # ------------------------------------------------------------ output
    def tick(self, lo=0.5, hi=20.0):
        self.t += self.rnd.uniform(lo, hi) * 1e-6
        return self.t

    def ev(self, cpu, name, fields, comm=None, pid=None, ts=None):
        if ts is None:
            ts = self.tick()
        if comm is None:
            comm, pid = ("pr/ttyS0", 15) if cpu == 0 and "thread=1" in fields else \
                        ("stress-ng", 200 + cpu)
        pad = " " * max(0, 20 - len(name))
        if self.latency:
            line = "%8.8s-%-5d %3d%s %12.6f: %s: %s%s\n" % (
                comm, pid, cpu, "d.h1." if "nmi" in fields else "d....", ts, name, pad, fields)
        else:
            line = "%16s-%-5d [%03d] %12.6f: %s: %s%s\n" % (comm, pid, cpu, ts, name, pad, fields)
        self.out.write(line)
        self.nev += 1

    def sline(self, text, ctxc="A"):
        self.serial.write("%s[%5d.%06d] %s\n" % (ctxc, int(self.boot_ts),
                                                  int((self.boot_ts % 1) * 1e6), text))
        self.serial_lines += 1

    def spartial(self, text, ctxc, frac):
        full = "%s[%5d.%06d] %s" % (ctxc, int(self.boot_ts), int((self.boot_ts % 1) * 1e6), text)
        cut = max(1, int(len(full) * frac))
        self.serial.write(full[:cut] + "\n")

    # ------------------------------------------------------------ records
    def store(self, cpu, ctx, kernel_text=None, kind=None):
        if kernel_text is None:
            # a format 2 record of the context's writer (interfaces.md
            # section 3)
            prod = (1, cpu, ctx, WRITER[ctx])
            n = self.n.get(prod, 0)
            self.n[prod] = n + 1
            if "producer-gap" in self.breaks and "producer-gap" not in self.done_breaks \
                    and self.nev > self.half and n > 3:
                self.done_breaks.add("producer-gap")
                n = self.n[prod]
                self.n[prod] = n + 1
            ln = self.rnd.randint(8, 60)
            if "producer-order" in self.breaks and "producer-order" not in self.done_breaks \
                    and self.nev > self.half and n > 3 and kind is None:
                # the writer's next record gets the seq before this one
                self.done_breaks.add("producer-order")
                self.n[prod] = n + 2
                self.store_text(cpu, pstress2_text(1, cpu, ctx, prod[3], n + 1, ln), ctx)
            text = pstress2_text(1, cpu, ctx, prod[3], n, ln)
            caller = "C%d" % cpu if ctx in ("hardirq", "nmi") else "T%d" % (200 + cpu)
        else:
            text = kernel_text
            caller = "T1"
        seq = self.seq
        self.seq += 1
        self.boot_ts += self.rnd.uniform(1e-5, 3e-4)
        level = 4 if kernel_text is None else 6
        if kind == "sup":
            level = 7                     # below the console loglevel
        elif kind == "ml":
            self.kinds[seq] = ("ml", text)
            text = text.replace("\n", " ")
        elif kind == "cont":
            # LOG_CONT: stored, then stored again extended (same seq)
            self.ev(cpu, "nobkl_store", "seq=%d len=%d level=%d caller=%s text=%s" %
                    (seq, len(text), level, caller, text))
            text = text + " (continued)"
        if kind == "sup":
            self.kinds[seq] = ("sup", text)
        self.ev(cpu, "nobkl_store", "seq=%d len=%d level=%d caller=%s text=%s" %
                (seq, len(text), level, caller, text))
        self.pending.append((seq, text))
        # ringbuffer overwrite
        while len(self.pending) > self.rb_cap:
            self.pending.pop(0)

    def store_text(self, cpu, text, ctx):
        """Store one more stressor record of the same context."""
        seq = self.seq
        self.seq += 1
        self.boot_ts += self.rnd.uniform(1e-5, 3e-4)
        caller = "C%d" % cpu if ctx in ("hardirq", "nmi") else "T%d" % (200 + cpu)
        self.ev(cpu, "nobkl_store", "seq=%d len=%d level=4 caller=%s text=%s" %
                (seq, len(text), caller, text))
        self.pending.append((seq, text))

    # ------------------------------------------------------------ console
    @staticmethod
    def who(o):
        cpu, ctx, thread, prio = o
        return "prio=%s thread=%d ctx=%s" % (prio, thread, ctx)

    def acquire(self, o, how, prev=None, unsafe=0, ts=None):
        cpu = o[0]
        if prev is None:
            pf = "prev_locked=0 prev_cpu=0 prev_prio=none prev_thread=0 prev_unsafe=0"
        else:
            pf = "prev_locked=1 prev_cpu=%d prev_prio=%s prev_thread=%d prev_unsafe=%d" % (
                prev[0], prev[3], prev[2], unsafe)
        self.ev(cpu, "nobkl_acquire", "con=%s how=%s %s %s" % (CON, how, self.who(o), pf), ts=ts)
        self.owner = o

    def release(self, o, handover=0, ts=None):
        self.ev(o[0], "nobkl_release", "con=%s %s handover=%d" % (CON, self.who(o), handover),
                ts=ts)
        if self.owner == o:
            self.owner = None

    def emit(self, o, seq, ln, dropped):
        self.ev(o[0], "nobkl_emit", "con=%s seq=%d len=%d dropped=%d %s" %
                (CON, seq, ln, dropped, self.who(o)))

    def commit(self, o, seq):
        self.ev(o[0], "nobkl_commit", "con=%s seq=%d %s" % (CON, seq, self.who(o)))

    def next_record(self):
        """(seq, text, dropped) of the next record to print, or None."""
        if not self.pending:
            return None
        seq, text = self.pending[0]
        dropped = seq - self.next_seq if seq > self.next_seq else 0
        return seq, text, dropped

    def print_one(self, o, interrupt=None):
        """Print the next record as owner o.  interrupt: None or a callable
        run in the middle of the record (returns True if o lost ownership)."""
        r = self.next_record()
        if r is None:
            return False
        seq, text, dropped = r
        ctxc = "T" if o[2] else "A"
        brk = self.want_break
        kd = self.kinds.pop(seq, None)
        if kd is not None:
            if dropped:
                self.serial.write("%s** %d printk messages dropped **\n" % (ctxc, dropped))
            if kd[0] == "sup":
                self.emit(o, seq, 0, dropped)
            else:
                self.emit(o, seq, len(text) + 15, dropped)
                for part in kd[1].split("\n"):
                    self.sline(part, ctxc)
            self.commit(o, seq)
            self.pending.pop(0)
            self.next_seq = seq + 1
            return True
        if dropped == 0 and len(self.pending) > 2 and brk("drop-uncounted"):
            # skip one record without counting it
            self.pending.pop(0)
            seq, text = self.pending[0]
            dropped = 0
        self.emit(o, seq, len(text) + 15, dropped)
        if dropped:
            self.serial.write("%s** %d printk messages dropped **\n" % (ctxc, dropped))
        if interrupt is not None:
            self.spartial(text, ctxc, self.rnd.uniform(0.05, 0.95))
            lost = interrupt(o, seq)
            if lost:
                # the new owner has printed (incl. the reprint) already
                return "lost"
            # (not reached in this model)
        if brk("serial-partial"):
            self.spartial(text, ctxc, 0.5)
        if brk("serial-extra"):
            self.sline("kernel: unexplained extra line %d" % self.rnd.randint(0, 1 << 30), ctxc)
        if brk("serial-missing"):
            pass  # line not written
        elif brk("serial-corrupt"):
            i = len(text) - 3
            self.sline(text[:i] + ("X" if text[i] != "X" else "Y") + text[i + 1:], ctxc)
        elif len(self.pending) > 1 and brk("serial-order"):
            seq2, text2 = self.pending[1]
            self.sline(text2, ctxc)
            self.sline(text, ctxc)
            self.commit(o, seq)
            self.pending.pop(0)
            self.next_seq = seq + 1
            self.emit(o, seq2, len(text2) + 15, 0)
            self.commit(o, seq2)
            self.pending.pop(0)
            self.next_seq = seq2 + 1
            return True
        else:
            self.sline(text, ctxc)
        if brk("skip-commit"):
            # finished without advancing the seq: printed again
            self.emit(o, seq, len(text) + 15, 0)
            self.sline(text, ctxc)
        self.commit(o, seq)
        if brk("double-commit"):
            self.emit(o, seq, len(text) + 15, 0)
            self.sline(text, ctxc)
            self.commit(o, seq)
        self.pending.pop(0)
        self.next_seq = seq + 1
        return True

    def want_break(self, kind):
        if kind in self.breaks and kind not in self.done_breaks and self.nev > self.half:
            self.done_breaks.add(kind)
            return True
        return False

    # ------------------------------------------------------------ scenarios
    def session(self, o, nrec, interrupts=True):
        """o acquires directly, prints up to nrec records, releases."""
        rnd = self.rnd
        if self.want_break("overlap") and self.owner is None:
            # someone else grabs it "directly" although o owns it
            self.acquire(o, "direct")
            other = ((o[0] + 1) % self.cpus, "task", 0, "normal")
            self.acquire(other, "direct", prev=o)
            self.print_one(other)
            self.release(other)
            self.print_one(o)
            self.release(o)
            return
        late_release = None
        if self.owner is None:
            self.acquire(o, "direct")
        for i in range(nrec):
            kind = None
            if interrupts and rnd.random() < 0.12:
                kind = rnd.choice(("hostile-nmi", "hostile-remote", "handover", "handover-mid",
                                   "timeout", "panic", "release-mid"))
            if self.breaks:
                for k in ("commit-after-loss", "low-prio-takeover", "grant-wrong",
                          "thread-hostile", "panic-handover"):
                    if k in self.breaks and k not in self.done_breaks and self.nev > self.half:
                        kind = k
            if kind is None:
                if not self.print_one(o):
                    break
                continue
            res = self.interrupt(o, kind)
            if res == "lost":
                return
            if res is False:
                break
        if self.reorder and rnd.random() < 0.2 and o[2] == 0:
            # release traced after the next owner's direct acquire
            late_release = o
            self.owner = None
            nxt = ((o[0] + 1) % self.cpus, "hardirq", 0, "normal")
            self.acquire(nxt, "direct")
            self.release(o)
            self.print_one(nxt)
            self.release(nxt)
            return
        self.release(o)

    def interrupt(self, o, kind):
        """Take the console from o in the middle of a record."""
        rnd = self.rnd
        cpu = o[0]
        if self.next_record() is None:
            return False
        if self.pending[0][0] in self.kinds:
            return self.print_one(o)
        if kind == "release-mid" and not o[2] and o[3] != "panic":
            # a waiter asks, the owner releases mid-record (can_proceed),
            # the waiter has timed out meanwhile: plain release, reprint
            seq, text, dropped = self.next_record()
            wcpu = (cpu + rnd.randint(1, self.cpus - 1)) % self.cpus
            w = (wcpu, "task", 0, "panic" if o[3] == "emergency" else "emergency")
            self.ev(wcpu, "nobkl_handover_request", "con=%s %s owner_cpu=%d owner_prio=%s" %
                    (CON, self.who(w), cpu, o[3]))
            self.emit(o, seq, len(text) + 15, dropped)
            ctxc = "T" if o[2] else "A"
            if dropped:
                self.serial.write("%s** %d printk messages dropped **\n" % (ctxc, dropped))
            self.spartial(text, ctxc, rnd.uniform(0.1, 0.9))
            self.ev(wcpu, "nobkl_handover_timeout", "con=%s %s owner_cpu=%d owner_prio=%s "
                    "waited_us=%d" % (CON, self.who(w), cpu, o[3], rnd.randint(900, 1100)))
            self.release(o)
            return "lost"
        if kind == "hostile-nmi":
            t = (cpu, "nmi", 0, "emergency" if o[3] == "normal" else "panic")
            if o[3] == "panic":
                return self.print_one(o)
            return self._hostile(o, t, same_cpu=True)
        if kind == "hostile-remote" or kind == "panic":
            prio = "panic" if kind == "panic" or o[3] == "emergency" else "emergency"
            if o[3] == "panic":
                return self.print_one(o)
            t = ((cpu + rnd.randint(1, self.cpus - 1)) % self.cpus, "task", 0, prio)
            return self._hostile(o, t, same_cpu=False)
        if kind == "low-prio-takeover":
            self.done_breaks.add(kind)
            t = ((cpu + 1) % self.cpus, "task", 0, o[3])
            return self._hostile(o, t, same_cpu=False)
        if kind == "thread-hostile":
            self.done_breaks.add(kind)
            if o[2] or o[3] != "normal":
                # make a normal-priority non-thread owner first
                self.release(o)
                o = (1, "task", 0, "normal")
                self.acquire(o, "direct")
            return self._hostile(o, (0, "task", 1, "emergency"), same_cpu=False)
        if kind == "commit-after-loss":
            self.done_breaks.add(kind)
            prio = "emergency" if o[3] == "normal" else "panic"
            if o[3] == "panic":
                return self.print_one(o)
            t = ((cpu + 1) % self.cpus, "task", 0, prio)
            r = self.next_record()
            seq, text, dropped = r
            self.emit(o, seq, len(text) + 15, dropped)
            if dropped:
                self.serial.write("T** %d printk messages dropped **\n" % dropped)
            self.spartial(text, "T" if o[2] else "A", 0.5)
            self.acquire(t, "hostile", prev=o)
            self.commit(o, seq)          # <- the broken commit
            self.print_one(t)
            self.release(t)
            self.ev(o[0], "nobkl_lost", "con=%s %s where=seq owner_cpu=0 owner_prio=none"
                    % (CON, self.who(o)))
            return "lost"
        if kind in ("handover", "handover-mid", "grant-wrong", "panic-handover"):
            if o[3] == "panic" and kind != "panic-handover":
                return self.print_one(o)
            wcpu = (cpu + rnd.randint(1, self.cpus - 1)) % self.cpus
            wprio = "emergency" if o[3] != "emergency" else "panic"
            if kind == "panic-handover":
                self.done_breaks.add(kind)
                # o becomes a panic-priority owner first
                if o[3] != "panic":
                    self.release(o)
                    o = (cpu, "task", 0, "panic")
                    self.acquire(o, "direct")
                wprio = "emergency"
            w = (wcpu, "task", 0, wprio)
            self.ev(wcpu, "nobkl_handover_request", "con=%s %s owner_cpu=%d owner_prio=%s" %
                    (CON, self.who(w), cpu, o[3]))
            # a panic-priority owner hands over only in the middle of a
            # record by mistake (at its release any waiter may get it)
            mid = kind in ("handover-mid", "panic-handover")
            if mid:
                r = self.next_record()
                seq, text, dropped = r
                self.emit(o, seq, len(text) + 15, dropped)
                if dropped:
                    self.serial.write("%s** %d printk messages dropped **\n"
                                      % ("T" if o[2] else "A", dropped))
                self.spartial(text, "T" if o[2] else "A", rnd.uniform(0.1, 0.9))
            else:
                self.print_one(o)
            to_cpu = wcpu
            if kind == "grant-wrong":
                self.done_breaks.add(kind)
                to_cpu = (wcpu + 1) % self.cpus
                if to_cpu == cpu:
                    to_cpu = (to_cpu + 1) % self.cpus
            self.ev(cpu, "nobkl_handover_grant", "con=%s %s to_cpu=%d to_prio=%s" %
                    (CON, self.who(o), to_cpu, wprio))
            if self.reorder and rnd.random() < 0.3:
                self.acquire(w, "handover", prev=o)
                self.release(o, handover=1)
            else:
                self.release(o, handover=1)
                self.acquire(w, "handover", prev=o)
            for _ in range(rnd.randint(1, 4)):
                if not self.print_one(w):
                    break
            self.release(w)
            return "lost"
        if kind == "timeout":
            if o[3] == "panic":
                return self.print_one(o)
            wcpu = (cpu + rnd.randint(1, self.cpus - 1)) % self.cpus
            w = (wcpu, "task", 0, "emergency" if o[3] == "normal" else "panic")
            self.ev(wcpu, "nobkl_handover_request", "con=%s %s owner_cpu=%d owner_prio=%s" %
                    (CON, self.who(w), cpu, o[3]))
            self.print_one(o)
            self.ev(wcpu, "nobkl_handover_timeout", "con=%s %s owner_cpu=%d owner_prio=%s "
                    "waited_us=%d" % (CON, self.who(w), cpu, o[3], rnd.randint(900, 1100)))
            return self._hostile(o, w, same_cpu=False)
        return self.print_one(o)

    def _hostile(self, o, t, same_cpu):
        """t takes the console from o in the middle of o's next record."""
        rnd = self.rnd
        r = self.next_record()
        if r is None:
            return False
        seq, text, dropped = r
        self.emit(o, seq, len(text) + 15, dropped)
        ctxc = "T" if o[2] else "A"
        if dropped:
            self.serial.write("%s** %d printk messages dropped **\n" % (ctxc, dropped))
        self.spartial(text, ctxc, rnd.uniform(0.05, 0.95))
        lost_first = (not same_cpu) and self.reorder and rnd.random() < 0.25
        if lost_first:
            # victim notices before the taker's acquire event is traced
            ts_acq = self.tick()
            self.ev(o[0], "nobkl_lost", "con=%s %s where=can_proceed owner_cpu=%d owner_prio=%s"
                    % (CON, self.who(o), t[0], t[3]))
            self.acquire(t, "hostile", prev=o, unsafe=rnd.randint(0, 1) if t[3] == "panic" else 0)
        else:
            self.acquire(t, "hostile", prev=o, unsafe=rnd.randint(0, 1) if t[3] == "panic" else 0)
        for _ in range(rnd.randint(1, 5)):
            if not self.print_one(t):
                break
        if not same_cpu and not lost_first:
            # remote victim notices while t prints; traced on its CPU
            self.ev(o[0], "nobkl_lost", "con=%s %s where=%s owner_cpu=%d owner_prio=%s" % (
                CON, self.who(o), rnd.choice(("can_proceed", "enter_unsafe", "exit_unsafe",
                                               "seq")), t[0], t[3]))
        self.release(t)
        if same_cpu:
            self.ev(o[0], "nobkl_lost", "con=%s %s where=exit_unsafe owner_cpu=0 owner_prio=none"
                    % (CON, self.who(o)))
        return "lost"

    # ------------------------------------------------------------ run
    def run(self, events, drop_trace=False):
        rnd = self.rnd
        self.half = events // 2
        self.out.write("cpus=%d\n" % self.cpus)
        # boot messages before the trace
        for i in range(30):
            self.sline("boot message %d before tracing" % i)
            self.boot_ts += 0.001
        self.serial.write("Starting init: /bin/sh\n")
        thread = (0, "task", 1, "normal")
        dropped_done = False
        while self.nev < events:
            # producers
            for _ in range(rnd.randint(1, 6)):
                cpu = rnd.randrange(self.cpus)
                ctx = rnd.choice(("task", "task", "hardirq", "nmi", "emerg", "panic"))
                self.store(cpu, ctx)
            if rnd.random() < 0.03:
                self.store(rnd.randrange(self.cpus), "task",
                           kernel_text="random: kernel message %d" % rnd.randint(0, 99999))
            x = rnd.random()
            if x < 0.01:
                self.store(rnd.randrange(self.cpus), "task", kind="sup",
                           kernel_text="debug: suppressed message %d" % rnd.randint(0, 99999))
            elif x < 0.02:
                self.store(rnd.randrange(self.cpus), "task", kind="ml",
                           kernel_text="multi line %d\n  second line\n  third line"
                           % rnd.randint(0, 99999))
            elif x < 0.03:
                self.store(rnd.randrange(self.cpus), "task", kind="cont",
                           kernel_text="cont message %d" % rnd.randint(0, 99999))
            if rnd.random() < 0.01:
                for _ in range(self.rb_cap + rnd.randint(1, 20)):
                    self.store(rnd.randrange(self.cpus), "task")
            if rnd.random() < 0.02:
                self.serial.write("stress-ng: info:  [%d] dispatching hogs\n" % rnd.randint(1, 999))
            if drop_trace and not dropped_done and self.nev > self.half:
                dropped_done = True
                self.out.write("CPU:%d [%d EVENTS DROPPED]\n" % (1, rnd.randint(5, 500)))
            # who prints
            x = rnd.random()
            if x < 0.75:
                o = thread
            elif x < 0.9:
                o = (rnd.randrange(self.cpus), rnd.choice(("task", "hardirq")), 0, "emergency")
            else:
                o = (rnd.randrange(1, self.cpus), "task", 0, "normal")
            self.session(o, rnd.randint(1, 8))
        # drain so everything stored is printed before the end
        while self.pending:
            self.session(thread, len(self.pending), interrupts=False)
        for i in range(5):
            self.sline("after tracing %d" % i)
        return self.nev


def generate(outdir, events=100000, cpus=4, seed=1, breaks=(), drop_trace=False,
             latency=False, console_log=True, reorder=True):
    os.makedirs(outdir, exist_ok=True)
    for b in breaks:
        if b not in BREAKS:
            raise ValueError("unknown break %s (known: %s)" % (b, ", ".join(BREAKS)))
    with open(os.path.join(outdir, "trace.txt"), "w", buffering=1 << 20) as out, \
            open(os.path.join(outdir, "console.log") if console_log else os.devnull, "w",
                 buffering=1 << 20) as ser:
        sim = Sim(out, ser, cpus=cpus, seed=seed, latency=latency, breaks=breaks,
                  reorder=reorder)
        n = sim.run(events, drop_trace=drop_trace)
    if console_log:
        with open(os.path.join(outdir, "stats.txt"), "w") as f:
            f.write("run=1 state=idle last_stop=duration elapsed_ms=1000\n")
            for (run, cpu, ctx, writer), cnt in sorted(sim.n.items()):
                f.write("producer cpu=%d ctx=%s writer=%s attempted=%d stored=%d\n"
                        % (cpu, ctx, writer, cnt, cnt))
    missing = set(breaks) - sim.done_breaks
    return {"events": n, "breaks_done": sorted(sim.done_breaks), "breaks_missed": sorted(missing)}


def main_synth(a):
    if a.list_breaks:
        for k, r in BREAKS.items():
            print("%-20s -> %s" % (k, r))
        return 0
    try:
        info = generate(a.outdir, events=a.events, cpus=a.cpus, seed=a.seed, breaks=a.breaks,
                        drop_trace=a.drop_trace, latency=a.latency_format,
                        console_log=not a.no_console_log)
    except ValueError as e:
        sys.stderr.write("analysis synth: %s\n" % e)
        return 2
    print("wrote %s/trace.txt (%d events)%s" % (
        a.outdir, info["events"],
        (", breaks: " + ",".join(info["breaks_done"])) if info["breaks_done"] else ""))
    if info["breaks_missed"]:
        sys.stderr.write("analysis synth: could not inject %s\n" % ",".join(info["breaks_missed"]))
        return 1
    return 0
