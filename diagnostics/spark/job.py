"""The aggregation job: small ``DataFrame -> DataFrame`` steps chained with ``.transform()``.

Data flow (nothing of the data is collected to the driver; only the summary's aggregates)::

    binaryFile(path, content) --mapInArrow(parse)--> parsed (one row per record)
        (or, opted in, diagnostics.spark.fastpath: native JSON Lines, Python for the rest)
    parsed --data_errors--> data_errors --rollup--> error_rollup
                                        --idle_episodes--> partition_idle
    parsed --quarantined--> quarantine
    binaryFile(metrics.parquet) --mapInArrow--> metrics

Table definitions are those of :mod:`diagnostics.logs.aggregate` (the polars reference).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from diagnostics.kinds import ErrorKind
from diagnostics.logs.batches import metrics_file_batches, parse_file_batches
from diagnostics.logs.inputs import InputFiles
from diagnostics.logs.records import DATA_ERROR_COLUMNS, QUARANTINE_COLUMNS
from diagnostics.spark import fastpath, schemas

IDLE_KIND = ErrorKind.PARTITION_NOT_PROGRESSING.value
TABLES = ("data_errors", "error_rollup", "partition_idle", "metrics", "quarantine")
_ISO = "yyyy-MM-dd'T'HH:mm:ss.SSSSSS'Z'"
#: Opt-in (``--conf spark.orderdoc.nativeJsonLines=true``): parse JSON Lines natively
#: (:mod:`diagnostics.spark.fastpath`). Off by default: measured slower than the Python
#: parser on the benchmark machine (docs/performance.md).
NATIVE_JSON_CONF = "spark.orderdoc.nativeJsonLines"


@dataclass(frozen=True)
class AggregateResult:
    """What a run wrote: the output folder, the tables written and the summary content."""

    out: Path
    tables: tuple[str, ...]
    summary: dict


def read_files(spark: SparkSession, paths: Sequence[str]) -> DataFrame:
    """One row per file: ``path`` and its raw ``content`` (bytes, gzip not yet undone)."""
    return spark.read.format("binaryFile").load(list(paths)).select("path", "content")


def parse_records(files: DataFrame) -> DataFrame:
    """Every record of every file, parsed or quarantined (schema :data:`schemas.PARSED`)."""
    return files.mapInArrow(parse_file_batches, schemas.PARSED)


def stage_records(spark: SparkSession, files: DataFrame, staging: Path) -> DataFrame:
    """Every record of ``files`` (schema :data:`schemas.PARSED`), staged as Parquet under ``staging``.

    JSON Lines are parsed natively where :func:`fastpath.native` accepts a line; the lines it
    keeps, and files of every other shape, are parsed by the Python parser (same results).
    """
    lines = staging / "lines"
    kept = staging / "kept"
    files.mapInArrow(fastpath.split_file_batches, fastpath.LINES).transform(
        fastpath.native
    ).write.mode("overwrite").parquet(str(lines))
    staged = spark.read.schema(fastpath.LINES).parquet(str(lines))
    staged.filter(F.col("line").isNotNull()).select(*fastpath.KEPT.names).mapInArrow(
        fastpath.reparse_line_batches, schemas.PARSED
    ).write.mode("overwrite").parquet(str(kept))
    return (
        staged.filter(F.col("line").isNull())
        .drop("line")
        .unionByName(spark.read.schema(schemas.PARSED).parquet(str(kept)))
    )


def parse_metrics(files: DataFrame) -> DataFrame:
    """Engine metrics rows of ``metrics.parquet`` files (schema :data:`schemas.METRICS`)."""
    return files.mapInArrow(metrics_file_batches, schemas.METRICS)


def with_date(column: str) -> Callable[[DataFrame], DataFrame]:
    """Adds ``date``: the UTC date of ``column`` (the session time zone is UTC)."""

    def step(df: DataFrame) -> DataFrame:
        return df.withColumn("date", F.to_date(F.col(column)))

    return step


def data_errors(parsed: DataFrame) -> DataFrame:
    """The parsed records with the data_errors columns and ``date``."""
    return (
        parsed.filter(F.col("reason").isNull())
        .select(*DATA_ERROR_COLUMNS)
        .transform(with_date("record_time"))
    )


def quarantined(parsed: DataFrame) -> DataFrame:
    """The quarantined records: where, why and the (truncated) text."""
    return parsed.filter(F.col("reason").isNotNull()).select(*QUARANTINE_COLUMNS)


def rollup(errors: DataFrame) -> DataFrame:
    """Per job, kind, partition and minute of ``coalesce(from_time, record_time)``."""
    minute = F.date_trunc("minute", F.coalesce("from_time", "record_time")).alias("minute")
    return (
        errors.groupBy("job", "kind", "partition_id", minute)
        .agg(
            F.sum("event_count").cast("long").alias("event_count"),
            F.count(F.lit(1)).cast("long").alias("records"),
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


def summarise(parsed: DataFrame, errors: DataFrame) -> dict:
    """``summary.json`` from small aggregates (a row per kind, partition and job at most)."""
    counts = parsed.agg(
        F.count(F.lit(1)).alias("total"),
        F.count("reason").alias("quarantined"),
    ).first()
    total = int(counts["total"])
    bad = int(counts["quarantined"])
    by_kind = {
        row["kind"]: int(row["n"])
        for row in errors.groupBy("kind").agg(F.sum("event_count").alias("n")).collect()
    }
    idle = errors.filter((F.col("kind") == IDLE_KIND) & F.col("partition_id").isNotNull())
    partitions = sorted(int(r[0]) for r in idle.select("partition_id").distinct().collect())
    jobs = sorted(r[0] for r in errors.select("job").distinct().collect() if r[0] is not None)
    span = errors.agg(
        F.date_format(F.min(F.coalesce("from_time", "record_time")), _ISO).alias("from"),
        F.date_format(F.max(F.coalesce("to_time", "record_time")), _ISO).alias("to"),
    ).first()
    return {
        "records_total": total,
        "records_parsed": total - bad,
        "records_quarantined": bad,
        "events_by_kind": dict(sorted(by_kind.items())),
        "idle_partitions": partitions,
        "jobs": jobs,
        "time_range": {"from": span["from"], "to": span["to"]},
    }


def _write(df: DataFrame, path: Path, *, by_date: bool) -> None:
    writer = df.write.mode("overwrite")
    if by_date:
        writer = writer.partitionBy("date")
    writer.parquet(str(path))


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
    staging = out / "parsed.tmp"
    if files.logs:
        progress(f"parsing {len(files.logs)} log file(s)")
        logs = read_files(spark, files.logs)
        if spark.conf.get(NATIVE_JSON_CONF, "false").lower() == "true":
            parsed = stage_records(spark, logs, staging)
        else:
            logs.transform(parse_records).write.mode("overwrite").parquet(str(staging))
            parsed = spark.read.schema(schemas.PARSED).parquet(str(staging))
    else:
        parsed = spark.createDataFrame([], schemas.PARSED)
    errors = parsed.transform(data_errors)
    written = []
    steps: list[tuple[str, DataFrame, bool]] = [
        ("data_errors", errors, True),
        ("error_rollup", errors.transform(rollup), True),
        ("partition_idle", errors.transform(idle_episodes), True),
        ("quarantine", parsed.transform(quarantined), False),
    ]
    if files.metrics:
        metrics = read_files(spark, files.metrics).transform(parse_metrics)
        steps.insert(3, ("metrics", metrics.transform(metrics_table), True))
    else:  # no stale metrics from an earlier run into the same folder
        shutil.rmtree(out / "metrics", ignore_errors=True)
    for name, frame, by_date in steps:
        progress(f"writing {name}")
        _write(frame, out / name, by_date=by_date)
        written.append(name)
    progress("summarising")
    summary = summarise(parsed, errors)
    summary["files_read"] = len(files.logs) + len(files.metrics)
    summary["files_skipped"] = list(files.skipped)
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    shutil.rmtree(staging, ignore_errors=True)
    return AggregateResult(out=out, tables=tuple(written), summary=summary)
