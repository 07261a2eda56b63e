"""Normalising one decoded log record (any ASA shape) into a :class:`DataError`.

Recognised record forms (docs/schemas.md, "Aggregate folder"):

* resource logs: ``time``, ``resourceId``, ``level``, ``properties`` (an object or a JSON
  string) with ``DataErrorType``, ``Type: DataError`` / ``DiagnosticMessage`` (the kind in
  the message text) or ``Type: InputPartitionNotProgressing``; our engine's output adds a
  top-level ``orderdoc`` object (``partition_id``, ``correlation_id``);
* activity-log messages: ``message Time``, ``message``, ``type``, ``correlation ID``, on
  their own or as the ``properties`` of an envelope;
* Log Analytics ``AzureDiagnostics`` rows (``TimeGenerated``, ``ResourceId`` or
  ``_ResourceId``, ``Level``, ``properties_s``): CSV rows passed in as a ``dict`` of
  column → text, or the objects of a JSON export of the same query;
* a text line carrying an ASA message: a portal notification (``[17:22:00] Source 'in' had
  58 occurrences of kind 'K' between times 'A' and 'B'.``), or a message pasted from a JSON
  view (``"Message": "First Occurred: ... | Message: Source ...",``), passed in as a ``str``
  (:func:`~diagnostics.logs.messages.message_text`).

Keys are matched ignoring case, spaces and underscores (``Correlation ID``,
``correlationId`` and ``correlation_id`` are one key), as Azure's exports spell them
differently. A data-error record that states no count is parsed with ``event_count`` null and
``count_known`` false. The job is its resource id lower-cased (``job_id``; Azure resource ids
are case-insensitive) and its name in its real casing when the record shows it
(``properties.JobName``, ``Resource Name:``, an ARM-cased id), else upper-cased as ASA writes
it (:mod:`diagnostics.logs.jobs`).
Anything else, or a recognised record with a mistyped field, is quarantined with a reason
naming the field, its value and why.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import json
import re

from diagnostics.kinds import ErrorKind, normalise_kind
from diagnostics.logs import lifecycle, messages
from diagnostics.logs.fields import Fields as _Fields
from diagnostics.logs.fields import Reject as _Reject
from diagnostics.logs.fields import key_of, type_name
from diagnostics.logs.jobs import JobRef, job_ref
from diagnostics.logs.records import DATA_ERROR_COLUMNS, DataError, Quarantined, quarantine
from diagnostics.timestamps import TIME_RANGE, in_time_range

#: The times of a data-error record that place it (its example times only describe it).
#: The record's times, and how ASA's logs call them (what a quarantine reason names).
RECORD_TIMES = {
    "record_time": "the record's time",
    "from_time": "its FromTimestamp",
    "to_time": "its ToTimestamp",
}

_IDLE = ErrorKind.PARTITION_NOT_PROGRESSING.value
_DIGITS = re.compile(r"\s*[0-9]+\s*")
_INT64_MAX = 2**63 - 1
#: Record times, most specific first (``TimeGenerated [UTC]`` is the CSV export's column).
_TIME_KEYS = ("time", "timegeneratedutc", "timegenerated", "eventtimestamp", "messagetime")
#: ``level`` values as written (the schema's ``Informational``, the data-errors page's
#: ``Information``) mapped to one spelling.
_LEVELS = {
    "information": "Informational",
    "informational": "Informational",
    "warning": "Warning",
    "error": "Error",
    "critical": "Critical",
    "verbose": "Verbose",
}


def _count(value: object, field: str) -> int | None:
    if value is None or value == "":
        return None
    if isinstance(value, bool) or not isinstance(value, int | str):
        msg = f"{field}: expected a non-negative integer, got {type_name(value)}"
        raise _Reject(msg)
    if isinstance(value, str):
        if not _DIGITS.fullmatch(value) or len(value) > 40:
            msg = f"{field}: {value[:40]!r} is not a non-negative integer"
            raise _Reject(msg)
        return _in_range(int(value), field)
    if value < 0:
        msg = f"{field}: {value} is negative"
        raise _Reject(msg)
    return _in_range(value, field)


def _in_range(value: int, field: str) -> int:
    """Counts and partition numbers are stored as Int64: larger values are quarantined."""
    if value > _INT64_MAX:
        msg = f"{field}: {str(value)[:40]} is larger than a 64-bit integer"
        raise _Reject(msg)
    return value


def _partition(value: object, field: str) -> int | None:
    if value is None or value == "":
        return None
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return _in_range(value, field)
    if isinstance(value, str) and _DIGITS.fullmatch(value) and len(value) <= 40:
        return _in_range(int(value), field)
    msg = f"{field}: {str(value)[:40]!r} is not a partition number"
    raise _Reject(msg)


def _check_storable(row: DataError | lifecycle.JobEvent) -> None:
    """Quarantine what no table can store instead of failing when the tables are written:
    text that is not valid UTF-8 (a lone surrogate from a JSON escape such as ``\\ud800``)
    and numbers beyond a 64-bit integer (e.g. parsed from a message text). A record time
    before 1900 or after 2150 (a clock or an export error) is quarantined too: the tables and
    the rules' windows would otherwise span centuries (``diagnostics.timestamps``)."""
    items = (
        zip(DATA_ERROR_COLUMNS, row, strict=True)
        if isinstance(row, DataError)
        else ((f.name, getattr(row, f.name)) for f in dataclasses.fields(row))
    )
    for name, value in items:
        if name in RECORD_TIMES and isinstance(value, dt.datetime) and not in_time_range(value):
            msg = (
                f"{RECORD_TIMES[name]}, {value.isoformat()}, is outside {TIME_RANGE}, the "
                "times orderdoc replays and aggregates (a clock or an export error?)"
            )
            raise _Reject(msg)
        if isinstance(value, str):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError as exc:
                msg = f"{name}: text with an unpaired surrogate ({exc.reason})"
                raise _Reject(msg) from exc
        elif isinstance(value, int) and not isinstance(value, bool):
            _in_range(value, name)


