"""Stage S8 of docs/spark-replay.md: ``diagnostics.jsonl`` and ``metrics.parquet`` of a Spark
replay, equal to the local replay's (``diagnostics.instrument.outputs.write_outputs``).

Spark aggregates the outcome rows (never brought to the driver); the driver receives
O(aggregates + gaps + minutes × partitions + chunks) rows and builds the records and the
table with the local replay's own functions (``diagnostics.instrument``): the error
aggregates per (kind, partition, window) in grouped tasks (``aggregate_errors`` on each
group), their example events read again from their slices, the idle gaps from a ``lag`` over
each partition's arrivals, the per-minute counts from one ``groupBy``, the watermark delay
from each partition's change points of M (``timeline_delays`` in tasks), the correlation ID
from per-chunk digests.
"""

from __future__ import annotations

import dataclasses
from bisect import bisect_right
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import polars as pl
import pyarrow as pa

from diagnostics.captures.names import rename_taken
from diagnostics.captures.reader import Capture
from diagnostics.durations import MINUTE
from diagnostics.engine.policy import OrderingPolicy
from diagnostics.engine.replay import policy_as_replayed
from diagnostics.engine.watermarks import delay_table, timeline_delays
from diagnostics.instrument.aggregate import KIND_FLAGS, in_record_order
from diagnostics.instrument.correlation import CHUNK_EVENTS, combine_digests, correlation_id
from diagnostics.instrument.idle import gap_notices, with_edge_gaps
from diagnostics.instrument.metrics import COUNT_COLUMNS, metrics_table
from diagnostics.instrument.options import InstrumentOptions
from diagnostics.instrument.outputs import DIAGNOSTICS_FILE, METRICS_FILE
from diagnostics.instrument.run import (
    Instrumented,
    diagnostics_records,
    write_diagnostics,
    write_metrics,
)
from diagnostics.minutes import minute_grid, minute_of
from diagnostics.spark.diagnostics_tasks import (
    AGGREGATES,
    DELAYS,
    DIGESTS,
    EXAMPLES,
    DelayPlan,
    aggregate_table,
    delay_batches,
    digest_batches,
    example_batches,
)
from diagnostics.spark.replay_over import read_keys
from diagnostics.spark.replay_splits import ReplayPlan, Slice

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

_DDL = {"int64": "long", "string": "string", "double": "double", "binary": "binary"}


def _ddl(schema: pa.Schema) -> str:
    return ", ".join(f"{field.name} {_DDL[str(field.type)]}" for field in schema)


def _frame(df: DataFrame) -> pl.DataFrame:
    """A small Spark result on the driver, as polars."""
    frame = pl.from_arrow(df.toArrow())
    assert isinstance(frame, pl.DataFrame)
    return frame


def _floor(column: str, width: int) -> str:
    """SQL for ``column`` // ``width`` (floor, exact on longs)."""
    return f"({column} - pmod({column}, {width})) div {width}"


@dataclasses.dataclass(frozen=True, slots=True)
class DiagnosticsPlan:
    """What S8 needs besides the outcome rows: the options, the policy as the outcomes name
    its columns (it feeds the correlation ID), the key columns counted per aggregate (as the
    capture names them, ``read``, and as the outcomes do, ``named``), the partitions."""

    options: InstrumentOptions
    policy: OrderingPolicy
    read: tuple[str, ...]
    named: tuple[str, ...]
    partitions: tuple[int, ...]


def diagnostics_plan(
    capture: Capture,
    applied: OrderingPolicy,
    partitions: Sequence[int],
    options: InstrumentOptions | None,
) -> DiagnosticsPlan:
    """As ``write_outputs`` decides: the OVER columns are the key columns, else ``device_id``
    when the capture has it (``resolve_key_columns``)."""
    _, renames = rename_taken(capture.events)
    policy = policy_as_replayed(applied, renames)
    options = dataclasses.replace(options or InstrumentOptions(), key_columns=tuple(policy.over))
    if applied.over:
        read, named = tuple(applied.over), tuple(policy.over)
    elif "device_id" in capture.events.columns:
        read, named = ("device_id",), ("device_id",)
    else:
        read, named = (), ()
    return DiagnosticsPlan(options, policy, read, named, tuple(partitions))


def error_aggregates(
    spark: SparkSession, events: DataFrame, plan: ReplayPlan, diag: DiagnosticsPlan
) -> pl.DataFrame:
    """The rows of ``aggregate_errors`` over all outcome rows, in record order: one grouped
    task call per (kind, partition, window); O(aggregates) rows reach the driver."""
    from pyspark.sql import functions as F

    window = diag.options.error_window_ns
    flagged = None
    for order, (_, flag) in enumerate(KIND_FLAGS):
        part = events.filter(F.col(flag)).select(
            F.lit(order).cast("long").alias("kind_order"),
            "part",
            F.expr(_floor("arrival", window)).alias("window"),
            "eid",
            F.col("arrival").alias("arr"),
            F.col("application_time").alias("app"),
        )
        flagged = part if flagged is None else flagged.unionByName(part)
    assert flagged is not None
    if diag.read:
        flagged = flagged.join(read_keys(spark, plan, diag.read), "eid")
    keys = diag.named

    def group(table: pa.Table) -> pa.Table:  # typed: Spark picks the Arrow API from the hints
        return aggregate_table(window, keys, table)

    grouped = flagged.groupBy("kind_order", "part", "window").applyInArrow(group, _ddl(AGGREGATES))
    return in_record_order(_frame(grouped))


