"""Partition data: idle episodes and watermark delay per partition, and the merge rule."""

from __future__ import annotations

import polars as pl

from diagnostics.aggregates import TableName
from diagnostics.appdata.store import Aggregate, collect, scan, utc
from diagnostics.idle_minutes import idle_minutes

#: The merge rule (docs/semantics.md, "Watermarks, merge and output release"), in plain words, shown beside the charts.
MERGE_RULE = (
    "Without PARTITION BY, the job releases output up to time t only when every input "
    "partition has reached t: the job's watermark is the minimum over all partitions. One "
    "partition that stops sending therefore holds back the output of all the others; it "
    "advances only through the late-arrival tolerance (arrival time − tolerance), so the "
    "job's watermark delay grows to about the tolerance while it is idle. With PARTITION BY "
    "PartitionId each partition releases on its own watermark and an idle one delays only "
    "itself; with TIMESTAMP BY … OVER each key (device) is its own substream."
)

IDLE_SCHEMA: dict[str, pl.DataType | type[pl.DataType]] = {
    "job": pl.String,
    "source": pl.String,
    "partition_id": pl.Int64,
    "start": pl.Datetime("us", "UTC"),
    "end": pl.Datetime("us", "UTC"),
    "notices": pl.Int64,
    "max_idle_minutes": pl.Int64,
    "minutes": pl.Float64,
}


def jobs(agg: Aggregate) -> list[str]:
    """Job names in the folder (summary first, else the tables), sorted."""
    names = [str(j) for j in agg.summary.get("jobs", ())]
    for table in (TableName.PARTITION_IDLE, TableName.METRICS):
        frame = scan(agg, table)
        if frame is not None:
            found = collect(frame.select(pl.col("job").unique()), agg, table)["job"]
            names.extend(str(j) for j in found.drop_nulls().to_list())
    return sorted(set(names))


def idle_episodes(agg: Aggregate, job: str | None = None) -> pl.DataFrame:
    """Idle episodes (schema :data:`IDLE_SCHEMA`), by partition then start; ``minutes`` is
    the episode's length (end − start)."""
    frame = scan(agg, TableName.PARTITION_IDLE)
    if frame is None:
        return pl.DataFrame(schema=IDLE_SCHEMA)
    if job is not None:
        frame = frame.filter(pl.col("job") == job)
    table = collect(
        frame.select(
            pl.col("job").cast(pl.String),
            pl.col("source").cast(pl.String),
            pl.col("partition_id").cast(pl.Int64),
            utc(pl.col("start")).alias("start"),
            utc(pl.col("end")).alias("end"),
            pl.col("notices").cast(pl.Int64),
            pl.col("max_idle_minutes").cast(pl.Int64),
        ),
        agg,
        TableName.PARTITION_IDLE,
    )
    return table.with_columns(
        ((pl.col("end") - pl.col("start")).dt.total_seconds() / 60)
        .cast(pl.Float64)
        .alias("minutes")
    ).sort("partition_id", "start", nulls_last=True)


def watermark_delay(agg: Aggregate, job: str | None = None) -> pl.DataFrame:
    """Per minute and series: ``minute``, ``series`` (``job`` or ``partition N``),
    ``partition_id`` (null for the job), ``delay_s``; sorted by series then minute."""
    schema: dict[str, pl.DataType | type[pl.DataType]] = {
        "minute": pl.Datetime("us", "UTC"),
        "series": pl.String,
        "partition_id": pl.Int64,
        "delay_s": pl.Float64,
    }
    frame = scan(agg, TableName.METRICS)
    if frame is None:
        return pl.DataFrame(schema=schema)
    if job is not None:
        frame = frame.filter(pl.col("job") == job)
    table = collect(
        frame.group_by(utc(pl.col("minute")).alias("minute"), pl.col("partition_id").cast(pl.Int64))
        .agg(pl.col("output_watermark_delay_seconds").max().cast(pl.Float64).alias("delay_s"))
        .drop_nulls("delay_s"),
        agg,
        TableName.METRICS,
    )
    series = (
        pl.when(pl.col("partition_id").is_null())
        .then(pl.lit("job"))
        .otherwise(pl.lit("partition ") + pl.col("partition_id").cast(pl.String))
    )
    return table.select("minute", series.alias("series"), "partition_id", "delay_s").sort(
        "series", "minute"
    )


#: The partition table's columns that come from the job's metrics (absent without them).
METRIC_COLUMNS = ("max_delay_s", "input_events")
#: What fills :data:`METRIC_COLUMNS`, for a page whose folder has no metrics.
METRICS_NOTE = (
    "Watermark delay and input events per partition come from the job's metrics, which "
    "this folder does not have: upload an event capture (replayed here, it gives both) or "
    "the job's metrics with its logs."
)


def partition_table(agg: Aggregate, job: str | None = None) -> pl.DataFrame:
    """Per partition: ``idle_episodes``, ``idle_minutes`` (the time its episodes cover:
    overlapping ones count once, :mod:`diagnostics.idle_minutes`), and with a metrics table
    ``max_delay_s`` and ``input_events`` (left out without one: see :data:`METRICS_NOTE`); by
    partition."""
    episodes = idle_episodes(agg, job)
    covered = idle_minutes(episodes.select("partition_id", "start", "end").iter_rows())
    idle = (
        episodes.group_by("partition_id")
        .agg(pl.len().cast(pl.Int64).alias("idle_episodes"))
        .with_columns(
            pl.col("partition_id")
            .replace_strict(covered, default=0.0, return_dtype=pl.Float64)
            .alias("idle_minutes")
        )
    )
    frame = scan(agg, TableName.METRICS)
    if frame is not None:
        if job is not None:
            frame = frame.filter(pl.col("job") == job)
        metrics = collect(
            frame.filter(pl.col("partition_id").is_not_null())
            .group_by(pl.col("partition_id").cast(pl.Int64))
            .agg(
                pl.col("output_watermark_delay_seconds").max().alias("max_delay_s"),
                pl.col("input_events").sum().cast(pl.Int64).alias("input_events"),
            ),
            agg,
            TableName.METRICS,
        )
        table = metrics.join(idle, on="partition_id", how="full", coalesce=True)
    else:
        table = idle
    columns = ["partition_id", "idle_episodes", "idle_minutes"]
    columns += [c for c in METRIC_COLUMNS if c in table.columns]
    return (
        table.with_columns(
            pl.col("idle_episodes").fill_null(0), pl.col("idle_minutes").fill_null(0.0)
        )
        .select(columns)
        .sort("partition_id", nulls_last=True)
    )
