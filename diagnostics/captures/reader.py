"""One reader for every command that replays a capture (replay, whatif, explain, the app,
the demo): the file or folder as a table, input columns renamed where their names are
taken, and the arrival and partition columns chosen (docs/schemas.md, "Input contract")."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from diagnostics.captures.avro import RAW_BODY, AvroTable, read_capture_files
from diagnostics.captures.capture_cache import CaptureCache
from diagnostics.captures.datasets import parquet_files, read_parquet_files
from diagnostics.captures.deferred import (
    PASSTHROUGH,
    BodyFields,
    Deferred,
    attach,
    body_fields_reader,
    take_columns,
)
from diagnostics.captures.detect import (
    ARRIVAL_DEFAULT,
    ASA_ARRIVALS,
    ASA_PARTITION,
    EVENT_HUBS_ARRIVAL,
    PARTITION_DEFAULT,
    ColumnChoice,
    Setting,
    SettingError,
    choose_arrival,
    choose_partition,
    column_listing,
    nested,
    with_nested,
)
from diagnostics.captures.dialect import CsvOptions
from diagnostics.captures.far_off import far_off_notes
from diagnostics.captures.matching import AmbiguousColumn, did_you_mean, match_column
from diagnostics.captures.names import Rename, rename_taken, renamed
from diagnostics.captures.paths import DEFAULT_PATH_FORMAT, capture_files, uploaded_files
from diagnostics.captures.storable import storable
from diagnostics.captures.tables import jsonl_nulls, read_table_noted, table_kind
from diagnostics.engine.columns import EventColumns
from diagnostics.engine.policy import OrderingPolicy
from diagnostics.errors import InputError
from diagnostics.timestamps import to_utc
from diagnostics.words import noun


@dataclass(frozen=True, slots=True)
class Capture:
    """A capture ready to replay: ``events`` (input columns, none named like an outcome
    column), the ``columns`` holding arrival and partition, and how they were found."""

    events: pl.DataFrame
    columns: EventColumns
    source: str
    kind: str
    renames: tuple[Rename, ...] = ()
    choices: tuple[ColumnChoice, ...] = ()
    notes: tuple[str, ...] = ()
    #: events in the capture when :attr:`events` holds only its schema (read elsewhere)
    height: int | None = None
    #: what the user should look at: far-off arrival times (``far_off``)
    warnings: tuple[str, ...] = ()
    #: the passthrough columns :attr:`events` lacks (Capture files read with ``defer``)
    deferred: Deferred | None = None
    #: what the capture cache did (one line; ``None``: not used)
    cache_line: str | None = None
    #: which events hold a field as null, not without it (see :meth:`null_values`)
    held_null: Callable[[str], pl.Series | None] | None = dataclasses.field(
        default=None, compare=False, repr=False
    )

    def null_values(self, name: str) -> pl.Series | None:
        """Row for row with :attr:`events`: whether the event holds field ``name`` (as
        :attr:`events` names it) with the value null, as opposed to not at all (both are
        null in the column); ``None`` when the format cannot tell (CSV, Parquet) or
        ``name`` is not one of the events' own fields."""
        if self.held_null is None:
            return None
        names = [name]
        names += [r.column for r in self.renames if r.renamed in names]
        names += [r.column for r in self.renames if r.renamed in names and r.column not in names]
        for given in names:
            found = self.held_null(given)
            if found is not None:
                return found
        return None

    def column(self, name: str) -> str:
        """The name input column ``name`` has in :attr:`events` (renamed or not)."""
        return renamed(name, self.renames)

    def apply(
        self, policy: OrderingPolicy, *, named_by: str | None = None
    ) -> tuple[pl.DataFrame, OrderingPolicy]:
        """``policy`` naming columns as :attr:`events` does, and the events with a column for
        each dotted name it uses that is a nested field (``TIMESTAMP BY body.time``). Names
        match regardless of case, as in ASA (``diagnostics.captures.matching``). A column it
        names that the capture lacks is a :class:`SettingError` listing the capture's columns
        and the closest one; ``named_by`` (the job definition the query came from, e.g.
        ``job X (arm-template F), input Y``) names the query instead of a setting."""
        named_columns = [c for c in (policy.timestamp_by, *policy.over) if c is not None]
        if self.deferred is not None:
            needed = [self.resolve(c) for c in named_columns]
            if any(n in self.deferred.names for n in needed):  # read the query's columns
                return self.with_columns(needed).apply(policy, named_by=named_by)
        ts = None if policy.timestamp_by is None else self.resolve(policy.timestamp_by)
        over = tuple(self.resolve(c) for c in policy.over)
        events = with_nested(self.events, [ts, *over])
        named = [(policy.timestamp_by, ts, Setting.TIMESTAMP_BY)]
        named += [(given, c, Setting.OVER) for given, c in zip(policy.over, over, strict=True)]
        for given, column, setting in named:
            if given is not None and column is not None and column not in events.columns:
                what = "TIMESTAMP BY column" if setting is Setting.TIMESTAMP_BY else "OVER column"
                listing = column_listing(self.listing())
                hint = did_you_mean(given, self.listing().columns)
                if named_by is not None:
                    msg = (
                        f"{self.source}: {what} '{given}' of the query of {named_by} is missing "
                        f"({listing}){hint}"
                    )
                    raise InputError(msg)
                msg = f"{self.source}: {what} '{given}' is missing ({listing}){hint}"
                raise SettingError(msg, setting)
        return events, dataclasses.replace(policy, timestamp_by=ts, over=over)

    def listing(self) -> pl.DataFrame:
        """No rows, every column of the capture (the deferred ones too), in order."""
        if self.deferred is None:
            return self.events.head(0)
        return attach(self.events.head(0), self.deferred)

    def attached(self) -> Capture:
        """This capture with its deferred columns back in :attr:`events` (in memory)."""
        if self.deferred is None:
            return self
        events = attach(self.events, self.deferred)
        return dataclasses.replace(self, events=events, deferred=None)

    def more_inputs(self, held: Sequence[str] = ()) -> BodyFields | None:
        """The body fields kept out of memory that may name senders (but those named in
        ``held``, which the caller holds), to read row for row with :attr:`events`
        (:func:`diagnostics.captures.deferred.body_fields_reader`)."""
        return body_fields_reader(self.deferred, self.events, held)

    def with_columns(self, names: Sequence[str]) -> Capture:
        """This capture with the deferred columns ``names`` read into :attr:`events`."""
        if self.deferred is None:
            return self
        events, rest = take_columns(self.events, self.deferred, names)
        return dataclasses.replace(self, events=events, deferred=rest)

    def for_query(self, text: str) -> Capture:
        """This capture with the deferred columns a query may read back in :attr:`events`:
        every body field, ``Body`` (it holds the text of the bodies the input could not
        read, null for the others) and the other passthrough columns only when the query's
        ``text`` names them; the rest stay out of memory."""
        if self.deferred is None:
            return self
        words = {w.lower() for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text)}
        names = [
            n
            for n in self.deferred.names
            if n not in PASSTHROUGH or n == RAW_BODY or n.lower() in words
        ]
        return self.with_columns(names)

    def resolve(self, given: str) -> str:
        """The column ``given`` names: renamed, else matched regardless of case."""
        name = self.column(given)
        try:
            found = match_column(name, self.listing().columns)
        except AmbiguousColumn as exc:
            msg = f"{self.source}: {exc}"
            raise InputError(msg) from exc
        return found or name

    def to_dict(self) -> dict[str, Any]:
        """What was read and how, for JSON summaries."""
        return {
            "source": self.source,
            "format": self.kind,
            "columns": {c.setting.name.lower(): c.to_dict() for c in self.choices},
            "renamed": [r.to_dict() for r in self.renames],
            "notes": list(self.notes),
            "warnings": list(self.warnings),
        }

    def describe(self) -> list[str]:
        """The same as lines of text."""
        n = self.events.height if self.height is None else self.height
        lines = [f"input       {self.source} ({self.kind}, {n:,} {noun(n, 'event')})"]
        lines += [f"  {c.describe()}" for c in self.choices]
        lines += [f"  renamed {r.describe()}" for r in self.renames]
        lines += [f"  {note}" for note in self.notes]
        lines += [f"  warning: {line}" for line in self.warnings]
        return lines


