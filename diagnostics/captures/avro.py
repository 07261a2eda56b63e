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

Each file is decoded into columns on its own (:mod:`diagnostics.captures.capture_file`, two
files at a time on two cores), kept in the capture cache when one is given
(:mod:`diagnostics.captures.capture_cache`), and the files' columns are put together here: a
body field keeps its type when every file agrees on the kind of its values, else it is built
from all of its values as one column (its own type, else text).
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from diagnostics.captures.bodies import NULLS, SCALAR_DTYPES, field_column, scalar_kind, values_of
from diagnostics.captures.capture_cache import (
    CachedFile,
    CaptureCache,
    null_column,
    null_keys,
    values_column,
)
from diagnostics.captures.capture_cache import field_column as entry_field
from diagnostics.captures.capture_file import (
    HEAD,
    REQUIRED_FIELDS,
    FileTable,
    cpu_workers,
    decode_file,
)
from diagnostics.captures.capture_maps import ENQUEUED_MS, constant
from diagnostics.captures.deferred import PASSTHROUGH, Deferred, DeferredColumn, DeferredPart
from diagnostics.captures.detect import ASA_PARTITION, EVENT_HUBS_ARRIVAL
from diagnostics.captures.names import (
    RESERVED,
    Rename,
    RenameReason,
    is_pattern,
    name_empty,
    rename_taken,
)
from diagnostics.captures.paths import CaptureFile

