"""The aggregation in plain polars: the reference the Spark job must match, and the peer.

Used in-process by the app (:mod:`diagnostics.appdata.build`) and the demo; the tables'
columns are those of :mod:`diagnostics.aggregates.schema`, written by
:func:`diagnostics.aggregates.write_tables`. What the tables hold (shared with
:mod:`diagnostics.spark.job`, documented in docs/schemas.md):

* jobs: every (``job_id``, ``job``) pair of ``data_errors`` and ``metrics`` is settled by
  :func:`diagnostics.logs.jobs.resolve_jobs` (one key and one shown name per job, records
  naming only a job joined to its id) before anything is grouped;
* ``data_errors``: parsed records plus ``date`` (UTC date of ``record_time``);
* ``error_rollup``: per job, kind, partition_id and ``minute`` = the minute of
  ``coalesce(from_time, record_time)``: ``event_count`` (sum), ``records`` (count),
  ``max_lateness_seconds``, ``date``;
* ``partition_idle``: idle notices per (job, source, partition_id) in time order; a notice
  opens a new episode when it is the first, when its minutes drop below the previous notice's,
  or when it comes more than (its minutes + 1) minutes after the previous one. ``start`` = the
  first notice's time minus its minutes, ``end`` = the last notice's time;
* ``quarantine``: ``source_file``, ``source_line``, ``reason``, ``raw``, ``raw_bytes``;
* ``job_events``: the job lifecycle records (:mod:`diagnostics.logs.lifecycle`) plus
  ``date``, each joined to its job by id, else by name (:func:`~diagnostics.logs.jobs.join_jobs`:
  they change no job's name).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import polars as pl
import pyarrow as pa

from diagnostics.aggregates import Tables, files_summary
from diagnostics.kinds import ErrorKind
from diagnostics.logs.batches import parse_file
from diagnostics.logs.jobs import join_jobs, resolve_jobs
from diagnostics.logs.metrics import METRICS_SCHEMA, read_metrics
from diagnostics.logs.records import (
    DATA_ERROR_COLUMNS,
    JOB_EVENT_COLUMNS,
    PARSED_SCHEMA,
    QUARANTINE_COLUMNS,
)

IDLE_KIND = ErrorKind.PARTITION_NOT_PROGRESSING.value


#: ``progress(fraction 0..1, message)``, called as the files are read.
Progress = Callable[[float, str], None]


def _quiet(_fraction: float, _message: str) -> None:
    return None


def parse_files(
    paths: Sequence[str | Path], progress: Progress = _quiet, share: float = 1.0
) -> pl.DataFrame:
    """All records of ``paths`` as one frame with PARSED_SCHEMA's columns (``progress``
    before each file, the fractions spread over ``0 .. share``)."""
    batches: list[pa.RecordBatch] = []
    for i, path in enumerate(paths):
        name = Path(path).name
        progress(i / len(paths) * share, f"parsing {name} ({i + 1}/{len(paths)})")
        batches.extend(parse_file(Path(path).read_bytes(), str(path)))
    return pl.DataFrame(pa.Table.from_batches(batches, schema=PARSED_SCHEMA))


#: The (job_id, job) pairs read, and the (job_id, job) each is aggregated under.
JOB_MAPPING = pl.Schema(
    {name: pl.String() for name in ("_from_id", "_from_job", "_to_id", "_to_job")}
)


def _pairs(*frames: pl.DataFrame) -> set[tuple[str | None, str | None]]:
    return {pair for frame in frames for pair in frame.select("job_id", "job").unique().rows()}


def _mapping_frame(mapping: dict) -> pl.DataFrame:
    rows = [(*pair, *resolved) for pair, resolved in mapping.items()]
    return pl.DataFrame(rows, schema=JOB_MAPPING, orient="row")


def job_mapping(*frames: pl.DataFrame) -> pl.DataFrame:
    """:func:`~diagnostics.logs.jobs.resolve_jobs` over the jobs of ``frames`` (each with
    ``job_id`` and ``job``), as a frame with :data:`JOB_MAPPING`."""
    return _mapping_frame(resolve_jobs(_pairs(*frames)))


def event_mapping(events: pl.DataFrame, jobs: pl.DataFrame) -> pl.DataFrame:
    """:func:`~diagnostics.logs.jobs.join_jobs`: the job each pair of the job events joins,
    among the jobs ``jobs`` (a :func:`job_mapping`) resolved, as a :data:`JOB_MAPPING` frame."""
    resolved = {(r[0], r[1]): (r[2], r[3]) for r in jobs.rows()}
    return _mapping_frame(join_jobs(_pairs(events), resolved))


def job_events(parsed: pl.DataFrame) -> pl.DataFrame:
    """The job lifecycle records of ``parsed`` (``category`` set), with ``date``."""
    return (
        parsed.filter(pl.col("category").is_not_null())
        .select(JOB_EVENT_COLUMNS)
        .with_columns(pl.col("record_time").dt.date().alias("date"))
    )


def with_jobs(frame: pl.DataFrame, mapping: pl.DataFrame) -> pl.DataFrame:
    """``frame`` with its ``job_id`` and ``job`` as ``mapping`` settles them (row order and
    columns kept)."""
    joined = frame.join(
        mapping,
        left_on=["job_id", "job"],
        right_on=["_from_id", "_from_job"],
        how="left",
        nulls_equal=True,
        maintain_order="left",
    )
    return joined.with_columns(
        pl.coalesce("_to_id", "job_id").alias("job_id"), pl.coalesce("_to_job", "job").alias("job")
    ).select(frame.columns)


def rollup(data_errors: pl.DataFrame) -> pl.DataFrame:
    """``error_rollup`` from ``data_errors``."""
    minute = pl.coalesce("from_time", "record_time").dt.truncate("1m").alias("minute")
    return (
        data_errors.group_by("job", "kind", "partition_id", minute)
        .agg(
            pl.col("event_count").sum().alias("event_count"),
            pl.len().cast(pl.Int64).alias("records"),
            (~pl.col("count_known")).sum().cast(pl.Int64).alias("records_without_count"),
            pl.col("lateness_seconds").max().alias("max_lateness_seconds"),
        )
        .with_columns(pl.col("minute").dt.date().alias("date"))
        .sort("job", "kind", "partition_id", "minute", nulls_last=True)
    )


def idle_episodes(data_errors: pl.DataFrame) -> pl.DataFrame:
    """``partition_idle`` from the idle notices in ``data_errors``."""
    keys = ["job", "source", "partition_id"]
    notices = data_errors.filter(pl.col("kind") == IDLE_KIND).sort(
        [*keys, "record_time", "source_file", "source_line"], nulls_last=True
    )
    minutes = pl.col("idle_minutes").fill_null(0)
    gap = pl.col("record_time") - pl.col("record_time").shift(1).over(keys)
    new = (
        pl.col("record_time").shift(1).over(keys).is_null()
        | (minutes < minutes.shift(1).over(keys))
        | (gap > pl.duration(minutes=minutes + 1))
    )
    return (
        notices.with_columns(new.cum_sum().over(keys).alias("episode"))
        .group_by(*keys, "episode")
        .agg(
            (
                pl.col("record_time").first()
                - pl.duration(minutes=pl.col("idle_minutes").fill_null(0).first())
            ).alias("start"),
            pl.col("record_time").last().alias("end"),
            pl.len().cast(pl.Int64).alias("notices"),
            pl.col("idle_minutes").max().alias("max_idle_minutes"),
        )
        .drop("episode")
        .with_columns(pl.col("start").dt.date().alias("date"))
        .sort(*keys, "start", nulls_last=True)
    )


def _iso(value: object) -> str | None:
    return None if value is None else value.strftime("%Y-%m-%dT%H:%M:%S.%fZ")  # type: ignore[attr-defined]


def summarise(
    parsed: pl.DataFrame,
    data_errors: pl.DataFrame,
    metrics: pl.DataFrame | None = None,
    events: pl.DataFrame | None = None,
) -> dict:
    """``summary.json`` content (without the file lists); ``jobs`` includes the jobs known
    only by their ``metrics`` rows or their job ``events``; ``job_events`` counts the job
    lifecycle records (parsed records, as the data errors are)."""
    by_kind = (
        data_errors.group_by("kind")
        .agg(pl.col("event_count").sum(), (~pl.col("count_known")).sum().alias("unknown"))
        .sort("kind")
    )
    unknown = by_kind.filter(pl.col("unknown") > 0)
    idle = data_errors.filter(pl.col("kind") == IDLE_KIND)["partition_id"].drop_nulls()
    start = data_errors.select(pl.coalesce("from_time", "record_time").min()).item()
    end = data_errors.select(pl.coalesce("to_time", "record_time").max()).item()
    quarantined = parsed["reason"].is_not_null().sum()
    return {
        "records_total": parsed.height,
        "records_parsed": parsed.height - quarantined,
        "records_quarantined": quarantined,
        "events_by_kind": dict(zip(by_kind["kind"], by_kind["event_count"], strict=True)),
        "records_without_count": dict(zip(unknown["kind"], unknown["unknown"], strict=True)),
        "idle_partitions": sorted(set(idle.to_list())),
        "job_events": 0 if events is None else events.height,
        "jobs": sorted(
            set(data_errors["job"].drop_nulls().to_list())
            | set(() if metrics is None else metrics["job"].drop_nulls().to_list())
            | set(() if events is None else events["job"].drop_nulls().to_list())
        ),
        "time_range": {"from": _iso(start), "to": _iso(end)},
    }


def aggregate_files(
    logs: Sequence[str | Path],
    metrics: Sequence[str | Path] = (),
    progress: Progress = _quiet,
    skipped: Sequence[str] = (),
) -> Tables:
    """Every table for the given log and metrics files, in one process (``progress``: one
    step a file, then one for the rollups); the summary's file keys count ``logs`` and
    ``metrics`` as read and list ``skipped`` (the files an input expansion left out), as the
    Spark job's do."""
    total = max(1, len(logs) + len(metrics))
    parsed = parse_files(logs, progress, share=0.8 * len(logs) / total)
    metric_tables = []
    for j, path in enumerate(metrics):
        progress((len(logs) + j) / total * 0.8, f"reading metrics {Path(path).name}")
        metric_tables.append(read_metrics(Path(path).read_bytes(), str(path)))
    progress(0.85, "rolling up per minute, finding idle episodes")
    data_errors = (
        parsed.filter(pl.col("reason").is_null() & pl.col("category").is_null())
        .select(DATA_ERROR_COLUMNS)
        .with_columns(pl.col("record_time").dt.date().alias("date"))
    )
    metric_frame = pl.DataFrame(
        pa.concat_tables(metric_tables) if metric_tables else METRICS_SCHEMA.empty_table()
    )
    jobs = job_mapping(data_errors, metric_frame)
    data_errors = with_jobs(data_errors, jobs)
    metric_frame = with_jobs(metric_frame, jobs)
    events = job_events(parsed)
    events = with_jobs(events, event_mapping(events, jobs))
    return Tables(
        data_errors=data_errors,
        error_rollup=rollup(data_errors),
        partition_idle=idle_episodes(data_errors),
        metrics=metric_frame.drop("source_file").with_columns(
            pl.col("minute").dt.date().alias("date")
        ),
        quarantine=parsed.filter(pl.col("reason").is_not_null()).select(QUARANTINE_COLUMNS),
        job_events=events.sort("record_time", "source_file", "source_line"),
        summary=summarise(parsed, data_errors, metric_frame, events)
        | files_summary(len(logs) + len(metrics), skipped),
    )
