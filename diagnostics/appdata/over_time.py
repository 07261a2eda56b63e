"""Data over time and per partition for the Overview and Findings charts: events per kind
and time bucket, a kind's events per partition, input events per partition, from the
aggregate tables (of one job when given, :mod:`diagnostics.appdata.scope`).

Everything here reads the tables lazily and returns small frames (a few hundred rows at
most), so that the pages stay fast on millions of aggregate rows.
"""

from __future__ import annotations

from datetime import datetime, timedelta

import polars as pl

from diagnostics.aggregates import TableName
from diagnostics.appdata.store import Aggregate, collect, of_job, scan, utc
from diagnostics.kinds import ErrorKind

IDLE_KIND = ErrorKind.PARTITION_NOT_PROGRESSING.value

#: Bucket widths tried in order for the errors-over-time chart (polars duration strings).
BUCKETS: tuple[tuple[str, timedelta], ...] = (
    ("1m", timedelta(minutes=1)),
    ("5m", timedelta(minutes=5)),
    ("15m", timedelta(minutes=15)),
    ("1h", timedelta(hours=1)),
    ("6h", timedelta(hours=6)),
    ("1d", timedelta(days=1)),
    ("7d", timedelta(days=7)),
    ("1mo", timedelta(days=31)),
    ("1y", timedelta(days=366)),
)


def choose_bucket(start: datetime, end: datetime, max_buckets: int) -> str:
    """The narrowest bucket in :data:`BUCKETS` giving at most ``max_buckets`` over the span."""
    span = end - start
    for name, width in BUCKETS:
        if span / width <= max_buckets:
            return name
    return BUCKETS[-1][0]


def errors_over_time(
    agg: Aggregate, max_buckets: int = 300, job: str | None = None
) -> tuple[pl.DataFrame, str]:
    """Events per kind and time bucket from ``error_rollup`` (of ``job``, when given), and
    the bucket width used.

    Columns: ``time`` (bucket start, UTC), ``kind``, ``event_count``, ``records``; sorted by
    time then kind. Idle notices are left out (they are not events; see the Partitions page).
    """
    empty = pl.DataFrame(
        schema={
            "time": pl.Datetime("us", "UTC"),
            "kind": pl.String,
            "event_count": pl.Int64,
            "records": pl.Int64,
        }
    )
    frame = scan(agg, TableName.ERROR_ROLLUP)
    if frame is None:
        return empty, "1m"
    base = (
        of_job(frame, job)
        .select(utc(pl.col("minute")).alias("time"), "kind", "event_count", "records")
        .filter(pl.col("kind") != IDLE_KIND)
    )
    table, bucket = _rollup_per_bucket(agg, base, "kind", ("event_count", "records"), max_buckets)
    return (empty, bucket) if table is None else (table, bucket)


def _rollup_per_bucket(
    agg: Aggregate, base: pl.LazyFrame, key: str, sums: tuple[str, ...], max_buckets: int
) -> tuple[pl.DataFrame | None, str]:
    """Sums of ``sums`` per time bucket and ``key`` of an ``error_rollup`` selection with a
    ``time`` column, sorted by time then key, and the bucket width chosen for its span
    (``None`` and ``"1m"`` when the selection is empty)."""
    bounds = collect(
        base.select(pl.col("time").min().alias("lo"), pl.col("time").max().alias("hi")),
        agg,
        TableName.ERROR_ROLLUP,
    )
    lo, hi = bounds.row(0)
    if lo is None:
        return None, "1m"
    bucket = choose_bucket(lo, hi, max_buckets)
    table = collect(
        base.group_by(pl.col("time").dt.truncate(bucket), key).agg(
            pl.col(name).sum().cast(pl.Int64) for name in sums
        ),
        agg,
        TableName.ERROR_ROLLUP,
    )
    return table.sort("time", key), bucket


def kind_totals(over_time: pl.DataFrame) -> pl.DataFrame:
    """Total events per kind of an :func:`errors_over_time` frame, largest first."""
    return (
        over_time.group_by("kind")
        .agg(pl.col("event_count").sum())
        .sort(["event_count", "kind"], descending=[True, False])
    )


def kinds_by_partition(
    agg: Aggregate, kinds: tuple[str, ...], max_buckets: int = 300, job: str | None = None
) -> tuple[pl.DataFrame, str]:
    """Events of ``kinds`` per time bucket and partition from ``error_rollup``: ``time``,
    ``partition`` (``partition N`` or ``unknown``), ``event_count``; by time then partition."""
    empty = pl.DataFrame(
        schema={"time": pl.Datetime("us", "UTC"), "partition": pl.String, "event_count": pl.Int64}
    )
    frame = scan(agg, TableName.ERROR_ROLLUP)
    if frame is None or not kinds:
        return empty, "1m"
    base = (
        of_job(frame, job)
        .filter(pl.col("kind").is_in(kinds))
        .select(
            utc(pl.col("minute")).alias("time"),
            pl.when(pl.col("partition_id").is_null())
            .then(pl.lit("unknown"))
            .otherwise(pl.lit("partition ") + pl.col("partition_id").cast(pl.String))
            .alias("partition"),
            "event_count",
        )
    )
    table, bucket = _rollup_per_bucket(agg, base, "partition", ("event_count",), max_buckets)
    return (empty, bucket) if table is None else (table, bucket)


def input_events_by_partition(agg: Aggregate, job: str | None = None) -> pl.DataFrame:
    """``partition_id`` and ``input_events`` (sum over the metrics, of ``job`` when given),
    with ``share`` of the total; empty without a metrics table; by partition."""
    frame = scan(agg, TableName.METRICS)
    schema = {"partition_id": pl.Int64, "input_events": pl.Int64, "share": pl.Float64}
    if frame is None:
        return pl.DataFrame(schema=schema)
    table = collect(
        of_job(frame, job)
        .filter(pl.col("partition_id").is_not_null())
        .group_by(pl.col("partition_id").cast(pl.Int64))
        .agg(pl.col("input_events").sum().cast(pl.Int64)),
        agg,
        TableName.METRICS,
    )
    total = table["input_events"].sum()
    return table.with_columns(
        (pl.col("input_events") / total if total else pl.lit(0.0)).cast(pl.Float64).alias("share")
    ).sort("partition_id")