#: The columns of a Capture table besides the body fields, in order.
CAPTURE_COLUMNS = (ASA_PARTITION, EVENT_HUBS_ARRIVAL, "SequenceNumber", "Offset")
PROPERTY_COLUMNS = ("Properties", "SystemProperties")
#: The raw text of the bodies that are not read as a JSON object (null for the others).
RAW_BODY = "Body"
#: Names a body field may not keep (renamed ``input_<name>``).
CAPTURE_NAMES = (*CAPTURE_COLUMNS, *PROPERTY_COLUMNS, RAW_BODY)
__all__ = ["ENQUEUED_MS", "REQUIRED_FIELDS"]

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
class BodySchema:
    """The body fields of a whole capture, for reading one of its files as a part of it:
    the keys in order of first appearance, each one's column type, and whether some body is
    not read as a JSON object (then the capture has the ``Body`` column)."""

    keys: tuple[str, ...]
    dtypes: tuple[pl.DataType, ...]
    raw: bool


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
    table = decode_file(file)
    keys = tuple(table.kinds)
    dtypes = tuple(table.fields[entry_field(k)].dtype for k in keys)
    return FileBodies(
        BodySchema(keys, dtypes, table.raw > 0),
        table.records,
        table.without_json,
        table.repeated,
        table.from_text,
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


@dataclass(frozen=True, slots=True)
class AvroTable:
    """A Capture read as a table, the body fields renamed, and what the reader counted:
    bodies not read as a JSON object (of which with a key repeated in one object) and
    arrival times taken from ``EnqueuedTimeUtc`` (no ``x-opt-enqueued-time``). With
    ``deferred``, :attr:`frame` lacks the passthrough columns, which it holds."""

    frame: pl.DataFrame
    renames: tuple[Rename, ...]
    files: int
    bodies_without_json: int
    partition_from_path: bool
    bodies_with_repeated_keys: int = 0
    arrivals_from_text: int = 0
    #: events of the capture when :attr:`frame` holds only its columns (read elsewhere)
    rows: int | None = None
    deferred: Deferred | None = None
    #: which events' bodies hold a body field (named as :attr:`frame` names it) as null,
    #: not without it (``None``: not a body field)
    held_null: Callable[[str], pl.Series | None] | None = field(default=None, compare=False)

    @property
    def events(self) -> int:
        """The capture's events."""
        return self.frame.height if self.rows is None else self.rows


@dataclass(frozen=True)
class _Part:
    """One file read: its columns in memory (``table``, those kept) or in the cache
    (``entry``), and what the reader counts."""

    file: CaptureFile
    records: int
    kinds: dict[str, tuple[str, ...]]
    without_json: int
    repeated: int
    from_text: int
    raw: int
    table: pl.DataFrame | None
    entry: CachedFile | None
    #: the body fields some body of the file holds as null
    nulls: tuple[str, ...] = ()

    def read(self, columns: list[str]) -> pl.DataFrame:
        """The file's ``columns`` (as a cache entry names them)."""
        if self.table is not None and all(c in self.table.columns for c in columns):
            return self.table.select(columns)
        if self.entry is not None:
            try:
                return self.entry.read(columns)
            except (OSError, pl.exceptions.PolarsError):
                pass  # the entry went away or broke since: decode the file again
        return _frame(decode_file(self.file)).select(columns)

    def values(self, key: str) -> list[Any]:
        """Field ``key``'s values as Python reads them (each file's own column when its
        values share one kind, else its bodies read again)."""
        if key not in self.kinds:
            return [None] * self.records
        if scalar_kind(self.kinds[key]) is not None:
            return self.read([entry_field(key)]).to_series().to_list()
        return values_of(self.read([values_column(key)]).to_series())

    def held_null(self, key: str) -> pl.Series:
        """Which events' bodies hold field ``key`` as null (not: without it, or a value)."""
        if key not in self.nulls:
            return constant(False, self.records, pl.Boolean)
        return self.read([null_column(key)]).to_series()

    def light(self) -> _Part:
        """This part holding in memory only its :meth:`held_null` columns (when it has no
        cache entry to read them from)."""
        kept = None
        if self.entry is None and self.table is not None:
            kept = self.table.select([c for c in self.table.columns if c.startswith(NULLS)])
        return dataclasses.replace(self, table=kept)


def _frame(table: FileTable) -> pl.DataFrame:
    return table.frame()


_LIGHT = ["arrival_ms"]
_HEAVY = list(PASSTHROUGH)


def _mixed(kinds: dict[str, tuple[str, ...]]) -> list[str]:
    """The columns of the fields without one scalar kind in a file (kept in memory)."""
    return [entry_field(k) for k, found in kinds.items() if scalar_kind(found) is None]


def _read_one(file: CaptureFile, cache: CaptureCache | None, defer: bool) -> _Part:
    entry = cache.load(file) if cache is not None else None
    table = None
    if entry is None:
        decoded = decode_file(file)
        entry = cache.store(file, decoded) if cache is not None else None
        frame = _frame(decoded)
        if entry is not None and defer:  # the passthrough columns stay on disk, and the
            # fields of one type (the capture's may stay there: read_capture_files)
            frame = frame.select([*_LIGHT, *_mixed(decoded.kinds), *decoded.values.columns])
        table = frame
        counts = (decoded.records, decoded.kinds, decoded.without_json, decoded.repeated)
        extra = (decoded.from_text, decoded.raw)
        nulls = tuple(null_keys(decoded.nulls.columns))
    else:
        counts = (entry.records, entry.kinds, entry.without_json, entry.repeated)
        extra = (entry.from_text, entry.raw)
        nulls = entry.nulls
        light = [*_LIGHT, *[entry_field(k) for k in entry.kinds]]
        try:  # the columns every read needs, in one go
            table = entry.read([*_LIGHT, *_mixed(entry.kinds)] if defer else [*light, *_HEAVY])
        except (OSError, pl.exceptions.PolarsError):  # a broken entry: decode the file again
            with contextlib.suppress(OSError):
                entry.path.unlink()
            return _read_one(file, cache, defer)
    return _Part(file, *counts, *extra, table=table, entry=entry, nulls=nulls)


def _read_parts(
    files: Sequence[CaptureFile],
    cache: CaptureCache | None,
    defer: bool,
    progress: Callable[[int, int], None] | None,
) -> list[_Part]:
    workers = min(cpu_workers(), max(1, len(files)))
    if workers == 1:
        parts = []
        for done, file in enumerate(files, start=1):
            parts.append(_read_one(file, cache, defer))
            if progress is not None:
                progress(done, len(files))
        return parts
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="orderdoc-avro") as pool:
        futures = [pool.submit(_read_one, f, cache, defer) for f in files]
        parts = []
        for done, future in enumerate(futures, start=1):
            parts.append(future.result())
            if progress is not None:
                progress(done, len(files))
        return parts


