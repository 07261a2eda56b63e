"""Splitting one log file (any ASA export shape) into records with line numbers.

Shapes, detected from the content (and ``.csv`` in the name):

* gzip (magic bytes) is decompressed first; a corrupt or truncated stream keeps what
  decompressed and adds one quarantined record saying where it broke;
* a UTF-8 BOM is dropped; CRLF line ends are accepted;
* **CSV** (a ``.csv`` name or a non-JSON header with ``properties_s``): Log Analytics
  ``AzureDiagnostics`` rows, quoted multi-line fields allowed, line = the row's first line;
* **documents**: a bare array (``[`` then ``{`` or ``]``) or ``{"records": [...]}`` spread
  over many lines is read element by element (line = the element's first line); a broken
  element quarantines the rest of the document as one record, keeping every element before
  it; a whole-file JSON value is read as one document too;
* **lines** otherwise (JSON Lines, text, or a mix): every non-blank line is one record with
  its own line number; a line holding ``{"records": [...]}`` or a JSON array counts each
  element; a line that is not JSON is a record when it is a portal notification
  (``[17:22:00] Source '...' had 58 occurrences of kind '...' between times ...``) and is
  quarantined otherwise.

Invariant: blank (empty or whitespace-only) lines are not records; every other line of a
line-shaped file, element of a document or CSV row yields exactly one outcome with its line
number; nothing raises for bad content.
"""

from __future__ import annotations

import csv
import io
import json
import re
import zlib
from collections.abc import Callable, Iterator

from diagnostics.logs import messages
from diagnostics.logs.normalise import normalise
from diagnostics.logs.records import DataError, Quarantined, quarantine

Outcome = DataError | Quarantined
#: :func:`~diagnostics.logs.normalise.normalise` (or a function of the same signature).
Normaliser = Callable[..., Outcome]

_BOM = b"\xef\xbb\xbf"
_WRAPPER = re.compile(r'\s*\{\s*"records"\s*:\s*\[')
_ARRAY = re.compile(r"\s*\[\s*[{\]]")
_WS = re.compile(r"[ \t\r\n]*")
_DECODER = json.JSONDecoder()
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


def _elements(value: object) -> list[object] | None:
    """The records a decoded value holds when it is an array or a records wrapper."""
    if isinstance(value, list):
        return value
    if (
        isinstance(value, dict)
        and isinstance(value.get("records"), list)
        and ("properties" not in value)
    ):
        return value["records"]
    return None


def _loads(line: bytes) -> object:
    """``json.loads(line)``, with a shortcut for the usual line: strict UTF-8 holding one object.

    Anything the shortcut does not accept outright is decoded by ``json.loads`` itself, so
    values and errors are exactly its own.
    """
    if line[:1] == b"{":
        try:
            text = line.decode()
            value, end = _DECODER.raw_decode(text)
        except (ValueError, RecursionError):  # invalid UTF-8 is a ValueError too
            return json.loads(line)
        if end == len(text) or not text[end:].strip(" \t\n\r"):
            return value
    return json.loads(line)


def _not_json_reason(text: str, exc: ValueError) -> str:
    """Why a line that is not JSON is quarantined: a text line is named as one (with the
    portal notification it is not), a broken JSON value by the decoder's message."""
    if messages.has_notification_clock(text):
        return (
            "a text line with a portal notification's clock but not its wording "
            "(Source '...' had N occurrences of kind '...' between times '...' and '...')"
        )
    if text.lstrip()[:1] not in ("{", "[", '"'):
        return "a text line that is neither JSON nor a portal notification"
    return f"invalid JSON: {getattr(exc, 'msg', exc)} at column {getattr(exc, 'colno', 0)}"


