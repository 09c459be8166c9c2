"""The stressor's own end-of-run line (the stressor-selfcheck rule).

At the end of every run printk_stress prints, at KERN_ALERT, its end
banner and then one line saying whether its own invariants held
(docs/stressor.md, "Lines about a run"):

  printk_stress: end run=N ... takeovers_direct=... ...
  printk_stress: run=N SUCCESS checks=stored,nmi,takeovers,records
  printk_stress: run=N FAILURE checks=... failed: <check> <why>; ...

They are read from the serial log and from dmesg.txt (what the scenario
saved with `save_dmesg`, `dmesg -r`: a `<level>` in front), whichever
the results directory has.

Invariants:
  * A copy of a line is known by its `[  sec.usec]` stamp: the serial
    log's cut copy and reprint of one record, and its dmesg.txt copy,
    have the same stamp and are one line, of which the longest copy
    counts (a cut copy is a prefix of it).  Two loads of the module may
    both have a run 1: their lines have other stamps.
  * A log's line order is the order the console (or dmesg) printed the
    records, their seq order; the stamps are not (the task that prints
    both lines may move between them to a CPU whose clock is behind).
    The logs' lines are merged in each log's own order, a line that
    both show placing the other's around it.
  * A result line belongs to the end banner of its run before it.  An
    end banner of a stressor that prints the line (its totals name
    `takeovers_direct=`, as since the line exists) with no result line
    of its run after it, before that run's next end banner, is a run
    whose result is unknown: incomplete input, never a pass.
  * A FAILURE line is a `stressor-selfcheck` violation: the module
    counted a record it did not store, an NMI it sent and never served,
    a takeover without an outcome, or a producer that never ran.
"""

import lzma
import os
import re

from . import consolelog
from .rules import unit

# a line's text after the prefix (a line of dmesg.txt: after its <level>)
_LEVEL_RE = re.compile(r"<\d+>")
_TEXT_RE = re.compile(
    r"printk_stress: (?:(end) run=(\d+) (.*?)"
    r"|run=(\d+) (SUCCESS|FAILURE) checks=([a-z,]*)(?: failed: (.*?))?)\r?\Z", re.S)

# the end banner's total of a stressor that prints the result line
SELF_CHECKING = " takeovers_direct="


def _read(path):
    """The end banners and result lines of a log (an xz one
    decompressed): _lines()' pairs, or None when it cannot be read.
    The log is streamed and only these few lines are kept (it holds a
    line per record the console printed: its typed lines would take
    several times its size); a log that fails part way counts as not
    read at all."""
    try:
        return list(_lines(os.path.basename(path), consolelog.lines(path)))
    except (OSError, lzma.LZMAError):
        return None


def _ascii(s):
    """A latin-1 line's text with its non-ASCII bytes replaced."""
    return s.encode("latin-1").decode("ascii", "replace")


def _text(line):
    """What follows the prefix of a typed line: after the marker, time
    stamp (and caller) and their blank, or after the marker alone on a
    line without a time stamp; None when the prefix has no blank after
    it.  With the CRs of its line end (_TEXT_RE allows one)."""
    if line.stamp is not None:
        if line.glued:
            return None
        text = line.text
    else:
        text = line.raw[1:] if line.raw[:1] in ("A", "T") else line.raw
    return text + line.end.rstrip("\n")