def _field(
    key: str, name: str, parts: Sequence[_Part], dtype: pl.DataType | type[pl.DataType] | None
) -> pl.Series:
    """Body field ``key`` of every file as one column named ``name`` (``dtype``: the whole
    capture's type, for a file read as a part of it)."""
    kinds = [k for p in parts for k in p.kinds.get(key, ())]
    kind = scalar_kind(kinds)
    if dtype is not None or kind is not None:
        pieces = []
        for part in parts:
            if key in part.kinds:
                piece = part.read([entry_field(key)]).to_series()
            else:
                piece = constant(None, part.records, pl.Null)
            pieces.append(piece)
        if dtype is None:
            dtype = next((p.dtype for p in pieces if p.dtype != pl.Null), pl.Null)
        pieces = [p.cast(dtype) if p.dtype != dtype else p for p in pieces]
        if not pieces:
            return pl.Series(name, [], dtype=dtype)
        return pl.concat(pieces, rechunk=False).alias(name)
    return field_column(name, [v for part in parts for v in part.values(key)])


def _one_type(key: str, parts: Sequence[_Part]) -> pl.DataType | None:
    """The type body field ``key`` has in the capture when every file gives it one scalar
    type (or none at all), read from the files' own columns; else ``None``."""
    kinds = [k for p in parts for k in p.kinds.get(key, ())]
    kind = scalar_kind(kinds)
    if kind is None:
        return None
    return pl.Null() if kind == "null" else SCALAR_DTYPES[kind]


