"""The trace contract of the 6.12 target (mainline nbcon): its events as
the kernel patches print them (patches/6.12/0001, 0002), read into the
contract the rest of the pipeline uses (interfaces.md section 1).

Both readers call translate() on each 6.12 record: traceparse.py with the
fields `trace-cmd report -l` prints and the latency column, tracedat.py
with the same fields plus the raw common_flags.  translate() gives the
event its contract name (nbcon_X -> nobkl_X, vprintk_store ->
nobkl_store), adds the context as the `ctx` field and checks every value
it can: what it rejects is a damaged record (ValueError with the reason;
the readers turn it into Damage, incomplete input).

Invariants:
  * a translated event has exactly the fields of NBCON_FIELDS[contract
    name] plus `ctx` (a timeout of the current format also reason and
    waited_ns, which the first format does not trace), each a value the
    tracepoint can print;
  * the prev_*/owner_*/to_* fields agree with the state words they were
    decoded from in TP_fast_assign (a flipped bit in either is damage);
  * a state word has neither the unsafe bit (the tracepoints clear it)
    nor the unused bits 30-31 set.

Two formats: the series changed two events after the first traces were
recorded with it, and both readers read both (FORMER_FIELDS); a trace
is of one format.  translate() reads either into one contract:
  * nbcon_acquire prints reacquire=1 for an acquire by
    nbcon_reacquire_nobuf() (a driver that lost the console takes it
    back to restore its hardware, and prints nothing); the former
    formats lack the field and read as reacquire=0.
  * nbcon_acquire: the first format printed how=hostile for any takeover,
    of a safe owner (prev_unsafe=0) and the unsafe one of the panic
    flush (prev_unsafe=1); the current one prints how=takeover for the
    first.  The contract keeps 6.1's vocabulary, in which hostile is an
    acquire without the owner's consent and prev_unsafe tells the two
    apart, so how=takeover reads as how=hostile prev_unsafe=0.  A
    takeover with prev_unsafe=1 is damage.  A hostile one with
    prev_unsafe=0 reads as the first format's takeover: one event does
    not tell which format it is of.
  * nbcon_handover_timeout: the first format printed waited_us, a count
    of udelay(1) passes, and words "0 0" when the waiter had not removed
    its request; the current one prints why (reason), whether it removed
    it (removed), the time from local_clock() (waited_ns) and the passes
    (spins).  Both read with removed, spins and waited_us: the current
    format's waited_ns in whole microseconds, the first format's count
    of passes, which is microseconds only where udelay(1) takes one.

The context: 6.12's events have no ctx field; ftrace keeps it in the
common flags of every event (TRACE_FLAG_* of include/linux/
trace_events.h).  `trace-cmd report -l` prints them as the latency
column, whose third character is 'z'/'Z' (NMI; only the kernel's own
trace file prints it), 'h'/'H' (hardirq; libtraceevent 1.7 prints an
NMI so too), 's' (serving a softirq) or '.' (task).
"""

from collections import namedtuple

RFC_TARGET = "6.1"
NBCON_TARGET = "6.12"

PRIOS = ("none", "normal", "emergency", "panic")    # NBCON_PRIO_* 0..3

# The fields each 6.12 event prints, in TP_printk order.
TEXT_FIELDS = {
    "nbcon_acquire": ("con", "how", "prio", "thread", "device", "reacquire", "prev_cpu",
                      "prev_prio", "prev_req_prio", "prev_unsafe", "unsafe_takeover",
                      "old_state", "new_state"),
    "nbcon_handover_request": ("con", "prio", "thread", "owner_cpu", "owner_prio",
                               "old_state", "new_state"),
    "nbcon_handover_timeout": ("con", "prio", "thread", "owner_cpu", "owner_prio",
                               "reason", "removed", "waited_ns", "spins", "old_state",
                               "new_state"),
    "nbcon_release": ("con", "prio", "thread", "handover", "to_prio", "old_state",
                      "new_state"),
    "nbcon_lost": ("con", "prio", "thread", "where", "owner_cpu", "owner_prio", "state"),
    "nbcon_emit": ("con", "seq", "len", "dropped", "prio", "thread", "replay"),
    "nbcon_commit": ("con", "seq", "prio", "thread"),
    "vprintk_store": ("seq", "len", "level", "caller", "text"),
}

# The fields an event printed in the first version of the series, where
# they differ from TEXT_FIELDS (the module doc).
FORMER_FIELDS = {
    "nbcon_acquire": ("con", "how", "prio", "thread", "device", "prev_cpu", "prev_prio",
                      "prev_req_prio", "prev_unsafe", "unsafe_takeover", "old_state",
                      "new_state"),
    "nbcon_handover_timeout": ("con", "prio", "thread", "owner_cpu", "owner_prio",
                               "waited_us", "old_state", "new_state"),
}
# each event's formats, the current one first
FORMATS = {name: (fields,) + ((FORMER_FIELDS[name],) if name in FORMER_FIELDS else ())
           for name, fields in TEXT_FIELDS.items()}

