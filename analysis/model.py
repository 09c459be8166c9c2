"""The ownership model's data: consoles, the contexts that own them, and
their emission attempts (a model of the console design, model_rfc.py,
keeps them up to date from the events in chain order; trace_rules.py
judges its facts)."""

from collections import deque

PRIO = {"none": 0, "normal": 1, "emergency": 2, "panic": 3}
PRIO_NAME = {v: k for k, v in PRIO.items()}

# context states
OWNER = "owner"
GRANTED = "granted"          # granted a handover, waiter not yet seen
HANDED = "handed-over"
LOST = "lost"                # taken over (hostile) or noticed loss
RELPEND = "release-pending"  # state word says free, release event not yet seen
RELEASED = "released"

BEFORE = 6                   # surrounding events kept before a violation


def prio_rank(p):
    return PRIO.get(p, 0)


class Attempt:
    __slots__ = ("con", "seq", "dropped", "len", "ctx", "ts", "lineno",
                 "outcome", "text", "reprint", "replay", "stray_ok", "req_mark")

    def __init__(self, con, seq, dropped, length, ctx, ts, lineno, text):
        self.con = con
        self.seq = seq
        self.dropped = dropped
        self.len = length
        self.ctx = ctx
        self.ts = ts
        self.lineno = lineno
        self.outcome = None
        self.text = text
        self.reprint = False
        self.replay = False        # the emission's own replay flag (6.12's nbcon_emit replay=)
        # the unsafe victims' bytes (StrayByte) that may hit it: a panic
        # context took the console from owners inside their unsafe section
        self.stray_ok = ()
        self.req_mark = None       # con.request_count at its owner's last transition before it


# what an unsafe victim may still write into another owner's output: a
# byte of its own line (its context mark, prefix, text, line end, or its
# dropped notice or replay marker in front of the line)
_LINE_BYTES = frozenset("AT[]. 0123456789\r\n*" "printk messages dropped "
                        "replaying previous message")


class StrayByte:
    """The one byte an owner taken over inside its unsafe section (by the
    final panic flush) may still write: granted once (`spent`), and only
    a byte of the line it was printing (`may_be()`), when that is known."""
    __slots__ = ("cpu", "lineno", "bytes", "spent")

    def __init__(self, cpu, lineno, text):
        self.cpu = cpu
        self.lineno = lineno          # the takeover's trace line
        # None: the victim's line is not known (any byte)
        self.bytes = None if text is None else _LINE_BYTES | frozenset(text)
        self.spent = False

    def may_be(self, byte):
        return not self.spent and (self.bytes is None or byte in self.bytes)


class Ctx:
    __slots__ = ("key", "cpu", "ctx", "thread", "prio", "how", "since",
                 "lineno", "state", "attempt", "end_how", "pretrace", "lost_to_cpu", "last_seq",
                 "lost_mid", "late_grant", "noticed", "req_mark", "acq_idx")

    def __init__(self, key):
        self.key = key
        self.cpu, self.ctx, thread = key
        self.thread = int(thread)
        self.prio = "none"
        self.how = None
        self.since = None
        self.lineno = None
        self.state = None
        self.attempt = None
        self.end_how = None
        self.pretrace = False
        self.lost_to_cpu = None
        self.last_seq = None
        self.lost_mid = False        # it lost the console in the middle of a record
        self.late_grant = False      # its grant (after a late acquire) is still to come
        self.noticed = False         # it traced nobkl_lost for its current loss
        self.req_mark = 0            # con.request_count at its last transition
        self.acq_idx = None          # Console.owners_seen at its last traced acquire

    def label(self):
        return "cpu%d/%s%s/%s" % (self.cpu, self.ctx, "/thread" if self.thread else "", self.prio)


class Console:
    def __init__(self, name):
        self.name = name
        self.reset()
        self.recent = deque(maxlen=BEFORE)
        self.pending_after = []
        # summary counters
        self.emits = 0
        self.commits = 0
        self.reprints = 0
        self.first_seq = None
        self.last_commit = None
        self.dropped_records = 0
        self.dropped_reported = 0
        self.acquires = {"direct": 0, "handover": 0, "hostile": 0}
        self.intervals = 0
        self.events = 0              # its events in the trace, and the first of them
        self.first_event = None

    def reset(self):
        self.owner = None
        self.ctxs = {}
        self.started = False
        self.next_seq = None
        self.committed = None        # the console's seq after its last traced commit
        self.attempt = None
        self.requests = {}
        self.grant = None
        self.awaiting_grant = {}     # old owner's cpu -> (waiter, ts): grant not traced yet
        # old owner -> (old owner, seq, ts, violation args, kw): its commit
        # may be traced late, as its own next event
        self.late_commits = {}
        self.expected_taker = None
        self.phantoms = {}
        self.last_owner = None
        self.ghost_commit = None
        self.last_request_ts = None
        self.request_count = 0       # handover requests taken so far
        # the owners the trace shows since the last trace loss (acquires
        # and grant targets): how many, and (cpu, prio) -> the number of
        # the last one of them; the nobkl_lost events whose named owner
        # is not among them yet: [(ctx, (cpu, prio), event)]
        self.owners_seen = 0
        self.owner_last = {}
        self.lost_names = []
        # the nbcon model's (model_nbcon.py): the owners that must not emit
        # and why (the uart port lock, a driver's reacquire), the seq an
        # owner lost before its commit, and whether an owner lost the
        # console before its emission was traced
        self.silent = {}
        self.interrupted = None
        self.interrupted_unknown = None
        self.unsafe_mark = False     # an acquire carried unsafe_takeover=1
        self.unsafe_victims = {}     # cpu -> [ctx, owner its loss named, that owner seen, [StrayByte]]: taken over by panic inside an unsafe section