def _storable(row: DataError) -> DataError:
    """``row``, checked by :func:`_check_storable`."""
    _check_storable(row)
    return row


class _NoKind(_Reject):
    """Internal: the record carries no data error and no idle notice (it may be a job
    lifecycle record, :mod:`diagnostics.logs.lifecycle`)."""


@functools.lru_cache(maxsize=4096)
def job_of(resource: str | None, named: str | None = None) -> JobRef:
    """:func:`diagnostics.logs.jobs.job_ref`, cached (a file names few jobs, many times)."""
    return job_ref(resource, named)


def _level(value: str | None) -> str | None:
    return None if value is None else _LEVELS.get(value.strip().lower(), value)


def _properties(envelope: _Fields) -> _Fields:
    key = "properties" if "properties" in envelope else "propertiess"
    props = envelope.raw(key)
    if key == "propertiess" and props is None:
        raise _Reject(f"{envelope.label(key)}: empty")
    if isinstance(props, str):
        try:
            props = json.loads(props)
        except ValueError as exc:
            msg = f"{envelope.label(key)}: a string that is not JSON ({exc})"
            raise _Reject(msg) from exc
    if not isinstance(props, dict):
        msg = f"{envelope.label(key)}: expected an object or a JSON string, got {type_name(props)}"
        raise _Reject(msg)
    return _Fields(props, "properties.")


def _kind(props: _Fields, text: str, aggregate: messages.AggregateText | None) -> str:
    """The record's kind: ``DataErrorType``, an idle notice, or the kind named in the text."""
    error_type = props.text("dataerrortype")
    if error_type:
        return normalise_kind(error_type)
    record_type = props.text("type")
    if record_type is not None and key_of(record_type) == key_of(_IDLE):
        return _IDLE
    if messages.parse_idle(text) is not None:
        return _IDLE
    if aggregate is not None:
        return normalise_kind(aggregate.kind)
    if record_type is not None and key_of(record_type) == "dataerror":
        msg = (
            f"{props.label('dataerrortype')}: missing on a DataError record and no kind in its text"
        )
        raise _Reject(msg)
    if props.raw("message") is None and props.raw("briefmessage") is None:
        msg = f"{props.label('type')}: {record_type!r} record without a message"
        raise _NoKind(msg)
    msg = f"{props.label('message')}: record of type {record_type!r} names no data-error kind"
    raise _NoKind(msg)


