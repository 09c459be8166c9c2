"""Hand-written synthetic traces for the tests.

    t = Trace()
    T = t.ctx(cpu=0, thread=1)              # printer thread on cpu 0
    E = t.ctx(cpu=1, prio="emergency")
    t.store("pstress ...")                  # nobkl_store, returns seq
    t.acquire(T); t.emit(T, 1); t.commit(T, 1); t.release(T)
    t.write(tmpdir)                         # trace.txt + console.log

Serial output is produced alongside: `emit` + `commit` print the full
line; `partial()` prints a cut line.  `print_rec()` is emit, line and
commit; `take_over()` a hostile takeover that prints records and
releases; `hand_over()` a grant, its release and the waiter's pickup.  Every helper takes `ts=` to force a
timestamp; otherwise time advances by 10 us per event.

`Trace(chain=True)` models the console state word as the kernel keeps it
(`cons_state`, with the transition count) and gives the events that
report a transition its `old_state`/`new_state` fields: call the helpers
in the order the state changed (causal order), give an event that was
traced late a later `ts=`, and list the trace by timestamp with
`listed_by_time()`, as trace-cmd would.
"""

import os
import zlib

from analysis.pstress import pstress2_text


# the writer of a context's records in these traces (interfaces.md
# section 3: sections may run in any writer of the CPU)
WRITER = {"task": "task0", "hardirq": "hardirq", "nmi": "nmi", "emerg": "task0",
          "panic": "task0"}


def pstress(cpu, ctx, n, payload="abcdefgh", run=1, crc=None, length=None, writer=None,
            version=2, literal=False):
    """A stressor record.  Version 2 (what the stressor prints): the
    payload is the one its header seeds, `payload` gives only its length,
    unless `literal` (then `payload` itself, with a crc that checks out:
    a record the stressor never made, or a test that needs to know what
    the payload says); `writer` defaults to WRITER[ctx].
    `crc` and `length` replace the k= and l= fields (a damaged record).
    Version 1 (results recorded before v=): the payload as given."""
    if version == 1:
        pb = payload.encode()
        k = crc if crc is not None else "%08x" % (zlib.crc32(pb) ^ 0xFFFFFFFF)
        ln = length if length is not None else len(pb)
        return "pstress r=%d c=%d x=%s n=%d l=%d k=%s %s" % (run, cpu, ctx, n, ln, k, payload)
    w = writer if writer is not None else WRITER.get(ctx, "task0")
    text = pstress2_text(run, cpu, ctx, w, n, len(payload), payload if literal else None)
    if length is not None:
        text = text.replace(" l=%d " % len(payload), " l=%d " % length, 1)
    if crc is not None:
        text = text[:-8] + crc
    return text


class Ctx:
    def __init__(self, cpu, prio="normal", thread=0, ctx="task"):
        self.cpu, self.prio, self.thread, self.ctx = cpu, prio, thread, ctx

    def f(self):
        return "prio=%s thread=%d ctx=%s" % (self.prio, self.thread, self.ctx)


PRIO = {"none": 0, "normal": 1, "emergency": 2, "panic": 3}


class State:
    """The console state word of the kernel (struct cons_state): the 32
    state bits, with the sequence in the low half on 64-bit; `unsafe`
    and `enabled` are never set (the tracepoints clear them)."""

    def __init__(self, arch32=False, seq=0):
        self.arch32 = arch32
        self.locked = self.cpu = self.prio = self.thread = self.req = self.trans = 0
        self.seq = seq

    def word(self):
        bits = (1 | self.locked << 2 | self.thread << 4 | self.prio << 5 |
                self.req << 7 | self.cpu << 9 | (self.trans & 31) << 27)
        return bits if self.arch32 else bits << 32 | self.seq & 0xffffffff

    def change(self, **kw):
        """One counted transition: (old word, new word)."""
        old = self.word()
        for k, v in kw.items():
            setattr(self, k, v)
        self.trans += 1
        return old, self.word()


