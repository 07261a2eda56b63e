"""Event Hubs Capture files (Avro, schema ``EventData``) as a table of events.

Columns, named as ASA names them: ``PartitionId`` (from the ``{PartitionId}`` path segment),
``EventEnqueuedUtcTime`` (the arrival time: ``SystemProperties["x-opt-enqueued-time"]``,
epoch milliseconds, else ``EnqueuedTimeUtc``, which Capture writes as ``11/5/2021 1:25:22 PM``),
``SequenceNumber``, ``Offset``, the top-level fields of the JSON ``Body`` (nested objects as
structs, addressable with dots), ``Properties`` and ``SystemProperties`` as JSON text. A body
that is not a JSON object (or a null body) gives an event without body fields: under
``TIMESTAMP BY`` its application time is invalid (dropped and counted, never a crash).

Files are read in partition order, then path-time order; records in file order. A file that
cannot be read (truncated, not Avro, not Capture's schema) stops the read with a one-line
error naming it: a replay of the other files alone would report wrong outcomes.
"""

from __future__ import annotations

import base64
import datetime as dt
import io
import json
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import fastavro
import polars as pl

from diagnostics.captures.detect import ASA_PARTITION, EVENT_HUBS_ARRIVAL, Setting, SettingError
from diagnostics.captures.names import Rename, RenameReason, rename_taken
from diagnostics.errors import InputError

DEFAULT_PATH_FORMAT = (
    "{Namespace}/{EventHub}/{PartitionId}/{Year}/{Month}/{Day}/{Hour}/{Minute}/{Second}"
)
_PLACEHOLDERS = {
    "Namespace": r"[^/]+",
    "EventHub": r"[^/]+",
    "PartitionId": r"\d+",
    "Year": r"\d{4}",
    "Month": r"\d{1,2}",
    "Day": r"\d{1,2}",
    "Hour": r"\d{1,2}",
    "Minute": r"\d{1,2}",
    "Second": r"\d{1,2}",
}
_TIME_KEYS = ("Year", "Month", "Day", "Hour", "Minute", "Second")
ENQUEUED_MS = "x-opt-enqueued-time"
#: What Capture writes in every record (Body may be null).
REQUIRED_FIELDS = ("SequenceNumber", "Offset", "EnqueuedTimeUtc", "Body")
#: The columns of a Capture table besides the body fields, in order.
CAPTURE_COLUMNS = (ASA_PARTITION, EVENT_HUBS_ARRIVAL, "SequenceNumber", "Offset")
PROPERTY_COLUMNS = ("Properties", "SystemProperties")
_US_TIME = "%m/%d/%Y %I:%M:%S %p"

#: Capture's Avro schema (for writing samples and tests).
EVENT_DATA_SCHEMA: dict[str, Any] = {
    "type": "record",
    "name": "EventData",
    "namespace": "Microsoft.ServiceBus.Messaging",
    "fields": [
        {"name": "SequenceNumber", "type": "long"},
        {"name": "Offset", "type": "string"},
        {"name": "EnqueuedTimeUtc", "type": "string"},
        {"name": "SystemProperties", "type": {"type": "map", "values": ["long", "double", "string", "bytes"]}},
        {"name": "Properties", "type": {"type": "map", "values": ["long", "double", "string", "bytes", "null"]}},
        {"name": "Body", "type": ["null", "bytes"]},
    ],
}  # fmt: skip


@dataclass(frozen=True, slots=True)
class CaptureFile:
    """One Capture file, its partition (from the path) and its path time."""

    path: Path
    partition: int | None
    time: tuple[int, ...]
    data: bytes | None = None  # an upload's content (``path`` then only names it)