def read_line(
    line: bytes, name: str, number: int, make: Normaliser = normalise
) -> Iterator[Outcome]:
    """The outcomes of line ``number`` of a JSON Lines file (none for a blank line).

    A line holding an array or a records wrapper gives one outcome per element; ``make``
    normalises each decoded record (the row form gives plain tuples for parsed records).
    """
    if not line.strip():
        return
    try:
        value = _loads(line)
    except UnicodeDecodeError as exc:
        yield quarantine(name, number, f"invalid UTF-8 at byte offset {exc.start}", line)
        return
    except ValueError as exc:
        text = line.decode("utf-8", "replace")
        if messages.is_notification(text):
            yield make(text, name, number, line)
            return
        yield quarantine(name, number, _not_json_reason(text, exc), line)
        return
    except RecursionError:
        yield quarantine(name, number, "invalid JSON: nested too deeply", line)
        return
    elements = _elements(value)
    if elements is None:
        yield make(value, name, number, line)
    elif not elements:  # the line is accounted for even though it holds no record
        yield quarantine(name, number, "an empty JSON array: no record on this line", line)
    else:
        for element in elements:
            yield make(element, name, number, json.dumps(element))


def _json_lines(lines: list[bytes], name: str, make: Normaliser) -> Iterator[Outcome]:
    for number, line in enumerate(lines, start=1):
        yield from read_line(line, name, number, make)


def _document(text: str, name: str, start: int, make: Normaliser) -> Iterator[Outcome]:
    """Elements of the array whose ``[`` is at ``start`` (a bare array or a wrapper's)."""
    pos = start + 1
    line = text.count("\n", 0, pos) + 1
    counted = pos
    while True:
        pos = _WS.match(text, pos).end()
        if pos < len(text) and text[pos] == "]":
            return
        line += text.count("\n", counted, pos)
        counted = pos
        try:
            value, end = _DECODER.raw_decode(text, pos)
        except (ValueError, RecursionError) as exc:
            reason = f"invalid JSON in document element: {getattr(exc, 'msg', exc)}"
            yield quarantine(name, line, reason, text[pos:])
            return
        yield make(value, name, line, text[pos:end])
        pos = _WS.match(text, end).end()
        if pos < len(text) and text[pos] == ",":
            pos += 1
            continue
        if pos < len(text) and text[pos] == "]":
            return
        line += text.count("\n", counted, pos)
        reason = "invalid JSON document: expected ',' or ']' after an element"
        yield quarantine(name, line, reason, text[pos:])
        return


def _csv_rows(text: str, name: str, make: Normaliser) -> Iterator[Outcome]:
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader)
    except (StopIteration, csv.Error):
        return
    if "properties_s" not in header:
        yield quarantine(name, 1, "CSV header has no properties_s column", text)
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
        if len(row) != len(header):
            reason = f"CSV row has {len(row)} fields, the header {len(header)}"
            yield quarantine(name, start, reason, raw)
        else:
            yield make(dict(zip(header, row, strict=True)), name, start, raw, csv_row=True)
        start = reader.line_num + 1


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
    ``data.split(b"\\n")``) or ``"document"`` (a whole-file JSON document or anything else).
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
        yield from _decoded(data, name, make, csv_mode=True)
    elif shape == "lines":
        yield from _json_lines(data.split(b"\n"), name, make)
    else:
        yield from _decoded(data, name, make, csv_mode=False)
    if gzip_error is not None:
        yield gzip_quarantine(data, name, gzip_error)


def _decoded(data: bytes, name: str, make: Normaliser, *, csv_mode: bool) -> Iterator[Outcome]:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        reason = f"invalid UTF-8 at byte offset {exc.start} of a whole-file document"
        yield quarantine(name, line, reason, data)
        return
    if csv_mode:
        yield from _csv_rows(text, name, make)
        return
    if _ARRAY.match(text):
        yield from _document(text, name, text.index("["), make)
        return
    wrapper = _WRAPPER.match(text)
    if wrapper:
        yield from _document(text, name, wrapper.end() - 1, make)
        return
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        yield from _json_lines(data.split(b"\n"), name, make)
        return
    elements = _elements(value)
    if elements is None:
        yield make(value, name, 1, text)
    else:
        for element in elements:
            yield make(element, name, 1, json.dumps(element))