class Trace:
    def __init__(self, con="ttyS0", cpus=4, latency=False, chain=False, arch32=False,
                 marks=False):
        self.con = con
        # marks: the kernel's acquire carries unsafe_takeover (sticky once set)
        self.marks = marks
        self.marked = False
        self.state = State(arch32) if chain else None
        self.lines = ["cpus=%d" % cpus]
        self.serial = ["[    0.000000] Linux version 6.1.0 (boot, before the trace)",
                       "[    0.100000] console [ttyS0] enabled"]
        self.t = 100.0
        self.seq = 10
        self.texts = {}
        self.latency = latency
        self.stamp = 1.0

    def ctx(self, cpu, prio="normal", thread=0, ctx="task"):
        return Ctx(cpu, prio, thread, ctx)

    def ev(self, cpu, name, fields, ts=None):
        if ts is None:
            self.t += 10e-6
            ts = self.t
        else:
            self.t = ts
        comm = "my-proc with-dash" if cpu % 2 else "pr/ttyS0"
        pad = " " * max(0, 20 - len(name))
        if self.latency:
            self.lines.append("%8.8s-%-5d %3dd.h1. %12.6f: %s: %s%s" % (comm, 100 + cpu, cpu, ts,
                                                                     name, pad, fields))
        else:
            self.lines.append("%16s-%-5d [%03d] %12.6f: %s: %s%s" % (comm, 100 + cpu, cpu, ts,
                                                                  name, pad, fields))

    # ---------------------------------------------------------------- events
    def store(self, text, cpu=1, seq=None, ts=None, level=4):
        if seq is None:
            seq = self.seq
        self.seq = max(self.seq, seq) + 1
        self.texts[seq] = text
        self.ev(cpu, "nobkl_store", "seq=%d len=%d level=%d caller=T%d text=%s"
                % (seq, len(text), level, 100 + cpu, text), ts)
        return seq

    def dataless(self, cpu=1, seq=None, ts=None):
        """A record prb_reserve() committed without text (nobkl_dataless)."""
        if seq is None:
            seq = self.seq
        self.seq = max(self.seq, seq) + 1
        self.ev(cpu, "nobkl_dataless", "seq=%d" % seq, ts)
        return seq

    def acquire(self, c, how="direct", prev=None, ts=None, unsafe=0, final=False):
        """`final`: a hostile takeover inside an unsafe section (unsafe=1) by
        the final flush of a panic, which marks the console (marks=True)."""
        if prev is None:
            # a free state word keeps the CPU of its last owner, and the
            # tracepoint prints it (prev_cpu agrees with old_state)
            p = "prev_locked=0 prev_cpu=%d prev_prio=none prev_thread=0 prev_unsafe=0" % (
                self.state.cpu if self.state is not None else 0)
        else:
            p = "prev_locked=1 prev_cpu=%d prev_prio=%s prev_thread=%d prev_unsafe=%d" % (
                prev.cpu, prev.prio, prev.thread, unsafe)
        if how == "handover":
            tr = self.observed()
        else:
            tr = self.transition(locked=1, cpu=c.cpu, prio=PRIO[c.prio], thread=c.thread, req=0)
        if self.marks:
            self.marked = self.marked or bool(how == "hostile" and unsafe and final)
            p += " unsafe_takeover=%d" % self.marked
        self.ev(c.cpu, "nobkl_acquire", "con=%s how=%s %s %s%s" % (self.con, how, c.f(), p, tr),
                ts)

    # the old_state/new_state fields (chain=True), "" otherwise
    def transition(self, **kw):
        if self.state is None:
            return ""
        return " old_state=%d new_state=%d" % self.state.change(**kw)

    def observed(self):
        if self.state is None:
            return ""
        w = self.state.word()
        return " old_state=%d new_state=%d" % (w, w)

    def no_transition(self):
        return "" if self.state is None else " old_state=0 new_state=0"

    def release(self, c, handover=0, ts=None):
        tr = self.no_transition() if handover else self.transition(locked=0, thread=0, prio=0,
                                                                   req=0)
        self.ev(c.cpu, "nobkl_release", "con=%s %s handover=%d%s" % (self.con, c.f(), handover,
                                                                      tr), ts)

    def request(self, c, owner, ts=None):
        tr = self.transition(req=PRIO[c.prio])
        self.ev(c.cpu, "nobkl_handover_request", "con=%s %s owner_cpu=%d owner_prio=%s%s"
                % (self.con, c.f(), owner.cpu, owner.prio, tr), ts)

    def grant(self, c, to_cpu, to_prio, ts=None):
        tr = self.transition(locked=1, cpu=to_cpu, prio=PRIO[to_prio], thread=0, req=0)
        self.ev(c.cpu, "nobkl_handover_grant", "con=%s %s to_cpu=%d to_prio=%s%s"
                % (self.con, c.f(), to_cpu, to_prio, tr), ts)

    def timeout(self, c, owner, waited=1000, ts=None, removed=True):
        """removed: the waiter took its request out of the state (a
        transition); False when the state had changed already."""
        tr = self.transition(req=0) if removed else self.no_transition()
        self.ev(c.cpu, "nobkl_handover_timeout", "con=%s %s owner_cpu=%d owner_prio=%s "
                "waited_us=%d%s" % (self.con, c.f(), owner.cpu, owner.prio, waited, tr), ts)

    def lost(self, c, where="can_proceed", owner=None, ts=None):
        oc, op = (owner.cpu, owner.prio) if owner is not None else (0, "none")
        self.ev(c.cpu, "nobkl_lost", "con=%s %s where=%s owner_cpu=%d owner_prio=%s"
                % (self.con, c.f(), where, oc, op), ts)

    def take_over(self, taker, victim, seqs, unsafe=0):
        """A hostile takeover: `taker` acquires the console from `victim`
        (its prev_* name the victim; `unsafe`: inside its unsafe
        section), prints the records `seqs` and releases.  The victim's
        nobkl_lost is the test's to place."""
        self.acquire(taker, "hostile", prev=victim, unsafe=unsafe)
        for q in seqs:
            self.print_rec(taker, q)
        self.release(taker)

    def hand_over(self, owner, to, prev=None, to_prio=None):
        """A friendly handover: the owner grants the console to the waiter
        `to` (its CPU, and its priority unless `to_prio`) and releases
        with handover=1, and `to` picks it up (how=handover; its prev_*
        name the owner it requested from, unless `prev`)."""
        self.grant(owner, to.cpu, to_prio or to.prio)
        self.release(owner, handover=1)
        self.acquire(to, "handover", prev=prev or owner)

    def emit(self, c, seq, dropped=0, ts=None, serial=True, length=None):
        text = self.texts.get(seq, "")
        self.ev(c.cpu, "nobkl_emit", "con=%s seq=%d len=%d dropped=%d %s"
                % (self.con, seq, len(text) + 15 if length is None else length, dropped,
                   c.f()), ts)
        if dropped and serial:
            self.serial.append("** %d printk messages dropped **" % dropped)

    def commit(self, c, seq, ts=None, serial=True):
        if self.state is not None and not self.state.arch32:
            tr = self.transition(seq=seq + 1)
        else:
            tr = self.no_transition()
        self.ev(c.cpu, "nobkl_commit", "con=%s seq=%d %s%s" % (self.con, seq, c.f(), tr), ts)

    # ---------------------------------------------------------------- serial
    def line(self, seq, ctxc="", text=None):
        self.stamp += 0.000123
        self.serial.append("%s[%5d.%06d] %s" % (ctxc, int(self.stamp), int(self.stamp % 1 * 1e6),
                                                 text if text is not None else self.texts[seq]))

    def partial(self, seq, frac=0.5, ctxc=""):
        full = "%s[%5d.%06d] %s" % (ctxc, int(self.stamp), int(self.stamp % 1 * 1e6),
                                    self.texts[seq])
        self.serial.append(full[:max(1, int(len(full) * frac))])

    def print_rec(self, c, seq, dropped=0):
        """emit + serial line + commit"""
        self.emit(c, seq, dropped)
        self.line(seq, "T" if c.thread else "A")
        self.commit(c, seq)

    # ---------------------------------------------------------------- output
    def listed_by_time(self):
        """List the events by timestamp, then CPU, as trace-cmd does (the
        helpers were called in causal order)."""
        def key(ln):
            head = ln.split(": ", 1)[0].split()
            return float(head[-1].rstrip(":")), int(head[-2].strip("[]"))
        self.lines[1:] = sorted(self.lines[1:], key=key)

    def report(self):
        return "\n".join(self.lines) + "\n"

    def write(self, d, trace_name="trace.txt", serial=True):
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, trace_name), "w") as f:
            f.write(self.report())
        if serial:
            with open(os.path.join(d, "console.log"), "w") as f:
                f.write("\n".join(self.serial + ["after the trace: poweroff"]) + "\n")
        return str(d)


