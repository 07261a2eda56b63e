"""One reader for every command that replays a capture (replay, whatif, explain, the app,
the demo): the file or folder as a table, input columns renamed where their names are
taken, and the arrival and partition columns chosen (docs/schemas.md, "Input contract")."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from diagnostics.captures.avro import (
    DEFAULT_PATH_FORMAT,
    AvroTable,
    CaptureFile,
    capture_files,
    read_capture_files,
)
from diagnostics.captures.detect import (
    ColumnChoice,
    Setting,
    SettingError,
    choose_arrival,
    choose_partition,
    with_nested,
)
from diagnostics.captures.names import Rename, rename_taken, renamed
from diagnostics.captures.tables import read_table, table_kind
from diagnostics.engine.columns import EventColumns
from diagnostics.engine.policy import OrderingPolicy
from diagnostics.errors import InputError


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

    def column(self, name: str) -> str:
        """The name input column ``name`` has in :attr:`events` (renamed or not)."""
        return renamed(name, self.renames)

    def apply(self, policy: OrderingPolicy) -> tuple[pl.DataFrame, OrderingPolicy]:
        """``policy`` naming columns as :attr:`events` does, and the events with a column for
        each dotted name it uses that is a nested field (``TIMESTAMP BY body.time``)."""
        ts = None if policy.timestamp_by is None else self.column(policy.timestamp_by)
        over = tuple(self.column(c) for c in policy.over)
        mapped = dataclasses.replace(policy, timestamp_by=ts, over=over)
        return with_nested(self.events, [ts, *over]), mapped

    def to_dict(self) -> dict[str, Any]:
        """What was read and how, for JSON summaries."""
        return {
            "source": self.source,
            "format": self.kind,
            "columns": {c.setting.name.lower(): c.to_dict() for c in self.choices},
            "renamed": [r.to_dict() for r in self.renames],
            "notes": list(self.notes),
        }

    def describe(self) -> list[str]:
        """The same as lines of text."""
        n = self.events.height
        lines = [f"input       {self.source} ({self.kind}, {n:,} event{'s' if n != 1 else ''})"]
        lines += [f"  {c.describe()}" for c in self.choices]
        lines += [f"  renamed {r.describe()}" for r in self.renames]
        lines += [f"  {note}" for note in self.notes]
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
) -> Capture:
    frame, taken = rename_taken(frame)
    renames = (*renames, *taken)
    arrival = None if arrival is None else renamed(arrival, renames)
    partition = None if partition is None else renamed(partition, renames)
    try:
        chose_arrival = choose_arrival(frame, arrival)
        chose_partition = choose_partition(frame, partition)
    except SettingError as exc:
        raise SettingError(f"{source}: {exc}", exc.setting) from exc
    assert chose_arrival.column is not None  # choose_arrival raises otherwise
    frame = with_nested(frame, [chose_arrival.column])
    columns = EventColumns(arrival=chose_arrival.column, partition=chose_partition.column)
    return Capture(frame, columns, source, kind, renames, (chose_arrival, chose_partition), notes)


def _from_avro(
    table: AvroTable, source: str, arrival: str | None, partition: str | None
) -> Capture:
    notes = [f"{table.files} Event Hubs Capture file{'s' if table.files != 1 else ''}"]
    if not table.partition_from_path:
        notes.append("the file's path does not follow the capture path format: partition 0")
    if table.bodies_without_json:
        notes.append(
            f"{table.bodies_without_json:,} events have a body that is not a JSON object "
            "(no body fields: under TIMESTAMP BY their application time is invalid)"
        )
    capture = _finish(
        table.frame,
        source=source,
        kind="avro",
        renames=table.renames,
        notes=tuple(notes),
        arrival=arrival,
        partition=partition,
    )
    chosen = [
        ColumnChoice(c.setting, c.column, _avro_reason(c)) if c.reason != "chosen" else c
        for c in capture.choices
    ]
    return dataclasses.replace(capture, choices=tuple(chosen))


def _avro_reason(choice: ColumnChoice) -> str:
    if choice.setting is Setting.ARRIVAL:
        return "Capture's enqueued time: x-opt-enqueued-time (ms), else EnqueuedTimeUtc"
    return "from the {PartitionId} segment of each file's path"


def read_capture(
    path: str | Path,
    *,
    arrival: str | None = None,
    partition: str | None = None,
    path_format: str | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Capture:
    """Read a capture file (CSV, JSON Lines, Parquet, ``.gz``; ``.avro``) or a folder of
    Event Hubs Capture files. ``arrival``/``partition`` name the columns (``None``: detect).
    ``progress(files read, files)`` follows a Capture folder's files. Raises
    :class:`InputError` (or its :class:`SettingError`) naming file, column or setting."""
    path = Path(path)
    if path.is_dir() or (path.is_file() and table_kind(path.name)[0] == "avro"):
        files = capture_files(path, path_format or DEFAULT_PATH_FORMAT)
        return _from_avro(read_capture_files(files, progress), str(path), arrival, partition)
    if not path.is_file():
        msg = f"{path}: no such file or folder"
        raise InputError(msg)
    frame, renames = read_table(path, str(path))
    return _finish(
        frame,
        source=str(path),
        kind=table_kind(path.name)[0],
        renames=renames,
        notes=(),
        arrival=arrival,
        partition=partition,
    )


def read_capture_bytes(
    name: str,
    data: bytes,
    *,
    arrival: str | None = None,
    partition: str | None = None,
) -> Capture:
    """An uploaded capture (one file: a table, or one Capture ``.avro``, partition 0)."""
    if data[:4] == b"Obj\x01" or table_kind(name)[0] == "avro":
        file = CaptureFile(Path(name), None, (), data)
        return _from_avro(read_capture_files([file]), name, arrival, partition)
    frame, renames = read_table(data, name)
    kind = "parquet" if data[:4] == b"PAR1" else table_kind(name)[0]
    return _finish(
        frame,
        source=name,
        kind=kind,
        renames=renames,
        notes=(),
        arrival=arrival,
        partition=partition,
    )
