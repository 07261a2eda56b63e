"""The outcomes of reading one log record: a normalised data error, a job lifecycle record
(:class:`~diagnostics.logs.lifecycle.JobEvent`) or a quarantined record.

Every record a reader meets (a line, a document's element, a CSV row) becomes one of these,
and every part it cannot read (a broken element, the bad elements of an array line together)
one quarantined record (the counting rules: :mod:`diagnostics.logs.reader`), so
``records_total == records_parsed + records_quarantined`` holds by construction (a job event
is a parsed record). :func:`to_arrow` turns a sequence of outcomes into one Arrow batch with
:data:`PARSED_SCHEMA` (``reason`` is null exactly for the quarantined rows' complement, the
parsed ones; ``category`` is set exactly for the job events).
"""

from __future__ import annotations

import datetime as dt
import operator
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import pyarrow as pa

from diagnostics.aggregates.schema import TABLES, TableName, parsed_schema
from diagnostics.logs.lifecycle import JobEvent

#: Raw text kept for a quarantined record, in UTF-8 bytes (the full length is in raw_bytes).
RAW_LIMIT_BYTES = 64 * 1024

#: The unified schema of parsed and quarantined records (one row per record), derived from
#: the table definitions of :mod:`diagnostics.aggregates.schema`.
PARSED_SCHEMA = parsed_schema()

#: Columns of a parsed data error, in table order (``date`` is derived from record_time).
DATA_ERROR_COLUMNS: tuple[str, ...] = TABLES[TableName.DATA_ERRORS].input_columns
QUARANTINE_COLUMNS: tuple[str, ...] = TABLES[TableName.QUARANTINE].input_columns
JOB_EVENT_COLUMNS: tuple[str, ...] = TABLES[TableName.JOB_EVENTS].input_columns

_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_MICROSECOND = dt.timedelta(microseconds=1)
_NAMES = PARSED_SCHEMA.names
_PARSED_TAIL = (None,) * (len(_NAMES) - len(DATA_ERROR_COLUMNS))  # a data error's other columns
_EVENT_ROW = operator.attrgetter(*JOB_EVENT_COLUMNS)
_QUARANTINE_ROW = operator.attrgetter(*QUARANTINE_COLUMNS)


class DataError(NamedTuple):
    """One normalised diagnostic record (a data-error aggregate or an idle notice), a typed
    tuple whose fields are :data:`DATA_ERROR_COLUMNS` in order (what the readers turn into
    Arrow rows without copying).

    Invariants: ``job_id`` is lower-case (a resource id up to the job's name) or ``None``;
    ``job`` is ``None`` only when ``job_id`` is; ``kind`` is normalised (older names mapped); ``event_count >= 0`` when
    ``count_known``, ``None`` otherwise (a record that names no count: at least one event),
    and 1 for an idle notice; ``record_time`` is an aware UTC datetime; ``lateness_seconds``
    is set exactly when both example times are.
    """

    job: str | None
    job_id: str | None
    source: str | None
    partition_id: int | None
    kind: str
    event_count: int | None
    count_known: bool
    record_time: dt.datetime
    from_time: dt.datetime | None
    to_time: dt.datetime | None
    example_application_time: dt.datetime | None
    example_arrival_time: dt.datetime | None
    lateness_seconds: float | None
    idle_minutes: int | None
    level: str | None
    correlation_id: str | None
    column_name: str | None
    source_file: str
    source_line: int


@dataclass(frozen=True, slots=True)
class Quarantined:
    """A record that could not be parsed: where it was, why, and (the start of) its text."""

    source_file: str
    source_line: int
    reason: str
    raw: str
    raw_bytes: int


def quarantine(source_file: str, source_line: int, reason: str, raw: bytes | str) -> Quarantined:
    """A :class:`Quarantined` record keeping at most :data:`RAW_LIMIT_BYTES` of ``raw``."""
    data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
    kept = data[:RAW_LIMIT_BYTES].decode("utf-8", "replace")
    return Quarantined(source_file, source_line, reason, kept, len(data))


def _row(item: DataError | JobEvent | Quarantined) -> tuple[object, ...]:
    """``item`` as a row of :data:`PARSED_SCHEMA` (the columns it does not fill null)."""
    if isinstance(item, DataError):
        return (*item, *_PARSED_TAIL)
    if isinstance(item, JobEvent):
        values = dict(zip(JOB_EVENT_COLUMNS, _EVENT_ROW(item), strict=True))
    else:
        values = dict(zip(QUARANTINE_COLUMNS, _QUARANTINE_ROW(item), strict=True))
    return tuple(values.get(name) for name in _NAMES)


def to_arrow(outcomes: Sequence[DataError | JobEvent | Quarantined]) -> pa.RecordBatch:
    """One Arrow batch with :data:`PARSED_SCHEMA`, a row per outcome, in the given order."""
    rows = [_row(item) for item in outcomes]
    columns = list(zip(*rows, strict=True)) if rows else [()] * len(PARSED_SCHEMA)
    arrays = []
    for field, values in zip(PARSED_SCHEMA, columns, strict=True):
        if pa.types.is_timestamp(field.type):
            # aware datetimes are slow to convert one by one; epoch microseconds are not
            micros = [None if v is None else (v - _EPOCH) // _MICROSECOND for v in values]
            arrays.append(pa.array(micros, pa.int64()).cast(field.type))
        else:
            arrays.append(pa.array(values, type=field.type))
    return pa.RecordBatch.from_arrays(arrays, schema=PARSED_SCHEMA)
