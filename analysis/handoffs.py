"""How each console changed hands, and whether the new owner reprinted
the record the old one was in the middle of.

The RFC's cover letter tells its story in these terms: the printer
thread prints, a WARN on the same CPU takes the console over (hostile:
the owner cannot answer a request from its own CPU), a panic on another
CPU gets it by a friendly handover, and the interrupted line is printed
again.  A scenario that stages the story (seed-demo) must see each step
in the trace, not in the guest's opinion of it; this module gives the
counts, from the same event stream the checker takes (in its order).

A hand-off is a `nobkl_acquire` with `how=hostile` or `how=handover`.
Its key names the kind, the taker's priority, whom it took the console
from (`thread`, or the owner's priority) and whether on the owner's CPU:
`hostile emergency<-thread same-cpu`, `handover panic<-thread
other-cpu`.  For a handover the old owner is the context whose
`nobkl_handover_grant` went to the taker; for a hostile takeover the
acquire's `prev_*` fields name it.  Each key counts:

- `taken`: hand-offs of that kind;
- `interrupted`: the old owner had emitted a record and not committed
  it (it was in the middle of it);
- `reprinted`: of those, the new owner's first emission on the console
  was that record again: the interrupted line reprinted from its start;
- `by_ctx`: the hand-offs by the taker's context (`task`, `hardirq`,
  `nmi`, ...), e.g. to tell a WARN in a task from an emergency section
  in an interrupt.
"""


class Handoffs:
    """Pass on_event() as the Analyzer's on_event hook."""

    def __init__(self):
        self.open = {}       # console -> (seq, cpu, thread) of an emission not committed
        self.grant = {}      # console -> (cpu, thread, prio) of the last grant's owner
        self.watch = {}      # console -> (key, cpu, seq): the taker's next emission decides
        self.counts = {}

    def _count(self, key, what, ctx=None):
        c = self.counts.setdefault(key, {"taken": 0, "interrupted": 0, "reprinted": 0,
                                         "by_ctx": {}})
        c[what] += 1
        if ctx is not None:
            c["by_ctx"][ctx] = c["by_ctx"].get(ctx, 0) + 1

    NAMES = frozenset(("nobkl_emit", "nobkl_commit", "nobkl_handover_grant", "nobkl_acquire"))

    def on_event(self, item, con):
        # per emission and commit: seqs are compared as the decimal
        # strings the readers give (the checker rejects malformed ones)
        name = item.name
        if con is None or name not in self.NAMES:
            return
        f = item.fields
        cname = con.name
        if name == "nobkl_emit":
            seq = f.get("seq")
            if self.watch:
                w = self.watch.get(cname)
                if w is not None and w[1] == item.cpu:
                    del self.watch[cname]
                    if seq == w[2]:
                        self._count(w[0], "reprinted")
            self.open[cname] = (seq, item.cpu, f.get("thread") == "1")
        elif name == "nobkl_commit":
            o = self.open.get(cname)
            if o is not None and o[0] == f.get("seq"):
                del self.open[cname]
        elif name == "nobkl_handover_grant":
            self.grant[cname] = (item.cpu, f.get("thread") == "1", f.get("prio"))
        elif name == "nobkl_acquire":
            self._acquire(item, f, cname)

    def _acquire(self, ev, f, cname):
        how = f.get("how")
        if how == "hostile":
            try:
                old = (int(f["prev_cpu"]), f.get("prev_thread") == "1", f.get("prev_prio"))
            except (KeyError, ValueError):
                return
        elif how == "handover":
            # (a trace in timestamp order may list the grant after the
            # acquire: the old owner is then unknown)
            old = self.grant.pop(cname, None) or (None, None, "unknown")
        else:
            self.open.pop(cname, None)        # a free console: nothing in the middle
            self.watch.pop(cname, None)
            return
        where = "" if old[0] is None else " same-cpu" if old[0] == ev.cpu else " other-cpu"
        key = "%s %s<-%s%s" % (how, f.get("prio"), "thread" if old[1] else old[2], where)
        self._count(key, "taken", f.get("ctx"))
        o = self.open.pop(cname, None)
        self.watch.pop(cname, None)
        if o is not None and o[1] == old[0] and o[2] == old[1]:
            self._count(key, "interrupted")
            self.watch[cname] = (key, ev.cpu, o[0])

    def summary(self):
        return {k: dict(v, by_ctx=dict(sorted(v["by_ctx"].items())))
                for k, v in sorted(self.counts.items())}