def _finish(
    frame: pl.DataFrame,
    *,
    source: str,
    kind: str,
    renames: tuple[Rename, ...],
    notes: tuple[str, ...],
    arrival: str | None,
    partition: str | None,
    fixed: tuple[ColumnChoice, ColumnChoice] | None = None,
    deferred: Deferred | None = None,
    held_null: Callable[[str], pl.Series | None] | None = None,
) -> Capture:
    """The capture: outcome names renamed, columns made storable, arrival and partition
    chosen (``fixed``: the choices when no setting names a column, as for Capture files)."""
    frame, taken = rename_taken(frame)
    frame, stored = storable(frame)
    renames = (*renames, *taken)
    arrival = None if arrival is None else renamed(arrival, renames)
    partition = None if partition is None else renamed(partition, renames)
    try:
        if arrival is None and fixed is not None:
            chose_arrival = fixed[0]
        else:
            chose_arrival = choose_arrival(frame, arrival)
        if partition is None and fixed is not None:
            chose_partition = fixed[1]
        else:
            chose_partition = choose_partition(frame, partition)
    except SettingError as exc:
        raise SettingError(f"{source}: {exc}", exc.setting) from exc
    assert chose_arrival.column is not None  # choose_arrival raises otherwise
    frame = with_nested(frame, [chose_arrival.column])
    columns = EventColumns(arrival=chose_arrival.column, partition=chose_partition.column)
    choices = (chose_arrival, chose_partition)
    far: tuple[str, ...] = ()
    if chose_arrival.column in frame.columns:
        raw = frame[chose_arrival.column]
        far = far_off_notes(raw, to_utc(raw), chose_arrival.column)
    return Capture(
        frame,
        columns,
        source,
        kind,
        renames,
        choices,
        (*notes, *stored),
        warnings=far,
        deferred=deferred,
        held_null=held_null,
    )


