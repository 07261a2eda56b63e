"""Tables of events: CSV (or TSV), JSON Lines and Parquet, chosen by extension, ``.gz``
accepted, from a file or from uploaded bytes. CSV header cells that are empty or repeated
are renamed (see :mod:`diagnostics.captures.names`); a UTF-8 byte order mark is skipped."""

from __future__ import annotations

import csv
import gzip
import io
import json
from pathlib import Path

import polars as pl

from diagnostics.captures.names import Rename, unique_header
from diagnostics.errors import InputError

CSV_EXTENSIONS = (".csv", ".tsv")
JSONL_EXTENSIONS = (".jsonl", ".ndjson", ".json")
PARQUET_EXTENSIONS = (".parquet", ".pq")
AVRO_EXTENSIONS = (".avro",)
_BOM = b"\xef\xbb\xbf"


def table_kind(name: str) -> tuple[str, bool]:
    """(``csv`` | ``jsonl`` | ``parquet`` | ``avro``, gzipped?) from a file name."""
    suffixes = [s.lower() for s in Path(name).suffixes]
    gz = bool(suffixes) and suffixes[-1] == ".gz"
    if gz:
        suffixes = suffixes[:-1]
    ext = suffixes[-1] if suffixes else ""
    for kind, exts in (
        ("csv", CSV_EXTENSIONS),
        ("jsonl", JSONL_EXTENSIONS),
        ("parquet", PARQUET_EXTENSIONS),
        ("avro", AVRO_EXTENSIONS),
    ):
        if ext in exts:
            return kind, gz
    msg = (
        f"{name}: unknown file type '{ext or Path(name).name}'; use .csv, .jsonl, .parquet "
        "(optionally .gz) or Event Hubs Capture .avro"
    )
    raise InputError(msg)


def _bad_json_line(data: bytes, name: str) -> str:
    """The first line that is not a JSON object, for the error message."""
    for number, line in enumerate(data.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except (ValueError, UnicodeDecodeError) as exc:
            return f"{name}, line {number}: not valid JSON ({exc})"
        if not isinstance(value, dict):
            return f"{name}, line {number}: a JSON object was expected, got {type(value).__name__}"
    return f"{name}: could not be read as JSON Lines"


def _header(data: bytes, sep: str) -> list[str] | None:
    """The CSV header's cells as Python's csv module reads them (``None``: no header)."""
    head = data[: 1 << 20].decode("utf-8", errors="replace")
    try:
        return next(csv.reader(io.StringIO(head, newline=""), delimiter=sep))
    except (StopIteration, csv.Error):
        return None


def _read_csv(data: bytes, name: str, sep: str) -> tuple[pl.DataFrame, tuple[Rename, ...]]:
    data = data.removeprefix(_BOM)
    if not data.strip():
        msg = f"{name}: the file is empty (a CSV capture starts with a header line)"
        raise InputError(msg)
    try:
        frame = pl.read_csv(io.BytesIO(data), separator=sep, infer_schema_length=10_000)
    except pl.exceptions.PolarsError:
        try:
            frame = pl.read_csv(io.BytesIO(data), separator=sep, infer_schema=False)
        except pl.exceptions.PolarsError as exc:
            msg = f"{name}: not a readable CSV file: {str(exc).splitlines()[0]}"
            raise InputError(msg) from exc
    cells = _header(data, sep)
    if cells is None or len(cells) != frame.width:
        return frame, ()
    names, renames = unique_header(cells)
    frame.columns = names
    return frame, renames


def read_table(source: Path | bytes, name: str) -> tuple[pl.DataFrame, tuple[Rename, ...]]:
    """A CSV, JSON Lines or Parquet capture (file or bytes) and the header renames; an
    :class:`InputError` names the file (and the line of bad JSON)."""
    kind, gz = table_kind(name)
    try:
        if kind == "parquet":
            if isinstance(source, bytes):
                raw = gzip.decompress(source) if gz else source
                return pl.read_parquet(io.BytesIO(raw)), ()
            return pl.read_parquet(gzip.decompress(source.read_bytes()) if gz else source), ()
        data = source if isinstance(source, bytes) else source.read_bytes()
        if gz or data[:2] == b"\x1f\x8b":
            data = gzip.decompress(data)
    except (OSError, EOFError, pl.exceptions.PolarsError) as exc:
        detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        msg = f"{name}: cannot be read as {kind}{' (gzip)' if gz else ''}: {detail}"
        raise InputError(msg) from exc
    if kind == "csv":
        return _read_csv(data, name, "\t" if ".tsv" in name.lower() else ",")
    if kind != "jsonl":
        msg = f"{name}: {kind} is not a table format"
        raise InputError(msg)
    if not data.strip():
        msg = f"{name}: the file is empty (JSON Lines: one event object a line)"
        raise InputError(msg)
    try:
        return pl.read_ndjson(io.BytesIO(data.removeprefix(_BOM)), infer_schema_length=10_000), ()
    except pl.exceptions.PolarsError as exc:
        raise InputError(_bad_json_line(data.removeprefix(_BOM), name)) from exc