def printed(records):
    """A trace in which the printer thread prints `records` in order, the
    serial log showing each; returns (trace, seqs)."""
    t = Trace()
    T = t.ctx(0, thread=1)
    seqs = [t.store(r) for r in records]
    t.acquire(T)
    for s in seqs:
        t.print_rec(T, s)
    t.release(T)
    return t, seqs


def busy_with_a_record_from_before_the_trace():
    """The printer thread's first traced emission is of seq 5, stored
    before the trace began (no store event), then three stored records."""
    t = Trace()
    T = t.ctx(0, thread=1)
    t.texts[5] = "old record stored before the trace"
    t.seq = 6
    s = [t.store(pstress(1, "task", i, "p%d" % i)) for i in range(3)]
    t.acquire(T)
    t.print_rec(T, 5)
    for x in s:
        t.print_rec(T, x)
    t.release(T)
    return t


def clean_trace(chain=False):
    """A small clean run: direct acquires, a hostile takeover with reprint,
    a friendly handover, a timeout, dropped records."""
    t = Trace(chain=chain)
    T = t.ctx(0, thread=1)
    E = t.ctx(1, prio="emergency")
    N = t.ctx(0, prio="emergency", ctx="nmi")
    P = t.ctx(2, prio="panic")
    W = t.ctx(3, prio="emergency")
    s = [t.store(pstress(1, "task", n, "payload%d" % n)) for n in range(6)]
    t.acquire(T)
    t.print_rec(T, s[0])
    t.print_rec(T, s[1])
    # NMI on the owner's CPU takes over in the middle of s[2]
    t.emit(T, s[2])
    t.partial(s[2], 0.4, "T")
    t.take_over(N, T, [s[2], s[3]])
    t.lost(T, "exit_unsafe")
    # the thread re-acquires, a remote emergency context asks for a handover
    t.acquire(T)
    t.request(W, T)
    t.print_rec(T, s[4])
    t.hand_over(T, W)
    t.print_rec(W, s[5])
    t.release(W)
    # ringbuffer overwrote 3 records before the console got to them
    for n in range(6, 10):
        t.store(pstress(1, "task", n, "x%d" % n))
    last = t.store(pstress(1, "task", 10, "y10"))
    t.acquire(E)
    t.request(P, E)
    t.emit(E, last - 1, dropped=3)
    t.line(last - 1, "A")
    t.commit(E, last - 1)
    t.timeout(P, E, waited=1000)
    t.emit(E, last)
    t.partial(last, 0.7, "A")
    t.acquire(P, "hostile", prev=E)
    t.lost(E, "seq", owner=P)
    t.print_rec(P, last)
    t.release(P)
    return t, s
