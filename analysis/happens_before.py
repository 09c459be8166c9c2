"""Which console events of a trace in chain order are proven to happen
before which: vector clocks over the order the ordering stage proves.

The ordering stage (ordering.py) passes the console events on in an
order that keeps two relations the trace proves, whatever the CPUs'
clocks say:

- program order: the events of one stream (one CPU and execution
  context, `CausalOrder.stream_of()`) in the order its ring buffer
  has them;
- the chain: a console's transition comes after the transition whose
  new state it replaced, and an event that saw a state without making a
  transition (a handover acquire) after the transition that installed it.

An event happens before another when a path of these edges leads from
the one to the other.  Every event the stage passes on gets a stamp
`(i, V)`: i is its stream's component, and V[j] the number of events of
stream j that happen before it or are it (components past the end of V
are 0).

Invariant: for stamped events e and f, V(e) <= V(f) componentwise
exactly when e is f or a path of the edges the stamps were made with
leads from e to f.  It holds because V(f) is the componentwise maximum
of the vectors of f's predecessor in its stream and of its predecessor
in the chain, with f's own component one more: a path contributes its
counts and nothing else does.  An edge left out only orders fewer
pairs; a stamp never claims an order the edges do not prove, so every
edge that is not certain is left out (a dependent event that saw a
state a later transition replaced, the 32-bit seq and victim waits,
events passed on unlinked at trace loss or at a chain break).

A *place* is a vector that stands for "what happened at or before
here": an event is before place P when its V <= P.  The checker gives
each trace loss one (`checker.Analyzer.loss_place()`); places meet
(componentwise minimum: before both).  NOWHERE, the empty vector, is
a place nothing is before: a loss whose place the trace does not tell.
"""

NOWHERE = ()


class VectorClock:
    """The stamps of the events the ordering stage passes on."""

    __slots__ = ("index", "last")

    def __init__(self):
        self.index = {}      # stream key -> its component
        self.last = []       # component -> the vector of the stream's last stamped event

    def stamp(self, key, join=None):
        """The stamp of the next event of stream `key` that happens after
        the place `join` too (None: after its stream's events only)."""
        i = self.index.get(key)
        if i is None:
            i = self.index[key] = len(self.last)
            self.last.append(NOWHERE)
        v = list(self.last[i])
        if join:
            for j in range(min(len(v), len(join))):
                if join[j] > v[j]:
                    v[j] = join[j]
            if len(join) > len(v):
                v.extend(join[len(v):])
        if len(v) <= i:
            v.extend([0] * (i + 1 - len(v)))
        v[i] += 1
        v = tuple(v)
        self.last[i] = v
        return i, v

    def copy(self):
        """A copy a run again of the ordering can start from."""
        c = VectorClock()
        c.index = dict(self.index)
        c.last = list(self.last)
        return c


def before(v, place):
    """Is the event with vector v (its stamp's) at or before `place`?"""
    n = len(place)
    for j, x in enumerate(v):
        if x > (place[j] if j < n else 0):
            return False
    return True


def meet(a, b):
    """The place before both places a and b."""
    return tuple(min(x, y) for x, y in zip(a, b))


def strictly_before(stamp):
    """The place of what happens before the event of `stamp`, not the
    event itself."""
    i, v = stamp
    return v[:i] + (v[i] - 1,) + v[i + 1:]
