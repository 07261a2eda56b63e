"""Splitting one log file (any ASA export shape) into records with line numbers.

Shapes, detected from the content (and ``.csv`` in the name):

* gzip (magic bytes) is decompressed first; a corrupt or truncated stream keeps what
  decompressed and adds one quarantined record saying where it broke;
* a UTF-8 BOM is dropped; CRLF line ends are accepted;
* **CSV** (a ``.csv`` name or a non-JSON header with ``properties_s``): Log Analytics
  ``AzureDiagnostics`` rows, quoted multi-line fields allowed, line = the row's first line;
* **JSON Lines** (the first non-blank line is a complete JSON value): line by line, see
  :func:`~diagnostics.logs.lines.read_line`;
* **anything else** (pretty-printed documents, several pasted JSON values, text, or a mix) is
  read as a sequence of lines and JSON values spread over lines, see
  :mod:`diagnostics.logs.document`.

Invariant (docs/schemas.md, "Counting"): blank (empty or whitespace-only) lines are not records;
every other line of JSON Lines or of a text mix gives its records and at most one quarantined
record, all with its line number, and at least one of the two; every element of a document
spread over lines, and every broken part of one, gives exactly one outcome with its first line;
every CSV row exactly one; nothing raises for bad content.
"""

from __future__ import annotations

import csv
import io
import json
import zlib
from collections.abc import Iterator

from diagnostics.logs.document import read_values
from diagnostics.logs.lines import ESCAPED, Normaliser, Outcome, json_lines, read_line
from diagnostics.logs.normalise import normalise
from diagnostics.logs.records import Quarantined, quarantine

__all__ = [
    "PARQUET_MAGIC",
    "Normaliser",
    "Outcome",
    "gunzip",
    "gzip_quarantine",
    "prepare",
    "read_line",
    "read_records",
]

_BOM = b"\xef\xbb\xbf"
PARQUET_MAGIC = b"PAR1"


def gunzip(data: bytes) -> tuple[bytes, str | None]:
    """Decompress (possibly multi-member) gzip; returns the bytes and an error or ``None``."""
    out: list[bytes] = []
    rest = data
    while rest:
        inflater = zlib.decompressobj(wbits=31)
        try:
            out.append(inflater.decompress(rest))
        except zlib.error as exc:
            return b"".join(out), f"corrupt gzip stream ({exc})"
        if not inflater.eof:
            return b"".join(out), "truncated gzip stream"
        rest = inflater.unused_data.lstrip(b"\x00")
    return b"".join(out), None


def _csv_rows(text: str, name: str, make: Normaliser) -> Iterator[Outcome]:
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader)
    except (StopIteration, csv.Error):
        return
    if "properties_s" not in header:
        yield quarantine(name, 1, "CSV header has no properties_s column", _utf8(text))
        return
    start = reader.line_num + 1
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            yield quarantine(name, start, f"invalid CSV: {exc}", "")
            return
        if not row or not any(cell.strip() for cell in row):
            start = reader.line_num + 1
            continue
        raw = ",".join(row)
        if ESCAPED.search(raw):
            yield quarantine(name, start, "invalid UTF-8 in this CSV row", _utf8(raw))
        elif len(row) != len(header):
            reason = f"CSV row has {len(row)} fields, the header {len(header)}"
            yield quarantine(name, start, reason, raw)
        else:
            yield make(dict(zip(header, row, strict=True)), name, start, raw, csv_row=True)
        start = reader.line_num + 1


def _utf8(text: str) -> bytes:
    """The bytes of text decoded with ``surrogateescape``."""
    return text.encode("utf-8", "surrogateescape")


def _first_line_is_json(data: bytes) -> bool:
    for line in data.split(b"\n", 50)[:50]:
        if line.strip():
            try:
                json.loads(line)
            except (ValueError, RecursionError):
                return False
            return True
    return True


def prepare(data: bytes, name: str) -> tuple[bytes, str | None, str]:
    """How :func:`read_records` reads ``data``: (bytes after gunzip and BOM, gzip error, shape).

    ``shape`` is ``"csv"``, ``"lines"`` (JSON Lines: every line on its own, numbered from 1 by
    ``data.split(b"\\n")``) or ``"document"`` (lines and JSON values spread over lines).
    """
    gzip_error = None
    if data[:2] == b"\x1f\x8b":
        data, gzip_error = gunzip(data)
    if data.startswith(_BOM):
        data = data[len(_BOM) :]
    head = data[:4096].split(b"\n", 1)[0]
    csv_header = b"properties_s" in head and head.lstrip()[:1] not in (b"{", b"[")
    if name.lower().removesuffix(".gz").endswith(".csv") or csv_header:
        return data, gzip_error, "csv"
    if _first_line_is_json(data):
        return data, gzip_error, "lines"
    return data, gzip_error, "document"


def gzip_quarantine(data: bytes, name: str, gzip_error: str) -> Quarantined:
    """The record that stands for the unreadable end of a corrupt or truncated gzip file."""
    return quarantine(name, data.count(b"\n") + 1, gzip_error, data[-256:])


def read_records(data: bytes, name: str) -> Iterator[Outcome]:
    """Every record of the file ``name`` whose bytes are ``data``, as outcomes in file order."""
    return _read(data, name, normalise)


def _read(data: bytes, name: str, make: Normaliser) -> Iterator[Outcome]:
    data, gzip_error, shape = prepare(data, name)
    if shape == "csv":
        yield from _csv_rows(data.decode("utf-8", "surrogateescape"), name, make)
    elif shape == "lines":
        yield from json_lines(data.split(b"\n"), name, make)
    else:
        yield from read_values(data, name, make)
    if gzip_error is not None:
        yield gzip_quarantine(data, name, gzip_error)