def table_capture(
    frame: pl.DataFrame,
    *,
    source: str,
    kind: str,
    renames: tuple[Rename, ...],
    arrival: str | None,
    partition: str | None,
    notes: tuple[str, ...] = (),
) -> Capture:
    """A table read as :func:`read_capture` reads it, from the frame ``read_table`` gave (or
    any slice of it, or its schema alone: the choices depend on the columns only);
    ``notes``: what reading it noted."""
    return _finish(
        frame,
        source=source,
        kind=kind,
        renames=renames,
        notes=notes,
        arrival=arrival,
        partition=partition,
    )


def parquet_note(files: int) -> str:
    """What the summary says about a capture of several Parquet files."""
    return f"{files} Parquet {noun(files, 'file')}, read in path order"


def _capture_choices(table: AvroTable) -> tuple[ColumnChoice, ColumnChoice]:
    """Arrival and partition of Capture files: Capture's own, whatever the bodies hold."""
    n = table.arrivals_from_text
    if n == 0:
        how = "each record's SystemProperties['x-opt-enqueued-time'] (ms)"
    elif n == table.events:
        how = "each record's EnqueuedTimeUtc (whole seconds; no x-opt-enqueued-time)"
    else:
        how = (
            f"SystemProperties['x-opt-enqueued-time'] (ms); EnqueuedTimeUtc (whole seconds) "
            f"for the {n:,} records without it"
        )
    arrival = ColumnChoice(Setting.ARRIVAL, EVENT_HUBS_ARRIVAL, f"Event Hubs Capture: {how}")
    where = (
        "Event Hubs Capture: the {PartitionId} segment of each file's path"
        if table.partition_from_path
        else "the file's path does not follow the capture path format: partition 0"
    )
    return arrival, ColumnChoice(Setting.PARTITION, ASA_PARTITION, where)


def _capture_notes(table: AvroTable, arrival: str | None, partition: str | None) -> tuple[str, ...]:
    """What the summary says about Capture files: how many, the bodies not read as JSON,
    and body fields that a table would have used as arrival or partition but Capture's
    files do not."""
    notes = [f"{table.files} Event Hubs Capture {noun(table.files, 'file')}"]
    if table.bodies_without_json:
        repeated = table.bodies_with_repeated_keys
        notes.append(
            f"{table.bodies_without_json:,} events have a body that is not a JSON object"
            + (f" ({repeated:,} of them repeat a key in one object)" if repeated else "")
            + " (ASA's input rejects them, InputDeserializerError.InvalidData; the replay "
            "drops them under TIMESTAMP BY as events without body fields; the body's text is "
            f"in column '{RAW_BODY}')"
        )
    frame = table.frame
    if table.deferred is not None:
        frame = attach(frame.head(0), table.deferred)
    kept = []
    if arrival is None:
        kept += [ARRIVAL_DEFAULT] if ARRIVAL_DEFAULT in frame.columns else []
        kept += [name for name, _ in ASA_ARRIVALS[1:] if nested(frame, name) is not None]
    if partition is None and PARTITION_DEFAULT in frame.columns:
        kept.append(PARTITION_DEFAULT)
    if kept:
        notes.append(
            f"body field{'s' if len(kept) > 1 else ''} {', '.join(repr(k) for k in kept)} "
            "kept as input, not used: arrival and partition are Capture's (name a body field "
            "as the arrival or partition column to use it)"
        )
    return tuple(notes)


def avro_capture(
    table: AvroTable, source: str, arrival: str | None, partition: str | None
) -> Capture:
    """Capture files read as :func:`read_capture` reads them (or their columns alone)."""
    return _finish(
        table.frame,
        source=source,
        kind="avro",
        renames=table.renames,
        notes=_capture_notes(table, arrival, partition),
        arrival=arrival,
        partition=partition,
        fixed=_capture_choices(table),
        deferred=table.deferred,
        held_null=table.held_null,
    )


