"""What-if sweeps over ordering policies (``orderdoc whatif``; docs/explain.md).

Public API (the app builds on these names)::

    result = sweep(events, policy, late_values=[0, 5 * S, None], ooo_values=[0])
    result.table        # one row per setting, with pareto / recommended
    result.rule         # the stated recommendation rule
    fig = chart(result)
"""

from diagnostics.whatif.chart import chart, write_outputs
from diagnostics.whatif.sweep import RULE, SweepResult, sweep

__all__ = ["RULE", "SweepResult", "chart", "sweep", "write_outputs"]
