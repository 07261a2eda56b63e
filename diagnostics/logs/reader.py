"""Splitting one log file (any ASA export shape) into records with line numbers.

Shapes, detected from the content (and ``.csv`` in the name):

* gzip (magic bytes) is decompressed first; a corrupt or truncated stream keeps what
  decompressed and adds one quarantined record saying where it broke;
* a UTF-8 BOM is dropped; CRLF line ends are accepted;
* **CSV** (a ``.csv`` name or a non-JSON header with ``properties_s``): Log Analytics
  ``AzureDiagnostics`` rows, quoted multi-line fields allowed, line = the row's first line;
* **JSON Lines** (the first non-blank line is a complete JSON value): line by line, see
  :func:`read_line`;
* **anything else** (pretty-printed documents, several pasted JSON values, text, or a mix) is
  read as a sequence of lines and JSON values (:func:`_values`): a line that opens a JSON
  value without closing it (``{``, ``[``, ``{"records": [``, ...) starts a value spread over
  lines; every other line is read as in JSON Lines. An array of objects or a records wrapper
  spread over lines is read element by element (line = the element's first line); any other
  value spread over lines is one record (line = its first line). A broken element or value is
  one quarantined record with its first line's number, and reading resumes after it: after the
  line where the decoder broke, the broken value also takes the lines indented deeper than its
  first line and its own closing bracket (at its first line's indentation); so one broken
  element of a pretty-printed array costs that element only, and the next element is read. A
  broken value whose break is on its own line, and that does not end its line with ``{`` or
  ``[``, is read as a line (a text line, a portal notification, a broken JSON line).

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
import re
import zlib
from collections.abc import Callable, Generator, Iterator, Sequence

from diagnostics.logs import messages
from diagnostics.logs.normalise import normalise
from diagnostics.logs.records import DataError, Quarantined, quarantine

Outcome = DataError | Quarantined
#: :func:`~diagnostics.logs.normalise.normalise` (or a function of the same signature).
Normaliser = Callable[..., Outcome]

_BOM = b"\xef\xbb\xbf"
_WRAPPER = re.compile(r'\{\s*"records"\s*:\s*\[')
#: An array read element by element: ``[`` alone on its line, or followed by ``{`` or ``]``.
_ARRAY = re.compile(r"\[(?:[ \t\r]*(?:\n|$)|\s*[{\]])")
_WS = re.compile(r"[ \t\r\n]*")
#: Blanks around a line's content (``bytes.strip()``'s ASCII whitespace without the newline).
_BLANK = " \t\r\x0b\x0c"
#: Bytes that are not UTF-8 decode (``surrogateescape``) to the code points U+DC80..U+DCFF.
_ESCAPED = re.compile("[\udc80-\udcff]")
_DECODER = json.JSONDecoder()
PARQUET_MAGIC = b"PAR1"
#: The reasons of at most this many bad elements are spelled out in an array line's record.
_REASONS_SHOWN = 3


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
    if isinstance(value, dict) and ("properties" not in value):
        records = value.get("records")
        if isinstance(records, list):
            return records
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


def _holding(
    elements: Sequence[object], name: str, number: int, raw: bytes | str, make: Normaliser
) -> Iterator[Outcome]:
    """The outcomes of the records one line (or one value) holds: each element that parses is
    a record; the elements that do not are one quarantined record for the whole line, so a
    line is never quarantined twice. An empty array is quarantined (the line is accounted)."""
    if not elements:
        yield quarantine(name, number, "an empty JSON array: no record on this line", raw)
        return
    bad: list[tuple[int, str]] = []
    for index, element in enumerate(elements, start=1):
        outcome = make(element, name, number, "")
        if isinstance(outcome, Quarantined):
            bad.append((index, outcome.reason))
        else:
            yield outcome
    if not bad:
        return
    if len(bad) == 1:
        index, why = bad[0]
        where = (
            "the one element" if len(elements) == 1 else f"element {index} of the {len(elements)}"
        )
        reason = f"{where} on this line: {why}"
    else:
        shown = "; ".join(f"element {index}: {why}" for index, why in bad[:_REASONS_SHOWN])
        if len(bad) > _REASONS_SHOWN:
            shown += f"; and {len(bad) - _REASONS_SHOWN} more"
        reason = f"{len(bad)} of the {len(elements)} elements on this line: {shown}"
    yield quarantine(name, number, reason, raw)


def read_line(
    line: bytes, name: str, number: int, make: Normaliser = normalise
) -> Iterator[Outcome]:
    """The outcomes of line ``number`` of a JSON Lines file (none for a blank line).

    A line holding one record gives one outcome. A line holding an array or a records wrapper
    gives a record per element that parses and, when some do not, one quarantined record
    naming them (:func:`_holding`). ``make`` normalises each decoded record.
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
    else:
        yield from _holding(elements, name, number, line, make)


