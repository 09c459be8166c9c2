"""The store-to-console delay of emergency output.

The RFC promises that emergency output gets out at once, while ordinary
records wait for the printer thread.  The figure that shows it is the
delay from the store of a record printed in an emergency section to the
serial console's first commit of it; the store-to-commit delay of all
records mixes it with the backlog the printer thread works through.

The records that can be told apart in the trace are the stressor's own
emergency records (`x=emerg` in the stored text, docs/interfaces.md
section 3); a WARN's lines carry no such mark and are not counted.
"""

from .stats import LogHist

MARK = " x=emerg "


class EmergencyDelay:
    """Collects the delays from the analysis' event stream, in the order
    the checker takes it: on_store() with every store, on_commit() with
    every `nobkl_commit` and its console (or on_event() with both, the
    Analyzer's on_event hook: (store, None) or (event, console))."""

    def __init__(self, analyzer=None):
        self.analyzer = analyzer
        self.pending = {}
        self.hist = LogHist()

    def on_event(self, item, con):
        if con is None:
            self.on_store(item)
        elif item.name == "nobkl_commit":
            self.on_commit(item, con)

    def on_store(self, st):
        if MARK in st.text:
            self.pending[st.seq] = st.ts

    def on_commit(self, item, con):
        if not self.pending:
            return
        serial = self.analyzer.serial_console if self.analyzer is not None else None
        if serial is not None and con.name != serial:
            return
        try:
            seq = int(item.fields["seq"])
        except (KeyError, ValueError):
            return
        ts = self.pending.pop(seq, None)
        if ts is not None:
            self.hist.add((item.ts - ts) * 1e6)

    def summary(self):
        """LogHist.summary() in microseconds, plus the records stored in
        emergency sections that the console did not commit in the trace."""
        s = self.hist.summary()
        s["not_committed"] = len(self.pending)
        return s
