"""Turning uploads into an aggregate folder, with progress, without a JVM.

Raw logs go through the polars reference aggregation of :mod:`diagnostics.logs.aggregate`
(the same tables the Spark job writes, checked equal by the Spark tests), written by
:func:`diagnostics.aggregates.write_tables`; an event capture is
replayed by the engine under an :class:`~diagnostics.engine.policy.OrderingPolicy`,
instrumented into ASA diagnostics and metrics, and aggregated the same way.

The folder written (see docs/schemas.md, "App working folder"): the five tables as
``TABLE/part-0.parquet`` (``date`` kept as a column), ``summary.json``, and for a capture
``capture/events.parquet``, ``capture/outcomes.parquet``, ``capture/diagnostics.jsonl``,
``capture/metrics.parquet``, ``capture/source.json`` (the policy used) and, when the
capture's format tells a field written null from one missing, ``capture/held_null.parquet``.

Invariant: every function either writes a complete folder or raises
:class:`~diagnostics.errors.InputError` with a message fit to show as it is.
"""

from __future__ import annotations

import gzip
import io
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from diagnostics.aggregates import write_tables
from diagnostics.engine.columns import OUTCOME_COLUMNS, EventColumns
from diagnostics.engine.outcomes_files import OUTCOMES_FILE, outcomes_in, write_outcomes_file
from diagnostics.engine.policy import Action, OrderingPolicy
from diagnostics.errors import InputError, OrderdocError
from diagnostics.logs.aggregate import Progress, aggregate_files
from diagnostics.logs.azure_metrics import looks_like_azure_metrics
from diagnostics.logs.inputs import read_as
from diagnostics.words import plural

if TYPE_CHECKING:
    from diagnostics.captures.deferred import Deferred

CAPTURE_DIR = "capture"
SOURCE_FILE = "source.json"
#: The job name a capture is replayed under when no job definition names it.
UNNAMED_JOB = "capture"


def _quiet(_fraction: float, _message: str) -> None:
    return None


class UploadKind(StrEnum):
    """What an uploaded file is."""

    LOG = "log"  # ASA diagnostic log of any accepted shape, or an engine metrics Parquet
    CAPTURE = "capture"  # an event capture: a table with an arrival-time column
    UNKNOWN = "unknown"


def _head_text(data: bytes) -> str | None:
    """The first 64 KiB as text, or ``None`` when it is binary (a NUL byte, or a first line
    that is not UTF-8)."""
    if data[:2] == b"\x1f\x8b":
        try:
            with gzip.GzipFile(fileobj=io.BytesIO(data)) as handle:
                data = handle.read(65536)
        except (OSError, EOFError):
            return None
    head = data[:65536].removeprefix(b"\xef\xbb\xbf")
    first = head.lstrip().split(b"\n", 1)[0]
    if b"\x00" in head:
        return None
    try:
        first.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return head.decode("utf-8", errors="replace")


#: Columns that make a table an event capture (when no arrival column is named).
CAPTURE_MARKERS = frozenset(
    {
        "arrival_time",
        "EventEnqueuedUtcTime",
        "IoTHub.EnqueuedTime",
        "IoTHub",
        "BlobLastModifiedUtcTime",
    }
)


def classify(name: str, data: bytes, arrival: str | None = None) -> UploadKind:
    """Guess what an upload is from its name and first bytes (cheap; content is checked later).

    A capture is an Event Hubs Capture ``.avro`` file, or a CSV, JSON Lines or Parquet table
    with the ``arrival`` column (``None``: one of :data:`CAPTURE_MARKERS`); a Parquet file
    with ``time`` and ``InputEvents`` is engine metrics (a log); binary content (not gzip) is
    unknown; other text is given to the log reader, which decides record by record.
    """
    lower = name.lower().removesuffix(".gz")
    markers = CAPTURE_MARKERS if arrival is None else frozenset({arrival})
    if data[:4] == b"Obj\x01" or lower.endswith(".avro"):
        return UploadKind.CAPTURE if data[:4] == b"Obj\x01" else UploadKind.UNKNOWN
    if data[:4] == b"PAR1" or lower.endswith((".parquet", ".pq")):
        try:
            names = set(pq.read_schema(io.BytesIO(data)).names)
        except (OSError, ValueError, pa.ArrowException):
            return UploadKind.UNKNOWN
        if markers & names:
            return UploadKind.CAPTURE
        return UploadKind.LOG if {"time", "InputEvents"} <= names else UploadKind.UNKNOWN
    head = _head_text(data)
    if head is None:
        return UploadKind.UNKNOWN
    first = next((line.strip() for line in head.splitlines() if line.strip()), "")
    if not first:
        return UploadKind.UNKNOWN
    if lower.endswith((".csv", ".tsv")):
        header = {h.strip().strip('"') for h in first.replace("\t", ",").split(",")}
        if markers & header:
            return UploadKind.CAPTURE
        if "properties_s" in header or looks_like_azure_metrics(head.encode("utf-8")):
            return UploadKind.LOG  # Log Analytics' diagnostics or AzureMetrics export
        return UploadKind.UNKNOWN
    try:
        value = json.loads(first)
    except ValueError:
        return UploadKind.LOG  # a multi-line document or a broken line: the reader decides
    if isinstance(value, dict) and markers & set(value) and "properties" not in value:
        return UploadKind.CAPTURE
    return UploadKind.LOG


