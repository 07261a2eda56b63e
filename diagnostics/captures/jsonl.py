"""JSON Lines captures: one JSON object a line, read by polars. A key repeated in one object
(``{"a": 1, "a": 2}``, at any depth) is a one-line error naming the file, line and key:
the table reader would keep one value and lose the other without a word. The check is
cheap: a line is parsed again in Python only when its key-like tokens repeat."""

from __future__ import annotations

import io
import json
import re
from typing import Any

import polars as pl

from diagnostics.errors import InputError

_BOM = b"\xef\xbb\xbf"
#: A JSON string followed by a colon: every key of a line (and, rarely, more).
_KEY = r'"(?:[^"\\]|\\.)*"\s*:'


class RepeatedKeyError(ValueError):
    """A JSON object names ``key`` twice."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``json.loads``' ``object_pairs_hook``: the object, or :class:`RepeatedKeyError`."""
    found = dict(pairs)
    if len(found) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise RepeatedKeyError(key)
            seen.add(key)
    return found


def _repeated(name: str, number: int, key: str) -> str:
    return (
        f"{name}, line {number}: key '{key}' appears twice in one JSON object (keep one: "
        "the table would hold only one of its values)"
    )


def _bad_line(data: bytes, name: str, unit: str = "line") -> str:
    """The first line that is not a JSON object, or the first field whose kind of value
    changes, for the error message (``unit``: "element" for a JSON array's events)."""
    for number, line in enumerate(data.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError as exc:
            return f"{name}, line {number}, column {exc.start + 1}: not UTF-8 text"
        try:
            value = json.loads(text, object_pairs_hook=unique_keys)
        except RepeatedKeyError as exc:
            return _repeated(name, number, exc.key)
        except json.JSONDecodeError as exc:
            return f"{name}, line {number}, column {exc.colno}: not valid JSON ({exc.msg})"
        except (ValueError, RecursionError) as exc:
            return f"{name}, line {number}: not valid JSON ({type(exc).__name__})"
        if not isinstance(value, dict):
            return f"{name}, line {number}: a JSON object was expected, got {type(value).__name__}"
    return _mixed_kinds(data, name, unit) or f"{name}: could not be read as JSON Lines"


def _kind(value: object) -> str | None:
    """The JSON kind of a field's value (None for null, which goes with any kind)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "text"
    return "an object" if isinstance(value, dict) else "an array"


def _mixed_kinds(data: bytes, name: str, unit: str) -> str | None:
    """The first field holding another kind of value than on an earlier line (an object
    here, text there): one column holds one kind, so the table reader refuses the file."""
    first: dict[str, tuple[str, int]] = {}
    soft: str | None = None  # numbers beside text: read as text, so likely not the cause
    for number, line in enumerate(data.splitlines(), start=1):
        if not line.strip():
            continue
        for key, value in json.loads(line).items():
            kind = _kind(value)
            if kind is None:
                continue
            seen = first.setdefault(key, (kind, number))
            if seen[0] == kind:
                continue
            said = (
                f"{name}, {unit} {number}: field '{key}' holds {kind} here but {seen[0]} "
                f"in {unit} {seen[1]}; a column holds one kind of value (write the field "
                "the same way in every event)"
            )
            if {kind, seen[0]} != {"a number", "text"}:
                return said
            soft = soft or said
    return soft


def _lines(data: bytes) -> pl.DataFrame:
    """The file's lines, one a row (blank lines kept: row N is line N + 1)."""
    try:  # the CSV reader splits lines fast; 0x1F (a control byte) is never raw in JSON
        return pl.read_csv(
            io.BytesIO(data),
            has_header=False,
            separator="\x1f",
            quote_char=None,
            schema={"line": pl.String},
        )
    except pl.exceptions.PolarsError:
        return pl.DataFrame({"line": data.decode("utf-8", errors="replace").split("\n")})


def _suspects(frame: pl.DataFrame, data: bytes) -> pl.DataFrame:
    """The lines (``number``, ``line``) that may repeat a key: every key is a string then a
    colon, so a line with no more ``":`` than non-null fields read repeats none."""
    lines = _lines(data).with_row_index("number", offset=1)
    lines = lines.filter(pl.col("line").str.strip_chars() != "")
    if lines.height == frame.height and frame.width:
        line = lines["line"]
        tokens = line.str.count_matches('":', literal=True).cast(pl.Int64)
        spaced = line.str.contains(r'"\s+:')  # a space before a colon: not counted, check
        present = frame.select(pl.sum_horizontal(pl.all().is_not_null())).to_series()
        lines = lines.filter((tokens > present.cast(pl.Int64)) | spaced)
    keys = lines["line"].str.extract_all(_KEY).list.eval(pl.element().str.strip_chars_end(": \t"))
    suspect = (keys.list.len() != keys.list.n_unique()) | lines["line"].str.contains(
        "\\u", literal=True
    )
    return lines.filter(suspect)


def check_repeated_keys(frame: pl.DataFrame, data: bytes, name: str) -> None:
    """A one-line error for the first line whose object (at any depth) repeats a key."""
    for number, line in _suspects(frame, data).iter_rows():
        try:
            json.loads(line, object_pairs_hook=unique_keys)
        except RepeatedKeyError as exc:
            raise InputError(_repeated(name, number, exc.key)) from exc
        except ValueError:
            continue  # polars read it: a line this split cut differently, not a repeated key


def _array_as_lines(data: bytes, name: str) -> bytes:
    """A JSON array of event objects (ASA's blob output with format "array", pretty-printed
    or on one line) as JSON Lines; an :class:`InputError` names file, line and column."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        msg = f"{name}, line {line}: invalid UTF-8 at byte {exc.start}"
        raise InputError(msg) from exc
    try:
        events = json.loads(text, object_pairs_hook=unique_keys)
    except RepeatedKeyError as exc:
        msg = (
            f"{name}: key '{exc.key}' appears twice in one JSON object (keep one: the table "
            "would hold only one of its values)"
        )
        raise InputError(msg) from exc
    except json.JSONDecodeError as exc:
        msg = f"{name}, line {exc.lineno}, column {exc.colno}: not valid JSON ({exc.msg})"
        raise InputError(msg) from exc
    except RecursionError as exc:
        msg = f"{name}: JSON nested too deeply"
        raise InputError(msg) from exc
    if not isinstance(events, list):
        msg = f"{name}: a JSON array of event objects was expected"
        raise InputError(msg)
    for index, event in enumerate(events, start=1):
        if not isinstance(event, dict):
            msg = (
                f"{name}: element {index} of the JSON array is {type(event).__name__}, not an "
                "event object"
            )
            raise InputError(msg)
    if not events:
        msg = f"{name}: the JSON array holds no events"
        raise InputError(msg)
    return "\n".join(json.dumps(e, ensure_ascii=False) for e in events).encode()


def read_jsonl(data: bytes, name: str) -> pl.DataFrame:
    """The events of a JSON Lines capture, or of one JSON array of events; an
    :class:`InputError` names file and line."""
    data = data.removeprefix(_BOM)
    if not data.strip():
        msg = f"{name}: the file is empty (JSON Lines: one event object a line)"
        raise InputError(msg)
    unit = "line"
    if data.lstrip()[:1] == b"[":
        data, unit = _array_as_lines(data, name), "element"
    try:
        frame = pl.read_ndjson(io.BytesIO(data), infer_schema_length=10_000)
    except pl.exceptions.PolarsError as exc:
        raise InputError(_bad_line(data, name, unit)) from exc
    check_repeated_keys(frame, data, name)
    return frame


def held_null(data: bytes, key: str) -> pl.Series:
    """Row for row with :func:`read_jsonl`'s events (of the same ``data``): whether the
    event holds the top-level field ``key`` with the value null, as opposed to not at all
    (both read as null). Only the lines that write the key next to ``null`` are parsed."""
    data = data.removeprefix(_BOM)
    if data.lstrip()[:1] == b"[":
        data = _array_as_lines(data, "")
    lines = _lines(data).filter(pl.col("line").str.strip_chars() != "")["line"]
    quoted = re.escape(json.dumps(key, ensure_ascii=False))
    maybe = lines.str.contains(quoted + r"\s*:\s*null").fill_null(False)
    held = [False] * lines.len()
    for row in maybe.arg_true().to_list():
        try:
            event = json.loads(lines[row])
        except ValueError:
            continue
        held[row] = isinstance(event, dict) and key in event and event[key] is None
    return pl.Series(key, held, dtype=pl.Boolean)
