"""Other engines' event-time rules, replayed offline on a capture (docs/engines.md).

* :mod:`~diagnostics.engines.policy`: :class:`Rules`, :class:`FlinkRules`, :class:`SparkRules`;
* :mod:`~diagnostics.engines.flink` and :mod:`~diagnostics.engines.spark`: each engine's logic;
* :mod:`~diagnostics.engines.replay`: :func:`replay_rules`, the same outcome columns as the ASA
  replay (the ASA engine itself stays in :mod:`diagnostics.engine`).
"""

from __future__ import annotations

from diagnostics.engines.policy import EngineRules, FlinkRules, Rules, SparkRules, WatermarkPolicy
from diagnostics.engines.replay import EngineReplayResult, replay_rules

__all__ = [
    "EngineReplayResult",
    "EngineRules",
    "FlinkRules",
    "Rules",
    "SparkRules",
    "WatermarkPolicy",
    "replay_rules",
]
