"""Host-side analysis of printk nobkl stress runs.

The flow, one way, each stage owning one thing (docs/analysis.md):

  1. readers: inputs.py finds the inputs and chooses the reader;
     tracedat.py (trace.dat through libtracecmd, its layout checked by
     tracedat_layout.py) or traceparse.py (trace-cmd report text, run by
     report_source.py); consolelog.py, the one reader of console.log,
     serial.py its lines' kinds, pstress.py the stressor records;
     nbcon_events.py reads 6.12's event families
  2. validation: validation.py, bad fields and cut input become
     incomplete input with a reason: the read order as read, the fields
     where the checker takes each item (trace loss at its place in the
     order stage 3 proves)
  3. ordering: ordering.py and chain_*.py (6.1), nbcon_order.py (6.12):
     events in the order the state chain proves
  4. the checker (checker.py, with admission.py and record_window.py)
     applies them to the kernel's ownership model: model_rfc.py and
     rfc_*.py (rfc-6.1) or model_nbcon.py (nbcon-6.12), handed only
     what model_io.py names, which tells what it sees, and the
     tolerances it grants, as typed facts (facts.py) to one sink
  5. rules: one registry (rules.py; `python3 -m analysis rules`), which
     dispatches each fact to the units that consume it (trace_rules.py,
     nbcon_rules.py), a granted tolerance to its counter
     (tolerances.py), as the alignment does its placements
     (serial_rules.py); the stressor's own line, selfcheck.py; its
     records in fragments, cont_fragments.py
  6. serial alignment: serialcheck.py, serial_*.py and the producers'
     ledger producers.py, fed through the listeners api.py registers,
     read the trace's side through a view
  7. the verdict: fold.py and verdict.py write analysis.json once,
     intervals.py the model's intervals next to it, emergency_report.py
     every emergency record past the RFC's bound (the facts from
     emergency_bound.py); plot, timeline and the console benchmark read
     analysis.json and the intervals

    /usr/bin/python3 -m analysis check RESULTS_DIR [--json] [-o RESULTS_DIR/analysis.json [--gzip]]
    /usr/bin/python3 -m analysis timeline RESULTS_DIR --seq N   # reads what -o wrote
    /usr/bin/python3 -m analysis plot RESULTS_DIR               # (the harness writes it)

Library use (the harness):

    from analysis import check_results
    verdict = check_results("results/latest")   # dict, see docs/analysis.md
    verdict["verdict"]    # "pass" | "fail" | "incomplete"
    verdict["exit_code"]  # 0 | 1 | 2
"""

from .api import analyse, check_results  # noqa: F401
from .verdict import EXIT_PASS, EXIT_FAIL, EXIT_UNUSABLE  # noqa: F401
from .rules import RULES, RULE_IDS  # noqa: F401
from .traceparse import InputError  # noqa: F401

__all__ = ["check_results", "analyse", "RULES", "RULE_IDS", "InputError",
           "EXIT_PASS", "EXIT_FAIL", "EXIT_UNUSABLE"]
