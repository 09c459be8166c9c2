"""Validation: the fields of each console event and stored record
against what the tracepoints print (interfaces.md section 1), and input
found damaged or cut, which becomes incomplete input with a reason
(Analyzer's bad_event(), trace_loss()).  Each check an item fails by
itself, or against what was taken before it, is here, as a function
that says why the item is bad (field_problem(), store_cpu_problem(),
store_problem(), dataless_problem()); the checker asks it where it
takes the item and reports the answer through bad_event() (a store
whose numbers do not parse, typed_store() reports itself).
Found elsewhere, reported here: the 6.12 reader checks its words as it
reads them (nbcon_events.py; a Damage item, on_damage()), and the model
finds what only the console state shows wrong as it applies an event
(a ValueError from its handler, late_damage()).

Where the checks run: a CPU's timestamps going back is a fault of the
reader's order, so check_read_order() runs as the items are read:
ordering.py's stage calls it before it reorders them, feed() when no
stage reorders them (the 6.12 stage, nbcon_order.py, does not call it:
a 6.12 trace's read order goes unchecked).  Every other check runs in
the checker, as it takes each item in the order the ordering stage
hands on, for two reasons:
  * a bad item is trace loss at its place: the model forgets every
    console's state there and the loss is placed after the events
    processed before it (loss_place(), in chain order).  Reported
    before ordering, the loss would come before events the ordering
    stage still holds, which precede it in chain order: their checks
    would change;
  * some checks compare the item with what was taken before it: the
    highest seq stored (field_problem()), the stored and data-less
    records (store_problem(), dataless_problem()), the CPUs the trace
    header names, and the console history the model skips
    (model.history(): its events are not checked).

Invariants:
  * an event whose fields are not what a tracepoint can print is never
    applied to the model: it is reported (bad_event()), and what it did
    is unknown, so it is trace loss from there on;
  * trace loss (a drop marker, a damaged event, a CPU's timestamps
    going back, an event found damaged later) makes the model forget
    every console's state and tells the followers of the loss
    (on_trace_loss: the serial alignment resyncs); the place
    before the loss is kept (before_loss.py) so that no violation after
    it is blamed on the kernel.

A class of Analyzer (checker.py): the state is the checker's.
"""

import re
import zlib

from .happens_before import NOWHERE, meet, strictly_before
from .model import PRIO, PRIO_NAME
from .pstress import parse_pstress
from .traceparse import store_of

# The values interfaces.md section 1 allows for each symbolic field, and
# the fields that are unsigned decimal numbers (CPU numbers among them).
_BOOL = frozenset(("0", "1"))
_PRIOS = frozenset(PRIO)
FIELD_VALUES = {
    "prio": _PRIOS, "prev_prio": _PRIOS, "to_prio": _PRIOS, "owner_prio": _PRIOS,
    "prev_req_prio": _PRIOS, "device": _BOOL, "replay": _BOOL,
    "ctx": frozenset(("task", "softirq", "hardirq", "nmi")),
    "how": frozenset(("direct", "handover", "hostile")),
    "where": frozenset(("can_proceed", "enter_unsafe", "exit_unsafe", "seq", "release")),
    "thread": _BOOL, "prev_locked": _BOOL, "prev_thread": _BOOL, "prev_unsafe": _BOOL,
    "unsafe_takeover": _BOOL, "handover": _BOOL,
}
NUMBER_FIELDS = frozenset(("seq", "len", "dropped", "waited_us", "old_state", "new_state",
                           "state"))
CON_NAME_RE = re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")   # a console name with its index
SEQ_FAR = 1 << 12            # a seq this far above every stored one was never stored
CPU_FIELDS = frozenset(("prev_cpu", "to_cpu", "owner_cpu"))
SEQ_IN_STATE = 0xffffffff    # the seq in a 64-bit state word (its low half)
TS_JUMP = 1.0                # s: a CPU's timestamps jumping forward this far are
                             #    remembered (a damaged page may be dated too late)


