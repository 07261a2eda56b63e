"""Normalising one decoded log record (any ASA shape) into a :class:`DataError`.

Recognised record forms (spec §5):

* resource logs: ``time``, ``resourceId``, ``level``, ``properties`` (an object or a JSON
  string) with ``DataErrorType`` or ``Type: InputPartitionNotProgressing``; our engine's
  output adds a top-level ``orderdoc`` object (``partition_id``, ``correlation_id``);
* activity-log messages: ``message Time``, ``message``, ``type``, ``correlation ID``;
* Log Analytics ``AzureDiagnostics`` rows (``TimeGenerated``, ``ResourceId``, ``Level``,
  ``properties_s``): CSV rows passed in as a ``dict`` of column → text, or the objects of a
  JSON export of the same query.

Anything else, or a recognised record with a missing or mistyped field, is quarantined with
a reason naming the field, its value and why. Kinds are normalised with
:func:`diagnostics.kinds.normalise_kind`.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import re

from diagnostics.kinds import ErrorKind, normalise_kind
from diagnostics.logs import messages
from diagnostics.logs.records import DATA_ERROR_COLUMNS, DataError, Quarantined, quarantine
from diagnostics.logs.times import parse_log_time

_IDLE = ErrorKind.PARTITION_NOT_PROGRESSING.value
_JOB = re.compile(r"/STREAMINGJOBS/([^/]+)", re.IGNORECASE)
_DIGITS = re.compile(r"\s*[0-9]+\s*")
_CSV_TIME = ("TimeGenerated [UTC]", "TimeGenerated", "time")
_CSV_RESOURCE = ("ResourceId", "_ResourceId", "resourceId")


_INT64_MAX = 2**63 - 1
#: A parsed record as a plain tuple, in :data:`DATA_ERROR_COLUMNS` order (the fields of
#: :class:`DataError`): what the readers build Arrow batches from without a dataclass per row.
Row = tuple


class _Reject(Exception):
    """Internal: the record is quarantined for ``reason``."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _type_name(value: object) -> str:
    return "null" if value is None else type(value).__name__


def _opt_str(obj: dict, key: str, where: str = "") -> str | None:
    value = obj.get(key)
    if value is None or isinstance(value, str):
        return value
    msg = f"{where}{key}: expected a string, got {_type_name(value)} {str(value)[:40]}"
    raise _Reject(msg)


def _time(value: object, field: str, *, required: bool) -> dt.datetime | None:
    if value is None or value == "":
        if required:
            raise _Reject(f"{field}: missing")
        return None
    parsed = parse_log_time(value)
    if parsed is None:
        msg = f"{field}: {str(value)[:40]!r} is not a time stamp"
        raise _Reject(msg)
    return parsed


def _count(value: object, field: str) -> int | None:
    if value is None or value == "":
        return None
    if isinstance(value, bool) or not isinstance(value, int | str):
        msg = f"{field}: expected a non-negative integer, got {_type_name(value)}"
        raise _Reject(msg)
    if isinstance(value, str):
        if not _DIGITS.fullmatch(value):
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


def _storable(row: Row) -> Row:
    """Quarantine what no table can store instead of failing when the tables are written:
    text that is not valid UTF-8 (a lone surrogate from a JSON escape such as ``\\ud800``)
    and numbers beyond a 64-bit integer (e.g. parsed from a message text)."""
    job, source, partition, kind, count, *_, idle, level, correlation, file, line = row
    try:  # one encode of all text fields (None renders as "None"), the usual case
        f"{job}{source}{kind}{level}{correlation}{file}".encode()
    except UnicodeEncodeError:
        pass
    else:
        if (
            (partition is None or partition <= _INT64_MAX)
            and count <= _INT64_MAX
            and (idle is None or idle <= _INT64_MAX)
            and line <= _INT64_MAX
        ):
            return row
    for name, value in zip(DATA_ERROR_COLUMNS, row, strict=True):  # which field, in order
        if isinstance(value, str):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError as exc:
                msg = f"{name}: text with an unpaired surrogate ({exc.reason})"
                raise _Reject(msg) from exc
        elif isinstance(value, int) and not isinstance(value, bool):
            _in_range(value, name)
    return row


def _partition(value: object, field: str) -> int | None:
    if value is None or value == "":
        return None
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return _in_range(value, field)
    if isinstance(value, str) and _DIGITS.fullmatch(value):
        return _in_range(int(value), field)
    msg = f"{field}: {str(value)[:40]!r} is not a partition number"
    raise _Reject(msg)


@functools.lru_cache(maxsize=4096)
def _job_from_resource(resource_id: str | None) -> str | None:
    if not resource_id:
        return None
    match = _JOB.search(resource_id)
    return match.group(1) if match else resource_id.rstrip("/").rsplit("/", 1)[-1] or None


def _example(*texts: str | None) -> messages.ExampleTimes | None:
    for text in texts:
        if text:
            found = messages.parse_example(text)
            if found is not None:
                return found
    return None


