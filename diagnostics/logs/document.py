"""Reading a log file that is not JSON Lines: lines and JSON values spread over lines.

Pretty-printed documents, several pasted JSON values, text, or a mix are read as a sequence
of lines and JSON values (:func:`read_values`): a line that opens a JSON value without closing
it (``{``, ``[``, ``{"records": [``, ...) starts a value spread over lines; every other line is
read as in JSON Lines (:func:`~diagnostics.logs.lines.read_line`). An array of objects or a
records wrapper spread over lines is read element by element (line = the element's first
line); any other value spread over lines is one record (line = its first line). A broken
element or value is one quarantined record with its first line's number, and reading resumes
after it: after the line where the decoder broke, the broken value also takes the lines
indented deeper than its first line and its own closing bracket (at its first line's
indentation); so one broken element of a pretty-printed array costs that element only, and the
next element is read. A broken value whose break is on its own line, and that does not end its
line with ``{`` or ``[``, is read as a line (a text line, a portal notification, a broken JSON
line).
"""

from __future__ import annotations

import json
import re
from collections.abc import Generator, Iterator

from diagnostics.logs.lines import (
    DECODER,
    ESCAPED,
    Normaliser,
    Outcome,
    elements_of,
    holding,
    read_line,
)
from diagnostics.logs.records import Quarantined, quarantine

_WRAPPER = re.compile(r'\{\s*"records"\s*:\s*\[')
#: An array read element by element: ``[`` alone on its line, or followed by ``{`` or ``]``.
_ARRAY = re.compile(r"\[(?:[ \t\r]*(?:\n|$)|\s*[{\]])")
_WS = re.compile(r"[ \t\r\n]*")
#: Blanks around a line's content (``bytes.strip()``'s ASCII whitespace without the newline).
_BLANK = " \t\r\x0b\x0c"


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

    def invalid_utf8(self, start: int, end: int) -> str | None:
        """Where the first byte that is not UTF-8 in ``start..end`` is, if any: ``byte N of
        line L`` (N counted from 1 in the line's bytes, as :func:`read_line` says it)."""
        found = ESCAPED.search(self.text, start, end)
        if found is None:
            return None
        at = found.start()
        line = self.line(start) + self.text.count("\n", start, at)
        byte = len(self.raw(self.text.rfind("\n", 0, at) + 1, at)) + 1
        return f"byte {byte} of line {line}"


#: A generator of outcomes that returns where reading goes on.
_Reading = Generator[Outcome, None, int]


def _opens(body: str) -> bool:
    """True when ``body`` (a line's content) starts a JSON value that it does not finish: the
    decoder read all of it and wanted more."""
    try:
        DECODER.raw_decode(body)
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
        yield quarantine(name, number, f"invalid UTF-8 at {bad_byte}", doc.raw(start, end))
        return
    elements = elements_of(value) if whole else None
    if elements is None:
        yield make(value, name, number, doc.text[start:end])
    else:
        yield from holding(elements, name, number, doc.text[start:end], make)


def _array(doc: _Text, opener: int, bracket: int, name: str, make: Normaliser) -> _Reading:
    """The elements of the array whose ``[`` is at ``bracket`` (its value starts at
    ``opener``: the ``[`` itself or a records wrapper's ``{``); returns the position after
    its ``]``.

    An element is read where it starts. One that starts a line and ends on it, followed by
    more text on that line, is read as a line; one spread over lines is one outcome however
    its closing line goes on (``} {``, ``} x``), and reading resumes after it. A broken
    element is handled as :func:`_broken` says. Commas are optional between elements (a
    missing one loses nothing). A document that ends before its
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
            value, end = DECODER.raw_decode(text, pos)
        except (ValueError, RecursionError) as exc:
            error, why = _decode_error(doc, pos, exc)
            end = _broken_end(doc, pos, error)
            why = f"invalid JSON in document element: {why}"
            outcomes = _broken(doc, pos, end, why, name, make)
            broken = not (at_start and end <= doc.eol(pos))  # not read as a line
        else:
            rest = text[end : doc.eol(end)].lstrip(" \t\r")
            one_line = end <= doc.eol(pos)
            if at_start and one_line and rest and rest[0] not in ",]":  # value and text: a line
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
        value, end = DECODER.raw_decode(text, start)
    except (ValueError, RecursionError) as exc:
        error, why = _decode_error(doc, start, exc)
        end = _broken_end(doc, start, error)
        yield from _broken(doc, start, end, f"invalid JSON: {why}", name, make)
        return end
    yield from _decoded(doc, start, end, value, name, make, whole=True)
    return end


def read_values(data: bytes, name: str, make: Normaliser) -> Iterator[Outcome]:
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