def _json_lines(lines: list[bytes], name: str, make: Normaliser) -> Iterator[Outcome]:
    for number, line in enumerate(lines, start=1):
        yield from read_line(line, name, number, make)


class _Text:
    """A file's text (bytes that are not UTF-8 kept as escapes) and where things are in it."""

    __slots__ = ("_counted", "_line", "text")

    def __init__(self, data: bytes) -> None:
        self.text = data.decode("utf-8", "surrogateescape")
        self._counted = 0
        self._line = 1

    def line(self, pos: int) -> int:
        """The 1-based line number of position ``pos`` (cheap when asked in file order)."""
        if pos < self._counted:
            self._counted, self._line = 0, 1
        self._line += self.text.count("\n", self._counted, pos)
        self._counted = pos
        return self._line

    def skip_space(self, pos: int) -> int:
        """The first position from ``pos`` on that is not JSON whitespace."""
        found = _WS.match(self.text, pos)
        return pos if found is None else found.end()

    def eol(self, pos: int) -> int:
        """The position of the newline ending ``pos``'s line (the text's length on the last)."""
        end = self.text.find("\n", pos)
        return len(self.text) if end < 0 else end

    def indent(self, pos: int) -> int:
        """The indentation (spaces and tabs) of ``pos``'s line."""
        start = self.text.rfind("\n", 0, pos) + 1
        line = self.text[start : self.eol(start)]
        return len(line) - len(line.lstrip(" \t"))

    def starts_line(self, pos: int) -> bool:
        """True when only blanks come before ``pos`` on its line."""
        start = self.text.rfind("\n", 0, pos) + 1
        return not self.text[start:pos].strip(_BLANK)

    def raw(self, start: int, end: int) -> bytes:
        """The file's bytes from ``start`` to ``end``."""
        return self.text[start:end].encode("utf-8", "surrogateescape")

    def invalid_utf8(self, start: int, end: int) -> int | None:
        """The file offset of the first byte that is not UTF-8 in ``start..end``, if any."""
        found = _ESCAPED.search(self.text, start, end)
        if found is None:
            return None
        return len(self.raw(0, found.start()))


#: A generator of outcomes that returns where reading goes on.
_Reading = Generator[Outcome, None, int]


def _opens(body: str) -> bool:
    """True when ``body`` (a line's content) starts a JSON value that it does not finish: the
    decoder read all of it and wanted more."""
    try:
        _DECODER.raw_decode(body)
    except json.JSONDecodeError as exc:
        return exc.pos >= len(body)
    except (ValueError, RecursionError):
        return False
    return False


def _broken_end(doc: _Text, start: int, error: int) -> int:
    """Where the broken value starting at ``start`` ends (the decoder stopped at ``error``).

    It is its first line when the break is on that line and the line does not end with
    ``{`` or ``[``. Otherwise the value was spread over lines: it also takes the following
    lines indented deeper than its first line, and its closing bracket at that indentation
    (and nothing else: a line at most as indented is not the value's, whatever the decoder
    made of it).
    """
    text = doc.text
    end = doc.eol(start)
    if error <= end and not text[start:end].rstrip(_BLANK).endswith(("{", "[")):
        return end
    indent = doc.indent(start)
    pos = end + 1
    while pos < len(text):
        eol = doc.eol(pos)
        line = text[pos:eol]
        content = line.lstrip(" \t")
        if not content.strip(_BLANK):
            pos = eol + 1
            continue
        depth = len(line) - len(content)
        if depth > indent:
            end = eol
            pos = eol + 1
            continue
        if depth == indent and content[0] in "}]":
            return pos + depth + 1
        break
    return end


def _broken(
    doc: _Text, start: int, end: int, reason: str, name: str, make: Normaliser
) -> Iterator[Outcome]:
    """The outcome of the broken part ``start..end``: read as a line when it is one whole
    line, else one quarantined record at its first line."""
    first = doc.line(start)
    if end <= doc.eol(start) and doc.starts_line(start):
        yield from read_line(doc.raw(start, end), name, first, make)
        return
    last = first + doc.text.count("\n", start, end)
    where = f"line {first}" if last == first else f"lines {first}-{last}"
    yield quarantine(name, first, f"{reason} ({where})", doc.raw(start, end).rstrip())


def _decode_error(doc: _Text, start: int, exc: ValueError | RecursionError) -> tuple[int, str]:
    """Where decoding from ``start`` broke, and why, in words."""
    if isinstance(exc, json.JSONDecodeError):
        line = doc.line(start) + doc.text.count("\n", start, exc.pos)
        return exc.pos, f"{exc.msg} at line {line} column {exc.colno}"
    return start, "nested too deeply"


