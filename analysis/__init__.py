"""Host-side analysis of printk nobkl stress runs (issue 5).

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
