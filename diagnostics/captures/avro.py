"""Event Hubs Capture files (Avro, schema ``EventData``) as a table of events.

Columns, named as ASA names them: ``PartitionId`` (from the ``{PartitionId}`` path segment),
``EventEnqueuedUtcTime`` (the arrival time: ``SystemProperties["x-opt-enqueued-time"]``,
epoch milliseconds, else ``EnqueuedTimeUtc``, which Capture writes as ``11/5/2021 1:25:22 PM``),
``SequenceNumber``, ``Offset``, the top-level fields of the JSON ``Body`` (nested objects as
structs, addressable with dots), ``Properties`` and ``SystemProperties`` as JSON text. A body
that is not a JSON object (or a null body, or one with a key repeated in one object) gives an
event without body fields: under ``TIMESTAMP BY`` its application time is invalid (dropped
and counted, never a crash); its text is kept in a ``Body`` column (UTF-8, else
``base64:...``), which is there when some body is not read as a JSON object. A body field
named like one of these columns is renamed ``input_<name>``; an empty key ``column_N``.

Files are read in partition order, then path-time order; records in file order. A file that
cannot be read (truncated, not Avro, not Capture's schema) stops the read with a one-line
error naming it: a replay of the other files alone would report wrong outcomes.
"""

from __future__ import annotations

import base64
import datetime as dt
import io
import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import fastavro
import polars as pl

from diagnostics.captures.detect import ASA_PARTITION, EVENT_HUBS_ARRIVAL
from diagnostics.captures.jsonl import RepeatedKeyError, unique_keys
from diagnostics.captures.names import Rename, RenameReason, name_empty, rename_taken
from diagnostics.captures.paths import CaptureFile
from diagnostics.errors import InputError

ENQUEUED_MS = "x-opt-enqueued-time"
#: What Capture writes in every record (Body may be null).
REQUIRED_FIELDS = ("SequenceNumber", "Offset", "EnqueuedTimeUtc", "Body")
#: The columns of a Capture table besides the body fields, in order.
CAPTURE_COLUMNS = (ASA_PARTITION, EVENT_HUBS_ARRIVAL, "SequenceNumber", "Offset")
PROPERTY_COLUMNS = ("Properties", "SystemProperties")
#: The raw text of the bodies that are not read as a JSON object (null for the others).
RAW_BODY = "Body"
#: Names a body field may not keep (renamed ``input_<name>``).
CAPTURE_NAMES = (*CAPTURE_COLUMNS, *PROPERTY_COLUMNS, RAW_BODY)
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


def _json_value(value: object) -> object:
    if isinstance(value, bytes):
        return _raw(value)
    msg = f"{type(value).__name__} is not JSON serializable"
    raise TypeError(msg)


def _raw(value: bytes) -> str:
    """Bytes as text: UTF-8, else ``base64:...``."""
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError:
        return "base64:" + base64.b64encode(value).decode("ascii")


def _properties(value: object) -> str | None:
    return None if value is None else json.dumps(value, default=_json_value, sort_keys=True)


@dataclass(frozen=True, slots=True)
class _Body:
    """A body read: its JSON object, else its raw text (``repeated``: it names a key twice)."""

    fields: dict[str, Any] | None
    raw: str | None = None
    repeated: bool = False


def _body(value: object) -> _Body:
    """The body's JSON object, or (null, not UTF-8 JSON, not an object, a key repeated in
    one object) its raw text."""
    if value is None:
        return _Body(None)
    try:
        parsed = json.loads(value, object_pairs_hook=unique_keys)  # type: ignore[arg-type]
    except (ValueError, UnicodeDecodeError, TypeError, RecursionError) as exc:
        raw = _raw(value) if isinstance(value, bytes) else str(value)
        return _Body(None, raw, repeated=isinstance(exc, RepeatedKeyError))
    if isinstance(parsed, dict):
        return _Body(parsed)
    return _Body(None, _raw(value) if isinstance(value, bytes) else str(value))


def _text(value: object) -> str | None:
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value)


