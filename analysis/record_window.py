"""The record window: the records stored in the trace (nobkl_store) that
the consoles have not all printed yet, and what the stores tell of the
records the trace never stored.

It keeps each record's time, text and level until every console has
passed it (records_passed(), trim_store()), at most store_cap of them
(then the oldest half is forgotten: drop_store()), and the last
STORED_TAIL stores for the boot-log check (stored_texts()).  A seq
between two stored ones that never comes is a store hole: at the end
(check_store_holes()) it is a record lost from the trace, unless its
store can have fired outside the recorded trace (hole_at_trace_edge())
or the kernel traced it as data-less (nobkl_dataless).

Invariants: store_min is the lowest stored seq (None when empty);
memory stays bounded (store_cap, HOLE_MAX holes of one jump, the lowest
in_flight_max() + 1 seqs); holes are forgotten at trace loss.

A class of Analyzer (checker.py): the state is the checker's.
"""

from bisect import bisect_left, insort

from .validation import int_or_none

# stores one CPU can have between prb_reserve() and the store tracepoint
# at once: vprintk_store() runs that stretch with interrupts off, so only
# an NMI nests in it, and each of the two (NMI, the rest) allows four
# nested printk() calls (PRINTK_MAX_RECURSION 3, entered at 0..3)
IN_FLIGHT_PER_CPU = 8
HOLE_MAX = 100000            # seqs followed at most as holes of one jump


