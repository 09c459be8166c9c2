"""What the ordering stage says in the verdict: how the events were
ordered (the chain, the clocks as asked, or none), its counts, and why
nothing orders the events of different CPUs where so (a broken chain,
a trace without the chain): the verdict is then incomplete.

A class of CausalOrder (ordering.py): the state is the stage's.
"""

# why a trace without the chain is not judged unless the user asks for the
# clocks: a tracepoint fires after its cmpxchg, and only the state words
# tell which of two CPUs' state changes came first
UNORDERED_REASON = ("cannot order the events of different CPUs: the trace has no "
                    "old_state/new_state fields (a kernel without the transition count); "
                    "judging it by the CPUs' clocks needs order=timestamps "
                    "(`check --order timestamps`)")


class OrderVerdict:
    """CausalOrder's part of the verdict (a class of it: the state is the
    stage's)."""

    def unordered(self):
        """True when nothing in the trace orders the events of different
        CPUs: no console event carries old_state/new_state."""
        return self.mode != "chain"

    def describe(self, by_clocks=False):
        if self.mode == "chain":
            return "causal: console state transition chain (old_state/new_state)"
        if by_clocks:
            return ("timestamps, as asked (order=timestamps): the trace has no "
                    "old_state/new_state fields, the events of different CPUs are "
                    "ordered by the CPUs' clocks")
        return ("none: the trace has no old_state/new_state fields (kernel without the "
                "transition count); not judged by the CPUs' clocks unless asked "
                "(order=timestamps)")

    def incomplete_reasons(self, by_clocks=False):
        """Why nothing orders the events of different CPUs: a broken
        chain, with the place named, and a trace without the chain
        unless the user asked to judge it by the clocks (`by_clocks`).
        The verdict is then incomplete (verdict.judge_order()) also when
        rules were violated before the place: the break is found where
        an event waits for good, but the order may have gone wrong long
        before (a root chosen among transitions of a CPU listed late), so
        no violation is proven (the violations stay listed for whoever
        looks)."""
        why = []
        if self.breaks:
            why.append("events could not be ordered by the state chain (%d place(s)); "
                       "first: %s" % (len(self.breaks), self.breaks[0][2]))
        if self.unordered() and not by_clocks:
            why.append(UNORDERED_REASON)
        return why

    def annotate(self, verdict, by_clocks=False):
        """Record the ordering in the verdict: how the events were
        ordered, the stage's counts and the places the chain broke."""
        verdict.setdefault("inputs", {})["ordering"] = self.describe(by_clocks)
        mode = "chain" if self.mode == "chain" else "timestamps" if by_clocks else "none"
        verdict["ordering"] = dict(self.counts, mode=mode,
                                   breaks=[m for _, _, m in self.breaks[:10]],
                                   break_count=len(self.breaks))
