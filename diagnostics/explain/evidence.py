"""The facts the causes are judged on, and how they are read from an aggregate folder.

:class:`Evidence` is source-neutral: :func:`from_agg_dir` fills it from the tables of
``orderdoc aggregate`` (what a real ASA user has: data-error counts, example events, idle
notices, metrics) and :mod:`diagnostics.explain.capture` from an event capture (exact
distributions). :func:`merge` prefers the capture's exact facts where both exist.

Invariants: every ``lateness`` array is in seconds (arrival − application, so early events
are negative), with a weight per value (events it stands for); counts are whole events.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from diagnostics.aggregates import SUMMARY_FILE, TableName, read_summary, scan
from diagnostics.engine.policy import OrderingPolicy
from diagnostics.errors import InputError
from diagnostics.explain.kind_stats import KindStats, kind_stats
from diagnostics.explain.sender_groups import SenderGroup
from diagnostics.kinds import ErrorKind
from diagnostics.scalars import as_float, as_int
from diagnostics.whatif.senders import SenderChoice
from diagnostics.words import noun


@dataclass(frozen=True)
class Evidence:
    """Everything the cause detectors read. ``None`` means "not known from these sources"."""

    sources: tuple[str, ...] = ()
    policy: OrderingPolicy | None = None
    total_events: int | None = None
    kinds: dict[str, KindStats] = field(default_factory=dict)
    idle: list[dict[str, Any]] = field(default_factory=list)
    #: where ``idle`` comes from: ASA's InputPartitionNotProgressing notices (``"logs"``) or
    #: the capture's own silent stretches (``"capture"``, exact; preferred when both exist)
    idle_source: str = "logs"
    partition_events: dict[int, int] = field(default_factory=dict)
    watermark_delay: dict[str, float] | None = None
    release_delay: dict[str, float | None] | None = None
    arrival_lateness: np.ndarray | None = None
    disorder: np.ndarray | None = None
    key_analysis: list[dict[str, Any]] = field(default_factory=list)
    key_column: str | None = None
    late_ooo_overlap: int | None = None
    time_range: dict[str, str | None] = field(default_factory=dict)
    #: the job the evidence is about (``None``: one unnamed job, or a capture)
    job: str | None = None
    #: largest backlogged input events in one minute (Azure Monitor metrics), if known
    backlog_max: int | None = None
    #: diagnostic records read from the logs (data errors and idle notices)
    log_records: int = 0
    #: log records of the aggregate folder, and how many of them could not be read
    #: (quarantined), as its summary.json counts them
    records_total: int = 0
    records_quarantined: int = 0
    #: with a capture: the sender column and why (:mod:`diagnostics.whatif.senders`)
    senders: SenderChoice | None = None
    #: groups of senders with a cause of their own (:mod:`diagnostics.explain.sender_groups`)
    sender_groups: tuple[SenderGroup, ...] = ()
    #: the late and early events of the senders in no group
    ungrouped: dict[str, KindStats] = field(default_factory=dict)

    def count(self, kind: ErrorKind) -> int:
        """Events of ``kind`` (0 when absent)."""
        stats = self.kinds.get(kind.value)
        return stats.events if stats else 0

    def stats(self, kind: ErrorKind) -> KindStats | None:
        """The stats of ``kind``, if any event of it was seen."""
        stats = self.kinds.get(kind.value)
        return stats if stats and stats.events else None

    def rest(self, kind: ErrorKind) -> KindStats | None:
        """The events of ``kind`` no sender group's finding names (all of them without
        groups), if any: what the late and early arrivals' findings report."""
        if not self.sender_groups or kind.value not in self.ungrouped:
            return self.stats(kind)
        stats = self.ungrouped[kind.value]
        return stats if stats.events else None


def _scan(agg_dir: Path, table: TableName, job: str | None = None) -> pl.DataFrame | None:
    lazy = scan(agg_dir, table)
    if lazy is None:
        return None
    try:
        frame = lazy.collect()
    except (pl.exceptions.PolarsError, OSError) as exc:
        msg = f"{agg_dir / table}: cannot be read as an aggregate table: {str(exc).splitlines()[0]}"
        raise InputError(msg) from exc
    if job == "" and "job" in frame.columns:  # the records that name no job
        frame = frame.filter(pl.col("job").is_null())
    elif job is not None and "job" in frame.columns:  # job names compare ignoring case
        frame = frame.filter(pl.col("job").str.to_uppercase() == job.upper())
    return frame


