"""StreamInsight's application-time advancement (CTIs) as a library (docs/semantics.md, "StreamInsight application-time advancement (CTI)"; docs/cti.md).

* :mod:`~diagnostics.cti.policy`: :class:`CtiPolicy`, :class:`HoppingWindow`;
* :mod:`~diagnostics.cti.engine`: the incremental :class:`CtiEngine`;
* :mod:`~diagnostics.cti.replay`: :func:`replay_cti` over polars frames;
* :mod:`~diagnostics.cti.records`: ``CtiViolation`` resource-log records and
  :func:`suggest_cti_delay`;
* :mod:`~diagnostics.cti.outputs`: the records, summary and files of a replay (the command
  line is ``orderdoc cti``, :mod:`diagnostics.cli.cti`).
"""

from diagnostics.cti.engine import CtiEngine
from diagnostics.cti.events import (
    OUTPUT,
    CtiOrigin,
    CtiRecord,
    CtiViolation,
    Event,
    EventOutcome,
    ImportedCti,
    Shape,
)
from diagnostics.cti.policy import INFINITY, CtiPolicy, HoppingWindow, Operator, ViolationPolicy
from diagnostics.cti.records import (
    suggest_cti_delay,
    suggest_cti_delay_from_outcomes,
    suggest_from_records,
    violation_records,
)
from diagnostics.cti.replay import CtiReplayResult, replay_cti

__all__ = [
    "INFINITY",
    "OUTPUT",
    "CtiEngine",
    "CtiOrigin",
    "CtiPolicy",
    "CtiRecord",
    "CtiReplayResult",
    "CtiViolation",
    "Event",
    "EventOutcome",
    "HoppingWindow",
    "ImportedCti",
    "Operator",
    "Shape",
    "ViolationPolicy",
    "replay_cti",
    "suggest_cti_delay",
    "suggest_cti_delay_from_outcomes",
    "suggest_from_records",
    "violation_records",
]
