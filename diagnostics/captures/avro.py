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
import dataclasses
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


def _field(name: str, values: list[Any]) -> pl.Series:
    """One body field's values as a column: its own type, else (values that do not share
    one type: an object here, a number there) text, JSON for objects and numbers."""
    try:
        return pl.Series(name, values, strict=True)
    except (pl.exceptions.PolarsError, TypeError, ValueError, OverflowError):
        return pl.Series(name, [_text(v) for v in values], dtype=pl.String)


@dataclass(frozen=True, slots=True)
class BodySchema:
    """The body fields of a whole capture, for reading one of its files as a part of it:
    the keys in order of first appearance, each one's column type, and whether some body is
    not read as a JSON object (then the capture has the ``Body`` column)."""

    keys: tuple[str, ...]
    dtypes: tuple[pl.DataType, ...]
    raw: bool


def _body_fields(
    bodies: list[dict[str, Any]], schema: BodySchema | None = None
) -> tuple[pl.DataFrame, tuple[Rename, ...]]:
    """The bodies' top-level fields as columns (nested objects as structs; see
    :func:`_field`), and the empty key's rename (``column_N``, N its position among the
    fields). With ``schema``, the fields and types are the whole capture's."""
    keys = list(dict.fromkeys(k for b in bodies for k in b)) if schema is None else schema.keys
    names = name_empty(list(keys), CAPTURE_NAMES)
    renames = tuple(
        Rename(key, name, RenameReason.EMPTY_NAME)
        for key, name in zip(keys, names, strict=True)
        if key != name
    )
    columns = []
    for i, (key, name) in enumerate(zip(keys, names, strict=True)):
        column = _field(name, [b.get(key) for b in bodies])
        if schema is not None and column.dtype != schema.dtypes[i]:
            column = column.cast(schema.dtypes[i])  # a file where the field is always null
        columns.append(column)
    return (pl.DataFrame(columns) if columns else pl.DataFrame()), renames


@dataclass(frozen=True, slots=True)
class FileBodies:
    """What one Capture file holds: its :class:`BodySchema` (each field's type as this file
    alone gives it), its records, and what the reader counts (see :class:`AvroTable`)."""

    schema: BodySchema
    records: int
    without_json: int
    repeated_keys: int
    arrivals_from_text: int


def file_bodies(file: CaptureFile) -> FileBodies:
    """:class:`FileBodies` of ``file``; an :class:`InputError` as :func:`read_capture_files`
    raises it."""
    decoded = _decode([file], None)
    keys = tuple(dict.fromkeys(k for b in decoded.bodies for k in b))
    dtypes = tuple(_field(k, [b.get(k) for b in decoded.bodies]).dtype for k in keys)
    raw = any(r is not None for r in decoded.raw)
    return FileBodies(
        BodySchema(keys, dtypes, raw),
        len(decoded.bodies),
        decoded.no_json,
        decoded.repeated,
        decoded.from_text,
    )


def capture_columns(
    files: Sequence[CaptureFile], found: Sequence[FileBodies], schema: BodySchema
) -> AvroTable:
    """The capture of ``files`` as :func:`read_capture_files` reads it, but its columns only
    (no rows; the counts and :attr:`AvroTable.rows` from ``found``)."""
    table = read_capture_files([], schema=schema)
    return dataclasses.replace(
        table,
        files=len(files),
        bodies_without_json=sum(f.without_json for f in found),
        partition_from_path=all(f.partition is not None for f in files),
        bodies_with_repeated_keys=sum(f.repeated_keys for f in found),
        arrivals_from_text=sum(f.arrivals_from_text for f in found),
        rows=sum(f.records for f in found),
    )


def merged_body_schema(
    files: Sequence[CaptureFile], schemas: Sequence[BodySchema]
) -> BodySchema | str:
    """The capture's :class:`BodySchema` from its files' (in reading order), or why a file
    cannot be read apart from the others: a field whose type differs between two files
    (one line; the whole capture's type then depends on values in both)."""
    keys: dict[str, tuple[pl.DataType, int]] = {}
    for index, schema in enumerate(schemas):
        for key, dtype in zip(schema.keys, schema.dtypes, strict=True):
            seen = keys.get(key)
            if seen is None or seen[0] == pl.Null:
                keys[key] = (dtype, index) if seen is None or dtype != pl.Null else seen
            elif dtype not in (pl.Null, seen[0]):
                return (
                    f"body field '{key}' is {seen[0]} in {files[seen[1]].path} but {dtype} in "
                    f"{files[index].path}"
                )
    return BodySchema(
        tuple(keys),
        tuple(dtype for dtype, _ in keys.values()),
        any(s.raw for s in schemas),
    )


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
    #: events of the capture when :attr:`frame` holds only its columns (read elsewhere)
    rows: int | None = None

    @property
    def events(self) -> int:
        """The capture's events."""
        return self.frame.height if self.rows is None else self.rows


@dataclass(frozen=True, slots=True)
class _Decoded:
    """Records decoded, column by column, and what was counted."""

    meta: dict[str, list[Any]]
    bodies: list[dict[str, Any]]
    raw: list[str | None]
    no_json: int
    repeated: int
    from_text: int


def _decode(files: Sequence[CaptureFile], progress: Callable[[int, int], None] | None) -> _Decoded:
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
    return _Decoded(meta, bodies, raw, no_json, repeated, from_text)


def read_capture_files(
    files: Sequence[CaptureFile],
    progress: Callable[[int, int], None] | None = None,
    schema: BodySchema | None = None,
) -> AvroTable:
    """The events of ``files`` (see the module docstring); ``progress(files read, files)``.
    With ``schema`` (:func:`merged_body_schema`), files that are a part of a larger capture,
    with its body fields, types and ``Body`` column."""
    decoded = _decode(files, progress)
    meta, raw = decoded.meta, decoded.raw
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
    fields, empty = _body_fields(decoded.bodies, schema)
    fields, renames = rename_taken(fields, CAPTURE_NAMES, RenameReason.CAPTURE)
    tail = {name: pl.Series(meta[name], dtype=pl.String) for name in PROPERTY_COLUMNS}
    if any(r is not None for r in raw) if schema is None else schema.raw:
        tail[RAW_BODY] = pl.Series(raw, dtype=pl.String)
    parts = [head] + ([fields] if fields.width else []) + [pl.DataFrame(tail)]
    return AvroTable(
        frame=pl.concat(parts, how="horizontal"),
        renames=(*empty, *renames),
        files=len(files),
        bodies_without_json=decoded.no_json,
        partition_from_path=all(f.partition is not None for f in files),
        bodies_with_repeated_keys=decoded.repeated,
        arrivals_from_text=decoded.from_text,
    )