# The record field a printed field is rendered from, where the names
# differ.
_RECORD_NAME = {"reason": "aborted"}


def _record_fields(fields):
    return tuple(_RECORD_NAME.get(k, k) for k in fields)


# Fields of the raw record that the print folds into another (con= is
# name and index, caller= is the kind and the number) or leaves out (the
# context): the trace.dat reader keys its rendering cache on the first
# and reads common_flags as a number.  It reads the fields of every
# format of an event; those one format lacks are in OPTIONAL_FIELDS.
COMMON_FLAGS = "common_flags"
_CONSOLE_RECORD = ("index", COMMON_FLAGS)
RECORD_FIELDS = dict(
    {name: tuple(dict.fromkeys(k for f in formats for k in _record_fields(f)))
     + _CONSOLE_RECORD
     for name, formats in FORMATS.items() if name.startswith("nbcon_")},
    vprintk_store=TEXT_FIELDS["vprintk_store"] + ("caller_cpu",))

# The fields, printed and raw, that one format of an event has and
# another lacks: the readers accept a record without them, and
# translate() checks that it has exactly the fields of one format.
OPTIONAL_FIELDS = {
    name: tuple(dict.fromkeys(k for f in formats for k in f + _record_fields(f)
                              if not all(k in other for other in formats)))
    for name, formats in FORMATS.items() if len(formats) > 1}

CONTRACT_NAME = {name: "nobkl_" + (name[len("nbcon_"):] if name.startswith("nbcon_")
                                   else "store")
                 for name in TEXT_FIELDS}

# The fields of each contract event of the 6.12 target, without ctx: as
# the current format prints them, but a timeout's are those both formats
# read as (the module doc).
NBCON_FIELDS = {CONTRACT_NAME[n]: f for n, f in TEXT_FIELDS.items()}
NBCON_FIELDS["nobkl_handover_timeout"] = ("con", "prio", "thread", "owner_cpu", "owner_prio",
                                          "removed", "waited_us", "spins", "old_state",
                                          "new_state")


def target_of_event(name):
    """The target whose tracepoint prints an event of this name, or None
    (console, another system's event)."""
    if name in TEXT_FIELDS:
        return NBCON_TARGET
    if name.startswith("nobkl_"):
        return RFC_TARGET
    return None


# ------------------------------------------------------------- context

# TRACE_FLAG_* (include/linux/trace_events.h, 6.12)
TRACE_FLAG_HARDIRQ = 0x08
TRACE_FLAG_SOFTIRQ = 0x10
TRACE_FLAG_NMI = 0x40


def ctx_of_flags(flags):
    """The context of an event from its common_flags: nmi > hardirq >
    softirq (serving) > task, the order 6.1's ctx field has."""
    if flags & TRACE_FLAG_NMI:
        return "nmi"
    if flags & TRACE_FLAG_HARDIRQ:
        return "hardirq"
    if flags & TRACE_FLAG_SOFTIRQ:
        return "softirq"
    return "task"


_LATENCY_CTX = {"z": "nmi", "Z": "nmi", "h": "hardirq", "H": "hardirq", "s": "softirq",
                ".": "task"}


def ctx_of_latency(column):
    """The context of an event from the latency column of `trace-cmd
    report -l` (or the kernel's trace file): its third character."""
    ctx = _LATENCY_CTX.get(column[2:3])
    if ctx is None:
        raise ValueError("latency column %r names no context" % column[:8])
    return ctx


# ---------------------------------------------------------- state word

# struct nbcon_state as one 32-bit atom (GCC bitfield order, x86_64 and i386)
NbconState = namedtuple("NbconState", "prio req_prio unsafe_takeover cpu")
_UNSAFE = 1 << 4
_UNUSED = 3 << 30


def decode_state(word):
    """The fields of a traced state word (unsafe is always clear)."""
    return NbconState(PRIOS[word & 3], PRIOS[word >> 2 & 3], word >> 5 & 1,
                      word >> 6 & 0xffffff)


def encode_state(prio, req_prio="none", cpu=0, unsafe_takeover=0):
    """The traced word of a state (for synthetic traces and tests)."""
    return (PRIOS.index(prio) | PRIOS.index(req_prio) << 2 | unsafe_takeover << 5 |
            cpu << 6)


# ----------------------------------------------------------- validation

_BOOL = ("0", "1")
_VALUES = {
    "prio": PRIOS, "prev_prio": PRIOS, "prev_req_prio": PRIOS, "owner_prio": PRIOS,
    "to_prio": PRIOS,
    "how": ("direct", "handover", "takeover", "hostile"),
    "reason": ("timeout", "aborted"), "removed": _BOOL,
    "where": ("can_proceed", "enter_unsafe", "exit_unsafe", "seq", "release"),
    "thread": _BOOL, "device": _BOOL, "prev_unsafe": _BOOL, "unsafe_takeover": _BOOL,
    "handover": _BOOL, "replay": _BOOL, "reacquire": _BOOL,
}
_WORDS = ("old_state", "new_state", "state")
_NUMBERS = ("prev_cpu", "owner_cpu", "waited_us", "waited_ns", "spins", "seq", "len",
            "dropped", "level") + _WORDS