def _resource_log(obj: dict, source_file: str, source_line: int) -> Row:
    props = obj.get("properties")
    if isinstance(props, str):
        try:
            props = json.loads(props)
        except ValueError as exc:
            msg = f"properties: a string that is not JSON ({exc})"
            raise _Reject(msg) from exc
    if not isinstance(props, dict):
        msg = f"properties: expected an object or a JSON string, got {_type_name(props)}"
        raise _Reject(msg)
    extras = obj.get("orderdoc")
    if extras is not None and not isinstance(extras, dict):
        msg = f"orderdoc: expected an object, got {_type_name(extras)}"
        raise _Reject(msg)
    extras = extras or {}
    record_type = _opt_str(props, "Type", "properties.")
    error_type = _opt_str(props, "DataErrorType", "properties.")
    if error_type:
        kind = normalise_kind(error_type)
    elif record_type == _IDLE:
        kind = _IDLE
    elif record_type == "DataError":
        raise _Reject("properties.DataErrorType: missing on a DataError record")
    else:
        msg = f"properties.Type: {record_type!r} is neither a DataError nor {_IDLE}"
        raise _Reject(msg)
    record_time = _time(obj.get("time"), "time", required=True)
    brief = _opt_str(props, "BriefMessage", "properties.")
    message = _opt_str(props, "Message", "properties.")
    source = _opt_str(props, "Source", "properties.")
    partition = _partition(extras.get("partition_id"), "orderdoc.partition_id")
    if partition is None:
        partition = _partition(props.get("PartitionId"), "properties.PartitionId")
    idle_minutes = None
    aggregate = messages.parse_aggregate(message or "") if message else None
    if kind == _IDLE:
        idle = messages.parse_idle(message or "") or messages.parse_idle(brief or "")
        if idle is not None:
            partition = idle.partition_id if partition is None else partition
            idle_minutes = idle.minutes
        count = 1
    else:
        count = _count(props.get("EventCount"), "properties.EventCount")
        if count is None:
            if aggregate is None:
                raise _Reject("properties.EventCount: missing and not in the message text")
            count = aggregate.count
    from_time = _time(props.get("FromTimestamp"), "properties.FromTimestamp", required=False)
    to_time = _time(props.get("ToTimestamp"), "properties.ToTimestamp", required=False)
    if aggregate is not None:
        from_time = from_time or aggregate.from_time
        to_time = to_time or aggregate.to_time
    example = _example(brief, message)
    correlation = _opt_str(obj, "correlationId") or _opt_str(extras, "correlation_id", "orderdoc.")
    resource_id = _opt_str(obj, "resourceId")
    return (
        _job_from_resource(resource_id) or _opt_str(obj, "Resource"),
        source,
        partition,
        kind,
        count,
        record_time,
        from_time,
        to_time,
        example.application_time if example else None,
        example.arrival_time if example else None,
        example.lateness_seconds if example else None,
        idle_minutes,
        _opt_str(obj, "level"),
        correlation,
        source_file,
        source_line,
    )


def _activity_log(obj: dict, source_file: str, source_line: int) -> Row:
    text = _opt_str(obj, "message") or ""
    record_type = _opt_str(obj, "type")
    record_time = _time(obj.get("message Time"), "message Time", required=True)
    job = messages.parse_resource_name(text)
    level = _opt_str(obj, "level")
    correlation = _opt_str(obj, "correlation ID")
    idle = messages.parse_idle(text)
    if record_type == _IDLE or idle is not None:
        return (
            job, None, idle.partition_id if idle else None, _IDLE, 1, record_time, None, None,
            None, None, None, idle.minutes if idle else None, level, correlation, source_file,
            source_line,
        )  # fmt: skip
    aggregate = messages.parse_aggregate(text)
    if aggregate is None:
        msg = f"message: activity-log record of type {record_type!r} has no data-error text"
        raise _Reject(msg)
    example = _example(text)
    return (
        job, aggregate.source, None, normalise_kind(aggregate.kind), aggregate.count,
        record_time, aggregate.from_time, aggregate.to_time,
        example.application_time if example else None,
        example.arrival_time if example else None,
        example.lateness_seconds if example else None,
        None, level, correlation, source_file, source_line,
    )  # fmt: skip


def _csv_row(row: dict[str, str]) -> dict:
    def first(names: tuple[str, ...]) -> str | None:
        return next((row[name] for name in names if row.get(name)), None)

    if not row.get("properties_s"):
        raise _Reject("properties_s: empty")
    return {
        "time": first(_CSV_TIME),
        "resourceId": first(_CSV_RESOURCE),
        "Resource": row.get("Resource") or None,
        "level": row.get("Level") or None,
        "correlationId": row.get("CorrelationId") or None,
        "properties": row["properties_s"],
    }


def normalise_row(
    value: object, source_file: str, source_line: int, raw: bytes | str, *, csv_row: bool = False
) -> Row | Quarantined:
    """As :func:`normalise`, with a parsed record as a plain :data:`Row` (the fast form)."""
    try:
        if not isinstance(value, dict):
            msg = f"not a diagnostic record: a JSON {_type_name(value)}, not an object"
            raise _Reject(msg)
        if csv_row or ("properties_s" in value and "properties" not in value):
            # a Log Analytics row, from a CSV export or a JSON export of the same query
            return _storable(_resource_log(_csv_row(value), source_file, source_line))
        if "properties" in value:
            return _storable(_resource_log(value, source_file, source_line))
        if "message" in value and ("message Time" in value or "type" in value):
            return _storable(_activity_log(value, source_file, source_line))
        keys = ", ".join(sorted(str(key) for key in value)[:5])
        raise _Reject(f"not a diagnostic record: no properties or message (keys: {keys})")
    except _Reject as exc:
        return quarantine(source_file, source_line, exc.reason, raw)
    except RecursionError:
        return quarantine(source_file, source_line, "record nested too deeply", raw)


def normalise(
    value: object, source_file: str, source_line: int, raw: bytes | str, *, csv_row: bool = False
) -> DataError | Quarantined:
    """Normalise one decoded record, or quarantine it with a reason (never raises).

    ``value`` is the decoded JSON value (or, with ``csv_row``, a dict of CSV column → text);
    ``raw`` is the record's original text, kept (truncated) if it is quarantined.
    """
    outcome = normalise_row(value, source_file, source_line, raw, csv_row=csv_row)
    return DataError(*outcome) if isinstance(outcome, tuple) else outcome
