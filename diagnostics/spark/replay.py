"""The replay as a Spark job (docs/spark-replay.md): stages S0 to S9, for every input the
local replay reads (S0: :mod:`diagnostics.spark.replay_splits`), with or without PARTITION BY
and TIMESTAMP BY ... OVER.

Small pure DataFrame -> DataFrame steps around the task functions of
:mod:`diagnostics.spark.replay_tasks`; the driver receives O(slices + partitions) rows.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from diagnostics.captures.dialect import CsvOptions
from diagnostics.captures.reader import Capture
from diagnostics.engine.outcomes_files import OUTCOMES_FOLDER
from diagnostics.engine.policy import OrderingPolicy
from diagnostics.engine.summary import (
    delay_seconds,
    percentile_ranks,
    summary_of,
)
from diagnostics.errors import InputError, UsageError
from diagnostics.instrument.options import InstrumentOptions
from diagnostics.scalars import as_datetime
from diagnostics.spark.replay_checks import (
    far_off,
    first_error,
    invalid_warning,
    narrow_facts,
    undeclared,
)
from diagnostics.spark.replay_diagnostics import write_spark_outputs
from diagnostics.spark.replay_flags import with_flags
from diagnostics.spark.replay_merge import merged_releases
from diagnostics.spark.replay_over import over_problem, with_substreams
from diagnostics.spark.replay_rank import (
    BUCKETS_PER_TASK,
    spread,
    values_at,
    with_position,
)
from diagnostics.spark.replay_splits import ReplayPlan, plan_replay
from diagnostics.spark.replay_tasks import (
    COUNT_NAMES,
    NARROW,
    RANK_ROW,
    REPLAYED,
    WRITTEN,
    ddl,
    narrow_batches,
    owns_releases,
    replay_batches,
    write_batches,
)
from diagnostics.spark.session import settings_set

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

#: Rows per Arrow batch handed to the tasks (their memory, not the result, depends on it).
BATCH_ROWS = 65_536
_SHUFFLE_CONF = "spark.sql.shuffle.partitions"
#: Settings of the replay's queries (restored afterwards): Arrow batches cut by rows only
#: (Int.MaxValue bytes turns off Spark's size check, which measures the batch after every
#: row: a tenth of the JVM's time in a profile), and cached frames kept uncompressed (the
#: cache's compression statistics, per value, cost another tenth; the frames are read a few
#: times and dropped).
RUN_CONF: tuple[tuple[str, str], ...] = (
    ("spark.sql.execution.arrow.maxRecordsPerBatch", str(BATCH_ROWS)),
    ("spark.sql.execution.arrow.maxBytesPerBatch", str(2**31 - 1)),
    ("spark.sql.inMemoryColumnarStorage.compressed", "false"),
)


@dataclass(frozen=True, slots=True)
class SparkReplay:
    """A finished Spark replay: the capture as read (schema only), the summary, the folder."""

    capture: Capture
    summary: dict[str, Any]
    outcomes: Path
    diagnostics: tuple[Path, ...] = ()


def read_narrow(spark: SparkSession, plan: ReplayPlan) -> DataFrame:
    """S1: one task per slice, the narrow columns of its events."""
    count = len(plan.slices)
    ids = spark.range(0, count, 1, max(count, 1))
    return ids.mapInArrow(partial(narrow_batches, plan), ddl(NARROW))


def replayed(narrow: DataFrame, plan: ReplayPlan, tasks: int) -> DataFrame:
    """S3: each timeline's events (column ``sub``: S2's substream, else 0) in processing
    order through its own engine (without OVER no more tasks than partitions: a task has a
    fixed cost)."""
    count = tasks if plan.policy.over else max(1, min(tasks, len(plan.partitions)))
    # only what the engines read: S1's error columns were checked before S3
    ordered = narrow.select("eid", "split", "part", "arr", "app", "sub")
    ordered = ordered.repartition(count, "part", "sub")
    ordered = ordered.sortWithinPartitions("part", "sub", "arr", "eid")
    return ordered.mapInArrow(partial(replay_batches, plan), ddl(REPLAYED))


def with_releases(
    rows: DataFrame, plan: ReplayPlan, policy: OrderingPolicy, tasks: int
) -> DataFrame:
    """Outcome rows with their release times: the engines' own, given by S3's tasks, when
    each timeline releases on its own, else the merged watermark's (S4, S5; a join on the
    event)."""
    from pyspark.sql import functions as F

    if owns_releases(plan):  # S3's tasks gave every row its release time
        return rows
    events = rows.drop("release_time")
    merged = merged_releases(
        with_flags(events),
        partitions=plan.partitions,
        late=policy.effective_late_ns,
        ooo=policy.effective_ooo_ns,
        ranges=max(2, spread(tasks, plan.events)),
    )
    if merged is None:
        return events.withColumn("release_time", F.lit(None).cast("long"))
    merged = merged.withColumnRenamed("merged_release", "release_time")
    return events.join(merged, "eid", "left")


def output_ranks(events: DataFrame, buckets: int, rows: int) -> DataFrame:
    """S6: ``output_rank`` of the released events (eid, split, output_rank): the position by
    (release time, System.Timestamp, arrival order: arrival, then input order), from a
    bucketed sort and per-bucket offsets, both distributed. Arrival order is not input order
    in a Capture folder (partition first)."""
    from pyspark.sql import functions as F

    released = events.filter(F.col("release_time").isNotNull())
    ordered = released.select("eid", "split", "release_time", "system_timestamp", "arrival")
    keys = ("release_time", "system_timestamp", "arrival", "eid")
    ranks = with_position(ordered, keys, "output_rank", buckets, rows)
    return ranks.select("eid", "split", "output_rank")


def write_outcomes(
    events: DataFrame, ranks: DataFrame, plan: ReplayPlan, folder: Path, tasks: int
) -> DataFrame:
    """S7: each slice's rows together, in event order, its ranks (S6) beside them, written
    by one task (no more tasks than slices). The ranks travel in the same shuffle as the
    rows (a row of each after the event's row), not in a join of their own."""
    from pyspark.sql import functions as F

    rows = events.drop("m_after").withColumn("output_rank", F.lit(None).cast("long"))
    both = rows.withColumn(RANK_ROW, F.lit(False)).unionByName(
        ranks.withColumn(RANK_ROW, F.lit(True)), allowMissingColumns=True
    )
    ordered = both.repartition(max(1, min(tasks, len(plan.slices))), "split")
    # a slice's eids are consecutive and slices follow each other in eid order: sorting by eid
    # alone keeps each slice's rows together and gives Spark's sort a distinct prefix key
    ordered = ordered.sortWithinPartitions("eid", RANK_ROW)
    return ordered.mapInArrow(partial(write_batches, plan, str(folder)), ddl(WRITTEN))


def delay_percentiles(events: DataFrame, released: int, buckets: int) -> list[int]:
    """S9: the release delays at the summary's percentile ranks (a distributed bucketed sort;
    only the picked values reach the driver)."""
    from pyspark.sql import functions as F

    delays = events.filter(F.col("release_time").isNotNull()).select(
        (F.col("release_time") - F.col("arrival")).alias("d")
    )
    return values_at(delays, "d", percentile_ranks(released), buckets, released)


def run_spark_replay(
    spark: SparkSession,
    *,
    path: str,
    arrival: str | None,
    partition: str | None,
    policy: OrderingPolicy,
    declared: Sequence[int] | None,
    out: Path,
    named_by: str | None = None,
    progress: Callable[[str], None] = lambda _message: None,
    instrument: InstrumentOptions | None = None,
    csv: CsvOptions | None = None,
    path_format: str | None = None,
    planned: tuple[ReplayPlan, Capture] | None = None,
) -> SparkReplay:
    """Replay the capture at ``path`` (any input the local replay reads: S0 in
    :mod:`diagnostics.spark.replay_splits`) on ``spark`` and write ``out/outcomes/`` (and,
    given ``instrument``, ``diagnostics.jsonl`` and ``metrics.parquet``). ``planned``: S0's
    result when the caller ran :func:`plan_replay` itself (to tell reading errors from
    replay errors, as the local replay's command does)."""
    from pyspark.sql import functions as F

    plan, capture = planned or plan_replay(
        path, path, arrival, partition, policy, named_by,
        spark=spark, csv=csv, path_format=path_format,
    )  # fmt: skip
    _, applied = capture.apply(policy)
    configured = int(spark.conf.get(_SHUFFLE_CONF) or "2")
    # a shuffle's task count follows the capture's size (Spark's default of 200 costs a small
    # capture most of its time), up to the configured count; at least 2 to use both cores
    tasks = max(2, spread(configured, plan.events))
    with settings_set(spark, {**dict(RUN_CONF), _SHUFFLE_CONF: str(tasks)}):
        progress(f"reading {len(plan.slices)} slices")
        narrow = read_narrow(spark, plan).persist()
        try:
            facts = narrow_facts(narrow)
            error = first_error(facts, capture.columns, declared is not None)
            if error is not None:
                raise InputError(error)
            present = facts.parts
            partitions = tuple(declared) if declared is not None else present
            if (problem := over_problem(plan, partitions)) is not None:
                raise problem
            if declared is not None:
                error = undeclared(narrow, capture.columns, partitions)
                if error is not None:
                    raise InputError(error)
            if far_off(facts):
                msg = (
                    "--spark: some arrival times lie more than a day off the others (or "
                    "beyond 1900..2150), which the Spark replay does not report yet; replay "
                    "without --spark"
                )
                raise UsageError(msg)
            plan = plan.with_partitions(partitions)
            progress(f"replaying {len(present)} partitions")
            # S3's rows feed both sides of the release join (and S4/S5): computed once
            with with_substreams(spark, narrow, plan, applied.over, tasks) as timelines:
                rows = replayed(timelines, plan, tasks)
                own = owns_releases(plan)
                if not own:
                    # filled before the merge: S4 and S5 read S3's rows twice
                    rows = rows.persist()
                    rows.count()
                try:
                    events = with_releases(rows, plan, applied, tasks).persist()
                    progress("summarising")
                    stats = events.agg(
                        F.min("arrival").alias("lo"),
                        F.max("arrival").alias("hi"),
                        F.countDistinct("timeline").alias("timelines"),
                    ).collect()[0]  # also fills the cache of events: S3's rows are done
                finally:
                    if not own:
                        rows.unpersist()
            try:
                folder = out / OUTCOMES_FOLDER
                if folder.exists():
                    shutil.rmtree(folder)
                folder.mkdir(parents=True)
                progress("ranking the output and writing outcomes")
                # at least two buckets even where one task sorts them all: with one, the
                # bucket is a constant, Spark drops the window's partitioning and warns
                buckets = spread(tasks, plan.events) * BUCKETS_PER_TASK
                ranks = output_ranks(events, buckets, plan.events)
                written = write_outcomes(events, ranks, plan, folder, tasks).collect()
                counts = {name: sum(int(r[name]) for r in written) for name in COUNT_NAMES}
                progress("release delay percentiles")
                delays = delay_percentiles(events, counts["released"], buckets)
                warnings = invalid_warning(
                    narrow, plan, applied, counts["dropped_invalid_timestamp"], counts["events"]
                )
                progress("diagnostics and metrics" if instrument else "no diagnostics")
                s8 = (instrument, capture, applied, partitions, counts["events"], tasks)
                files = write_spark_outputs(spark, with_flags(events), plan, out, *s8)
            finally:
                events.unpersist()
        finally:
            narrow.unpersist()
    summary = summary_of(
        applied,
        partitions,
        timelines=int(stats["timelines"]),
        counts=counts,
        delays=delay_seconds(delays),
        arrival_from=_iso(stats["lo"]),
        arrival_to=_iso(stats["hi"]),
        warnings=warnings,
    )
    return SparkReplay(capture, summary, folder, files)


def _iso(ns: int | None) -> str | None:
    if ns is None:
        return None
    value = pl.Series([int(ns)]).cast(pl.Datetime("ns")).dt.replace_time_zone("UTC")[0]
    return as_datetime(value).isoformat()
