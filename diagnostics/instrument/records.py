"""Render aggregates and idle notices as ASA diagnostics records (resource or activity form).

Resource-log records carry ASA's envelope (``time``, ``resourceId``, ``category``,
``operationName``, ``level``, ``properties``); activity-log records carry ``message Time``,
``message``, ``type`` and ``correlation ID`` shaped like the documented examples. Both forms
add one top-level ``orderdoc`` object with the extras (partition, lateness statistics, key
count, correlation ID) that an ASA-only reader ignores. Records are new dicts; nothing is
mutated after construction.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from diagnostics.instrument import timefmt
from diagnostics.instrument.options import InstrumentOptions
from diagnostics.kinds import ErrorKind

CATEGORY = "Execution"
OPERATION = "Process Events"
DATA_ERROR_LEVEL = "Information"
NOTICE_LEVEL = "Warning"

_BRIEF_FIXED = {
    ErrorKind.OUT_OF_ORDER.value: "Out of order event(s) received.",
    ErrorKind.INVALID_TIMESTAMP.value: (
        "Input event has a missing or invalid application timestamp (TIMESTAMP BY); "
        "the event was dropped."
    ),
    ErrorKind.INVALID_KEY.value: (
        "Input event has a missing TIMESTAMP BY OVER key; the event was dropped."
    ),
}


def brief_message(kind: str, application_ns: int | None, arrival_ns: int) -> str:
    """ASA's ``BriefMessage`` for ``kind``, quoting the example event's times."""
    if kind in _BRIEF_FIXED or application_ns is None:
        return _BRIEF_FIXED.get(kind, f"Input event raised a data error of kind '{kind}'.")
    app = timefmt.iso_ticks_naive(application_ns)
    arr = timefmt.iso_ticks_naive(arrival_ns)
    if kind == ErrorKind.EARLY.value:
        return (
            f"Input event arrival time '{arr}' is earlier than input event application "
            f"timestamp '{app}' by more than 5 minutes."
        )
    return (
        f"Input event with application timestamp '{app}' and arrival time '{arr}' "
        "was sent later than configured tolerance."
    )


def data_error_message(source: str, kind: str, count: int, from_ns: int, to_ns: int) -> str:
    """ASA's ``Message`` prefix: "Source 'X' had N data errors of kind 'K' between ..."."""
    return (
        f"Source '{source}' had {count} data errors of kind '{kind}' between processing times "
        f"'{timefmt.iso_ticks(from_ns)}' and '{timefmt.iso_ticks(to_ns)}'."
    )


def notice_message(partition: int, minutes: int) -> str:
    """ASA's ``InputPartitionNotProgressing`` text (docs/semantics.md, "Diagnostics ASA writes")."""
    return (
        f"Input Partition [{partition}] does not have additional data for more than "
        f"[{minutes}] minute(s). Partition will not progress until either events arrive or "
        "late arrival threshold is met."
    )


def _stats(row: Mapping[str, Any]) -> dict[str, float] | None:
    if row["lateness_min"] is None:
        return None
    return {name: row[f"lateness_{name}"] for name in ("min", "p50", "p95", "max")}


def data_error_record(
    row: Mapping[str, Any],
    example: str,
    options: InstrumentOptions,
    correlation: str,
    key_columns: tuple[str, ...],
) -> dict[str, Any]:
    """One aggregate (a row of ``aggregate_errors``) as a resource-log or activity record."""
    kind = row["kind"]
    brief = brief_message(kind, row["example_application_ns"], row["example_arrival_ns"])
    message = data_error_message(
        options.source, kind, row["event_count"], row["from_ns"], row["to_ns"]
    )
    window_start = row["window"] * options.error_window_ns
    extra = {
        "partition_id": row["partition"],
        "lateness_seconds": _stats(row),
        "distinct_keys": row["distinct_keys"],
        "key_columns": list(key_columns),
        "example_event_id": row["example_event_id"],
        "window_start": timefmt.iso_ticks(window_start),
        "window_end": timefmt.iso_ticks(window_start + options.error_window_ns),
        "correlation_id": correlation,
    }
    return data_error_envelope(
        options,
        kind=kind,
        brief=brief,
        message=message,
        example=example,
        from_ns=row["from_ns"],
        to_ns=row["to_ns"],
        count=row["event_count"],
        correlation=correlation,
        extra=extra,
    )


def data_error_envelope(
    options: InstrumentOptions,
    *,
    kind: str,
    brief: str,
    message: str,
    example: str,
    from_ns: int,
    to_ns: int,
    count: int,
    correlation: str,
    extra: dict[str, Any],
) -> dict[str, Any]:
    """One aggregated data error in ASA's resource-log envelope (or, with
    ``--log-format activity``, as an activity-log message), orderdoc's extras beside it."""
    if options.log_format == "activity":
        return {
            "message Time": timefmt.activity_short(to_ns),
            "error": None,
            "message": (
                f"First Occurred: {timefmt.first_occurred(to_ns)} | Resource Name: "
                f"{options.job} | Message: {message} {brief}"
            ),
            "type": "DiagnosticMessage",
            "correlation ID": correlation,
            "orderdoc": extra,
        }
    return {
        "time": timefmt.iso_ticks(to_ns),
        "resourceId": options.resource_id,
        "category": CATEGORY,
        "operationName": OPERATION,
        "level": DATA_ERROR_LEVEL,
        "properties": {
            "Source": options.source,
            "Type": "DataError",
            "DataErrorType": kind,
            "BriefMessage": brief,
            "Message": f"{message} {brief}",
            "ExampleEvents": example,
            "FromTimestamp": timefmt.iso_ticks(from_ns),
            "ToTimestamp": timefmt.iso_ticks(to_ns),
            "EventCount": count,
        },
        "orderdoc": extra,
    }


def notice_record(
    row: Mapping[str, Any], options: InstrumentOptions, correlation: str
) -> dict[str, Any]:
    """One idle notice (a row of ``idle_notices``) as a resource-log or activity record."""
    message = notice_message(row["partition"], row["idle_minutes"])
    kind = ErrorKind.PARTITION_NOT_PROGRESSING.value
    extra = {
        "partition_id": row["partition"],
        "idle_since": timefmt.iso_ticks(row["idle_since_ns"]),
        "idle_seconds": (row["notice_ns"] - row["idle_since_ns"]) / 1e9,
        "notice_index": row["notice_index"],
        "correlation_id": correlation,
    }
    if options.log_format == "activity":
        return {
            "message Time": timefmt.activity_us(row["notice_ns"]),
            "message": message,
            "type": kind,
            "correlation ID": correlation,
            "orderdoc": extra,
        }
    return {
        "time": timefmt.iso_ticks(row["notice_ns"]),
        "resourceId": options.resource_id,
        "category": CATEGORY,
        "operationName": OPERATION,
        "level": NOTICE_LEVEL,
        "properties": {"Source": options.source, "Type": kind, "Message": message},
        "orderdoc": extra,
    }


def dumps(record: Mapping[str, Any]) -> str:
    """One JSON line (no trailing newline), keys in construction order."""
    return json.dumps(record, ensure_ascii=False, separators=(",", ":"))