class RecordWindow:
    """Analyzer's record window (a class of it: the state is the
    checker's)."""

    def emitted(self, seq):
        """A console emitted seq: one not stored yet, above the first
        stored, is no data-less record, whatever the trace says (readers
        skip those)."""
        if seq not in self.store and self.first_stored is not None and \
                seq > self.first_stored and len(self.emitted_unstored) < HOLE_MAX:
            self.emitted_unstored.add(seq)

    def records_passed(self, seq):
        """A console committed seq: the records every console has passed
        are forgotten."""
        if self.store and self.store_min is not None and self.store_min < seq:
            self.trim_store()

    def process_store(self, st):
        """process() of a nobkl_store (a Store): keep the record (time,
        text, level) until every console has passed it, unless
        validation.py finds it bad.  One function for the whole path but
        those checks, as three quarters of the events are stores."""
        self.cur_event = st
        _, cpu, ts, seq, length, level, caller, text = st
        why = self.store_cpu_problem(cpu)
        if why is not None:
            self.bad_event(None, st, ValueError(why))
            return
        if self.first_ts is None:
            self.first_ts = ts
        self.last_ts = ts
        self.last_ts_cpu[cpu] = ts
        why = self.store_problem(seq, length, text)
        if why is not None:
            self.bad_event(None, st, ValueError(why))
            return
        store = self.store
        if seq in store:
            self.store_continued(seq)
        else:
            self.records += 1
            if self.gave_up and seq in self.gave_up:
                self.store_after_overflow(seq)
            if not self.low_full or seq < self.low_seqs[-1]:
                self.keep_low_seq(seq)
            if caller[:1] == "T" and seq > self.task_store_max.get(cpu, -1):
                self.task_store_max[cpu] = seq
        store[seq] = (ts, text, level)
        self.stored_tail.append(st)
        if not self.pstress_printable and level < self.console_loglevel and \
                text.startswith("pstress "):
            self.pstress_printable = True
        if self.keep_texts:
            self.text_to_seq[text] = seq
        if self.store_min is None or seq < self.store_min:
            self.store_min = seq
        m = self.max_stored
        if not self.loss_seen:
            if self.first_stored is None or seq < self.first_stored:
                self.first_stored = seq
            if m is None or seq > m:
                if m is not None and seq > m + 1:
                    self.open_store_holes(m + 1, seq, ts)
                self.max_stored = seq
            elif self.store_holes:
                self.store_holes.pop(seq, None)
        elif m is None or seq > m:
            self.max_stored = seq
        if len(store) > self.store_cap:
            self.trim_store(force=True)
        if self.on_event is not None:
            self.on_event(st, None)

    def store_continued(self, seq):
        """A continuation (LOG_CONT) extends the record: same seq again."""
        self.store_updates += 1
        old = self.store[seq][1]
        if self.text_to_seq.get(old) == seq:
            del self.text_to_seq[old]

    def on_dataless(self, ev):
        """nobkl_dataless: prb_reserve() committed seq without text (the
        data ring had no room).  No nobkl_store comes for it; consoles
        skip it with a dropped count.  Its place in the order does not
        matter: check_store_holes() uses it at the end."""
        self.cur_event = ev
        why = self.dataless_problem(ev)
        if why is not None:
            self.bad_event(None, ev, ValueError(why))
            return
        self.dataless.add(int(ev.fields["seq"]))

    def open_store_holes(self, lo, hi, ts):
        """Seqs lo..hi-1 were not stored yet when seq hi was (at ts).  Two
        CPUs may commit their records in the other order than they
        reserved the seqs, so a hole may still be filled; what is left at
        the end is checked by check_store_holes()."""
        holes = self.store_holes
        for s in range(lo, min(hi, lo + HOLE_MAX)):
            holes[s] = ts

    def in_flight_max(self):
        """How many stores the trace's CPUs can have had in flight (reserved,
        not traced yet) at one moment."""
        cpus = self.cpus or (max(self.last_ts_cpu) + 1 if self.last_ts_cpu else 1)
        return IN_FLIGHT_PER_CPU * cpus

    def keep_low_seq(self, seq):
        """Keep the lowest in_flight_max() + 1 seqs stored (in order)."""
        low = self.low_seqs
        insort(low, seq)
        if len(low) > self.in_flight_max() + 1:
            low.pop()
            self.low_full = True

    def console_seq_seen(self, ev):
        """A console emitted or committed ev's seq on ev's CPU: the record
        and every one below it were stored before (a reader cannot pass a
        record that is reserved and not committed)."""
        seq = int_or_none(ev.fields.get("seq"))
        if seq is not None and seq > self.console_seq_max.get(ev.cpu, -1):
            self.console_seq_max[ev.cpu] = seq

    def hole_at_trace_edge(self, seq, cut_cpus):
        """Can the store of seq have fired outside the recorded trace, and
        not in it?  Every store in between went through the tracepoint,
        so a seq never stored between stored ones was stored
        - before tracing began: then every seq below it stored in the
          trace was reserved before and traced after the start, in flight
          then, so there are at most in_flight_max() of them;
        - after tracing ended: then no console event of the trace shows
          the record committed (a console's emission or commit of it or
          of a later seq);
        - or on a CPU whose recorded data ended before the trace's (in
          `cut_cpus`: the kernel buffer statistics count events of it not
          recorded; without statistics any CPU with events) after that
          end: then no event of that CPU shows it stored, no store of a
          later seq by a task there (only an NMI nests in the stretch
          between a store's reserve and its tracepoint) and no console
          emission or commit of it or a later seq there.
        None of these compares the clocks of two CPUs."""
        if bisect_left(self.low_seqs, seq) <= self.in_flight_max():
            return True
        if max(self.console_seq_max.values(), default=-1) < seq:
            return True
        for cpu in (self.last_ts_cpu if cut_cpus is None else cut_cpus):
            if self.task_store_max.get(cpu, -1) < seq and \
                    self.console_seq_max.get(cpu, -1) < seq:
                return True
        return False

    def check_store_holes(self, cut_cpus):
        """Every record is stored through the nobkl_store tracepoint
        (vprintk_store(), the only way into the ringbuffer), so a seq
        between two records stored in the trace must be stored in it too.
        A missing one means the trace lost that event (damaged input, not
        a kernel defect), unless its store can have fired before tracing
        began or after the recording of its CPU ended
        (hole_at_trace_edge()).  Not a hole: a record the kernel traced
        as data-less (nobkl_dataless) that no console emitted; one a
        console emitted had text, and its store, reserved while tracing
        (the data-less event fires in prb_reserve()), was lost."""
        for seq, ts in sorted(self.store_holes.items()):
            if seq in self.dataless:
                if seq not in self.emitted_unstored:
                    self.counts["store_holes_dataless"] += 1
                    continue
                # emitted, so it had text; reserved while traced, so its
                # store would be in the trace: lost
            elif self.hole_at_trace_edge(seq, cut_cpus):
                self.counts["store_holes_at_trace_edges"] += 1
                continue
            self.missing_store_count += 1
            if self.missing_store_ts is None or ts < self.missing_store_ts:
                self.missing_store_ts = ts
            if len(self.missing_stores) < 20:
                self.missing_stores.append((seq, ts))
        self.store_holes.clear()

    def stored_texts(self):
        """The texts of the records of the last STORED_TAIL stores, the
        last text of a seq stored again (LOG_CONT); ordered by seq."""
        last = {st[3]: st[7] for st in self.stored_tail}
        return [last[seq] for seq in sorted(last)]

    def trim_store(self, force=False):
        if not self.store:
            return
        if force:
            # keep the newest store_cap/2 records
            self.store_overflow += self.drop_store(None, self.store_cap // 2)
            return
        lo = None
        for c in self.consoles.values():
            if c.next_seq is None:
                continue
            v = c.next_seq
            if c.attempt is not None and c.attempt.outcome is None:
                v = min(v, c.attempt.seq)
            if lo is None or v < lo:
                lo = v
        if lo is None:
            return
        self.drop_store(lo, None)

    def drop_store(self, lo, keep):
        """Forget the lowest stored records: those below seq `lo` (None: no
        such bound), and more while over `keep` records (None: no limit).
        Returns how many were forgotten.  store_min stays the lowest
        stored seq (None when nothing is stored)."""
        store = self.store
        t2s = self.text_to_seq
        m = self.store_min
        n = 0
        while store and ((lo is not None and m < lo) or (keep is not None and len(store) > keep)):
            ent = store.pop(m, None)
            if ent is not None and t2s.get(ent[1]) == m:
                del t2s[ent[1]]
            n += 1
            m += 1
            if self.forgotten_below is None or m > self.forgotten_below:
                # an emission of a seq below it does not wait for its store
                self.forgotten_below = m
            if store and m not in store:
                m = min(store)
        self.store_min = m if store else None
        return n

    def pending_records(self, con):
        """Stored records the console had not committed when the trace ended."""
        if con.next_seq is None:
            return []
        out = []
        for s in sorted(k for k in self.store if k >= con.next_seq):
            ts, text, level = self.store[s]
            if level < self.console_loglevel:
                out.append((s, text, ts))
        return out