def build_from_uploads(paths: Sequence[Path], out: Path, progress: Progress = _quiet) -> Path:
    """Aggregate uploaded log and metrics files into ``out``, each read as ``orderdoc
    aggregate`` reads a file it is given (an Azure Monitor metrics export or engine metrics
    Parquet as metrics, the rest as logs; by content, whatever the upload's name): see
    :func:`build_from_logs`."""
    kinds = {path: read_as(path) for path in paths}
    logs = [p for p in paths if kinds[p] == "log"]
    metrics = [p for p in paths if kinds[p] == "metrics"]
    skipped = [str(p) for p in paths if kinds[p] == "skip"]
    return build_from_logs(logs, out, progress, metrics=metrics, skipped=skipped)


def build_from_logs(
    logs: Sequence[Path],
    out: Path,
    progress: Progress = _quiet,
    metrics: Sequence[Path] = (),
    skipped: Sequence[str] = (),
) -> Path:
    """Aggregate uploaded log files into ``out``; an InputError when no record is usable.
    ``skipped``: the files an input expansion left out (listed in the summary's
    ``files_skipped``, as the Spark job lists them)."""
    if not logs and not metrics:
        msg = "no files were given: upload ASA diagnostic logs or an event capture"
        raise InputError(msg)
    tables = aggregate_files(logs, metrics, progress, skipped=skipped)
    summary = tables.summary
    if summary["records_parsed"] == 0 and tables.metrics.height == 0:
        reasons = tables.quarantine["reason"].head(1).to_list()
        names = ", ".join(p.name for p in logs)
        detail = f" (first problem: {reasons[0]})" if reasons else ""
        msg = (
            f"{names}: not an ASA diagnostic log or an event capture: no diagnostic record "
            f"could be read, {plural(summary['records_quarantined'], 'record')} rejected{detail}"
        )
        raise InputError(msg)
    progress(0.95, "writing the aggregate tables")
    write_tables(tables, out, {"files_read": len(logs) + len(metrics)})
    progress(1.0, "done")
    return out


