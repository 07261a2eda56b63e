"""Per-minute job metrics under ASA's REST names, per partition and for the whole job.

Minutes are minutes of processing time τ (an event's arrival). The grid holds every minute
with data and up to an hour of idle minutes after each (``diagnostics.minutes``: a longer gap
is not filled, so cost follows the data, not the time span), for every partition (declared or
present) and for the job (``partition_id`` null), with zero counts where nothing happened. Invariants: per minute,
the job row's counts are the sums of the partition rows'; ``InputEvents`` sums to the number
of outcome rows; ``LateInputEvents``, ``EarlyInputEvents`` and ``DroppedOrAdjustedEvents`` sum
to the rows flagged ``late``, ``early`` and ``out_of_order``.

``OutputWatermarkDelaySeconds`` is not derived here: it comes from the engine
(``diagnostics.engine.watermarks.watermark_delay_per_minute``) as a frame with ``time``,
``partition_id`` and ``OutputWatermarkDelaySeconds``, joined on minute and partition; it is
null where that frame has no value (or when no frame is given).
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from diagnostics.durations import MINUTE
from diagnostics.minutes import minute_grid

COUNT_COLUMNS: tuple[str, ...] = (
    "InputEvents",
    "LateInputEvents",
    "EarlyInputEvents",
    "DroppedOrAdjustedEvents",
)
METRICS_SCHEMA: dict[str, pl.DataType] = {
    "job": pl.String(),
    "time": pl.Datetime("ns", "UTC"),
    "partition_id": pl.Int64(),
    **{name: pl.Int64() for name in COUNT_COLUMNS},
    "OutputWatermarkDelaySeconds": pl.Float64(),
}
_JOB_KEY = -(2**62)  # stands for "whole job" in joins (null keys do not join)


def metrics_frame(
    outcomes: pl.DataFrame,
    job: str,
    partitions: Sequence[int] | None = None,
    watermark_delay: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """The ``metrics.parquet`` table, sorted by ``time`` then ``partition_id`` (job row first)."""
    if outcomes.height == 0:
        return pl.DataFrame(schema=METRICS_SCHEMA)
    return metrics_table(minute_counts(outcomes), job, partitions, watermark_delay)


def minute_counts(outcomes: pl.DataFrame) -> pl.DataFrame:
    """The counts of :data:`COUNT_COLUMNS` per (``minute``, ``key``: the partition), one row
    per pair with events (in no particular order)."""
    # Lazy, so the per-event columns are streamed through the group-bys, never held whole.
    events = outcomes.lazy().select(
        ((pl.col("arrival").dt.cast_time_unit("ns").dt.epoch("ns") // MINUTE) * MINUTE).alias(
            "minute"
        ),
        pl.col("partition").cast(pl.Int64).alias("key"),
        pl.col("late").fill_null(False).alias("LateInputEvents"),
        pl.col("early").fill_null(False).alias("EarlyInputEvents"),
        pl.col("out_of_order").fill_null(False).alias("DroppedOrAdjustedEvents"),
    )
    sums = [
        pl.len().cast(pl.Int64).alias("InputEvents"),
        *(pl.col(name).sum().cast(pl.Int64) for name in COUNT_COLUMNS[1:]),
    ]
    return events.group_by(["minute", "key"]).agg(sums).collect()


def metrics_table(
    per_partition: pl.DataFrame,
    job: str,
    partitions: Sequence[int] | None = None,
    watermark_delay: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """The ``metrics.parquet`` table from the counts of :func:`minute_counts` (however they
    were computed: the Spark replay sums them in its tasks; at least one row)."""
    per_job = (
        per_partition.group_by("minute")
        .agg(pl.col(name).sum() for name in COUNT_COLUMNS)
        .with_columns(pl.lit(_JOB_KEY).alias("key"))
    )
    counts = pl.concat([per_partition, per_job.select(per_partition.columns)])

    minutes = pl.DataFrame(
        {"minute": minute_grid(per_job["minute"].to_numpy())}, schema={"minute": pl.Int64}
    )
    keys = sorted(set(per_partition["key"].unique().to_list()) | {int(p) for p in partitions or ()})
    grid = minutes.join(
        pl.DataFrame({"key": [_JOB_KEY, *keys]}, schema={"key": pl.Int64}), how="cross"
    )
    table = grid.join(counts, on=["minute", "key"], how="left").with_columns(
        pl.col(name).fill_null(0) for name in COUNT_COLUMNS
    )
    table = table.join(_delay_by_key(watermark_delay), on=["minute", "key"], how="left")
    return table.sort(["minute", "key"]).select(
        pl.lit(job, pl.String).alias("job"),
        pl.col("minute").cast(pl.Datetime("ns", "UTC")).alias("time"),
        pl.when(pl.col("key") == _JOB_KEY)
        .then(None)
        .otherwise(pl.col("key"))
        .alias("partition_id"),
        *COUNT_COLUMNS,
        pl.col("OutputWatermarkDelaySeconds").cast(pl.Float64),
    )


def _delay_by_key(watermark_delay: pl.DataFrame | None) -> pl.DataFrame:
    schema = {"minute": pl.Int64, "key": pl.Int64, "OutputWatermarkDelaySeconds": pl.Float64}
    if watermark_delay is None or watermark_delay.height == 0:
        return pl.DataFrame(schema=schema)
    return (
        watermark_delay.select(
            pl.col("time").dt.cast_time_unit("ns").dt.epoch("ns").alias("minute"),
            pl.col("partition_id").cast(pl.Int64).fill_null(_JOB_KEY).alias("key"),
            pl.col("OutputWatermarkDelaySeconds").cast(pl.Float64),
        )
        .group_by(["minute", "key"])
        .agg(pl.col("OutputWatermarkDelaySeconds").max())
    )
