"""Per-minute metrics: dense grid, job = sum of partitions, totals = flagged events."""

from __future__ import annotations

import polars as pl
from hypothesis import given, settings

from diagnostics.instrument.metrics import COUNT_COLUMNS, METRICS_SCHEMA, metrics_frame

from .conftest import BASE_NS, SECOND, make_outcomes, outcome_frames

MINUTE = 60 * SECOND


@settings(max_examples=80, deadline=None)
@given(outcomes=outcome_frames())
def test_totals_and_job_rows(outcomes: pl.DataFrame):
    table = metrics_frame(outcomes, "job1")
    assert dict(table.schema) == METRICS_SCHEMA
    parts = table.filter(pl.col("partition_id").is_not_null())
    job = table.filter(pl.col("partition_id").is_null())
    assert parts["InputEvents"].sum() == outcomes.height
    assert parts["LateInputEvents"].sum() == outcomes["late"].sum()
    assert parts["EarlyInputEvents"].sum() == outcomes["early"].sum()
    assert parts["DroppedOrAdjustedEvents"].sum() == outcomes["out_of_order"].sum()
    summed = parts.group_by("time").agg(pl.col(c).sum() for c in COUNT_COLUMNS).sort("time")
    assert summed.equals(job.select("time", *COUNT_COLUMNS).sort("time"))
    # Dense: every minute from the first arrival's to the last's, for every partition.
    first = outcomes["arrival"].min().replace(second=0, microsecond=0)
    last = outcomes["arrival"].max().replace(second=0, microsecond=0)
    minutes = int((last - first).total_seconds() // 60) + 1
    partitions = outcomes["partition"].n_unique()
    assert table.height == minutes * (partitions + 1)
    assert table.select("time", "partition_id").is_unique().all()


def test_counts_per_minute_and_partition():
    outcomes = make_outcomes(
        [BASE_NS + 10 * SECOND, BASE_NS + 20 * SECOND, BASE_NS + 2 * MINUTE + SECOND],
        [0, 1, 1],
        flags={"late": [True, False, True], "out_of_order": [True, False, False]},
    )
    table = metrics_frame(outcomes, "j", partitions=(0, 1, 2))
    rows = table.select("partition_id", "InputEvents", "LateInputEvents", "DroppedOrAdjustedEvents")
    assert rows.rows() == [
        (None, 2, 1, 1),
        (0, 1, 1, 1),
        (1, 1, 0, 0),
        (2, 0, 0, 0),
        (None, 0, 0, 0),
        (0, 0, 0, 0),
        (1, 0, 0, 0),
        (2, 0, 0, 0),
        (None, 1, 1, 0),
        (0, 0, 0, 0),
        (1, 1, 1, 0),
        (2, 0, 0, 0),
    ]
    assert table["job"].unique().to_list() == ["j"]


def test_watermark_delay_joined_by_minute_and_partition():
    outcomes = make_outcomes([BASE_NS, BASE_NS + MINUTE], [0, 1])
    minute = pl.Series([BASE_NS, BASE_NS, BASE_NS + MINUTE], dtype=pl.Int64).cast(
        pl.Datetime("ns", "UTC")
    )
    delay = pl.DataFrame(
        {
            "time": minute,
            "partition_id": pl.Series([None, 0, 1], dtype=pl.Int64),
            "OutputWatermarkDelaySeconds": [7.5, 5.0, 9.0],
        }
    )
    table = metrics_frame(outcomes, "j", watermark_delay=delay)
    got = table.select("partition_id", "OutputWatermarkDelaySeconds").rows()
    assert got == [(None, 7.5), (0, 5.0), (1, None), (None, None), (0, None), (1, 9.0)]