def _body_fields(bodies: list[dict[str, Any]]) -> tuple[pl.DataFrame, tuple[Rename, ...]]:
    """The bodies' top-level fields as columns (nested objects as structs), and the empty
    key's rename (``column_N``, N its position among the fields). A field whose values do
    not share one type (an object here, a number there) is kept as text (JSON for objects
    and numbers), so no value is lost."""
    keys = list(dict.fromkeys(k for b in bodies for k in b))
    names = name_empty(keys, CAPTURE_NAMES)
    renames = tuple(
        Rename(key, name, RenameReason.EMPTY_NAME)
        for key, name in zip(keys, names, strict=True)
        if key != name
    )
    columns = []
    for key, name in zip(keys, names, strict=True):
        values = [b.get(key) for b in bodies]
        try:
            columns.append(pl.Series(name, values, strict=True))
        except (pl.exceptions.PolarsError, TypeError, ValueError, OverflowError):
            columns.append(pl.Series(name, [_text(v) for v in values], dtype=pl.String))
    return (pl.DataFrame(columns) if columns else pl.DataFrame()), renames


def _arrival_ms(record: dict[str, Any]) -> tuple[int | None, bool]:
    """The record's arrival (epoch ms) and whether it came from ``EnqueuedTimeUtc``."""
    system = record.get("SystemProperties") or {}
    enqueued = system.get(ENQUEUED_MS)
    if isinstance(enqueued, int) and not isinstance(enqueued, bool):
        return enqueued, False
    text = record.get("EnqueuedTimeUtc")
    if not isinstance(text, str):
        return None, True
    try:
        parsed = dt.datetime.strptime(text.strip(), _US_TIME).replace(tzinfo=dt.UTC)
    except ValueError:
        try:
            parsed = dt.datetime.fromisoformat(text.strip())
        except ValueError:
            return None, True
        parsed = parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.UTC)
    return int(parsed.timestamp() * 1000), True


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
    """A Capture read as a table, the body fields renamed, and what the reader counted:
    bodies not read as a JSON object (of which with a key repeated in one object) and
    arrival times taken from ``EnqueuedTimeUtc`` (no ``x-opt-enqueued-time``)."""

    frame: pl.DataFrame
    renames: tuple[Rename, ...]
    files: int
    bodies_without_json: int
    partition_from_path: bool
    bodies_with_repeated_keys: int = 0
    arrivals_from_text: int = 0


def read_capture_files(
    files: Sequence[CaptureFile], progress: Callable[[int, int], None] | None = None
) -> AvroTable:
    """The events of ``files`` (see the module docstring); ``progress(files read, files)``."""
    meta: dict[str, list[Any]] = {name: [] for name in (*CAPTURE_COLUMNS, *PROPERTY_COLUMNS)}
    bodies: list[dict[str, Any]] = []
    raw: list[str | None] = []
    no_json = repeated = from_text = 0
    for done, file in enumerate(files):
        for number, record in enumerate(_records(file), start=1):
            arrival, text = _arrival_ms(record)
            if arrival is None:
                msg = (
                    f"{file.path}, record {number}: no arrival time (no "
                    f"SystemProperties['{ENQUEUED_MS}'] and EnqueuedTimeUtc "
                    f"'{record.get('EnqueuedTimeUtc')}' is not a time)"
                )
                raise InputError(msg)
            from_text += text
            body = _body(record.get("Body"))
            no_json += body.fields is None
            repeated += body.repeated
            bodies.append(body.fields or {})
            raw.append(body.raw)
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
    fields, empty = _body_fields(bodies)
    fields, renames = rename_taken(fields, CAPTURE_NAMES, RenameReason.CAPTURE)
    tail = {name: pl.Series(meta[name], dtype=pl.String) for name in PROPERTY_COLUMNS}
    if any(r is not None for r in raw):
        tail[RAW_BODY] = pl.Series(raw, dtype=pl.String)
    parts = [head] + ([fields] if fields.width else []) + [pl.DataFrame(tail)]
    return AvroTable(
        frame=pl.concat(parts, how="horizontal"),
        renames=(*empty, *renames),
        files=len(files),
        bodies_without_json=no_json,
        partition_from_path=all(f.partition is not None for f in files),
        bodies_with_repeated_keys=repeated,
        arrivals_from_text=from_text,
    )