def _lines(name, lines):
    """The end banners and result lines of one log: (key, line) pairs,
    key = (stamp or position, kind, run)."""
    for ln in lines:
        if "printk_stress: " not in ln.raw:
            continue
        p = ln
        lv = _LEVEL_RE.match(ln.raw)
        if lv is not None:
            p = consolelog.parse(ln.raw[lv.end():], ln.lineno, ln.offset, ln.end)
        text = _text(p)
        m = _TEXT_RE.match(text) if text is not None else None
        if m is None:
            continue
        stamp = float(p.stamp) if p.stamp is not None else None
        if m.group(1):
            kind, run = "end", int(m.group(2))
            line = {"self_checking": SELF_CHECKING in " " + m.group(3)}
        else:
            kind, run = "result", int(m.group(4))
            line = {"result": m.group(5),
                    "checks": [c for c in m.group(6).split(",") if c],
                    "failed": _ascii(m.group(7)) if m.group(7) else None}
        text = text.rstrip("\r")
        line.update(run=run, length=len(text), where="%s:%d" % (name, ln.lineno), stamp=stamp,
                    text=_ascii(text))
        yield (stamp if stamp is not None else (name, ln.lineno), kind, run), line


def collect(paths):
    """Every end banner and result line of the logs, one per line (the
    longest copy), in the logs' line order (_merge())."""
    seen = {}
    orders = []
    for path in paths:
        found = _read(path)
        if found is None:
            continue
        order = []
        for key, line in found:
            if key not in seen or line["length"] > seen[key]["length"]:
                seen[key] = dict(line, kind=key[1])
            order.append(key)
        orders.append(order)
    return [seen[k] for k in _merge(orders)]


def _merge(orders):
    """One order of the keys of every log, each log's keys in its line
    order (a key's first line): a log's key that an earlier log has
    already placed anchors the keys after it, which go right after it
    and before the earlier log's next one.  Logs that list two common
    keys the other way round (not seen: both list records in seq order)
    keep the first log's order of them."""
    out = []
    at_key = {}
    for order in orders:
        at = 0
        for key in order:
            i = at_key.get(key)
            if i is not None:
                at = max(at, i + 1)
                continue
            out.insert(at, key)
            at_key = {k: n for n, k in enumerate(out)}
            at += 1
    return out


def pair(lines):
    """([run dicts], [end banners without a result line]): each result
    line with the end banner of its run before it."""
    runs, missing, open_end = [], [], {}
    for ln in lines:
        if ln["kind"] == "end":
            prev = open_end.pop(ln["run"], None)
            if prev is not None and prev["self_checking"]:
                missing.append(prev)
            open_end[ln["run"]] = ln
            continue
        open_end.pop(ln["run"], None)
        runs.append({k: ln[k] for k in ("run", "result", "checks", "failed", "where")})
    missing += [e for e in open_end.values() if e["self_checking"]]
    return runs, sorted(missing, key=lambda e: e["where"])


def summary(runs, missing):
    """verdict.json's `stressor`: the first FAILURE run's result, checks
    and reasons (else the last run's), every run, and the runs whose end
    banner has no result line; None when no run ended."""
    if not runs and not missing:
        return None
    top = next((r for r in runs if r["result"] == "FAILURE"), runs[-1] if runs else None)
    return {
        "result": top["result"] if top else None,
        "run": top["run"] if top else None,
        "checks": top["checks"] if top else [],
        "failed": top["failed"] if top else None,
        "runs": runs,
        "missing_result": [{"run": e["run"], "where": e["where"]} for e in missing],
    }


@unit("stressor-selfcheck", consumes="end-line")
def check(an, rdir, serial=None):
    """Read the end lines of the results directory `rdir` (the serial
    log `serial`, dmesg.txt), raise stressor-selfcheck for each FAILURE
    line, and return (summary(), reasons the input is incomplete)."""
    paths = [serial] if serial else []
    paths.append(os.path.join(rdir or ".", "dmesg.txt"))
    runs, missing = pair(collect(paths))
    for r in runs:
        if r["result"] == "FAILURE":
            an.violate("stressor-selfcheck", None, "printk_stress run %d: its own checks "
                       "failed (%s): %s" % (r["run"], r["where"], r["failed"]),
                       extra={"stressor_line": r["where"]})
    why = ["stressor run %d ended (%s) but its SUCCESS/FAILURE line is on no log: "
           "its own checks are unknown" % (e["run"], e["where"]) for e in missing]
    return summary(runs, missing), why
