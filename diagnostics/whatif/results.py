"""Settings weighed by the job's results: for each measured setting, the windows of the
query's aggregates whose result the ordering changes, and the largest relative error
(``orderdoc impact``, docs/impact.md), measured by replaying the capture under it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import polars as pl

from diagnostics.engine.columns import EventColumns
from diagnostics.engine.policy import OrderingPolicy
from diagnostics.engine.replay import replay

#: The columns the results add to a measured table.
WINDOWS_CHANGED, LARGEST_ERROR = "windows_changed", "largest_relative_error"


@dataclass(frozen=True)
class ResultsQuery:
    """The query whose windowed aggregates weigh a setting, and the input it reads."""

    text: str
    input_name: str


def results_of(
    events: pl.DataFrame,
    policy: OrderingPolicy,
    query: ResultsQuery,
    *,
    columns: EventColumns | None = None,
    partitions: Sequence[int] | None = None,
) -> dict[str, float | int]:
    """Windows changed and the largest relative error with ``events`` replayed under
    ``policy``."""
    from diagnostics.impact import measure_impact, summarize

    outcomes = replay(events, policy, columns=columns, partitions=partitions).outcomes
    impact = measure_impact(
        outcomes,
        query.text,
        query.input_name,
        per_timeline=policy.partition_by or bool(policy.over),
    )
    summary = summarize(impact)
    return {
        WINDOWS_CHANGED: int(summary["windows_changed"]),
        LARGEST_ERROR: float(summary["largest_relative_error"]),
    }


def with_results(
    table: pl.DataFrame,
    policies: Sequence[OrderingPolicy],
    events: pl.DataFrame,
    query: ResultsQuery,
    *,
    columns: EventColumns | None = None,
    partitions: Sequence[int] | None = None,
) -> pl.DataFrame:
    """``table`` (one row per policy of ``policies``, in order) with the results columns."""
    measured = [
        results_of(events, p, query, columns=columns, partitions=partitions) for p in policies
    ]
    return table.with_columns(
        pl.Series(WINDOWS_CHANGED, [m[WINDOWS_CHANGED] for m in measured], dtype=pl.Int64),
        pl.Series(LARGEST_ERROR, [m[LARGEST_ERROR] for m in measured], dtype=pl.Float64),
    )
