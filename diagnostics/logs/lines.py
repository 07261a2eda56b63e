"""Reading one line of a log file into records: the JSON Lines shape.

A line holds one JSON value (a record, an array of records or a ``{"records": [...]}``
wrapper), or text: a line that is not JSON but carries an ASA message (a portal
notification, a pasted ``"Message": "..."`` member; :func:`~diagnostics.logs.messages.message_text`)
is a record like any other, other text is quarantined. :func:`read_line` gives each line's outcomes (see
the invariant in :mod:`diagnostics.logs.reader`); :func:`holding` accounts for the records an
array or a wrapper holds, here and in values spread over lines
(:mod:`diagnostics.logs.document`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Sequence

from diagnostics.logs import messages
from diagnostics.logs.lifecycle import JobEvent
from diagnostics.logs.normalise import normalise
from diagnostics.logs.records import DataError, Quarantined, quarantine

Outcome = DataError | JobEvent | Quarantined
#: :func:`~diagnostics.logs.normalise.normalise` (or a function of the same signature).
Normaliser = Callable[..., Outcome]

#: Bytes that are not UTF-8 decode (``surrogateescape``) to the code points U+DC80..U+DCFF.
ESCAPED = re.compile("[\udc80-\udcff]")
DECODER = json.JSONDecoder()
#: The reasons of at most this many bad elements are spelled out in an array line's record.
_REASONS_SHOWN = 3


def elements_of(value: object) -> list[object] | None:
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
            value, end = DECODER.raw_decode(text)
        except (ValueError, RecursionError):  # invalid UTF-8 is a ValueError too
            return json.loads(line)
        if end == len(text) or not text[end:].strip(" \t\n\r"):
            return value
    return json.loads(line)


def _not_json_reason(text: str, exc: ValueError) -> str:
    """Why a line that is not JSON (and carries no ASA message) is quarantined: a text line
    is named as one (with the portal notification it is not), a broken JSON value by the
    decoder's message."""
    if messages.has_notification_clock(text):
        return (
            "a text line with a portal notification's clock but not its wording "
            "(Source '...' had N occurrences of kind '...' between times '...' and '...')"
        )
    if messages.is_pasted_member(text):
        return "a pasted JSON member that carries no ASA message"
    if text.lstrip()[:1] not in ("{", "[", '"'):
        return "a text line that is neither JSON nor an ASA message"
    return f"invalid JSON: {getattr(exc, 'msg', exc)} at column {getattr(exc, 'colno', 0)}"


def holding(
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
    naming them (:func:`holding`). ``make`` normalises each decoded record.
    """
    if not line.strip():
        return
    try:
        value = _loads(line)
    except UnicodeDecodeError as exc:
        where = f"byte {exc.start + 1} of line {number}"  # as documents say it
        yield quarantine(name, number, f"invalid UTF-8 at {where}", line)
        return
    except ValueError as exc:
        text = line.decode("utf-8", "replace")
        if messages.message_text(text) is not None:
            yield make(text, name, number, line)
            return
        yield quarantine(name, number, _not_json_reason(text, exc), line)
        return
    except RecursionError:
        yield quarantine(name, number, "invalid JSON: nested too deeply", line)
        return
    elements = elements_of(value)
    if elements is None:
        yield make(value, name, number, line)
    else:
        yield from holding(elements, name, number, line, make)


def json_lines(lines: list[bytes], name: str, make: Normaliser) -> Iterator[Outcome]:
    for number, line in enumerate(lines, start=1):
        yield from read_line(line, name, number, make)
