"""Per-minute metrics of a CTI replay, in the ASA replay's ``metrics.parquet`` table.

The CTI mode maps onto ASA's metric names as follows (minutes of processing time τ, the
events' arrival): ``InputEvents`` counts events by arrival minute; ``LateInputEvents`` and
``EarlyInputEvents`` are 0 (StreamInsight has neither); ``DroppedOrAdjustedEvents`` counts CTI
violations (dropped or adjusted); ``OutputWatermarkDelaySeconds`` is the largest τ − CTI(τ)
within the minute, where CTI(τ) is the latest CTI issued at or before τ: the output CTI for the
job row (``partition_id`` null), each input's own CTI for the rows ``partition_id`` 0 (the
first input) and 1 (the second). It is null before the first CTI and after a flush to +∞.
The table is built by :func:`diagnostics.instrument.metrics.metrics_frame`, so it has the same
grid, types and invariants. Without arrival times there is no processing time and no table.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

from diagnostics.cti.events import OUTPUT, CtiRecord
from diagnostics.cti.policy import INFINITY
from diagnostics.durations import MINUTE, SECOND
from diagnostics.instrument.metrics import metrics_frame
from diagnostics.minutes import minute_grid, minute_of
from diagnostics.scalars import as_int


def delay_per_minute(
    steps: Sequence[tuple[int, int]], close_ns: int, grid: np.ndarray | None = None
) -> list[tuple[int, float]]:
    """``(minute start, max delay in s)`` for a CTI step function up to ``close_ns``.

    ``steps`` are ``(issued at τ, CTI)`` in issue order. On ``[τ_k, τ_k+1)`` the delay grows
    from ``τ_k − c_k``; its supremum within a minute is at the segment's or the minute's end.
    ``grid`` (sorted minute starts, ``diagnostics.minutes.minute_grid``) limits the minutes
    evaluated, so that a segment spanning years costs the grid minutes inside it.
    """
    best: dict[int, int] = {}
    for k, (begin, cti) in enumerate(steps):
        end = steps[k + 1][0] if k + 1 < len(steps) else close_ns
        if cti == INFINITY or end < begin:
            continue
        if end == begin:
            if k + 1 < len(steps):
                continue  # superseded at the same instant
            minute = begin // MINUTE * MINUTE
            best[minute] = max(best.get(minute, begin - cti), begin - cti)
            continue
        first = begin // MINUTE * MINUTE
        if grid is None:
            minutes: Sequence[int] = range(first, end, MINUTE)
        else:
            low, high = np.searchsorted(grid, [first, end])
            minutes = grid[low:high].tolist()
        for minute in minutes:
            value = min(end, minute + MINUTE) - cti
            best[minute] = max(best.get(minute, value), value)
    return sorted((m, v / SECOND) for m, v in best.items())


def cti_metrics(
    outcomes: Sequence[pl.DataFrame], ctis: Sequence[CtiRecord], job: str
) -> pl.DataFrame | None:
    """The metrics table of a CTI replay, or ``None`` without arrival times."""
    frames = [
        frame.filter(pl.col("arrival").is_not_null()).select(
            "arrival",
            pl.lit(index, pl.Int64).alias("partition"),
            pl.lit(False).alias("late"),
            pl.lit(False).alias("early"),
            pl.col("violation").alias("out_of_order"),
        )
        for index, frame in enumerate(outcomes)
    ]
    events = pl.concat(frames)
    if events.is_empty():
        return None
    arrival_ns = events["arrival"].dt.epoch("ns")
    close = as_int(arrival_ns.max())
    grid = minute_grid(minute_of(arrival_ns.to_numpy()))
    rows: list[tuple[int, int | None, float]] = []
    for stream, partition in [(OUTPUT, None), *((i, i) for i in range(len(outcomes)))]:
        steps = [
            (r.processing_ns, r.cti_ns)
            for r in ctis
            if r.stream == stream and r.processing_ns is not None
        ]
        rows += [(m, partition, v) for m, v in delay_per_minute(steps, close, grid)]
    delay = pl.DataFrame(
        {
            "time": pl.Series([r[0] for r in rows], dtype=pl.Int64)
            .cast(pl.Datetime("ns"))
            .dt.replace_time_zone("UTC"),
            "partition_id": pl.Series([r[1] for r in rows], dtype=pl.Int64),
            "OutputWatermarkDelaySeconds": pl.Series([r[2] for r in rows], dtype=pl.Float64),
        }
    )
    return metrics_frame(events, job, tuple(range(len(outcomes))), delay)
