"""Linking: when the ordering stage may pass a held event on, and what
passing it on does to its console's chain.

A transition is passed on when it links to its console's chain (its
old state is the state the chain is at; on 64-bit the seq too, but for
the owner's own untraced seq update); an event that saw a state
without a transition (a handover acquire) once that state was
installed; a 32-bit emission once the commits that put the console's
seq where it read it are passed on; a hostile acquire once its victim
showed the event after its last acquire or commit (ready()).  Passing
it on (pass_on()) moves the chain, remembers the states installed
(RECENT_STATES, RECENT_WORDS) and the grants open (OPEN_GRANTS), and
stamps the event for happens-before (stamp()).

Invariants: every event passed on links by ready()'s rule; a state
remembered is one the chain installed; a chain's state moves only by
a transition linked in it.

A class of CausalOrder (ordering.py): the state is the stage's.
"""

from .chain_state import state_key

# on 64-bit the whole words installed (state bits and seq) are remembered
# for longer: a word whose seq the console has moved past cannot be
# installed again, so a handover acquire listed this many transitions
# after the grant that installed its word still finds it
RECENT_WORDS = 4096

# grants remembered until their target's handover acquire is passed on
# (a target that gave up never traces one)
OPEN_GRANTS = 64

# transitions after the chain's first one during which a transition from
# before it may still come (traced late when the trace began); fewer than
# the 32 that make a state word repeat
PRE_ROOT_LINKS = 24