class Validation:
    """Analyzer's field checks and trace loss (a class of it: the state is
    the checker's)."""

    def check_read_order(self, item):
        """A Store or Event in the reader's order (each CPU's in ring
        buffer order): note how its CPU's timestamps go on.  feed()
        calls it, unless a stage in front of feed() reorders the items
        (ordering.py; then `read_order_here` is False and that stage
        calls it as it reads them)."""
        last = self.feed_last_ts.get(item.cpu)
        if last is not None and item.ts < last:
            self.time_went_back(item, last)
        elif last is not None and item.ts - last > TS_JUMP:
            self.ts_jump_from[item.cpu] = last
        self.feed_last_ts[item.cpu] = item.ts

    def time_went_back(self, item, last):
        """A CPU's events are in its ring buffer's order, whose timestamps
        never decrease (the shipped real run has no step back on any
        CPU): one that does means a damaged page timestamp.  The damage
        starts where the CPU's events went wrong: at the step back, or
        at the forward jump before it (a page dated too late is listed
        after every other CPU's events, then its CPU goes back)."""
        self.time_back_count += 1
        if self.time_back is None:
            self.time_back = (item.cpu, last, item.ts, item.lineno)
        self.flush_tie()
        self.flush_held()
        start = min(item.ts, self.ts_jump_from.get(item.cpu, item.ts))
        # its place: the events of that CPU from the jump on may have
        # been processed already (or be held in the ordering stage)
        self.trace_loss(item.cpu, start, "CPU:%d timestamps go back from %.6f to %.6f at "
                        "line %s" % (item.cpu, last, item.ts, item.lineno), NOWHERE)

    def typed_store(self, ev):
        """The Store of a nobkl_store that came as an Event: a hand-made
        item, or one whose numbers the reader could not parse (then None,
        after reporting the bad value)."""
        try:
            return store_of(ev)
        except (KeyError, ValueError) as e:
            self.cur_event = ev
            self.bad_event(None, ev, e)
            return None

    def field_problem(self, ev):
        """Why a console event's fields are not what the tracepoints print
        (a value outside its set, a number that is not an unsigned
        decimal, a CPU the trace does not have, a console name that is
        none, a seq far above every stored record, a dropped count above
        the seq), or None."""
        cpus = self.cpus
        if cpus is not None and ev.cpu is not None and not 0 <= ev.cpu < cpus:
            return "event on CPU %d of a trace of %d CPUs" % (ev.cpu, cpus)
        f = ev.fields
        con = f.get("con")
        if con is not None and CON_NAME_RE.match(con) is None:
            return "con=%r is not a console name" % con[:20]
        for k, v in f.items():
            ok = FIELD_VALUES.get(k)
            if ok is not None:
                if v not in ok:
                    return "%s=%s is not one of %s" % (k, v[:20], "/".join(sorted(ok)))
            elif k in NUMBER_FIELDS:
                if not (v.isdigit() and v.isascii()):
                    return "%s=%s is not an unsigned number" % (k, v[:20])
            elif k in CPU_FIELDS:
                if not (v.isdigit() and v.isascii()) or (cpus is not None and int(v) >= cpus):
                    return "%s=%s is not a CPU of the trace" % (k, v[:20])
        if ev.name == "nobkl_acquire" and "prev_locked" in f:
            # the 6.1 word's layout (the 6.12 reader checks its own words)
            why = self.acquire_problem(f)
            if why is not None:
                return why
        seq = f.get("seq")
        if seq is not None:
            # records are stored (traced) before they are printed, and a
            # console cannot skip more records than there are
            seq = int(seq)
            if self.max_stored is not None and seq > self.max_stored + SEQ_FAR:
                return "seq=%d is far above every record stored in the trace (up to %d)" \
                    % (seq, self.max_stored)
            if int(f.get("dropped", 0)) > seq:
                return "dropped=%s is more than the records before seq %d" % (f["dropped"], seq)
            if ev.name == "nobkl_commit" and not self.arch32:
                # on 64-bit the commit installs seq + 1 in the state
                # word's low half: the record carries its seq twice, and
                # a kernel cannot make the copies disagree
                n = f.get("new_state")
                if n is not None and n != "0" and (int(n) - seq - 1) & SEQ_IN_STATE:
                    return "seq=%d but new_state=%s moves the console to seq %d, not %d" % (
                        seq, n, int(n) & SEQ_IN_STATE, (seq + 1) & SEQ_IN_STATE)
        return None

    def acquire_problem(self, f):
        """Why an acquire's prev_* fields contradict the record itself, or
        None.  The kernel takes the hostile path only for a locked state
        word, and its cmpxchg succeeds only on the word it read
        (__cons_try_acquire()): `how=hostile` with `prev_locked=0` is no
        record the tracepoint can write.  A direct or hostile acquire
        reports the word it replaced twice, decoded in prev_* and whole
        in old_state (state bits: locked 2, thread 4, cur_prio 5-6, cpu
        9-25; the high half of a 64-bit word): the two disagreeing is a
        damaged record, whatever the chain says."""
        how = f.get("how")
        if how == "hostile" and f.get("prev_locked") == "0":
            return "how=hostile with prev_locked=0 (a takeover replaces a locked state word)"
        o, n = f.get("old_state"), f.get("new_state")
        if how == "handover" or o is None or n is None or o == n:
            return None
        w = int(o) if self.arch32 else int(o) >> 32
        word = {"prev_locked": str(w >> 2 & 1), "prev_thread": str(w >> 4 & 1),
                "prev_prio": PRIO_NAME[w >> 5 & 3], "prev_cpu": str(w >> 9 & 0x1ffff)}
        for k, v in word.items():
            if f.get(k) != v:
                return "%s=%s but old_state=%s has %s" % (k, f.get(k), o, v)
        return None

    def store_cpu_problem(self, cpu):
        """Why a nobkl_store on `cpu` is not what the tracepoint prints (a
        CPU the trace does not have), or None.  Asked before anything of
        the store is taken (process_store())."""
        if self.cpus is not None and not 0 <= cpu < self.cpus:
            return "nobkl_store on CPU %d of a trace of %d CPUs" % (cpu, self.cpus)
        return None

    def store_problem(self, seq, length, text):
        """Why a nobkl_store of seq is not the record it stored, or None:
        a text that is not `length` characters (an early tracepoint
        printed `caller=>c<84 text=9` for len=34), a stressor record that
        fails its own check (stressor_text_damage()), a seq traced as
        data-less (a record without text has no store)."""
        if length != len(text):
            return "nobkl_store seq=%d len=%d but the text has %d characters: %r" % (
                seq, length, len(text), text[:40])
        if text[:8] == "pstress ":
            why = stressor_text_damage(text)
            if why:
                return "nobkl_store seq=%d: the stressor record's own check fails (%s): %r" % (
                    seq, why, text[:60])
        if seq in self.dataless:
            return "nobkl_store seq=%d of a record traced as data-less (nobkl_dataless)" % seq
        return None

    def dataless_problem(self, ev):
        """Why a nobkl_dataless is not what the tracepoint prints, or None:
        a seq that is no unsigned number, or one traced before (a
        record is reserved once: stored or data-less, never both)."""
        seq = int_or_none(ev.fields.get("seq"))
        if seq is None or seq < 0:
            return "seq=%r" % ev.fields.get("seq")
        if seq in self.store or seq in self.dataless:
            return "seq=%d is traced twice (a nobkl_store or nobkl_dataless before)" % seq
        return None

    def bad_event(self, con, ev, e, place=None):
        """An event with a field value that is not what interfaces.md says:
        the trace is damaged there (verdict incomplete), and what the
        event did is unknown: as after trace loss, the consoles' state is
        forgotten, so nothing after it blames the kernel.  `place`: the
        loss's (trace_loss())."""
        self.bad_events += 1
        self.bad_lines.add(ev.lineno)
        msg = "bad field value in %s at line %d: %s" % (ev.name, ev.lineno, e)
        if self.first_bad is None:
            self.first_bad = msg
        self.anomaly(con, msg)
        self.trace_loss(ev.cpu, ev.ts, "bad field value at line %d" % ev.lineno, place)

    def on_drop(self, d):
        """Trace data was lost: forget per-console state and resync.  The
        loss happened after the dropping CPU's last event before the
        marker."""
        self.trace_loss(d.cpu, None, d.text)

    def on_damage(self, d):
        """A nobkl event that could not be read (traceparse.Damage): the
        trace lost that event, at its own time when that was readable."""
        self.trace_loss(d.cpu, d.ts, d.text)

    def trace_loss(self, cpu, ts, text, place=None):
        """Events are missing from the trace here (on `cpu`, from `ts` on
        when known): forget per-console state and resync.  Violations
        found after the loss could have started are not the kernel's.
        `place`: the place before the loss in chain order
        (happens_before.py); None: loss_place(cpu), before the last
        events processed of that CPU (a drop marker, a damaged event:
        the damaged one is not processed)."""
        if place is None:
            place = self.loss_place(cpu)
        self.loss_at = place if self.loss_at is None else meet(self.loss_at, place)
        if ts is None:
            if cpu is not None and cpu in self.last_ts_cpu:
                ts = self.last_ts_cpu[cpu]
            elif cpu is not None:
                ts = self.first_ts if self.first_ts is not None else 0.0
            else:
                ts = min(self.last_ts_cpu.values()) if self.last_ts_cpu else 0.0
        if self.loss_start_ts is None or ts < self.loss_start_ts:
            self.loss_start_ts = ts
        self.loss_seen = True
        self.model.forget()
        self.store_holes.clear()
        if self.recorder is not None:
            self.recorder.mark("trace-loss", None, cpu, self.last_ts or 0.0, text)
        for fn in self.on_trace_loss:
            fn()

    def late_damage(self, con, ev, why):
        """ev, an event processed earlier, is found damaged now: as
        bad_event() at ev's time, and the violations found since (they
        are not the kernel's) are marked as after the trace loss.  In
        chain order the loss is placed right before ev."""
        st = self.hb_of(ev)
        self.bad_event(con, ev, ValueError(why),
                       strictly_before(st) if st is not None else NOWHERE)
        for v in self.violations:
            if v["ts"] is not None and v["ts"] >= ev.ts:
                v["after_trace_loss"] = True

    def check_console_names(self):
        """A console whose only event in the trace comes after the events
        of another console whose name is one bit off its own is that
        console's event with a damaged name (`ttyS0` -> `ttyS4`, one
        flipped bit of a trace.dat): a console that is registered prints
        every record, as the other does, and the name of one that is not
        cannot be in an event.  Decided at the end of the trace."""
        for con in list(self.consoles.values()):
            ev = con.first_event
            if con.events != 1 or ev is None or ev.lineno in self.bad_lines:
                continue
            for other in self.consoles.values():
                fe = other.first_event
                if other is con or other.events < 2 or fe is None or fe.lineno > ev.lineno:
                    continue
                if one_bit_apart(con.name, other.name):
                    self.late_damage(con, ev, "con=%s, the only event of that console, is one "
                                     "bit off console %s (%d events from line %d on)"
                                     % (con.name, other.name, other.events, fe.lineno))
                    break


