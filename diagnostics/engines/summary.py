"""A replay's summary under Flink's or Spark's rules: counts in the engine's terms (its
dropped-records counter) and emission-delay percentiles, as data and as text."""

from __future__ import annotations

from typing import Any

import polars as pl

from diagnostics.engine.summary import (
    delay_percentiles,
    invalid_time_line,
    percent,
)
from diagnostics.engines.policy import EngineRules, Rules
from diagnostics.engines.replay import EngineReplayResult
from diagnostics.scalars import as_datetime

#: The metric each engine counts its dropped late events in.
DROP_COUNTER: dict[Rules, str] = {
    Rules.FLINK: "numLateRecordsDropped",
    Rules.SPARK: "numRowsDroppedByWatermark",
}


def drop_counter(rules: EngineRules) -> str:
    """The engine's counter of dropped late events."""
    return DROP_COUNTER[rules.rules]


def rule_counts(out: pl.DataFrame) -> dict[str, int]:
    """Counts of an outcomes frame replayed under an engine's rules."""
    row = out.select(
        pl.len().alias("events"),
        (~pl.col("dropped")).sum().alias("kept"),
        (pl.col("late") & ~pl.col("dropped")).sum().alias("kept_behind_watermark"),
        (pl.col("dropped") & ~pl.col("invalid_timestamp")).sum().alias("dropped_late"),
        pl.col("invalid_timestamp").sum().alias("invalid_timestamp"),
        pl.col("out_of_order").sum().alias("out_of_order"),
        pl.col("release_time").is_not_null().sum().alias("released"),
        (~pl.col("dropped") & pl.col("release_time").is_null()).sum().alias("never_released"),
    ).row(0, named=True)
    return {k: int(v) for k, v in row.items()}


def summarize_rules(result: EngineReplayResult) -> dict[str, Any]:
    """The summary of a replay under an engine's rules."""
    out = result.outcomes
    arrival = out["arrival"]
    warning = _invalid_times(result)
    return {
        "rules": result.rules.rules.value,
        "policy": result.rules.describe(),
        "drop_counter": drop_counter(result.rules),
        "partitions": list(result.partitions),
        "inputs": list(result.sources),
        "counts": rule_counts(out),
        "emission_delay_seconds": delay_percentiles(out),
        "arrival_from": None if out.is_empty() else as_datetime(arrival.min()).isoformat(),
        "arrival_to": None if out.is_empty() else as_datetime(arrival.max()).isoformat(),
        "warnings": [] if warning is None else [warning],
    }


def _invalid_times(result: EngineReplayResult) -> str | None:
    """One line when most events have no valid event time (as the ASA replay's summary)."""
    out, column = result.outcomes, result.rules.event_time
    invalid = out["invalid_timestamp"]
    values = out[column].filter(invalid).drop_nulls() if column in out.columns else None
    first = None if values is None or values.is_empty() else values[0]
    wording = ("event time: ", "not a time orderdoc reads (set aside, not counted as late)")
    return invalid_time_line(int(invalid.sum()), out.height, column, first, wording)


def format_rules_summary(summary: dict[str, Any]) -> str:
    """The summary as a short report in the engine's terms."""
    c = summary["counts"]
    n = c["events"]
    d = summary["emission_delay_seconds"]
    lines = [
        f"rules       {summary['policy']}",
        f"partitions  {len(summary['partitions'])}",
        f"arrivals    {summary['arrival_from']} .. {summary['arrival_to']}",
        f"events      {n:,}",
        f"  kept                    {c['kept']:>12,}  {percent(c['kept'], n):>8}"
        f"   (of which behind the watermark but in a window still open: "
        f"{c['kept_behind_watermark']:,})",
        f"  dropped as late         {c['dropped_late']:>12,}  {percent(c['dropped_late'], n):>8}"
        f"   ({summary['drop_counter']})",
        f"  no valid event time     {c['invalid_timestamp']:>12,}  "
        f"{percent(c['invalid_timestamp'], n):>8}",
        f"  never emitted           {c['never_released']:>12,}  {percent(c['never_released'], n):>8}"
        "   (window not closed by the end of the capture)",
    ]
    lines += [f"warning     {w}" for w in summary.get("warnings", [])]
    if d["max"] is not None:
        lines.append(
            "emission delay (window emitted - arrival): "
            f"p50 {d['p50']}s  p95 {d['p95']}s  p99 {d['p99']}s  max {d['max']}s"
        )
    return "\n".join(lines)
