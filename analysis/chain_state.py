"""A console's chain as the ordering stage knows it (ChainState), and
how a state word is read: its state bits (state_key()), the request it
carries (state_req_prio()) and its transition count (trans_count()),
docs/interfaces.md section 1.

The state word is the kernel's (`cons_state`); reading it is no stage's
job of its own, so the ordering stage and the ownership model both take
it from here.
"""

from collections import deque

TRANS_BITS = 5

# how many installed states of a console are remembered for the events
# that depend on one (a grant's waiter traces its acquire later): fewer
# than 32, so no two of them have the same state bits (trans differs)
RECENT_STATES = 31


def state_key(word, arch32):
    """The 32 state bits of a state word (alive .. trans), without the
    sequence that the 64-bit word carries in its low half: the chain
    links on these bits (the transition count included), the sequence
    only breaks ties (see docs/analysis.md)."""
    return word if arch32 else word >> 32


REQ_PRIO_SHIFT = 7


def state_req_prio(word, arch32):
    """`cons_state::req_prio` of a state word given as the decimal text of
    a trace field (0 for none, no field, or a word that does not parse):
    a waiter's pending request."""
    try:
        w = int(word)
    except (TypeError, ValueError):
        return 0
    return (state_key(w, arch32) >> REQ_PRIO_SHIFT) & 3


def trans_count(word, arch32):
    """`cons_state::trans` of a state word: its top five bits."""
    return (word >> ((32 if arch32 else 64) - TRANS_BITS)) & ((1 << TRANS_BITS) - 1)


class ChainState:
    """What the ordering knows of one console's chain."""

    __slots__ = ("cur", "stream", "recent", "words", "grants", "pre_root", "linked",
                 "root_line", "root_key", "cand", "next_seq",
                 "owner_stream", "owner_mark", "last", "place")

    def __init__(self):
        self.cur = None              # new_state of the last transition passed on
        self.stream = None           # the owner's stream that made it (owner_stream())
        self.recent = deque(maxlen=RECENT_STATES)   # keys installed recently
        self.words = {}              # 64-bit: whole words installed -> self.linked then
        self.grants = {}             # word a grant installed -> its target CPU, until picked up
        self.pre_root = set()        # keys before the first transition passed on
        self.linked = 0              # transitions linked since the first
        # while the root is looked for (cur is None): the chosen root's
        # trace line and old key once decided; the held transitions in
        # trace order
        self.root_line = None
        self.root_key = None
        self.cand = []
        # the console's seq after the last commit passed on (None before
        # one): on 32-bit what an emission's seq - dropped must have reached
        self.next_seq = None
        # the stream of the owner's last acquire or commit passed on, and
        # that event's trace line (a takeover waits for its next event)
        self.owner_stream = None
        self.owner_mark = 0
        # the happens-before vector of the last transition linked in this
        # chain (happens_before.py), None before one
        self.place = None
        # the trace line of the last transition linked (the root or a
        # link): the slot the next one fills (CausalOrder.note_link())
        self.last = None

    def rooting(self):
        return self.cur is None and self.root_line is None

    def add_candidate(self, ev):
        """A transition held while the root is looked for."""
        self.cand.append(ev)

    def rooted(self, ev, ko):
        self.root_line = ev.lineno
        self.root_key = ko
        self.cand = []