def _record(
    envelope: _Fields, props: _Fields, source_file: str, source_line: int, *, text: bool = False
) -> DataError:
    """One record from its envelope and its properties (the same object for a bare
    activity-log message). A ``text`` record (a portal notification, whose clock time has
    no date, or a pasted message) takes its time from the end of the range it names, else
    from its ``First Occurred:``."""
    extras_value = envelope.raw("orderdoc")
    if extras_value is not None and not isinstance(extras_value, dict):
        msg = f"{envelope.label('orderdoc')}: expected an object, got {type_name(extras_value)}"
        raise _Reject(msg)
    extras = _Fields(extras_value or {}, "orderdoc.")
    message = props.text("message") or ""
    brief = props.text("briefmessage") or ""
    aggregate = messages.parse_aggregate(message) or messages.parse_aggregate(brief)
    kind = _kind(props, f"{message} {brief}", aggregate)
    record_time = envelope.time(*_TIME_KEYS) or props.time("messagetime", "time")
    from_time = props.time("fromtimestamp")
    to_time = props.time("totimestamp")
    if aggregate is not None:
        from_time = from_time or aggregate.from_time
        to_time = to_time or aggregate.to_time
    if text:
        record_time = to_time or from_time or messages.parse_first_occurred(message)
        if record_time is None:
            raise _Reject(
                "message: an ASA message as text without a date "
                "(no 'between times' range, no 'First Occurred:')"
            )
    if record_time is None:
        raise _Reject(f"{envelope.label('time')}: missing")
    partition = _partition(extras.raw("partitionid"), "orderdoc.partition_id")
    if partition is None:
        partition = _partition(props.raw("partitionid"), props.label("partitionid"))
    idle_minutes = None
    count: int | None = None
    if kind == _IDLE:
        idle = messages.parse_idle(message) or messages.parse_idle(brief)
        if idle is not None:
            partition = idle.partition_id if partition is None else partition
            idle_minutes = idle.minutes
        count = 1
    else:
        count = _count(props.raw("eventcount"), props.label("eventcount"))
        if count is None and aggregate is not None:
            count = aggregate.count
    example = messages.parse_example(brief) or messages.parse_example(message)
    source = props.text("source") or (aggregate.source if aggregate else None)
    resource = envelope.text("resourceid") or envelope.text("resource")
    named = props.raw("jobname") or envelope.raw("jobname")
    if not isinstance(named, str):  # a name in a field of another type is no name
        named = None
    job = job_of(resource, named or messages.parse_resource_name(message))
    return _storable(
        DataError(
            job=job.name,
            job_id=job.job_id,
            source=source,
            partition_id=partition,
            kind=kind,
            event_count=count,
            count_known=count is not None,
            record_time=record_time,
            from_time=from_time,
            to_time=to_time,
            example_application_time=example.application_time if example else None,
            example_arrival_time=example.arrival_time if example else None,
            lateness_seconds=example.lateness_seconds if example else None,
            idle_minutes=idle_minutes,
            level=_level(envelope.text("level") or props.text("level")),
            correlation_id=envelope.text("correlationid")
            or props.text("correlationid")
            or extras.text("correlationid"),
            column_name=None
            if kind == _IDLE
            else messages.parse_column(brief) or messages.parse_column(message),
            source_file=source_file,
            source_line=source_line,
        )
    )


