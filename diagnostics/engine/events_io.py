"""Reading an event capture as a plain table (CSV, JSON Lines or Parquet, ``.gz`` accepted;
Event Hubs Capture ``.avro`` files or folders), without choosing columns.

Commands that replay use :func:`diagnostics.captures.reader.read_capture`, which also
chooses the arrival and partition columns and reports renames; this is the table alone.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import polars as pl

from diagnostics.captures.avro import read_capture_files
from diagnostics.captures.capture_cache import CaptureCache
from diagnostics.captures.names import Rename
from diagnostics.captures.paths import DEFAULT_PATH_FORMAT, capture_files
from diagnostics.captures.storable import storable
from diagnostics.captures.tables import read_table, table_kind
from diagnostics.errors import InputError


def read_events(path: str | Path) -> pl.DataFrame:
    """Read an event capture. Raises :class:`InputError` naming the file (and line) on failure."""
    return read_events_renamed(path)[0]


def read_events_renamed(
    path: str | Path,
    cache: CaptureCache | None = None,
    report: Callable[[str], None] | None = None,
) -> tuple[pl.DataFrame, tuple[Rename, ...]]:
    """:func:`read_events` and the columns the reader renamed (empty or repeated CSV header
    cells, empty names, Avro body fields named like a Capture column). Columns Parquet
    cannot store (empty JSON objects) are JSON text. ``cache``: the capture cache Event
    Hubs Capture files go through; ``report(line)`` is told what it did."""
    path = Path(path)
    if path.is_dir() or (path.is_file() and table_kind(path.name)[0] == "avro"):
        files = capture_files(path, DEFAULT_PATH_FORMAT)
        started = time.perf_counter()
        table = read_capture_files(files, cache=cache)
        if cache is not None:
            if cache.persistent:
                cache.trim()
            if report is not None:
                took = time.perf_counter() - started
                report(f"{cache.describe(len(files))} ({took:.1f} s)")
        return storable(table.frame)[0], table.renames
    if not path.is_file():
        msg = f"{path}: no such file"
        raise InputError(msg)
    frame, renames = read_table(path, str(path))
    return storable(frame)[0], renames