def path_regex(path_format: str) -> re.Pattern[str]:
    """The pattern a file path (without ``.avro``) must end with; a :class:`SettingError`
    if ``path_format`` names an unknown placeholder or lacks ``{PartitionId}``."""
    parts = re.split(r"\{([^}]*)\}", path_format.strip("/"))
    pattern = ""
    seen = set()
    for i, part in enumerate(parts):
        if i % 2 == 0:
            pattern += re.escape(part)
            continue
        if part not in _PLACEHOLDERS:
            msg = (
                f"capture path format '{path_format}': unknown placeholder {{{part}}}; use "
                f"{', '.join('{' + p + '}' for p in _PLACEHOLDERS)}"
            )
            raise SettingError(msg, Setting.PATH_FORMAT)
        group = f"(?P<{part}>{_PLACEHOLDERS[part]})" if part not in seen else f"(?P={part})"
        seen.add(part)
        pattern += group
    if "PartitionId" not in seen:
        msg = f"capture path format '{path_format}' has no {{PartitionId}}"
        raise SettingError(msg, Setting.PATH_FORMAT)
    return re.compile(r"(?:^|/)" + pattern + r"$")


def capture_files(root: Path, path_format: str = DEFAULT_PATH_FORMAT) -> list[CaptureFile]:
    """The ``.avro`` files of ``root`` (a file or a folder), in partition then path-time order.

    In a folder every file's path must follow ``path_format``; a single file that does not
    follow it is partition 0.
    """
    regex = path_regex(path_format)
    paths = sorted(root.rglob("*.avro")) if root.is_dir() else [root]
    if not paths:
        msg = f"{root}: no .avro files in this folder"
        raise InputError(msg)
    found = []
    for path in paths:
        match = regex.search(path.with_suffix("").as_posix())
        if match is None:
            if root.is_dir():
                msg = f"{path}: the path does not follow the capture path format '{path_format}'"
                raise SettingError(msg, Setting.PATH_FORMAT)
            found.append(CaptureFile(path, None, ()))
            continue
        values = match.groupdict()
        time = tuple(int(values[k]) for k in _TIME_KEYS if values.get(k) is not None)
        found.append(CaptureFile(path, int(values["PartitionId"]), time))
    return sorted(found, key=lambda f: (f.partition or 0, f.time, f.path.as_posix()))


def _json_value(value: object) -> object:
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            return "base64:" + base64.b64encode(value).decode("ascii")
    msg = f"{type(value).__name__} is not JSON serializable"
    raise TypeError(msg)


def _properties(value: object) -> str | None:
    return None if value is None else json.dumps(value, default=_json_value, sort_keys=True)


def _body(value: object) -> dict[str, Any] | None:
    """The body's JSON object (``None``: null, not UTF-8 JSON, or not an object)."""
    if not isinstance(value, bytes | str):
        return None
    try:
        parsed = json.loads(value)
    except (ValueError, UnicodeDecodeError):
        return None
    return parsed if isinstance(parsed, dict) else None


def _text(value: object) -> str | None:
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value)


def _body_fields(bodies: list[dict[str, Any]]) -> pl.DataFrame:
    """The bodies' top-level fields as columns (nested objects as structs). A field whose
    values do not share one type (an object here, a number there) is kept as text (JSON for
    objects and numbers), so no value is lost."""
    names = list(dict.fromkeys(k for b in bodies for k in b))
    columns = []
    for name in names:
        values = [b.get(name) for b in bodies]
        try:
            columns.append(pl.Series(name, values, strict=True))
        except (pl.exceptions.PolarsError, TypeError, ValueError, OverflowError):
            columns.append(pl.Series(name, [_text(v) for v in values], dtype=pl.String))
    return pl.DataFrame(columns) if columns else pl.DataFrame()


def _arrival_ms(record: dict[str, Any]) -> int | None:
    system = record.get("SystemProperties") or {}
    enqueued = system.get(ENQUEUED_MS)
    if isinstance(enqueued, int) and not isinstance(enqueued, bool):
        return enqueued
    text = record.get("EnqueuedTimeUtc")
    if not isinstance(text, str):
        return None
    try:
        parsed = dt.datetime.strptime(text.strip(), _US_TIME).replace(tzinfo=dt.UTC)
    except ValueError:
        try:
            parsed = dt.datetime.fromisoformat(text.strip())
        except ValueError:
            return None
        parsed = parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.UTC)
    return int(parsed.timestamp() * 1000)