def _decoded(
    doc: _Text, start: int, end: int, value: object, name: str, make: Normaliser, *, whole: bool
) -> Iterator[Outcome]:
    """The outcome(s) of a value decoded from ``start..end``: one record (an element), or the
    records a value spread over lines holds (``whole``: an array or a wrapper decoded whole)."""
    number = doc.line(start)
    bad_byte = doc.invalid_utf8(start, end)
    if bad_byte is not None:
        yield quarantine(
            name, number, f"invalid UTF-8 at byte offset {bad_byte}", doc.raw(start, end)
        )
        return
    elements = _elements(value) if whole else None
    if elements is None:
        yield make(value, name, number, doc.text[start:end])
    else:
        yield from _holding(elements, name, number, doc.text[start:end], make)


def _array(doc: _Text, opener: int, bracket: int, name: str, make: Normaliser) -> _Reading:
    """The elements of the array whose ``[`` is at ``bracket`` (its value starts at
    ``opener``: the ``[`` itself or a records wrapper's ``{``); returns the position after
    its ``]``.

    An element is read where it starts; one at the start of a line that is followed by more
    text on its line, or that is broken, is handled as :func:`_broken` says. Commas are
    optional between elements (a missing one loses nothing). A document that ends before its
    ``]`` adds one quarantined record at its first line, unless a broken element ran to the
    end or that line already has one.
    """
    text = doc.text
    content_end = len(text.rstrip())
    first_line = doc.line(opener)
    first_line_quarantined = False
    pos = bracket + 1
    while True:
        pos = doc.skip_space(pos)
        if pos >= len(text):
            if not first_line_quarantined:
                reason = "a JSON document that ends before its closing ']'"
                yield quarantine(name, first_line, reason, doc.raw(opener, doc.eol(opener)))
            return pos
        if text[pos] == "]":
            return pos + 1
        if text[pos] == ",":
            pos += 1
            continue
        at_start, broken = doc.starts_line(pos), False
        try:
            value, end = _DECODER.raw_decode(text, pos)
        except (ValueError, RecursionError) as exc:
            error, why = _decode_error(doc, pos, exc)
            end = _broken_end(doc, pos, error)
            why = f"invalid JSON in document element: {why}"
            outcomes = _broken(doc, pos, end, why, name, make)
            broken = not (at_start and end <= doc.eol(pos))  # not read as a line
        else:
            rest = text[end : doc.eol(end)].lstrip(" \t\r")
            if at_start and rest and rest[0] not in ",]":  # a value and more text: a line
                end = doc.eol(pos)
                outcomes = read_line(doc.raw(pos, end), name, doc.line(pos), make)
            else:
                outcomes = _decoded(doc, pos, end, value, name, make, whole=False)
        for outcome in outcomes:
            if isinstance(outcome, Quarantined) and outcome.source_line == first_line:
                first_line_quarantined = True
            yield outcome
        if broken and end >= content_end:  # a broken element ran to the end: truncated
            return len(text)
        pos = end


def _value(doc: _Text, start: int, name: str, make: Normaliser) -> _Reading:
    """The value spread over lines that opens at ``start``; returns the position after it."""
    text = doc.text
    if _ARRAY.match(text, start):
        return (yield from _array(doc, start, start, name, make))
    wrapper = _WRAPPER.match(text, start)
    if wrapper:
        end = yield from _array(doc, start, wrapper.end() - 1, name, make)
        close = doc.skip_space(end)
        return close + 1 if close < len(text) and text[close] == "}" else end
    try:
        value, end = _DECODER.raw_decode(text, start)
    except (ValueError, RecursionError) as exc:
        error, why = _decode_error(doc, start, exc)
        end = _broken_end(doc, start, error)
        yield from _broken(doc, start, end, f"invalid JSON: {why}", name, make)
        return end
    yield from _decoded(doc, start, end, value, name, make, whole=True)
    return end


def _values(data: bytes, name: str, make: Normaliser) -> Iterator[Outcome]:
    """Every record of a file that is not JSON Lines: lines and JSON values spread over lines
    (see the module docstring), in file order."""
    doc = _Text(data)
    text = doc.text
    pos = 0
    after_value = False
    while pos < len(text):
        eol = doc.eol(pos)
        segment = text[pos:eol]
        body = segment.strip(_BLANK)
        if not body:
            pos, after_value = eol + 1, False
            continue
        start = pos + len(segment) - len(segment.lstrip(_BLANK))
        if after_value and text[start] == ",":  # values pasted as a list without brackets
            pos, after_value = start + 1, False
            continue
        if text[start] in "{[" and _opens(body):
            pos = yield from _value(doc, start, name, make)
            after_value = True
            continue
        yield from read_line(doc.raw(pos, eol), name, doc.line(pos), make)
        pos, after_value = eol + 1, False


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
        if _ESCAPED.search(raw):
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
        yield from _json_lines(data.split(b"\n"), name, make)
    else:
        yield from _values(data, name, make)
    if gzip_error is not None:
        yield gzip_quarantine(data, name, gzip_error)
