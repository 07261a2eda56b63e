"""The Load page's capture settings taken from what was loaded.

The fields (TIMESTAMP BY column, tolerances, action, PARTITION BY, OVER) show the loaded job
definition's policy; without one, the TIMESTAMP BY column the capture's columns name (an
event-time column such as ``eventTime``, never an arrival column); without either, they are
empty. Nothing here remembers a bundled sample's settings.

The capture's columns are read from the head of the upload only (a CSV header, the first
JSON line, a Parquet schema, one Event Hubs Capture file), so that choosing a large capture
does not read it twice.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from diagnostics.appdata.build import _head_text
from diagnostics.captures.detect import ARRIVAL_DEFAULT, ASA_ARRIVALS, PROCESSED
from diagnostics.durations import SECOND
from diagnostics.engine.policy import Action, OrderingPolicy
from diagnostics.errors import OrderdocError


@dataclass(frozen=True)
class FormValues:
    """The values of the capture settings fields, and what they were taken from (in words).

    ``late_arrival_s`` is ``None`` for an unlimited tolerance; ``timestamp_by`` is ``""`` for
    arrival time (the field left empty)."""

    source: str
    timestamp_by: str = ""
    late_arrival_s: int | None = 5
    out_of_order_s: int = 0
    action: Action = Action.ADJUST
    partition_by: bool = False
    over: tuple[str, ...] = ()


#: The fields' values when nothing is loaded: ASA's defaults, arrival time.
EMPTY = FormValues(source="nothing loaded")


def from_policy(policy: OrderingPolicy, source: str) -> FormValues:
    """The fields showing ``policy`` (a job definition's)."""
    late = policy.late_arrival_ns
    return FormValues(
        source=source,
        timestamp_by=policy.timestamp_by or "",
        late_arrival_s=None if late is None else late // SECOND,
        out_of_order_s=policy.out_of_order_ns // SECOND,
        action=policy.action,
        partition_by=policy.partition_by,
        over=policy.over,
    )


#: Columns that hold when an event arrived or was processed, never its application time.
NOT_EVENT_TIME = frozenset(
    _name.lower()
    for _name in (ARRIVAL_DEFAULT, PROCESSED, *(name for name, _ in ASA_ARRIVALS), "IoTHub")
)
_WORD = re.compile(r"[^a-z0-9]")
#: Column names (lower case, letters and digits only) that name an event's own time.
EVENT_TIME_NAMES = (
    "eventtime",
    "eventtimestamp",
    "eventdatetime",
    "eventtimeutc",
    "timestamp",
    "ts",
    "time",
    "datetime",
    "sendtime",
    "senttime",
    "createdat",
    "measuredat",
    "readingtime",
)


def event_time_column(columns: Sequence[str]) -> str | None:
    """The column of ``columns`` that names the events' own time, for TIMESTAMP BY: the
    first by :data:`EVENT_TIME_NAMES` order (case and ``_``/``.`` ignored), never an arrival
    or processing column (``EventEnqueuedUtcTime``, ``arrival_time``, ...); ``None`` when no
    column is named like one."""
    usable = {
        _WORD.sub("", c.lower()): c
        for c in reversed(list(columns))
        if c.lower() not in NOT_EVENT_TIME
    }
    for name in EVENT_TIME_NAMES:
        if name in usable:
            return usable[name]
    return None


def capture_columns(name: str, data: bytes) -> tuple[str, ...]:
    """The columns of an uploaded capture table, from its head: a CSV header, the keys of
    the first JSON line, or a Parquet schema (empty when they cannot be told cheaply, as for
    Avro files or a broken head)."""
    lower = name.lower().removesuffix(".gz")
    if data[:4] == b"PAR1" or lower.endswith((".parquet", ".pq")):
        try:
            return tuple(pq.read_schema(io.BytesIO(data)).names)
        except (OSError, ValueError, pa.ArrowException):
            return ()
    if data[:4] == b"Obj\x01" or lower.endswith(".avro"):
        return _avro_columns(name, data)
    head = _head_text(data)
    if head is None:
        return ()
    first = next((line.strip() for line in head.splitlines() if line.strip()), "")
    if lower.endswith((".csv", ".tsv")):
        return tuple(h.strip().strip('"') for h in first.replace("\t", ",").split(","))
    try:
        value = json.loads(first)
    except ValueError:
        return ()
    return tuple(str(k) for k in value) if isinstance(value, dict) else ()


def _avro_columns(name: str, data: bytes) -> tuple[str, ...]:
    """The columns of one Event Hubs Capture file's events (their JSON bodies' fields)."""
    from diagnostics.captures.reader import read_capture_bytes

    try:
        return tuple(read_capture_bytes(name, data).events.columns)
    except (OrderdocError, OSError, ValueError):
        return ()


def from_columns(columns: Sequence[str], source: str) -> FormValues:
    """The fields for a capture without a job definition: ASA's default tolerances and the
    TIMESTAMP BY column the capture's columns name (empty: arrival time)."""
    return FormValues(source=source, timestamp_by=event_time_column(columns) or "")


def path_columns(path: Path) -> tuple[str, ...]:
    """The columns of a capture file on this machine, from its head (see
    :func:`capture_columns`), or of the first file of an Event Hubs Capture folder; empty
    when they cannot be read."""
    try:
        if path.is_dir():
            first = next(iter(sorted(path.rglob("*.avro"))), None)
            return () if first is None else _avro_columns(first.name, first.read_bytes())
        if not path.is_file():
            return ()
        if path.name.lower().endswith((".parquet", ".pq")):
            return tuple(pq.read_schema(path).names)
        with path.open("rb") as handle:
            return capture_columns(path.name, handle.read(65536))
    except (OSError, ValueError, pa.ArrowException):
        return ()