@dataclass(frozen=True)
class CaptureSettings:
    """How to replay an uploaded capture: columns and the job's ordering policy."""

    policy: OrderingPolicy
    columns: EventColumns = field(default_factory=EventColumns)
    job: str = UNNAMED_JOB
    #: the columns the user named (``None``: detected as the command line does)
    arrival_col: str | None = None
    partition_col: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON form kept in ``capture/source.json``."""
        p = self.policy
        return {
            "job": self.job,
            "arrival": self.columns.arrival,
            "partition": self.columns.partition,
            "timestamp_by": p.timestamp_by,
            "late_arrival_ns": p.late_arrival_ns,
            "out_of_order_ns": p.out_of_order_ns,
            "action": p.action.value,
            "early_policy": p.early_policy,
            "partition_by": p.partition_by,
            "over": list(p.over),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CaptureSettings:
        """Inverse of :meth:`to_dict`; an InputError names a bad field."""
        try:
            policy = OrderingPolicy(
                timestamp_by=data["timestamp_by"],
                late_arrival_ns=data["late_arrival_ns"],
                out_of_order_ns=int(data["out_of_order_ns"]),
                action=Action(data["action"]),
                early_policy=bool(data["early_policy"]),
                partition_by=bool(data["partition_by"]),
                over=tuple(data["over"]),
            )
            columns = EventColumns(arrival=data["arrival"], partition=data["partition"])
            return cls(policy=policy, columns=columns, job=str(data["job"]))
        except (KeyError, TypeError, ValueError) as exc:
            msg = f"{SOURCE_FILE}: field {exc} is missing or invalid"
            raise InputError(msg) from exc


def build_from_capture(
    events: pl.DataFrame,
    settings: CaptureSettings,
    out: Path,
    progress: Progress = _quiet,
    partitions: Sequence[int] | None = None,
    warnings: Sequence[str] = (),
    deferred: Deferred | None = None,
) -> Path:
    """Replay ``events``, instrument the replay and aggregate its diagnostics into ``out``.
    ``warnings`` (the reader's, e.g. far-off arrivals) and the replay's own (most events
    without a valid application time, far-off application times) go to ``summary.json`` as
    ``capture_warnings``, which the Overview shows. ``deferred``: the capture's columns
    ``events`` lacks (Event Hubs Capture's passthrough columns, kept in the capture cache),
    joined back into the files."""
    from diagnostics.captures.deferred import (
        body_fields_reader,
        rows_with_deferred,
        still_deferred,
    )
    from diagnostics.engine.replay import replay
    from diagnostics.engine.summary import far_off_of, invalid_time_warning
    from diagnostics.engine.watermarks import watermark_delay_per_minute
    from diagnostics.instrument import (
        InstrumentOptions,
        instrument,
        write_diagnostics,
        write_metrics,
    )

    if events.is_empty():
        msg = "the capture has no events"
        raise InputError(msg)
    policy = settings.policy
    if policy.timestamp_by is not None and policy.timestamp_by not in events.columns:
        msg = f"timestamp column '{policy.timestamp_by}' is not in the capture ({', '.join(events.columns)})"
        raise InputError(msg)
    cap = out / CAPTURE_DIR
    cap.mkdir(parents=True, exist_ok=True)
    progress(0.02, f"replaying {events.height:,} events: {policy.describe()}")

    def step(done: int, total: int) -> None:
        progress(0.05 + 0.55 * done / max(total, 1), f"replayed {done:,} of {total:,} events")

    try:
        result = replay(
            events, policy, partitions=partitions, columns=settings.columns, progress=step
        )
        invalid = invalid_time_warning(result)
        far, fate = far_off_of(result.outcomes, policy, body_fields_reader(deferred, events))
        progress(0.65, "computing the watermark delay per minute")
        delay = watermark_delay_per_minute(result)
        progress(0.75, "writing ASA diagnostics records and metrics")
        deferred = still_deferred(deferred, events)
        inputs = result.outcomes.width - len(OUTCOME_COLUMNS)
        done = instrument(
            result.outcomes,
            InstrumentOptions(job=settings.job, key_columns=policy.over),
            policy_text=f"{policy.describe()}|{policy!r}",
            partitions=tuple(result.partitions),
            watermark_delay=delay,
            example_rows=rows_with_deferred(result.outcomes, deferred, inputs),
        )
    except OrderdocError as exc:
        raise InputError(str(exc)) from exc
    write_diagnostics(cap / "diagnostics.jsonl", done.records)
    write_metrics(cap / "metrics.parquet", done.metrics)
    write_outcomes_file(cap / "events.parquet", events, deferred, events.width)
    write_outcomes_file(cap / OUTCOMES_FILE, result.outcomes, deferred, inputs)
    info = {**settings.to_dict(), "partitions": list(result.partitions), "events": events.height}
    (cap / SOURCE_FILE).write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
    progress(0.85, "aggregating the diagnostics")
    tables = aggregate_files([cap / "diagnostics.jsonl"], [cap / "metrics.parquet"])
    said = [*warnings, *([] if invalid is None else [invalid]), *(far.lines(fate) if far else ())]
    extra = {"files_read": 2, "capture_events": events.height, "capture_warnings": said}
    write_tables(tables, out, extra)
    progress(1.0, "done")
    return out


#: Row for row with ``events.parquet``: which events hold the TIMESTAMP BY field as null
#: rather than not at all (written when the capture's format can tell: JSON Lines, Avro)
HELD_NULL_FILE = "held_null.parquet"


@dataclass(frozen=True)
class CaptureContext:
    """The capture behind an aggregate folder, when the app built it from one."""

    settings: CaptureSettings
    partitions: tuple[int, ...]
    events_path: Path
    #: ``outcomes.parquet``, or an ``outcomes/`` folder (docs/schemas.md)
    outcomes_path: Path

    def held_null(self) -> pl.Series | None:
        """Which events hold the TIMESTAMP BY field as null rather than not at all, row for
        row with the events (``None``: the capture's format could not tell)."""
        path = self.events_path.parent / HELD_NULL_FILE
        if not path.is_file():
            return None
        return pl.read_parquet(path).to_series()


def write_held_null(cap_dir: Path, held: pl.Series | None) -> None:
    """Keep ``held`` (see :meth:`CaptureContext.held_null`) beside the capture's events;
    none: remove an earlier one."""
    path = cap_dir / HELD_NULL_FILE
    if held is None:
        path.unlink(missing_ok=True)
    else:
        pl.DataFrame({"held_null": held}).write_parquet(path)


def capture_context(agg_dir: Path) -> CaptureContext | None:
    """The capture context of ``agg_dir`` (``None`` when it was not built from a capture)."""
    cap = agg_dir / CAPTURE_DIR
    source = cap / SOURCE_FILE
    if not source.is_file():
        return None
    try:
        data = json.loads(source.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        msg = f"{source}: not readable ({exc})"
        raise InputError(msg) from exc
    return CaptureContext(
        settings=CaptureSettings.from_dict(data),
        partitions=tuple(int(p) for p in data.get("partitions", ())),
        events_path=cap / "events.parquet",
        outcomes_path=outcomes_in(cap) or cap / OUTCOMES_FILE,
    )