def stressor_text_damage(text):
    """Why a stored stressor record text fails its own check (l= is the
    payload length, k= its crc, interfaces.md section 3), or None.  The
    stressor prints records that pass it, so a stored one that fails was
    damaged in the trace (a flipped bit): the trace is not trustworthy,
    the console is not to blame.  Texts of another shape are left to the
    serial check.  A version 2 record's k= covers all of it: any damage
    fails it."""
    if text[:12] == "pstress v=2 ":
        p = parse_pstress(text)
        return None if p[2] else p[3]
    i = text.find(" k=", 20)
    j = text.rfind(" l=", 20, i) if i > 0 else -1
    if j < 0 or text[i + 11:i + 12] != " ":
        return None
    ln = text[j + 3:i]
    crc = text[i + 3:i + 11]
    payload = text[i + 12:].encode("latin-1")
    if not ln.isdigit() or int(ln) != len(payload):
        return "payload length %d != l=%s" % (len(payload), ln)
    if "%08x" % (zlib.crc32(payload) ^ 0xFFFFFFFF) != crc:
        return "crc != k=%s" % crc
    return None


def one_bit_apart(a, b):
    """Whether names a and b differ in exactly one bit."""
    if len(a) != len(b):
        return False
    d = [x ^ y for x, y in zip(a.encode("latin-1"), b.encode("latin-1")) if x != y]
    return len(d) == 1 and d[0] & (d[0] - 1) == 0


def int_or_none(s):
    try:
        return int(s)
    except (TypeError, ValueError):
        return None