def _check_values(f):
    for k, v in f.items():
        allowed = _VALUES.get(k)
        if allowed is not None:
            if v not in allowed:
                raise ValueError("%s=%s is not one of %s" % (k, v[:20], "/".join(allowed)))
        elif k in _NUMBERS and not (v.isdigit() and v.isascii()):
            raise ValueError("%s=%s is not an unsigned number" % (k, v[:20]))
    for k in _WORDS:
        if k in f and int(f[k]) & (_UNSAFE | _UNUSED):
            raise ValueError("%s=%s has the unsafe bit or bits 30-31 set" % (k, f[k]))


def _agree(f, word, pairs):
    """The decoded fields `pairs` ((field, state attribute)) agree with
    the state word `word` (a field name of f)."""
    s = decode_state(int(f[word]))
    for field, attr in pairs:
        v = getattr(s, attr)
        if f[field] != str(v):
            raise ValueError("%s=%s but %s=%s has %s" % (field, f[field], word, f[word], v))


def _acquire_words(f):
    _agree(f, "old_state", (("prev_prio", "prio"), ("prev_req_prio", "req_prio"),
                            ("prev_cpu", "cpu")))
    _agree(f, "new_state", (("prio", "prio"), ("unsafe_takeover", "unsafe_takeover")))


def _owner_words(word):
    def check(f):
        _agree(f, word, (("owner_prio", "prio"), ("owner_cpu", "cpu")))
    return check


def _timeout_words(f):
    """A waiter that removed its request traced the words of the removal;
    one that did not, "0 0"."""
    if f["removed"] == "1":
        _owner_words("old_state")(f)
    elif f["old_state"] != "0" or f["new_state"] != "0":
        raise ValueError("removed=0 but old_state=%s new_state=%s" % (f["old_state"],
                                                                       f["new_state"]))


def _release_words(f):
    _agree(f, "old_state", (("to_prio", "req_prio"),))
    if f["handover"] != ("0" if f["to_prio"] == "none" else "1"):
        raise ValueError("handover=%s but to_prio=%s" % (f["handover"], f["to_prio"]))


# what each event's state words must agree with (TP_fast_assign)
_WORD_CHECKS = {
    "nbcon_acquire": _acquire_words,
    "nbcon_handover_request": _owner_words("old_state"),
    "nbcon_handover_timeout": _timeout_words,
    "nbcon_release": _release_words,
    "nbcon_lost": _owner_words("state"),
}


# ------------------------------------------------- into the contract

def _acquire_contract(f):
    """how=takeover is the contract's hostile with prev_unsafe=0; the
    first formats' acquires read as reacquire=0."""
    f.setdefault("reacquire", "0")
    if f["how"] == "takeover":
        if f["prev_unsafe"] != "0":
            raise ValueError("how=takeover but prev_unsafe=%s (an unsafe takeover is "
                             "hostile)" % f["prev_unsafe"])
        f["how"] = "hostile"


def _timeout_contract(f):
    """removed, spins and waited_us, from either format."""
    if "waited_ns" in f:
        f["waited_us"] = str(int(f["waited_ns"]) // 1000)
    else:
        f["removed"] = "0" if f["old_state"] == "0" and f["new_state"] == "0" else "1"
        f["spins"] = f["waited_us"]


_CONTRACT = {
    "nbcon_acquire": _acquire_contract,
    "nbcon_handover_timeout": _timeout_contract,
}


def _check_format(name, f):
    """f has the fields of one format of the event; else ValueError with
    what differs from the nearest."""
    formats = FORMATS[name]
    for want in formats:
        if len(f) == len(want) and all(k in f for k in want):
            return
    want = min(formats, key=lambda w: len(set(w) ^ set(f)))
    extra = sorted(set(f) - set(want))
    missing = [k for k in want if k not in f]
    raise ValueError("%s: %s" % (name, "unknown field %s" % extra[0] if extra
                                 else "missing field %s" % missing[0]))


def translate(name, fields, ctx):
    """(contract name, fields with ctx) of a 6.12 event read with `fields`
    (the printed ones, of either format; a raw common_flags is dropped,
    `ctx` says it); ValueError when a field is missing, unknown or not a
    value the tracepoint prints."""
    f = dict(fields)
    f.pop(COMMON_FLAGS, None)
    _check_format(name, f)
    _check_values(f)
    contract = _CONTRACT.get(name)
    if contract is not None:
        contract(f)
    check = _WORD_CHECKS.get(name)
    if check is not None:
        check(f)
    if name != "vprintk_store":
        f["ctx"] = ctx
    return CONTRACT_NAME[name], f