class Linking:
    """CausalOrder's linking (a class of it: the state is the stage's)."""

    def dep_key(self, ev):
        """(con, state word) of an event that saw a state without making
        a transition (old_state == new_state), else None.  The whole word:
        on 64-bit its seq tells the state apart from the same state bits
        32 transitions later (a handover acquire of then, waiting in its
        stream, must not hold up the transition from this one)."""
        w = self.words(ev)
        if w is None or w[0] != w[1]:
            return None
        return ev.fields.get("con"), w[0]

    def is_takeover(self, ev):
        """A hostile acquire on 32-bit: the state word does not carry the
        seq, so the chain does not place it after the victim's commits."""
        return (self.arch32 and ev.name == "nobkl_acquire" and
                ev.fields.get("how") == "hostile")

    def seq_need(self, ev):
        """32-bit: can emission ev be passed on as far as the console's
        seq goes?  It read the seq `seq - dropped`, so the commit that put
        the console there came before it (the seq is a location of its
        own on 32-bit, advanced by the commits; a commit is no counted
        transition).  Waits only once a commit of the console was passed
        on, and until that commit is passed on or the trace ends (a seq
        advanced without a traced commit: the checker judges that) or
        loses events; see seq_waits."""
        if not self.arch32 or ev.name != "nobkl_emit":
            return True
        c = self.chains.get(ev.fields.get("con"))
        if c is None or c.next_seq is None or ev.lineno in self.seq_expired:
            return True
        try:
            read = int(ev.fields["seq"]) - int(ev.fields.get("dropped") or 0)
        except (KeyError, ValueError):
            return True
        if read <= c.next_seq:
            return True
        if ev.lineno not in self.seq_waits:
            self.seq_waits.add(ev.lineno)
            self.counts["held_for_seq"] += 1
        return False

    def victim_shown(self, ev):
        """A hostile acquire waits until the owner it takes the console
        from has shown the event after its last acquire or commit: that
        owner's emission is no transition, and listed late it would be
        passed on after the takeover and the taker's reprint (its cut
        line on the serial log then has no interrupted attempt).  Until
        that event is read, the trace ends or loses events (see
        seq_waits); a victim preempted for long just holds it longer."""
        c = self.chains.get(ev.fields.get("con"))
        if c is None or c.owner_stream is None or ev.lineno in self.seq_expired:
            return True
        v = c.owner_stream
        if str(v[0]) != ev.fields.get("prev_cpu") or v == self.stream_of(ev):
            return True
        if self.last_read.get(v, 0) > c.owner_mark:
            return True
        if ev.lineno not in self.seq_waits:
            self.seq_waits.add(ev.lineno)
            self.counts["held_for_victim"] += 1
        return False

    def ready(self, ev, q=None):
        """Can ev be passed on now?  A transition when it links to its
        console's chain, a dependent event when the state it saw was
        installed; other events always.  q: ev's stream when ev is its
        first held event (a 32-bit takeover waits for the event after
        it: the emission that tells which commits came before)."""
        if self.rooting and ev.fields.get("con") in self.rooting:
            # its console's root is looked for: every event of it waits
            # and goes on in trace order around the root
            return False
        if not self.seq_need(ev):
            return False
        if self.is_takeover(ev) and not self.ending:
            nxt = q[1] if q is not None and len(q) > 1 else None
            if nxt is None or not self.seq_need(nxt):
                return False
        if (ev.name == "nobkl_acquire" and ev.fields.get("how") == "hostile" and
                not self.ending and not self.victim_shown(ev)):
            return False
        w = self.words(ev)
        if w is None:
            return True
        con = ev.fields.get("con")
        c = self.chain(con)
        o, n = w
        a32 = self.arch32
        if o == n:
            k = state_key(o, a32)
            if c.cur is None:
                # before the root: only the state the root replaced
                return k == c.root_key and c.root_line is not None
            return (k in c.recent or k in c.pre_root or self.installed_before(c, o) or
                    c.grants.get(o) == ev.cpu)
        if c.cur is None:
            # the root, once chosen by linking (root()); but after a
            # handover acquire that saw the state it replaced
            return ev.lineno == c.root_line and not self.dep_blocks(con, o)
        if state_key(o, a32) == state_key(c.cur, a32):
            # on 64-bit the seq must match too, except for the owner's
            # stream that made the last transition: only the owner's own
            # untraced seq update (the break_drop_uncounted breaker)
            # changes it unseen
            if not (o == c.cur or self.stream_of(ev) == c.stream):
                return False
            # a handover acquire that saw this state (read, waiting in its
            # stream) observed it before this transition replaced it
            return not self.dep_blocks(con, c.cur)
        # a transition from before the chain's first one, traced late
        return state_key(n, a32) in c.pre_root

    def dep_blocks(self, con, word):
        """Does a held event that saw state `word` of console con without a
        transition (a handover acquire, held_deps) hold up the transition
        from it?  Not one behind a held transition of that console in its
        stream: that transition came before it in program order and has
        not linked, so the state it saw was installed later, the same
        word again (on 32-bit 32 transitions on: a grant's target whose
        grant waits for its own place held up a waiter's request from
        the state the grant installs 32 transitions later)."""
        if not self.held_deps.get((con, word)):
            return False
        for q in self.streams.values():
            for e in q:
                if e.fields.get("con") != con:
                    continue
                w = self.words(e)
                if w is None:
                    continue
                if w[0] != w[1]:
                    break
                if w[0] == word:
                    return True
        return False

    def blocked_by_dep(self, k):
        """Is the first event of some stream a transition from the state
        of k that could link but for the held event that saw it?"""
        con, word = k
        c = self.chains.get(con)
        if c is None or c.cur != word:
            return False
        sk = state_key(word, self.arch32)
        for q in self.streams.values():
            if q:
                w = self.words(q[0])
                if (w is not None and w[0] != w[1] and q[0].fields.get("con") == con and
                        state_key(w[0], self.arch32) == sk):
                    return True
        return False

    def installed_before(self, c, word):
        """On 64-bit: was the whole word installed among the last
        RECENT_WORDS transitions, with a seq the console has moved past
        since (so no later transition can install it again)?"""
        if self.arch32 or c.cur is None:
            return False
        return word in c.words and (word ^ c.cur) & 0xffffffff != 0

    @staticmethod
    def remember_grant(c, ev, word):
        """A grant installed word for its target; the target's handover
        acquire, however late it is listed, saw that word.  Grants whose
        target gave up are never picked up: the oldest are forgotten."""
        try:
            c.grants[word] = int(ev.fields["to_cpu"])
        except (KeyError, ValueError):
            return
        if len(c.grants) > OPEN_GRANTS:
            del c.grants[next(iter(c.grants))]

    @staticmethod
    def remember(c, word, a32):
        """A transition installed word."""
        c.recent.append(state_key(word, a32))
        if a32:
            return
        c.words[word] = c.linked
        if len(c.words) > 2 * RECENT_WORDS:
            old = c.linked - RECENT_WORDS
            c.words = {w: i for w, i in c.words.items() if i > old}

    def pass_on(self, ev):
        if self.pending:
            self.flush_pending(ev.lineno)
        if ev.lineno > self.max_passed:
            self.max_passed = ev.lineno
        if ev.name in ("nobkl_acquire", "nobkl_commit"):
            c = self.chain(ev.fields.get("con"))
            c.owner_stream = self.stream_of(ev)
            c.owner_mark = ev.lineno
        elif ev.name in ("nobkl_release", "nobkl_handover_grant"):
            self.chain(ev.fields.get("con")).owner_stream = None
        if ev.name == "nobkl_commit":
            c = self.chain(ev.fields.get("con"))
            try:
                nxt = int(ev.fields["seq"]) + 1
            except (KeyError, ValueError):
                nxt = None
            if nxt is not None and (c.next_seq is None or nxt > c.next_seq):
                c.next_seq = nxt
        elif ev.name in ("nobkl_emit", "nobkl_acquire"):
            self.seq_waits.discard(ev.lineno)
        w = self.words(ev)
        # happens-before: the chain ev comes after (its transition's
        # predecessor, or the transition that installed the state it saw),
        # and the chain ev is linked in
        after = linked = None
        if w is not None:
            o, n = w
            c = self.chain(ev.fields.get("con"))
            a32 = self.arch32
            if o == n:
                self.counts["dependent_events"] += 1
                if c.grants.get(o) == ev.cpu:
                    del c.grants[o]
                if c.cur is None:
                    self.notes[ev.lineno] = "unchained"
                elif state_key(o, a32) != state_key(c.cur, a32):
                    self.notes[ev.lineno] = "replaced"
                elif o == c.cur:
                    after = c
            elif c.cur is None:
                linked = c
                c.cur = n
                c.stream = self.owner_stream(ev)
                c.pre_root.add(state_key(o, a32))
                self.remember(c, n, a32)
                self.counts["transitions"] += 1
            elif state_key(o, a32) == state_key(c.cur, a32):
                if o != c.cur:
                    self.counts["seq_differs"] += 1
                after = linked = c
                c.cur = n
                c.stream = self.owner_stream(ev)
                c.linked += 1
                self.remember(c, n, a32)
                if ev.name == "nobkl_handover_grant":
                    self.remember_grant(c, ev, n)
                self.counts["transitions"] += 1
                if c.linked == PRE_ROOT_LINKS:
                    # later a key of before the start could only be the
                    # same state again (ABA), no late transition of then
                    c.pre_root.clear()
            else:
                c.pre_root.add(state_key(o, a32))
                self.counts["before_chain_start"] += 1
                self.notes[ev.lineno] = "pre-chain"
                self.counts["transitions"] += 1
        if self.stamps is not None:
            self.stamp(ev, after, linked)
        self.sink(ev)

    def stamp(self, ev, after, linked):
        """Stamp ev (happens_before.py): after its stream's events and,
        when `after` (a ChainState) is given, after the last transition
        linked in that chain; `linked`: ev is now that chain's last
        transition."""
        join = after.place if after is not None else None
        st = self.clock.stamp(self.stream_of(ev), join)
        if linked is not None:
            linked.place = st[1]
        self.stamps[ev.lineno] = st
