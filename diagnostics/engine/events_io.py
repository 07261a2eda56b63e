"""Reading event captures: CSV, JSON Lines or Parquet, chosen by extension, ``.gz`` accepted."""

from __future__ import annotations

import gzip
import io
import json
from pathlib import Path

import polars as pl

from diagnostics.errors import InputError

_CSV = (".csv", ".tsv")
_JSONL = (".jsonl", ".ndjson", ".json")
_PARQUET = (".parquet", ".pq")


def _kind(path: Path) -> tuple[str, bool]:
    suffixes = [s.lower() for s in path.suffixes]
    gz = bool(suffixes) and suffixes[-1] == ".gz"
    if gz:
        suffixes = suffixes[:-1]
    ext = suffixes[-1] if suffixes else ""
    for kind, exts in (("csv", _CSV), ("jsonl", _JSONL), ("parquet", _PARQUET)):
        if ext in exts:
            return kind, gz
    msg = f"{path}: unknown file type '{ext or path.name}'; use .csv, .jsonl or .parquet (optionally .gz)"
    raise InputError(msg)


def _bad_json_line(data: bytes, path: Path) -> str:
    """Find the first line that is not a JSON object, for the error message."""
    for number, line in enumerate(data.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except (ValueError, UnicodeDecodeError) as exc:
            return f"{path}, line {number}: not valid JSON ({exc})"
        if not isinstance(value, dict):
            return f"{path}, line {number}: a JSON object was expected, got {type(value).__name__}"
    return f"{path}: could not be read as JSON Lines"


def read_events(path: str | Path) -> pl.DataFrame:
    """Read an event capture. Raises :class:`InputError` naming the file (and line) on failure."""
    path = Path(path)
    if not path.is_file():
        msg = f"{path}: no such file"
        raise InputError(msg)
    kind, gz = _kind(path)
    try:
        if kind == "parquet":
            return pl.read_parquet(gzip.decompress(path.read_bytes()) if gz else path)
        data = gzip.decompress(path.read_bytes()) if gz else path.read_bytes()
    except (OSError, EOFError, pl.exceptions.PolarsError) as exc:
        msg = f"{path}: cannot be read as {kind}{' (gzip)' if gz else ''}: {exc}"
        raise InputError(msg) from exc
    if kind == "csv":
        sep = "\t" if ".tsv" in [s.lower() for s in path.suffixes] else ","
        try:
            return pl.read_csv(io.BytesIO(data), separator=sep, infer_schema_length=10_000)
        except pl.exceptions.PolarsError:
            try:
                return pl.read_csv(io.BytesIO(data), separator=sep, infer_schema=False)
            except pl.exceptions.PolarsError as exc:
                msg = f"{path}: not a readable CSV file: {str(exc).splitlines()[0]}"
                raise InputError(msg) from exc
    try:
        return pl.read_ndjson(io.BytesIO(data), infer_schema_length=10_000)
    except pl.exceptions.PolarsError as exc:
        raise InputError(_bad_json_line(data, path)) from exc