def split_of(slices: Sequence[Slice], event_ids: Sequence[int]) -> dict[int, tuple[int, ...]]:
    """The given events (sorted) per index of the slice that holds them: slice ``i`` holds
    events ``offset .. offset + length`` (consecutive; the slices in event order, some maybe
    empty), so this needs no Spark query."""
    offsets = [s.offset for s in slices]
    found: dict[int, list[int]] = {}
    for eid in sorted(set(event_ids)):
        split = bisect_right(offsets, eid) - 1
        found.setdefault(split, []).append(eid)
    return {split: tuple(ids) for split, ids in found.items()}


def examples(spark: SparkSession, plan: ReplayPlan, event_ids: Sequence[int]) -> dict[int, str]:
    """``ExampleEvents`` of the given events: each slice holding some is read once, in a task."""
    if not event_ids:
        return {}
    wanted = split_of(plan.slices, [int(e) for e in event_ids])
    splits = sorted(wanted)
    ids = spark.createDataFrame([(s,) for s in splits], "id long").repartition(len(splits))
    found = _frame(ids.mapInArrow(partial(example_batches, plan, wanted), _ddl(EXAMPLES)))
    return dict(zip(found["eid"].to_list(), found["example"].to_list(), strict=True))


@dataclasses.dataclass(frozen=True, slots=True)
class PartitionScan:
    """What one pass over each partition's arrivals gives: each partition's first and last
    arrival (``ends``: ``part``, ``head``, ``tail``), the gaps between two of its arrivals
    longer than the notice interval (``gaps``), and the per-minute counts of
    ``diagnostics.instrument.metrics.minute_counts`` (``counts``)."""

    ends: pl.DataFrame
    gaps: pl.DataFrame
    counts: pl.DataFrame