def _job_event(
    envelope: _Fields, props: _Fields | None, source_file: str, source_line: int
) -> lifecycle.JobEvent:
    """A job lifecycle record (:mod:`diagnostics.logs.lifecycle`) from its envelope and its
    properties (if any); quarantined when it is about another resource than a job, has no
    time, or holds what no table can store."""
    category = lifecycle.category_of(envelope, props)
    assert category is not None
    resource = envelope.text("resourceid") or envelope.text("resource")
    operation = lifecycle.operation_of(envelope)
    if resource is not None and not lifecycle.is_job_resource(resource):
        msg = (
            f"{envelope.label('resourceid')}: {resource[:120]!r} is not a Stream Analytics job "
            f"(a {category} record of another resource)"
        )
        raise _Reject(msg)
    record_time = envelope.time(*_TIME_KEYS) or (props.time("messagetime") if props else None)
    if record_time is None:
        raise _Reject(f"{envelope.label('time')}: missing")
    message = (props.text("message") if props else None) or envelope.text(
        "resultdescription", "description"
    )
    named = (props.raw("jobname") if props else None) or envelope.raw("jobname")
    job = job_of(
        resource,
        named if isinstance(named, str) else messages.parse_resource_name(message or ""),
    )
    status = lifecycle.text_value(envelope.raw("status")) or envelope.text("resulttype")
    correlation = envelope.text("correlationid") or (props.text("correlationid") if props else None)
    event = lifecycle.JobEvent(
        job=job.name,
        job_id=job.job_id,
        record_time=record_time,
        category=category.value,
        operation=operation,
        action=lifecycle.action_of(operation, message).value,
        status=status,
        level=_level(envelope.text("level") or (props.text("level") if props else None)),
        message=message,
        correlation_id=correlation,
        source_file=source_file,
        source_line=source_line,
    )
    _check_storable(event)
    return event


def _normalise(value: object, source_file: str, source_line: int) -> DataError | lifecycle.JobEvent:
    if isinstance(value, str):
        message = messages.message_text(value)
        if message is None:
            raise _Reject("not a diagnostic record: text that carries no ASA message")
        text = _Fields({"message": message})
        return _record(text, text, source_file, source_line, text=True)
    if not isinstance(value, dict):
        msg = f"not a diagnostic record: a JSON {type_name(value)}, not an object"
        raise _Reject(msg)
    envelope = _Fields(value)
    props: _Fields | None = None
    try:
        if "properties" in envelope or "propertiess" in envelope:
            props = _properties(envelope)
            return _record(envelope, props, source_file, source_line)
        if "message" in envelope and ("messagetime" in envelope or "type" in envelope):
            props = envelope
            return _record(envelope, envelope, source_file, source_line)
    except _NoKind:  # no data error in it: a job lifecycle record, or nothing orderdoc reads
        if lifecycle.category_of(envelope, props) is None:
            raise
        return _job_event(envelope, props, source_file, source_line)
    if lifecycle.category_of(envelope, None) is not None:
        return _job_event(envelope, None, source_file, source_line)
    keys = ", ".join(sorted(str(key) for key in value)[:5])
    raise _Reject(f"not a diagnostic record: no properties or message (keys: {keys})")


def normalise(
    value: object, source_file: str, source_line: int, raw: bytes | str, *, csv_row: bool = False
) -> DataError | lifecycle.JobEvent | Quarantined:
    """Normalise one decoded record: a data error (or idle notice), a job lifecycle record
    (:mod:`diagnostics.logs.lifecycle`), or a quarantined record with a reason (never raises).

    ``value`` is the decoded JSON value, a CSV row as a dict of column → text (``csv_row``:
    empty cells are missing values) or a text line; ``raw`` is the record's original text,
    kept (truncated) if it is quarantined.
    """
    try:
        if csv_row and isinstance(value, dict):
            value = {name: cell for name, cell in value.items() if cell != ""}
            if "properties_s" not in value:
                raise _Reject("properties_s: empty")
        return _normalise(value, source_file, source_line)
    except _Reject as exc:
        return quarantine(source_file, source_line, exc.reason, raw)
    except RecursionError:
        return quarantine(source_file, source_line, "record nested too deeply", raw)