def _need(frame: pl.DataFrame, table: TableName, columns: tuple[str, ...]) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        msg = (
            f"aggregate table {table}: missing {noun(len(missing), 'column')} {', '.join(missing)}"
        )
        raise InputError(msg)


def _idle(frame: pl.DataFrame | None) -> list[dict[str, Any]]:
    if frame is None or frame.is_empty():
        return []
    _need(frame, TableName.PARTITION_IDLE, ("partition_id", "start", "end", "notices"))
    rows = frame.sort("partition_id", "start", nulls_last=True)
    return [
        {
            "partition_id": row["partition_id"],
            "start": row["start"].isoformat() if row["start"] else None,
            "end": row["end"].isoformat() if row["end"] else None,
            "minutes": round((row["end"] - row["start"]).total_seconds() / 60, 1)
            if row["start"] and row["end"]
            else None,
            "notices": row["notices"],
        }
        for row in rows.iter_rows(named=True)
    ]


def _job_level(frame: pl.DataFrame, column: str) -> pl.Series:
    """The values of ``column`` that count each job once in each minute: the minute's rows
    without a partition and an input (``source``) when the exports have them, else its rows
    per input without a partition (their sum is the job's), else its per-partition rows."""
    rows = frame.filter(pl.col(column).is_not_null())
    source = pl.col("source").is_null() if "source" in rows.columns else pl.lit(value=True)
    level = (
        pl.when(pl.col("partition_id").is_null() & source)
        .then(0)
        .when(pl.col("partition_id").is_null())
        .then(1)
        .otherwise(2)
    )
    keys = [k for k in ("job", "minute") if k in rows.columns]
    if not keys:
        return rows[column]
    ranked = rows.with_columns(level.alias("_level"))
    return ranked.filter(pl.col("_level") == pl.col("_level").min().over(keys))[column]


def _metrics(frame: pl.DataFrame | None) -> tuple[int | None, dict[int, int], dict | None]:
    if frame is None or frame.is_empty():
        return None, {}, None
    _need(
        frame, TableName.METRICS, ("partition_id", "input_events", "output_watermark_delay_seconds")
    )
    parts = (
        frame.filter(pl.col("partition_id").is_not_null())
        .group_by("partition_id")
        .agg(pl.col("input_events").sum())
        .sort("partition_id")
    )
    per_part = {
        int(p): int(n) for p, n in zip(parts["partition_id"], parts["input_events"], strict=True)
    }
    inputs = _job_level(frame, "input_events")
    total = int(inputs.sum()) if inputs.len() else None
    delays = _job_level(frame, "output_watermark_delay_seconds")
    delay = (
        {
            "p50": as_float(delays.quantile(0.5, "higher")),
            "p95": as_float(delays.quantile(0.95, "higher")),
            "max": as_float(delays.max()),
        }
        if delays.len()
        else None
    )
    return total, per_part, delay


def _metric_kinds(frame: pl.DataFrame | None) -> tuple[dict[str, KindStats], int | None]:
    """Late and early events counted by the metrics (for a job with metrics but no data-error
    logs), and the largest backlog in one minute."""
    if frame is None or frame.is_empty():
        return {}, None
    kinds = {}
    for column, kind in (
        ("late_input_events", ErrorKind.LATE),
        ("early_input_events", ErrorKind.EARLY),
    ):
        if column in frame.columns:
            events = int(_job_level(frame, column).sum())
            if events:
                kinds[kind.value] = KindStats(events=events, records=0)
    backlog = None
    if "backlogged_input_events" in frame.columns:
        values = frame["backlogged_input_events"].drop_nulls()
        backlog = as_int(values.max()) if values.len() else None
    return kinds, backlog


def _minutes_range(metrics: pl.DataFrame | None) -> dict[str, str | None] | None:
    """The time the metrics cover, as ``summary.json`` writes a time range: from the start
    of the first minute to the end of the last (``None`` without metric minutes)."""
    if metrics is None or "minute" not in metrics.columns:
        return None
    minutes = metrics["minute"].drop_nulls()
    if minutes.is_empty():
        return None
    first, last = minutes.min(), minutes.max()
    if not isinstance(first, datetime) or not isinstance(last, datetime):
        return None
    return {"from": _iso(first), "to": _iso(last + timedelta(minutes=1))}