def read_capture(
    path: str | Path,
    *,
    arrival: str | None = None,
    partition: str | None = None,
    path_format: str | None = None,
    progress: Callable[[int, int], None] | None = None,
    csv_options: CsvOptions | None = None,
    cache: CaptureCache | None = None,
    defer: bool = False,
) -> Capture:
    """Read a capture file (CSV, JSON Lines, Parquet, ``.gz``; ``.avro``), a folder of
    Event Hubs Capture files, or several Parquet files (a folder or a glob:
    :mod:`diagnostics.captures.datasets`). ``arrival``/``partition`` name the columns (``None``: detect).
    ``progress(files read, files)`` follows a Capture folder's files. Raises
    :class:`InputError` (or its :class:`SettingError`) naming file, column or setting.

    Capture files are decoded once into ``cache`` (see
    :mod:`diagnostics.captures.capture_cache`) and read from it next time; with ``defer``
    their passthrough columns (``SequenceNumber``, ``Offset``, ``Properties``,
    ``SystemProperties``, ``Body``) stay there (:attr:`Capture.deferred`), unless a column
    setting names one of them."""
    several = parquet_files(path)
    if several is not None:
        frame, renames = read_parquet_files(several)
        return _finish(
            frame,
            source=str(path),
            kind="parquet",
            renames=renames,
            notes=(parquet_note(len(several)),),
            arrival=arrival,
            partition=partition,
        )
    path = Path(path)
    if path.is_dir() or (path.is_file() and table_kind(path.name)[0] == "avro"):
        files = capture_files(path, path_format or DEFAULT_PATH_FORMAT)
        defer = defer and arrival is None and partition is None  # Capture's own columns
        table = read_capture_files(files, progress, cache=cache, defer=defer)
        capture = avro_capture(table, str(path), arrival, partition)
        if cache is not None:
            if cache.persistent:
                cache.trim()
            capture = dataclasses.replace(capture, cache_line=cache.describe(len(files)))
        return capture
    if not path.is_file():
        msg = f"{path}: no such file or folder"
        raise InputError(msg)
    frame, renames, read_notes = read_table_noted(path, str(path), csv_options)
    kind = table_kind(path.name)[0]
    return _finish(
        frame,
        source=str(path),
        kind=kind,
        renames=renames,
        notes=read_notes,
        arrival=arrival,
        partition=partition,
        held_null=jsonl_nulls(path, frame.columns) if kind == "jsonl" else None,
    )


def is_avro(name: str, data: bytes) -> bool:
    """Whether an upload is an Avro (Event Hubs Capture) file."""
    return data[:4] == b"Obj\x01" or name.lower().endswith(".avro")


def _upload_source(names: Sequence[str]) -> str:
    """How the summary names uploaded Capture files: the folder chosen, or their count."""
    if len(names) == 1:
        return names[0]
    tops = {n.replace("\\", "/").strip("/").split("/")[0] for n in names}
    if len(tops) == 1 and all("/" in n.replace("\\", "/").strip("/") for n in names):
        return f"{tops.pop()}/ ({len(names)} uploaded files)"
    return f"{len(names)} uploaded .avro files"


def read_capture_uploads(
    files: Sequence[tuple[str, bytes]],
    *,
    arrival: str | None = None,
    partition: str | None = None,
    path_format: str | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Capture:
    """Uploaded Event Hubs Capture files (a folder upload, or several ``.avro`` files), each
    named by its path inside the folder chosen: the partition comes from that path (see
    :func:`diagnostics.captures.paths.uploaded_files`)."""
    others = [name for name, data in files if not is_avro(name, data)]
    if others:
        msg = (
            f"{', '.join(others)}: not an Event Hubs Capture .avro file (upload a Capture "
            "folder, .avro files, or one capture table on its own)"
        )
        raise InputError(msg)
    found = uploaded_files(files, path_format or DEFAULT_PATH_FORMAT)
    table = read_capture_files(found, progress)
    return avro_capture(table, _upload_source([n for n, _ in files]), arrival, partition)


def read_capture_bytes(
    name: str,
    data: bytes,
    *,
    arrival: str | None = None,
    partition: str | None = None,
    path_format: str | None = None,
) -> Capture:
    """An uploaded capture: a table, or one Capture ``.avro`` file (partition from its
    name when that follows the capture path format, else 0)."""
    if is_avro(name, data):
        return read_capture_uploads(
            [(name, data)], arrival=arrival, partition=partition, path_format=path_format
        )
    frame, renames, read_notes = read_table_noted(data, name)
    kind = "parquet" if data[:4] == b"PAR1" else table_kind(name)[0]
    return _finish(
        frame,
        source=name,
        kind=kind,
        renames=renames,
        notes=read_notes,
        arrival=arrival,
        partition=partition,
    )
