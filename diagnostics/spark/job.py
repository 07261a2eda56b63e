"""The aggregation job: small ``DataFrame -> DataFrame`` steps chained with ``.transform()``.

Data flow (nothing of the data is collected to the driver; only the summary's aggregates)::

    paths --mapInArrow(read, parse: Arrow JSON + Python)--> parsed (one row per record, kept on disk by the first
        write: persist(DISK_ONLY))
    parsed --data_errors--> data_errors --with_jobs(jobs)--> --rollup--> error_rollup
                                        --idle_episodes--> partition_idle
                                        --summarise--> summary.json (kinds, jobs, partitions)
    parsed --(reason or category set: the few other rows, kept)--> --quarantined--> quarantine
                                                                  --lifecycle_events--> job_events
    binaryFile(metrics.parquet) --mapInArrow--> metrics

The summary's counts and time range are observed while data_errors and quarantine are
written (``DataFrame.observe``), not computed by extra passes over the records. The distinct
(job_id, job) pairs of the records and the metrics (a handful) are collected to settle each
job's key and shown name (:func:`diagnostics.logs.jobs.resolve_jobs`, as the polars
reference does; the job events join those jobs, :func:`diagnostics.logs.jobs.join_jobs`),
in one pass (:func:`settled_jobs`), and joined back as broadcast tables.

The tables are defined in :mod:`diagnostics.aggregates.schema` and written by
:func:`diagnostics.aggregates.spark.write_frame`; what they hold is computed as in
:mod:`diagnostics.logs.aggregate` (the polars reference).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from pyspark import StorageLevel
from pyspark.sql import Column, DataFrame, Observation, Row, SparkSession, Window
from pyspark.sql import functions as F

from diagnostics.aggregates import TableName, files_summary, write_summary
from diagnostics.aggregates.folder import remove_table
from diagnostics.aggregates.spark import write_frame
from diagnostics.kinds import ErrorKind
from diagnostics.logs.batches import metrics_file_batches
from diagnostics.logs.inputs import InputFiles
from diagnostics.logs.jobs import join_jobs, resolve_jobs
from diagnostics.logs.metrics import read_metrics
from diagnostics.logs.reader import PARQUET_MAGIC
from diagnostics.logs.records import DATA_ERROR_COLUMNS, JOB_EVENT_COLUMNS, QUARANTINE_COLUMNS
from diagnostics.logs.vectorised import parse_path_batches_fast
from diagnostics.spark import schemas

IDLE_KIND = ErrorKind.PARTITION_NOT_PROGRESSING.value
_ISO = "yyyy-MM-dd'T'HH:mm:ss.SSSSSS'Z'"
#: Input bytes per parsing task (Spark's file sources split by 128 MB; parsing is slower).
SPLIT_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class AggregateResult:
    """What a run wrote: the output folder, the tables written and the summary content."""

    out: Path
    tables: tuple[TableName, ...]
    summary: dict


def read_files(spark: SparkSession, paths: Sequence[str]) -> DataFrame:
    """One row per file: ``path`` and its raw ``content`` (bytes, gzip not yet undone)."""
    return spark.read.format("binaryFile").load(list(paths)).select("path", "content")


def list_files(spark: SparkSession, paths: Sequence[str]) -> DataFrame:
    """One row per file: its ``path`` (the files are read by the tasks that parse them),
    spread over one partition per :data:`SPLIT_BYTES` of input (a task per partition)."""
    size = sum(os.path.getsize(path) for path in paths)
    tasks = max(1, min(len(paths), -(-size // SPLIT_BYTES)))
    return spark.createDataFrame([(path,) for path in paths], schemas.PATHS).repartition(tasks)


def parse_records(files: DataFrame) -> DataFrame:
    """Every record of every file of ``files`` (a ``path`` column), parsed or quarantined
    (schema :data:`schemas.PARSED`). JSON Lines files are decoded by Arrow's native reader
    inside the tasks; whatever it cannot decide exactly goes to the Python parser
    (:mod:`diagnostics.logs.vectorised`), with the same results."""
    return files.mapInArrow(parse_path_batches_fast, schemas.PARSED)


def parse_metrics(files: DataFrame) -> DataFrame:
    """Engine metrics rows of ``metrics.parquet`` files (schema :data:`schemas.METRICS`)."""
    return files.mapInArrow(metrics_file_batches, schemas.METRICS)


def check_metrics_exports(paths: Sequence[str]) -> None:
    """Read the Azure Monitor exports among ``paths`` once on the driver (they are small), so
    that one that cannot be read is an :class:`InputError` naming it, as in the in-process
    aggregation, instead of a file the tasks skip."""
    for path in paths:
        with open(path, "rb") as handle:
            head = handle.read(4)
        if head != PARQUET_MAGIC:
            read_metrics(Path(path).read_bytes(), path)


def with_date(column: str) -> Callable[[DataFrame], DataFrame]:
    """Adds ``date``: the UTC date of ``column`` (the session time zone is UTC)."""

    def step(df: DataFrame) -> DataFrame:
        return df.withColumn("date", F.to_date(F.col(column)))

    return step


def data_errors(parsed: DataFrame) -> DataFrame:
    """The parsed data errors (and idle notices) with the data_errors columns and ``date``."""
    return (
        parsed.filter(F.col("reason").isNull() & F.col("category").isNull())
        .select(*DATA_ERROR_COLUMNS)
        .transform(with_date("record_time"))
    )


def lifecycle_events(parsed: DataFrame) -> DataFrame:
    """The job lifecycle records (``category`` set) with the job_events columns and ``date``."""
    return (
        parsed.filter(F.col("category").isNotNull())
        .select(*JOB_EVENT_COLUMNS)
        .transform(with_date("record_time"))
    )


def quarantined(parsed: DataFrame) -> DataFrame:
    """The quarantined records: where, why and the (truncated) text."""
    return parsed.filter(F.col("reason").isNotNull()).select(*QUARANTINE_COLUMNS)


#: A (job_id, job) pair.
Pair = tuple[str | None, str | None]


def pair_rows(frame: DataFrame, *keys: str) -> list[Row]:
    """The distinct (``keys``, job_id, job) rows of ``frame``, collected (a handful)."""
    return frame.select(*keys, "job_id", "job").distinct().collect()


def distinct_pairs(*frames: DataFrame) -> set[Pair]:
    """The distinct (job_id, job) pairs of ``frames``."""
    return {(row["job_id"], row["job"]) for frame in frames for row in pair_rows(frame)}


def mapping_frame(spark: SparkSession, mapping: Mapping[Pair, Pair]) -> DataFrame:
    """``mapping`` (pair read -> pair shown) as the table :func:`with_jobs` joins (schema
    :data:`schemas.JOB_MAPPING`)."""
    rows = [(*pair, *shown) for pair, shown in mapping.items()]
    return spark.createDataFrame(rows, schemas.JOB_MAPPING)


def job_mapping(spark: SparkSession, *frames: DataFrame) -> DataFrame:
    """The (job_id, job) pairs of ``frames`` and the pair each is aggregated under (schema
    :data:`schemas.JOB_MAPPING`), settled on the driver by
    :func:`~diagnostics.logs.jobs.resolve_jobs` from the distinct pairs."""
    return mapping_frame(spark, resolve_jobs(distinct_pairs(*frames)))


def settled_jobs(
    spark: SparkSession, parsed: DataFrame, metrics: DataFrame | None
) -> tuple[DataFrame, DataFrame]:
    """The :func:`job_mapping` of the data errors and ``metrics``, and the
    :func:`event_mapping` of the job events, from one pass over ``parsed`` (the distinct
    (job_id, job) pairs of its parsed rows, a handful, collected)."""
    rows = (
        parsed.filter(F.col("reason").isNull())
        .select(F.col("category").isNotNull().alias("_event"), "job_id", "job")
        .distinct()
        .collect()
    )
    pairs = {(r["job_id"], r["job"]) for r in rows if not r["_event"]}
    resolved = resolve_jobs(pairs | (distinct_pairs(metrics) if metrics is not None else set()))
    events = {(r["job_id"], r["job"]) for r in rows if r["_event"]}
    return (
        mapping_frame(spark, resolved),
        mapping_frame(spark, join_jobs(events, resolved)),
    )


def with_jobs(mapping: DataFrame) -> Callable[[DataFrame], DataFrame]:
    """The frame with its ``job_id`` and ``job`` as ``mapping`` settles them (columns kept)."""

    def step(df: DataFrame) -> DataFrame:
        match = F.col("job_id").eqNullSafe(F.col("_from_id")) & F.col("job").eqNullSafe(
            F.col("_from_job")
        )
        settled = {
            "job_id": F.coalesce(F.col("_to_id"), F.col("job_id")),
            "job": F.coalesce(F.col("_to_job"), F.col("job")),
        }
        joined = df.join(F.broadcast(mapping), match, "left")
        return joined.select(*(settled.get(c, F.col(c)).alias(c) for c in df.columns))

    return step


def rollup(errors: DataFrame) -> DataFrame:
    """Per job, kind, partition and minute of ``coalesce(from_time, record_time)``."""
    minute = F.date_trunc("minute", F.coalesce("from_time", "record_time")).alias("minute")
    return (
        errors.groupBy("job", "kind", "partition_id", minute)
        .agg(
            F.coalesce(F.sum("event_count"), F.lit(0)).cast("long").alias("event_count"),
            F.count(F.lit(1)).cast("long").alias("records"),
            F.count_if(~F.col("count_known")).cast("long").alias("records_without_count"),
            F.max("lateness_seconds").alias("max_lateness_seconds"),
        )
        .transform(with_date("minute"))
    )


def idle_episodes(errors: DataFrame) -> DataFrame:
    """Idle episodes from idle notices (rule in :mod:`diagnostics.logs.aggregate`)."""
    keys = ["job", "source", "partition_id"]
    order = Window.partitionBy(*keys).orderBy("record_time", "source_file", "source_line")
    minutes = F.coalesce(F.col("idle_minutes"), F.lit(0))
    previous_time = F.lag("record_time").over(order)
    previous_minutes = F.lag(minutes).over(order)
    gap_seconds = F.unix_micros("record_time") - F.unix_micros(previous_time)
    new_episode = (
        previous_time.isNull()
        | (minutes < previous_minutes)
        | (gap_seconds > (minutes + 1) * F.lit(60_000_000))
    )
    return (
        errors.filter(F.col("kind") == IDLE_KIND)
        .withColumn("_new", new_episode.cast("int"))
        .withColumn("_episode", F.sum("_new").over(order.rowsBetween(Window.unboundedPreceding, 0)))
        .withColumn("_key", F.struct("record_time", "source_file", "source_line"))
        .groupBy(*keys, "_episode")
        .agg(
            F.min_by("record_time", "_key").alias("_first_time"),
            F.min_by(minutes, "_key").alias("_first_minutes"),
            F.max_by("record_time", "_key").alias("end"),
            F.count(F.lit(1)).cast("long").alias("notices"),
            F.max("idle_minutes").cast("long").alias("max_idle_minutes"),
        )
        .withColumn(
            "start",
            F.timestamp_micros(
                F.unix_micros("_first_time") - F.col("_first_minutes") * F.lit(60_000_000)
            ),
        )
        .select(*keys, "start", "end", "notices", "max_idle_minutes")
        .transform(with_date("start"))
    )


def metrics_table(metrics: DataFrame) -> DataFrame:
    """The metrics table: engine metrics rows with ``date``, without the file name."""
    return metrics.drop("source_file").transform(with_date("minute"))


def observed(observation: Observation, **metrics: Column) -> Callable[[DataFrame], DataFrame]:
    """The frame unchanged, with ``metrics`` (aggregates) collected into ``observation``
    by whatever action runs it (here: the table write)."""

    def step(df: DataFrame) -> DataFrame:
        return df.observe(observation, *(value.alias(name) for name, value in metrics.items()))

    return step


def error_metrics() -> dict[str, Column]:
    """What the summary needs of data_errors: its row count and the time range covered."""
    return {
        "records": F.count(F.lit(1)),
        "from": F.date_format(F.min(F.coalesce("from_time", "record_time")), _ISO),
        "to": F.date_format(F.max(F.coalesce("to_time", "record_time")), _ISO),
    }


def summarise(
    errors: DataFrame,
    errors_seen: dict,
    quarantined: int,
    metrics: DataFrame | None = None,
    events: DataFrame | None = None,
    lifecycle: int = 0,
) -> dict:
    """``summary.json`` from one small aggregate of ``errors`` (a row per kind, job and idle
    partition), the metrics observed while data_errors was written and the quarantined count;
    ``jobs`` includes the jobs known only by their ``metrics`` rows or job ``events``;
    ``job_events`` is ``lifecycle``, their count (parsed records, as the data errors are)."""
    idle_partition = F.when(F.col("kind") == IDLE_KIND, F.col("partition_id")).alias("idle")
    groups = (
        errors.groupBy("kind", "job", idle_partition)
        .agg(
            F.coalesce(F.sum("event_count"), F.lit(0)).alias("n"),
            F.count_if(~F.col("count_known")).alias("unknown"),
        )
        .collect()
    )
    by_kind: dict[str, int] = {}
    unknown: dict[str, int] = {}
    for row in groups:
        by_kind[row["kind"]] = by_kind.get(row["kind"], 0) + int(row["n"])
        if row["unknown"]:
            unknown[row["kind"]] = unknown.get(row["kind"], 0) + int(row["unknown"])
    event_jobs = _jobs(events) if lifecycle else set()
    parsed = int(errors_seen["records"]) + lifecycle
    return {
        "records_total": parsed + quarantined,
        "records_parsed": parsed,
        "records_quarantined": quarantined,
        "events_by_kind": dict(sorted(by_kind.items())),
        "records_without_count": dict(sorted(unknown.items())),
        "idle_partitions": sorted({int(r["idle"]) for r in groups if r["idle"] is not None}),
        "job_events": lifecycle,
        "jobs": sorted(
            {r["job"] for r in groups if r["job"] is not None} | _jobs(metrics) | event_jobs
        ),
        "time_range": {"from": errors_seen["from"], "to": errors_seen["to"]},
    }


def _jobs(frame: DataFrame | None) -> set[str]:
    if frame is None:
        return set()
    return {r["job"] for r in frame.select("job").distinct().collect() if r["job"] is not None}


def run_aggregate(
    spark: SparkSession,
    files: InputFiles,
    out: Path,
    progress: Callable[[str], None] = lambda _message: None,
) -> AggregateResult:
    """Run the whole job on ``files`` and write the tables and ``summary.json`` under ``out``.

    Invariant: ``records_total == records_parsed + records_quarantined`` in the summary.
    """
    out.mkdir(parents=True, exist_ok=True)
    parsing = ""
    if not files.logs:
        parsed = spark.createDataFrame([], schemas.PARSED)
    else:  # parsed while data_errors is written, kept on disk for the other tables
        parsed = list_files(spark, files.logs).transform(parse_records)
        parsed = parsed.persist(StorageLevel.DISK_ONLY)
        parsing = f" (parsing {len(files.logs)} log file(s))"
    errors = parsed.transform(data_errors)
    metrics: DataFrame | None = None
    if files.metrics:
        check_metrics_exports(files.metrics)
        metrics = read_files(spark, files.metrics).transform(parse_metrics)
    jobs, event_jobs = settled_jobs(spark, parsed, metrics)
    errors = errors.transform(with_jobs(jobs))
    # the few rows that are not data errors (quarantined, job events): one pass, kept
    rare = parsed.filter(F.col("reason").isNotNull() | F.col("category").isNotNull())
    rare = rare.persist(StorageLevel.MEMORY_AND_DISK)
    events = rare.transform(lifecycle_events).transform(with_jobs(event_jobs))
    errors_seen, quarantine_seen = Observation("data_errors"), Observation("quarantine")
    steps: list[tuple[TableName, DataFrame]] = [
        (TableName.DATA_ERRORS, errors.transform(observed(errors_seen, **error_metrics()))),
        (TableName.QUARANTINE, rare.transform(quarantined).transform(
            observed(quarantine_seen, records=F.count(F.lit(1))))),
        (TableName.ERROR_ROLLUP, errors.transform(rollup)),
        (TableName.PARTITION_IDLE, errors.transform(idle_episodes)),
    ]  # fmt: skip
    if metrics is not None:
        metrics = metrics.transform(with_jobs(jobs))
        steps.append((TableName.METRICS, metrics.transform(metrics_table)))
    else:  # no stale metrics from an earlier run into the same folder
        remove_table(out, TableName.METRICS)
    try:
        for name, frame in steps:
            progress(f"writing {name}{parsing if name is TableName.DATA_ERRORS else ''}")
            write_frame(frame, out, name)
        progress("summarising")
        quarantined_count = int(quarantine_seen.get["records"])
        lifecycle = events.count()  # of the kept rows: no pass over the records
        if lifecycle:
            progress(f"writing {TableName.JOB_EVENTS}")
            write_frame(events, out, TableName.JOB_EVENTS)
        else:  # no lifecycle record: no table (nor an earlier run's), as in-process
            remove_table(out, TableName.JOB_EVENTS)
        summary = summarise(errors, errors_seen.get, quarantined_count, metrics, events, lifecycle)
    finally:
        rare.unpersist()
        parsed.unpersist()
    summary |= files_summary(len(files.logs) + len(files.metrics), files.skipped)
    write_summary(out, summary)
    done = {step[0] for step in steps} | ({TableName.JOB_EVENTS} if lifecycle else set())
    written = tuple(name for name in TableName if name in done)
    return AggregateResult(out=out, tables=written, summary=summary)