def read_capture_files(
    files: Sequence[CaptureFile],
    progress: Callable[[int, int], None] | None = None,
    schema: BodySchema | None = None,
    *,
    cache: CaptureCache | None = None,
    defer: bool = False,
) -> AvroTable:
    """The events of ``files`` (see the module docstring); ``progress(files read, files)``.
    With ``schema`` (:func:`merged_body_schema`), files that are a part of a larger capture,
    with its body fields, types and ``Body`` column. ``cache``: where decoded files are kept
    and found again; ``defer``: keep the passthrough columns there (:attr:`AvroTable.deferred`),
    not in :attr:`AvroTable.frame` (only with a cache)."""
    parts = _read_parts(files, cache, defer and cache is not None, progress)
    defer = defer and cache is not None and all(p.entry is not None for p in parts)
    keys = (
        list(schema.keys)
        if schema is not None
        else list(dict.fromkeys(k for p in parts for k in p.kinds))
    )
    names = name_empty(list(keys), CAPTURE_NAMES)
    empty = tuple(
        Rename(key, name, RenameReason.EMPTY_NAME)
        for key, name in zip(keys, names, strict=True)
        if key != name
    )
    listed = pl.DataFrame(schema=dict.fromkeys(names, pl.Null))
    final, renames = rename_taken(listed, CAPTURE_NAMES, RenameReason.CAPTURE)
    finals = final.columns
    # body fields of one type in every file stay in the cache too, unless a field would be
    # renamed for an outcome column's name (the renames then see every column)
    lazy = defer and not any(n in RESERVED or is_pattern(n) for n in finals)
    light_fields: list[pl.Series] = []
    later: list[DeferredColumn] = []
    for i, (key, name) in enumerate(zip(keys, finals, strict=True)):
        dtype = None if schema is None else schema.dtypes[i]
        found = _one_type(key, parts) if lazy and schema is None else None
        if found is not None:
            later.append(DeferredColumn(name, entry_field(key), found))
        else:
            light_fields.append(_field(key, name, parts, dtype))
    fields = pl.DataFrame(light_fields)
    raw = schema.raw if schema is not None else any(p.raw for p in parts)
    heavy = [*CAPTURE_COLUMNS[2:], *PROPERTY_COLUMNS, *([RAW_BODY] if raw else [])]
    partition = [
        constant(p.file.partition if p.file.partition is not None else 0, p.records, pl.Int64)
        for p in parts
    ]
    arrival = [p.read(["arrival_ms"]).to_series() for p in parts]
    head = pl.DataFrame(
        [
            pl.concat(partition).alias(ASA_PARTITION)
            if parts
            else pl.Series(ASA_PARTITION, [], dtype=pl.Int64),
            (pl.concat(arrival) if parts else pl.Series([], dtype=pl.Int64))
            .cast(pl.Datetime("ms", "UTC"))
            .alias(EVENT_HUBS_ARRIVAL),
        ]
    )
    if defer:
        light = [head, fields] if fields.width else [head]
        frame = pl.concat(light, how="horizontal")
        order = (*head.columns[:2], *heavy[:2], *finals, *heavy[2:])
        passthrough = [DeferredColumn(c, c, _PASSTHROUGH_TYPES[c]()) for c in heavy]
        deferred: Deferred | None = Deferred(
            (*passthrough[:2], *later, *passthrough[2:]),
            order,
            tuple(  # read from the cache (the columns in memory are let go)
                DeferredPart(
                    p.records,
                    dataclasses.replace(p, table=None).read,
                    p.entry.path if p.entry else None,
                    frozenset([*HEAD, *(entry_field(k) for k in p.kinds)]),
                )
                for p in parts
            ),
            keep=cache.keep if cache is not None else None,
        )
    else:
        passthrough_frame = _passthrough(parts, heavy)
        middle = [fields] if fields.width else []
        frame = pl.concat(
            [
                head,
                passthrough_frame.select(heavy[:2]),
                *middle,
                passthrough_frame.select(heavy[2:]),
            ],
            how="horizontal",
        )
        deferred = None
    return AvroTable(
        frame=frame,
        renames=(*empty, *renames),
        files=len(files),
        bodies_without_json=sum(p.without_json for p in parts),
        partition_from_path=all(f.partition is not None for f in files),
        bodies_with_repeated_keys=sum(p.repeated for p in parts),
        arrivals_from_text=sum(p.from_text for p in parts),
        deferred=deferred,
        held_null=_held_null(dict(zip(finals, keys, strict=True)), [p.light() for p in parts]),
    )


def _held_null(keys: dict[str, str], parts: Sequence[_Part]) -> Callable[[str], pl.Series | None]:
    """:attr:`AvroTable.held_null` of the files ``parts``, their fields ``keys`` by name."""

    def held(name: str) -> pl.Series | None:
        key = keys.get(name)
        if key is None:
            return None
        if not parts:
            return pl.Series(name, [], dtype=pl.Boolean)
        return pl.concat([p.held_null(key) for p in parts]).alias(name)

    return held


_PASSTHROUGH_TYPES = {
    "SequenceNumber": pl.Int64,
    "Offset": pl.String,
    "Properties": pl.String,
    "SystemProperties": pl.String,
    "Body": pl.String,
}
assert set(_PASSTHROUGH_TYPES) == set(PASSTHROUGH)


def _passthrough(parts: Sequence[_Part], heavy: list[str]) -> pl.DataFrame:
    frames = [p.read(heavy) for p in parts]
    if not frames:
        return pl.DataFrame(schema={c: _PASSTHROUGH_TYPES[c] for c in heavy})
    return pl.concat(frames, how="vertical", rechunk=True)
