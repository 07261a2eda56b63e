"""Tables of events: CSV (or TSV; ``,``, ``;`` or tab detected), JSON Lines (or one JSON
array), and Parquet, chosen by extension, ``.gz``
accepted, from a file or from uploaded bytes. CSV header cells that are empty or repeated
are named before polars reads the file (see :mod:`diagnostics.captures.names`), as is an
empty JSON key or Parquet column name; a UTF-8 byte order mark is skipped."""

from __future__ import annotations

import csv
import gzip
import io
from collections.abc import Callable
from pathlib import Path

import polars as pl

from diagnostics.captures.dialect import (
    CsvOptions,
    csv_notes,
    detect_separator,
    locate_problem,
    with_decimal_commas,
)
from diagnostics.captures.jsonl import held_null, read_jsonl
from diagnostics.captures.names import Rename, rename_empty, unique_header
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


def header_end(data: bytes) -> int | None:
    """Where the header line ends (its line break outside quotes, or the end of the data;
    ``None``: not within the first MiB), reading quotes as the csv module and polars do."""
    quotes = start = 0
    limit = min(len(data), 1 << 20)
    while True:
        end = data.find(b"\n", start, limit)
        stop = end if end >= 0 else limit
        quotes += data.count(b'"', start, stop)
        if quotes % 2 == 0 and (end >= 0 or limit == len(data)):
            return stop
        if end < 0:
            return None
        start = end + 1


def named_header(data: bytes, sep: str) -> tuple[bytes, list[str] | None, tuple[Rename, ...]]:
    """``data`` with a plain header (``c0,c1,...``) for polars, the names its cells get (an
    empty cell in column N is ``column_N``, a repeat of a cell ``<name>_2``, ...: docs/
    schemas.md, "Input contract") and the renames. Polars would rename empty and repeated
    cells its own way, refuse some, and misread quotes inside quoted names."""
    end = header_end(data)
    if end is None:
        return data, None, ()
    head = data[:end].decode("utf-8", errors="replace").rstrip("\r")
    try:
        cells = next(csv.reader(io.StringIO(head, newline=""), delimiter=sep), [])
    except csv.Error:
        return data, None, ()
    if not cells:
        return data, None, ()
    names, renames = unique_header(cells)
    plain = sep.join(f"c{i}" for i in range(len(names))).encode() + b"\n"
    return plain + data[end + 1 :], names, renames


def _as_utf8(data: bytes, name: str, whole: bool) -> tuple[bytes, tuple[str, ...]]:
    """``data`` as UTF-8 and a note on how it was decoded: UTF-16 with its byte-order mark
    (Excel's "Unicode Text"); with ``whole``, text that is not UTF-8 as Windows-1252 (Excel's
    CSV on Windows); a byte neither reads is one line naming the line and byte."""
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        try:
            return data.decode("utf-16").encode(), ("CSV: UTF-16 text, read as such",)
        except UnicodeDecodeError as exc:
            msg = f"{name}: UTF-16 text with an odd byte at {exc.start} (a truncated file?)"
            raise InputError(msg) from exc
    if not whole:
        return data, ()
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    else:
        return data, ()
    try:
        text = data.decode("cp1252")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        msg = (
            f"{name}, line {line}: byte 0x{data[exc.start]:02x} is neither UTF-8 nor "
            "Windows-1252 text; save the file as CSV UTF-8"
        )
        raise InputError(msg) from exc
    return text.encode(), ("CSV: not UTF-8; read as Windows-1252 (Excel's CSV on Windows)",)


def _read_csv(
    data: bytes, name: str, sep: str | None, options: CsvOptions
) -> tuple[pl.DataFrame, tuple[Rename, ...], tuple[str, ...]]:
    data, decoded = _as_utf8(data, name, whole=False)
    data = data.removeprefix(_BOM)
    if not data.strip():
        msg = f"{name}: the file is empty (a CSV capture starts with a header line)"
        raise InputError(msg)
    if sep is None:
        end = header_end(data)
        head = data[: end if end is not None else 1 << 16].decode("utf-8", errors="replace")
        sep = detect_separator(head)
    original = data
    data, names, renames = named_header(data, sep)
    try:
        frame = pl.read_csv(io.BytesIO(data), separator=sep, infer_schema_length=10_000)
    except pl.exceptions.PolarsError:
        try:
            frame = pl.read_csv(io.BytesIO(data), separator=sep, infer_schema=False)
        except pl.exceptions.PolarsError as exc:
            recoded, decoded = _as_utf8(original, name, whole=True)
            if recoded is original:
                raise InputError(locate_problem(original, sep, name)) from exc
            frame, renames, notes = _read_csv(recoded, name, sep, options)
            return frame, renames, (*decoded, *notes)
    if names is not None:
        if frame.width != len(names):
            raise InputError(locate_problem(original, sep, name))
        frame.columns = names
    frame, converted = with_decimal_commas(frame, sep, options)
    return frame, renames, (*decoded, *csv_notes(sep, options.separator is not None, converted))


def read_table(
    source: Path | bytes, name: str, options: CsvOptions | None = None
) -> tuple[pl.DataFrame, tuple[Rename, ...]]:
    """:func:`read_table_noted` without the notes."""
    frame, renames, _ = read_table_noted(source, name, options)
    return frame, renames


def jsonl_nulls(path: Path, columns: list[str]) -> Callable[[str], pl.Series | None]:
    """For a JSON Lines capture read from ``path`` (its events' ``columns``): a function
    telling, for one of its columns, which events hold the field as null (not without it),
    reading the file again when asked (:func:`diagnostics.captures.jsonl.held_null`)."""

    def held(name: str) -> pl.Series | None:
        if name not in columns:
            return None
        try:
            data = path.read_bytes()
            if data[:2] == b"\x1f\x8b":
                data = gzip.decompress(data)
            return held_null(data, name)
        except (OSError, EOFError, ValueError, InputError, pl.exceptions.PolarsError):
            return None  # changed or gone since it was read: cannot tell

    return held


def read_table_noted(
    source: Path | bytes, name: str, options: CsvOptions | None = None
) -> tuple[pl.DataFrame, tuple[Rename, ...], tuple[str, ...]]:
    """A CSV, JSON Lines (or JSON array) or Parquet capture (file or bytes) and the header
    renames; an :class:`InputError` names the file (and the line, and column). ``options``:
    how a CSV is read (``diagnostics.captures.dialect``; default: detected)."""
    options = options or CsvOptions()
    kind, gz = table_kind(name)
    try:
        if kind == "parquet":
            if isinstance(source, bytes):
                raw = gzip.decompress(source) if gz else source
                return (*rename_empty(pl.read_parquet(io.BytesIO(raw))), ())
            return (
                *rename_empty(
                    pl.read_parquet(gzip.decompress(source.read_bytes()) if gz else source)
                ),
                (),
            )
        data = source if isinstance(source, bytes) else source.read_bytes()
        if gz or data[:2] == b"\x1f\x8b":
            data = gzip.decompress(data)
    except (OSError, EOFError, pl.exceptions.PolarsError) as exc:
        detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        msg = f"{name}: cannot be read as {kind}{' (gzip)' if gz else ''}: {detail}"
        raise InputError(msg) from exc
    if kind == "csv":
        tsv = "\t" if name.lower().endswith((".tsv", ".tsv.gz")) else None
        return _read_csv(data, name, options.separator or tsv, options)
    if kind != "jsonl":
        msg = f"{name}: {kind} is not a table format"
        raise InputError(msg)
    return (*rename_empty(read_jsonl(data, name)), ())