def _records(file: CaptureFile) -> Iterator[dict[str, Any]]:
    """The records of one file; an :class:`InputError` names the file and record."""
    count = 0
    try:
        with io.BytesIO(file.data) if file.data is not None else file.path.open("rb") as handle:
            reader = fastavro.reader(handle)
            schema = reader.writer_schema
            names = (
                {f["name"] for f in schema.get("fields", [])} if isinstance(schema, dict) else set()
            )
            missing = [f for f in REQUIRED_FIELDS if f not in names]
            if missing:
                msg = (
                    f"{file.path}: not an Event Hubs Capture file: the Avro schema has no "
                    f"field {', '.join(missing)}"
                )
                raise InputError(msg)
            for record in reader:
                count += 1
                yield record  # type: ignore[misc]
    except InputError:
        raise
    except (OSError, EOFError, ValueError, TypeError, KeyError, IndexError, AssertionError) as exc:
        detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        where = f"after record {count}" if count else "before the first record"
        msg = f"{file.path}: not a readable Avro file ({where}): {detail}; is it truncated?"
        raise InputError(msg) from exc


@dataclass(frozen=True, slots=True)
class AvroTable:
    """A Capture read as a table, the body fields renamed, and what the reader counted."""

    frame: pl.DataFrame
    renames: tuple[Rename, ...]
    files: int
    bodies_without_json: int
    partition_from_path: bool


def read_capture_files(
    files: Sequence[CaptureFile], progress: Callable[[int, int], None] | None = None
) -> AvroTable:
    """The events of ``files`` (see the module docstring); ``progress(files read, files)``."""
    meta: dict[str, list[Any]] = {name: [] for name in (*CAPTURE_COLUMNS, *PROPERTY_COLUMNS)}
    bodies: list[dict[str, Any]] = []
    no_json = 0
    for done, file in enumerate(files):
        for number, record in enumerate(_records(file), start=1):
            arrival = _arrival_ms(record)
            if arrival is None:
                msg = (
                    f"{file.path}, record {number}: no arrival time (no "
                    f"SystemProperties['{ENQUEUED_MS}'] and EnqueuedTimeUtc "
                    f"'{record.get('EnqueuedTimeUtc')}' is not a time)"
                )
                raise InputError(msg)
            body = _body(record.get("Body"))
            no_json += body is None
            bodies.append(body or {})
            meta[ASA_PARTITION].append(file.partition if file.partition is not None else 0)
            meta[EVENT_HUBS_ARRIVAL].append(arrival)
            meta["SequenceNumber"].append(record.get("SequenceNumber"))
            meta["Offset"].append(record.get("Offset"))
            meta["Properties"].append(_properties(record.get("Properties")))
            meta["SystemProperties"].append(_properties(record.get("SystemProperties")))
        if progress is not None:
            progress(done + 1, len(files))
    head = pl.DataFrame(
        {
            ASA_PARTITION: pl.Series(meta[ASA_PARTITION], dtype=pl.Int64),
            EVENT_HUBS_ARRIVAL: pl.Series(meta[EVENT_HUBS_ARRIVAL], dtype=pl.Int64).cast(
                pl.Datetime("ms", "UTC")
            ),
            "SequenceNumber": pl.Series(meta["SequenceNumber"], dtype=pl.Int64),
            "Offset": pl.Series([None if o is None else str(o) for o in meta["Offset"]], dtype=pl.String),
        }
    )  # fmt: skip
    fields, renames = rename_taken(
        _body_fields(bodies), (*CAPTURE_COLUMNS, *PROPERTY_COLUMNS), RenameReason.CAPTURE
    )
    tail = pl.DataFrame({name: pl.Series(meta[name], dtype=pl.String) for name in PROPERTY_COLUMNS})
    parts = [head] + ([fields] if fields.width else []) + [tail]
    return AvroTable(
        frame=pl.concat(parts, how="horizontal"),
        renames=renames,
        files=len(files),
        bodies_without_json=no_json,
        partition_from_path=all(f.partition is not None for f in files),
    )
