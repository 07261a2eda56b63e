"""The app's engine choice (Load page) and what the Findings and What-if pages show under
Flink's or Spark's rules: the findings in the engine's terms and its settings searched
(docs/engines.md, "What-if and explain per engine"). Data only; the pages render it."""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from diagnostics.durations import MINUTE, SECOND
from diagnostics.engine.columns import EventColumns
from diagnostics.engines.findings import EngineFinding, engine_findings
from diagnostics.engines.policy import EngineRules, FlinkRules, Rules, SparkRules
from diagnostics.engines.replay import replay_rules
from diagnostics.errors import UsageError
from diagnostics.whatif.engines import describe_setting, recommend_engine

#: The engines the Load page offers, as it names them.
ENGINE_LABELS: dict[Rules, str] = {
    Rules.ASA: "Azure Stream Analytics",
    Rules.FLINK: "Apache Flink",
    Rules.SPARK: "Spark Structured Streaming",
}


@dataclass(frozen=True, slots=True)
class EngineChoice:
    """The engine the pages speak, and its settings as the Load page takes them (seconds):
    the tumbling ``window_s``; Flink's out-of-orderness (``bound_s``), idleness (``idle_s``,
    0: none) and allowed lateness; Spark's watermark delay (``bound_s``) and trigger."""

    rules: Rules = Rules.ASA
    window_s: float = 60.0
    bound_s: float = 0.0
    idle_s: float = 0.0
    lateness_s: float = 0.0
    trigger_s: float = 1.0

    def engine_rules(self, timestamp_by: str | None) -> EngineRules:
        """The engine's rules on the capture's event-time column; a :class:`UsageError`
        without one (a capture replayed on arrival time) or for ASA."""
        if self.rules is Rules.ASA:
            msg = "ASA's rules are the job's own policy: no engine rules to build"
            raise UsageError(msg)
        if timestamp_by is None:
            msg = (
                f"{ENGINE_LABELS[self.rules]} needs the event-time column: replay the capture "
                "with TIMESTAMP BY (the capture settings on the Load page)"
            )
            raise UsageError(msg)
        window = round(self.window_s * SECOND)
        if self.rules is Rules.FLINK:
            return FlinkRules(
                timestamp_by,
                window,
                out_of_orderness_ns=round(self.bound_s * SECOND),
                idleness_ns=round(self.idle_s * SECOND) if self.idle_s > 0 else None,
                allowed_lateness_ns=round(self.lateness_s * SECOND),
            )
        return SparkRules(
            timestamp_by,
            window,
            watermark_delay_ns=round(self.bound_s * SECOND),
            trigger_ns=round(self.trigger_s * SECOND),
        )


@dataclass(frozen=True)
class EngineView:
    """What the pages show under an engine's rules."""

    rules: EngineRules
    findings: tuple[EngineFinding, ...]
    #: every measured setting (``whatif --rules``'s table)
    table: pl.DataFrame
    recommended: str
    recommended_numbers: str
    dropped: int
    events: int


def engine_view(
    events: pl.DataFrame,
    timestamp_by: str | None,
    columns: EventColumns,
    partitions: tuple[int, ...] | None,
    choice: EngineChoice,
) -> EngineView:
    """Replay the capture under the chosen engine's rules, search its settings, find."""
    rules = choice.engine_rules(timestamp_by)
    out = replay_rules(events, rules, partitions=partitions, columns=columns).outcomes
    rec = recommend_engine(events, rules, columns=columns, partitions=partitions)
    row = rec.row
    return EngineView(
        rules=rules,
        findings=tuple(engine_findings(out, rec)),
        table=rec.table,
        recommended=describe_setting(rec.rules),
        recommended_numbers=(
            f"dropped {row['dropped']:,} ({row['pct_dropped']:g}%), p95 emission delay "
            f"{row['delay_p95_s']} s"
        ),
        dropped=int(out["dropped"].sum()),
        events=out.height,
    )


#: The Load page's defaults for a new choice.
DEFAULT_WINDOW_S = MINUTE / SECOND