def _iso(moment: datetime) -> str:
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def jobs_in(agg_dir: Path) -> list[str]:
    """The job names of an aggregate folder's tables, as the aggregation shows them (one
    spelling per job, names compared ignoring case), sorted ignoring case."""
    names: dict[str, str] = {}
    tables = (TableName.DATA_ERRORS, TableName.PARTITION_IDLE, TableName.METRICS)
    for table in (*tables, TableName.JOB_EVENTS):  # a job known by its lifecycle records too
        frame = _scan(agg_dir, table)
        if frame is not None and "job" in frame.columns:
            for name in sorted(str(j) for j in frame["job"].drop_nulls().unique().to_list()):
                names.setdefault(name.upper(), name)
    return sorted(names.values(), key=lambda name: (name.upper(), name))


def job_named(agg_dir: Path, job: str) -> str | None:
    """The folder's spelling of ``job`` (compared ignoring case), ``None`` if it has none."""
    return next((name for name in jobs_in(agg_dir) if name.upper() == job.upper()), None)


def from_agg_dir(
    agg_dir: Path, policy: OrderingPolicy | None = None, job: str | None = None
) -> Evidence:
    """Evidence from an aggregate folder (``data_errors``, ``partition_idle``, ``metrics``),
    restricted to ``job`` when given (the job name from the records' ``resourceId``)."""
    if not agg_dir.is_dir():
        msg = f"{agg_dir}: no such aggregate folder (write one with orderdoc aggregate)"
        raise InputError(msg)
    errors = _scan(agg_dir, TableName.DATA_ERRORS, job)
    kinds: dict[str, KindStats] = {}
    if errors is not None and not errors.is_empty():
        _need(
            errors,
            TableName.DATA_ERRORS,
            ("kind", "event_count", "partition_id", "lateness_seconds"),
        )
        data = errors.filter(pl.col("kind") != ErrorKind.PARTITION_NOT_PROGRESSING.value)
        kinds = kind_stats(data)
    metrics = _scan(agg_dir, TableName.METRICS, job)
    total, per_part, delay = _metrics(metrics)
    from_metrics, backlog = _metric_kinds(metrics)
    for name, stats in from_metrics.items():
        kinds.setdefault(name, stats)
    summary = read_summary(agg_dir)
    try:
        time_range: dict[str, str | None] = dict(summary.get("time_range", {}))
    except (TypeError, ValueError) as exc:
        msg = f"{agg_dir / SUMMARY_FILE}: time_range is not an object ({exc})"
        raise InputError(msg) from exc
    if not any(time_range.values()):  # no log record had a time: the metrics' minutes
        time_range = _minutes_range(metrics) or time_range
    idle = _idle(_scan(agg_dir, TableName.PARTITION_IDLE, job))
    has_metrics = metrics is not None and not metrics.is_empty()
    # "logs" when log records were read: the job's own, or (for the whole folder) any,
    # quarantined ones included; a folder of metrics exports alone has none
    records_total = _count(summary, "records_total", agg_dir)
    records = records_total if job is None else 0
    has_logs = bool((errors is not None and not errors.is_empty()) or idle or records)
    sources = (["logs"] if has_logs or not has_metrics else []) + (
        ["metrics"] if has_metrics else []
    )
    return Evidence(
        sources=tuple(sources),
        policy=policy,
        total_events=total,
        kinds=kinds,
        idle=idle,
        partition_events=per_part,
        watermark_delay=delay,
        time_range=time_range,
        job=(job_named(agg_dir, job) or job) if job else None,
        backlog_max=backlog,
        log_records=0 if errors is None else errors.height,
        records_total=records_total,
        records_quarantined=_count(summary, "records_quarantined", agg_dir),
    )


def _count(summary: dict[str, Any], key: str, agg_dir: Path) -> int:
    """A whole-number count of summary.json (0 when absent)."""
    value = summary.get(key) or 0
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        msg = f"{agg_dir / SUMMARY_FILE}: {key} is {value!r}, not a count"
        raise InputError(msg)
    return value


def merge(logs: Evidence, capture: Evidence) -> Evidence:
    """The capture's exact facts, plus what only the logs know (CTI records; idle notices
    when the capture shows no silent stretch): one definition of each number, whichever
    sources a command or page was given."""
    kinds = dict(capture.kinds)
    for name, stats in logs.kinds.items():
        counted = kinds.setdefault(name, stats)
        if counted is not stats and not counted.sources and stats.sources:
            # the capture's count, the inputs the logs name (a capture names none)
            kinds[name] = replace(counted, sources=stats.sources)
    return replace(
        capture,
        sources=tuple(dict.fromkeys((*logs.sources, *capture.sources))),
        kinds=kinds,
        idle=capture.idle or logs.idle,
        idle_source="capture" if capture.idle else logs.idle_source,
        watermark_delay=logs.watermark_delay or capture.watermark_delay,
        time_range=logs.time_range or capture.time_range,
    )