def scan_partitions(events: DataFrame, diag: DiagnosticsPlan) -> PartitionScan:
    """One Spark query for three results: a ``lag`` over each partition's sorted arrivals
    (the gaps), then one ``groupBy`` by (minute, partition) that counts the events and their
    flags, keeps the first and last arrival and collects the gaps ending in that minute.
    O(minutes × partitions + gaps) rows reach the driver."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    flags = dict(zip(COUNT_COLUMNS[1:], ("late", "early", "out_of_order"), strict=True))
    order = Window.partitionBy("part").orderBy("arrival", "eid")
    rows = events.select(
        "part", "arrival", *flags.values(), F.lag("arrival").over(order).alias("prev")
    )
    gap = F.when(
        F.col("arrival") - F.col("prev") > F.lit(diag.options.idle_notice_ns),
        F.struct(F.col("prev").alias("start_ns"), F.col("arrival").alias("end_ns")),
    )
    grouped = _frame(
        rows.groupBy(
            F.expr(f"{_floor('arrival', MINUTE)} * {MINUTE}").alias("minute"),
            F.col("part").alias("key"),
        ).agg(
            F.count("*").cast("long").alias(COUNT_COLUMNS[0]),
            *(F.sum(F.col(flag).cast("long")).alias(name) for name, flag in flags.items()),
            F.min("arrival").alias("head"),
            F.max("arrival").alias("tail"),
            F.collect_list(gap).alias("gaps"),  # the nulls (no gap) are left out
        )
    ).cast({"key": pl.Int64, "head": pl.Int64, "tail": pl.Int64})
    ends = (
        grouped.group_by("key")
        .agg(pl.col("head").min(), pl.col("tail").max())
        .rename({"key": "part"})
        .sort("part")
    )
    gaps = (
        grouped.select(pl.col("key").alias("partition"), "gaps")
        .explode("gaps")
        .drop_nulls("gaps")
        .unnest("gaps")
        .cast({"start_ns": pl.Int64, "end_ns": pl.Int64})
    )
    counts = grouped.select("minute", "key", *COUNT_COLUMNS).cast(
        dict.fromkeys(COUNT_COLUMNS, pl.Int64)
    )
    return PartitionScan(ends, gaps, counts)


def idle_gaps(scan: PartitionScan, diag: DiagnosticsPlan) -> pl.DataFrame:
    """The idle gaps of ``diagnostics.instrument.idle.idle_gaps``, from the partitions' ends
    and inner gaps of :func:`scan_partitions` (``with_edge_gaps`` adds the rest)."""
    ends, gaps = scan.ends, scan.gaps
    inner = (gaps["partition"].to_numpy(), gaps["start_ns"].to_numpy(), gaps["end_ns"].to_numpy())
    return with_edge_gaps(
        ends["part"].to_numpy(),
        ends["head"].to_numpy(),
        ends["tail"].to_numpy(),
        inner,
        diag.partitions,
    )


def watermark_delays(
    events: DataFrame, diag: DiagnosticsPlan, grid: np.ndarray, tau0: int, tau_end: int, tasks: int
) -> pl.DataFrame:
    """``diagnostics.engine.watermarks.watermark_delay_per_minute`` from each partition's
    change points of M (S3's ``rise`` rows: O(change points) shuffled, sorted by arrival),
    sampled chunk by chunk in tasks; O(minutes × partitions) rows reach the driver."""
    from pyspark.sql import functions as F

    policy = diag.policy
    late, ooo = policy.effective_late_ns, policy.effective_ooo_ns
    plan = DelayPlan(bool(policy.over), tau0, tau_end, tuple(int(m) for m in grid), late, ooo)
    points = events.filter(F.col("rise")).select(
        "part", F.col("arrival").alias("arr"), "eid", "timeline", "m_after"
    )
    sampled = (
        points.repartition(tasks, "part")
        .sortWithinPartitions("part", "arr", "eid")
        .mapInArrow(partial(delay_batches, plan), _ddl(DELAYS))
        .groupBy("part", "m")
        .agg(F.max("d").alias("d"))
    )
    found = _frame(sampled).select("m", pl.col("part").alias("partition_id"), "d")
    frames = [found.cast({"m": pl.Int64, "partition_id": pl.Int64, "d": pl.Int64})]
    empty = np.empty(0, dtype=np.int64)
    for p in sorted(set(diag.partitions) - set(found["partition_id"].to_list())):
        # no accepted event: the partition never starts
        times, delays = timeline_delays(
            empty, empty, tau0=tau0, tau_end=tau_end, grid=grid, late=late, ooo=ooo
        )
        frames.append(
            pl.DataFrame({"m": minute_of(times), "d": delays})
            .group_by("m")
            .agg(pl.col("d").max())
            .select("m", pl.lit(p, pl.Int64).alias("partition_id"), "d")
        )
    return delay_table(pl.concat(frames))


def input_digest(events: DataFrame, total: int, tasks: int) -> str:
    """``diagnostics.instrument.correlation.input_digest``: each chunk of consecutive events
    hashed in a task, the chunk digests (O(events / chunk) rows) combined on the driver."""
    from pyspark.sql import functions as F

    rows = events.select(
        F.expr(f"eid div {CHUNK_EVENTS}").alias("chunk"),
        "eid",
        "arrival",
        "application_time",
        "part",
    )
    digests = (
        rows.repartition(tasks, "chunk")
        .sortWithinPartitions("chunk", "eid")
        .mapInArrow(digest_batches, _ddl(DIGESTS))
    )
    found = _frame(digests).sort("chunk")
    return combine_digests(total, found["digest"].to_list())


def spark_instrument(
    spark: SparkSession,
    events: DataFrame,
    plan: ReplayPlan,
    diag: DiagnosticsPlan,
    total: int,
    tasks: int,
) -> Instrumented:
    """What ``diagnostics.instrument.run.instrument`` gives for the outcome rows ``events``
    (S3's columns with release times; ``total`` of them)."""
    options = diag.options
    aggregates = error_aggregates(spark, events, plan, diag)
    found = examples(spark, plan, aggregates["example_event_id"].to_list())
    scan = scan_partitions(events, diag)
    ends, counts = scan.ends, scan.counts
    notices = gap_notices(idle_gaps(scan, diag), options.idle_notice_ns)
    tau0, tau_end = int(ends["head"].min()), int(ends["tail"].max())  # type: ignore[arg-type]
    grid = minute_grid(np.r_[counts["minute"].to_numpy(), minute_of(tau_end)])
    delay = watermark_delays(events, diag, grid, tau0, tau_end, tasks)
    metrics = metrics_table(counts, options.job, diag.partitions, delay)
    policy_text = f"{diag.policy.describe()}|{diag.policy!r}"
    cid = correlation_id(input_digest(events, total, tasks), policy_text)
    records = diagnostics_records(aggregates, found, notices, options, cid, diag.named)
    return Instrumented(records, metrics, aggregates, notices, cid)


def write_spark_outputs(
    spark: SparkSession,
    events: DataFrame,
    plan: ReplayPlan,
    out: Path,
    options: InstrumentOptions | None,
    capture: Capture,
    applied: OrderingPolicy,
    partitions: Sequence[int],
    total: int,
    tasks: int,
) -> tuple[Path, ...]:
    """With ``options`` (none: ``--outcomes-only``), write ``diagnostics.jsonl`` and
    ``metrics.parquet`` of the outcome rows ``events`` into ``out`` as the local replay
    writes them; the paths written."""
    if options is None:
        return ()
    diag = diagnostics_plan(capture, applied, partitions, options)
    result = spark_instrument(spark, events, plan, diag, total, tasks)
    write_diagnostics(out / DIAGNOSTICS_FILE, result.records)
    write_metrics(out / METRICS_FILE, result.metrics)
    return out / DIAGNOSTICS_FILE, out / METRICS_FILE
