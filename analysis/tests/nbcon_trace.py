"""Synthetic 6.12 (nbcon) traces as `trace-cmd report -l` text.

NbconTrace keeps the console's state word as the kernel's cmpxchgs
would (kernel/printk/nbcon.c, 6.12) and writes each event with the
words, prev_* and owner_* fields the tracepoints derive from them
(patches/6.12/0001), so a test states what the contexts do and the
words follow.  A context is (cpu, ctx, prio[, thread]); ctx is printed
in the latency column as the kernel's trace file does ('z' NMI, 'h'
hardirq, '.' task).  The events print in the series' current format, or
with first_format=True in that of its first version
(nbcon_events.FORMER_FIELDS: a safe owner taken how=hostile, a timeout's
waited_us).
"""

import os

from analysis.nbcon_events import decode_state, encode_state

LATENCY = {"task": "d..1.", "softirq": "d.s1.", "hardirq": "d.h1.", "nmi": "d.z1."}


class NbconTrace:
    def __init__(self, cpus=4, con="ttyS0", word=0, first_format=False):
        self.cpus = cpus
        self.first_format = first_format
        self.con = con
        self.word = word              # the console's state word (unsafe left out)
        self.lines = ["cpus=%d" % cpus]
        self.ts = 1.0

    def line(self, cpu, ctx, name, fields, comm="pr/ttyS0", pid=13):
        self.ts += 0.000010
        self.lines.append("%16s-%-5d %d%s %12.6f: %s: %s" % (
            comm, pid, cpu, LATENCY[ctx], self.ts, name, fields))

    def _ctx(self, prio, thread):
        return "con=%s prio=%s thread=%d" % (self.con, prio, thread)

    # ---------------------------------------------------------- records
    def store(self, cpu, seq, text, level=4, caller=None):
        caller = caller or "T%d" % (100 + cpu)
        self.line(cpu, "task", "vprintk_store", "seq=%d len=%d level=%d caller=%s text=%s"
                  % (seq, len(text), level, caller, text), comm="sh", pid=100 + cpu)

    def emit(self, cpu, ctx, prio, seq, length=40, dropped=0, replay=0, thread=0):
        self.line(cpu, ctx, "nbcon_emit", "con=%s seq=%d len=%d dropped=%d prio=%s thread=%d "
                  "replay=%d" % (self.con, seq, length, dropped, prio, thread, replay))

    def commit(self, cpu, ctx, prio, seq, thread=0):
        self.line(cpu, ctx, "nbcon_commit", "con=%s seq=%d prio=%s thread=%d"
                  % (self.con, seq, prio, thread))

    def print_record(self, cpu, ctx, prio, seq, thread=0, replay=0):
        self.emit(cpu, ctx, prio, seq, thread=thread, replay=replay)
        self.commit(cpu, ctx, prio, seq, thread=thread)

    # -------------------------------------------------------- ownership
    def _move(self, new):
        old, self.word = self.word, new
        return old, new

    def acquire(self, cpu, ctx, prio, how=None, thread=0, device=0, prev_unsafe=0,
                reacquire=0):
        """nbcon_context_try_acquire_direct() (how direct/takeover by the
        owner), _requested() (how=handover) or _hostile() (prev_unsafe)."""
        cur = decode_state(self.word)
        if how is None:
            how = ("direct" if cur.prio == "none" else
                   "hostile" if prev_unsafe or self.first_format else "takeover")
        mark = cur.unsafe_takeover | (prev_unsafe if how == "hostile" else 0)
        req = cur.req_prio if how == "hostile" and prev_unsafe else "none"
        old, new = self._move(encode_state(prio, req, cpu, mark))
        again = "" if self.first_format else "reacquire=%d " % reacquire
        self.line(cpu, ctx, "nbcon_acquire",
                  "con=%s how=%s prio=%s thread=%d device=%d %sprev_cpu=%d prev_prio=%s "
                  "prev_req_prio=%s prev_unsafe=%d unsafe_takeover=%d old_state=%d "
                  "new_state=%d" % (self.con, how, prio, thread, device, again, cur.cpu,
                                    cur.prio, cur.req_prio, prev_unsafe, mark, old, new))

    def request(self, cpu, ctx, prio, thread=0):
        cur = decode_state(self.word)
        old, new = self._move(encode_state(cur.prio, prio, cur.cpu, cur.unsafe_takeover))
        self.line(cpu, ctx, "nbcon_handover_request", "%s owner_cpu=%d owner_prio=%s "
                  "old_state=%d new_state=%d" % (self._ctx(prio, thread), cur.cpu, cur.prio,
                                                 old, new))

    def timeout(self, cpu, ctx, prio, waited_us=1001, thread=0, removed=True,
                reason="timeout"):
        """A waiter gives up after waited_us (the first format prints it
        as its count of passes; the current one as waited_ns, which reads
        as waited_us again, and as many spins)."""
        cur = decode_state(self.word)
        old = new = 0
        if removed:
            old, new = self._move(encode_state(cur.prio, "none", cur.cpu, cur.unsafe_takeover))
        if self.first_format:
            how_long = "waited_us=%d" % waited_us
        else:
            how_long = "reason=%s removed=%d waited_ns=%d spins=%d" % (
                reason, removed, waited_us * 1000 + 999, waited_us)
        self.line(cpu, ctx, "nbcon_handover_timeout", "%s owner_cpu=%d owner_prio=%s "
                  "%s old_state=%d new_state=%d" % (
                      self._ctx(prio, thread), cur.cpu, cur.prio, how_long, old, new))

    def release(self, cpu, ctx, prio, thread=0):
        cur = decode_state(self.word)
        old, new = self._move(encode_state("none", cur.req_prio, cur.cpu, cur.unsafe_takeover))
        self.line(cpu, ctx, "nbcon_release", "%s handover=%d to_prio=%s old_state=%d "
                  "new_state=%d" % (self._ctx(prio, thread), cur.req_prio != "none",
                                    cur.req_prio, old, new))

    def lost(self, cpu, ctx, prio, where="can_proceed", thread=0):
        cur = decode_state(self.word)
        self.line(cpu, ctx, "nbcon_lost", "%s where=%s owner_cpu=%d owner_prio=%s state=%d"
                  % (self._ctx(prio, thread), where, cur.cpu, cur.prio, self.word))

    def text(self):
        return "\n".join(self.lines) + "\n"

    def write(self, d, target="6.12"):
        """A results directory: trace.txt and source.json."""
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "trace.txt"), "w") as f:
            f.write(self.text())
        with open(os.path.join(d, "source.json"), "w") as f:
            f.write('{"target": "%s"}\n' % target)
        return d
