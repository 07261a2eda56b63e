"""Settings weighed by the job's results: for each measured setting, the windows of the
query's aggregates whose result the ordering changes, and of the interior windows (away from
the data's edges, docs/impact.md, "Interior and edge windows") those off by more than 5 % and
the 95th percentile of their relative error (``orderdoc impact``), measured by replaying the
capture under it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import polars as pl

from diagnostics.engine.columns import EventColumns
from diagnostics.engine.policy import OrderingPolicy
from diagnostics.engine.replay import replay
from diagnostics.whatif.replays import Replays

if TYPE_CHECKING:
    from diagnostics.impact import Impact

#: The columns the results add to a measured table.
WINDOWS_CHANGED, WINDOWS_OFF, P95_ERROR = "windows_changed", "windows_off", "p95_relative_error"


@dataclass(frozen=True)
class ResultsQuery:
    """The query whose windowed aggregates weigh a setting, and the input it reads."""

    text: str
    input_name: str


def impact_of(replays: Replays, policy: OrderingPolicy, query: ResultsQuery) -> Impact:
    """The query's windows as emitted beside on time with the capture replayed under
    ``policy`` (``orderdoc impact``), worked out once per policy and query."""
    from diagnostics.impact import measure_impact

    mapped = replays.apply(policy)[1]

    def work() -> Impact:
        return measure_impact(
            replays.result(mapped).outcomes,
            query.text,
            query.input_name,
            per_timeline=mapped.partition_by or bool(mapped.over),
        )

    return replays.once(("impact", mapped, query), work)


def results_of(
    events: pl.DataFrame | Replays,
    policy: OrderingPolicy,
    query: ResultsQuery,
    *,
    columns: EventColumns | None = None,
    partitions: Sequence[int] | None = None,
) -> dict[str, float | int]:
    """Windows changed, interior windows off by more than 5 % and the 95th percentile of the
    interior windows' relative error with ``events`` replayed under ``policy`` (as
    :class:`Replays`: each replay and comparison made once)."""
    from diagnostics.impact import measure_impact

    if isinstance(events, Replays):
        return _numbers(impact_of(events, policy, query))
    outcomes = replay(events, policy, columns=columns, partitions=partitions).outcomes
    return _numbers(
        measure_impact(
            outcomes,
            query.text,
            query.input_name,
            per_timeline=policy.partition_by or bool(policy.over),
        )
    )


def _numbers(impact: Impact) -> dict[str, float | int]:
    from diagnostics.impact import summarize

    summary = summarize(impact)
    return {
        WINDOWS_CHANGED: int(summary["windows_changed"]),
        WINDOWS_OFF: int(summary["interior"]["off"]),
        P95_ERROR: float(summary["interior"]["p95"] or 0.0),
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
    """``table`` (one row per policy of ``policies``, in order) with the results columns
    (the capture's time read once for every replay: :class:`Replays`, keeping none)."""
    from diagnostics.impact import measure_impact

    replays = Replays(events, columns=columns, partitions=partitions, keep=0, keep_first=False)
    measured = []
    for policy in policies:
        impact = measure_impact(
            replays.result(policy).outcomes,
            query.text,
            query.input_name,
            per_timeline=policy.partition_by or bool(policy.over),
        )
        measured.append(_numbers(impact))
    return table.with_columns(
        pl.Series(WINDOWS_CHANGED, [m[WINDOWS_CHANGED] for m in measured], dtype=pl.Int64),
        pl.Series(WINDOWS_OFF, [m[WINDOWS_OFF] for m in measured], dtype=pl.Int64),
        pl.Series(P95_ERROR, [m[P95_ERROR] for m in measured], dtype=pl.Float64),
    )
