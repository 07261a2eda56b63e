"""Event bodies (JSON objects, as bytes) as columns, vectorised, with exactly the result of
reading each body with Python's ``json`` module (the reference: :func:`python_body`).

Bodies that look plain (UTF-8, an object on one line, no escape or control character) are
parsed together by polars' JSON Lines reader, and each parsed row is written back as JSON
and compared with the body: a row that comes back byte for byte (or with only its missing
fields' nulls added) was read as Python reads it, value and kind. Every other body (not JSON,
not an object, a key twice, escapes, another key order, numbers written otherwise) is read by
Python, one by one.

A field keeps the column type its values give (``int``, ``float``, ``bool``, text); a field
whose values are of several kinds, or objects or arrays, is built from Python's values as the
record-by-record reader builds it (:func:`field_column`: its own type, else text).
"""

from __future__ import annotations

import dataclasses
import io
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl
import pyarrow as pa

from diagnostics.captures.body_template import (
    FieldValues,
    template_tokens,
    token_firsts,
    token_values,
    usable_keys,
)
from diagnostics.captures.capture_maps import constant, raw_text
from diagnostics.captures.jsonl import RepeatedKeyError, unique_keys

#: The kinds of values a field's column can hold as its own type, by polars type.
SCALAR_KINDS = {pl.Int64: "int", pl.Float64: "float", pl.Boolean: "bool", pl.String: "str"}
_DTYPES = {kind: dtype for dtype, kind in SCALAR_KINDS.items()}
#: The column type of each scalar kind.
SCALAR_DTYPES: dict[str, pl.DataType] = {kind: dtype() for kind, dtype in _DTYPES.items()}
_I64 = 1 << 63
#: The prefix of a body field's column (a key may be empty, or named like anything else).
FIELD = "b:"


@dataclass(frozen=True, slots=True)
class PythonBody:
    """A body read by Python: its JSON object, else its raw text (``repeated``: a key twice)."""

    fields: dict[str, Any] | None
    raw: str | None = None
    repeated: bool = False


def python_body(value: bytes | None) -> PythonBody:
    """The body's JSON object, or (null, not UTF-8 JSON, not an object, a key repeated in
    one object) its raw text."""
    if value is None:
        return PythonBody(None)
    try:
        parsed = json.loads(value, object_pairs_hook=unique_keys)
    except (ValueError, UnicodeDecodeError, TypeError, RecursionError) as exc:
        return PythonBody(None, raw_text(value), repeated=isinstance(exc, RepeatedKeyError))
    if isinstance(parsed, dict):
        return PythonBody(parsed)
    return PythonBody(None, raw_text(value))


def kind_of(value: object) -> str | None:
    """A Python value's kind: ``int``, ``float``, ``bool``, ``str``, else ``other``."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int" if -_I64 <= value < _I64 else "other"
    if isinstance(value, float):
        return "float"
    return "str" if isinstance(value, str) else "other"


def _text(value: object) -> str | None:
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value)


def field_column(name: str, values: list[Any]) -> pl.Series:
    """One body field's values as a column: its own type, else (values that do not share
    one type: an object here, a number there) text, JSON for objects and numbers."""
    try:
        return pl.Series(name, values, strict=True)
    except (pl.exceptions.PolarsError, TypeError, ValueError, OverflowError):
        return pl.Series(name, [_text(v) for v in values], dtype=pl.String)


def scalar_kind(kinds: Sequence[str]) -> str | None:
    """The one scalar kind of a field whose values have ``kinds`` (``"null"``: none at all),
    or ``None`` when its column is built from Python's values."""
    found = set(kinds) - {"null"}
    if not found:
        return "null"
    if len(found) == 1 and next(iter(found)) in _DTYPES:
        return next(iter(found))
    return None


#: The prefix of the column holding, as JSON text, the values of a field that does not keep
#: a column type of its own in a file (objects, arrays, values of several kinds).
VALUES = "j:"
#: The prefix of the column marking the bodies that hold a field with the value null (there
#: only for a field some body of the file holds as null): a body without the field, or one
#: not read as a JSON object, is false; the field's own column is null in both cases.
NULLS = "n:"


@dataclass(frozen=True, slots=True)
class Bodies:
    """A file's bodies read: the body fields (columns in order of first appearance, named
    by their keys after :data:`FIELD`), the kinds each field holds (``null`` alone: no
    value), the Python values of the fields without one scalar kind as JSON text (``values``,
    named after :data:`VALUES`), the raw text of the bodies not read as a JSON object (null
    for the others) and the counts; ``nulls``: for each field some body holds as null,
    which bodies do (named after :data:`NULLS`; a body without the field is false)."""

    fields: pl.DataFrame
    kinds: dict[str, tuple[str, ...]]
    raw: pl.Series
    without_json: int
    repeated: int
    values: pl.DataFrame
    nulls: pl.DataFrame = dataclasses.field(default_factory=pl.DataFrame)


def values_text(values: Sequence[Any]) -> pl.Series:
    """Python values as JSON text (null for ``None``): :func:`values_of` reads them back."""
    return pl.Series([None if v is None else json.dumps(v) for v in values], dtype=pl.String)


def values_of(text: pl.Series) -> list[Any]:
    """The Python values :func:`values_text` wrote."""
    return [None if t is None else json.loads(t) for t in text.to_list()]


def _as_text(body: pl.Series) -> pl.Series:
    """The bodies as text, null where not UTF-8."""
    try:
        return body.cast(pl.String)
    except pl.exceptions.PolarsError:  # some body is not UTF-8: decode one by one
        texts = []
        for value in body.to_list():
            try:
                texts.append(None if value is None else value.decode("utf-8"))
            except UnicodeDecodeError:
                texts.append(None)
        return pl.Series(body.name, texts, dtype=pl.String)


def _bytes(values: pl.Series) -> tuple[np.ndarray, np.ndarray]:
    """A Binary or String series' offsets and bytes, as Arrow lays them out."""
    array = values.to_arrow()
    wide = array.type in (pa.large_binary(), pa.large_string())
    kind = np.dtype(np.int64 if wide else np.int32)
    buffers = array.buffers()
    offsets = np.frombuffer(
        buffers[1], dtype=kind, count=len(array) + 1, offset=array.offset * kind.itemsize
    ).astype(np.int64)
    data = (
        np.frombuffer(buffers[2], dtype=np.uint8)
        if buffers[2] is not None
        else np.zeros(0, np.uint8)
    )
    return offsets, data


def _plain_rows(body: pl.Series, text: pl.Series) -> np.ndarray:
    """The rows whose body is plain: UTF-8, ``{`` to ``}``, no control character and no
    backslash (read from the bodies' bytes at once)."""
    if not body.len():
        return np.zeros(0, dtype=np.int64)
    offsets, data = _bytes(body.cast(pl.Binary))
    starts, ends = offsets[:-1], offsets[1:]
    plain = (ends > starts) & text.is_not_null().to_numpy()
    at = np.flatnonzero(plain)
    plain[at] = (data[starts[at]] == ord("{")) & (data[ends[at] - 1] == ord("}"))
    bad = np.flatnonzero((data < 0x20) | (data == 0x5C))
    if len(bad):
        plain[np.searchsorted(offsets, bad, side="right") - 1] = False
    return np.flatnonzero(plain)


def _parse_plain(lines: pl.Series) -> pl.DataFrame | None:
    """The plain bodies parsed together, or ``None`` when polars cannot read them all."""
    offsets, buffer = _bytes(lines + "\n")  # one line each: JSON Lines
    data = buffer[offsets[0] : offsets[-1]].tobytes()
    for infer in (100, None):
        try:
            frame = pl.read_ndjson(io.BytesIO(data), infer_schema_length=infer)
        except (pl.exceptions.PolarsError, ValueError, OverflowError):
            continue
        return frame if frame.height == lines.len() else None
    return None


def _verified(frame: pl.DataFrame, lines: pl.Series) -> tuple[pl.Series, pl.Series]:
    """Which parsed rows write back as their body: as they are (the second series: then
    the body holds every field, nulls included), or without the nulls of fields it lacks."""
    if not frame.width:
        same = (lines == "{}").fill_null(False)
        return same, same
    encoded = frame.select(pl.struct(pl.all()).struct.json_encode()).to_series()
    same = (encoded == lines).fill_null(False)
    if bool(same.all()):
        return same, same
    rest = (~same).arg_true()
    stripped = encoded.gather(rest).str.replace_all(r'"[^"]*":null,?', "").str.replace(",}", "}")
    again = (stripped == lines.gather(rest)).fill_null(False)
    return same.clone().scatter(rest, again), same  # scatter works in place


def _kind_of_dtype(dtype: pl.DataType) -> str:
    return SCALAR_KINDS.get(dtype.base_type(), "null" if dtype == pl.Null else "other")


def _present_keys(
    frame: pl.DataFrame, rows: np.ndarray, whole: pl.Series
) -> list[tuple[int, list[str]]]:
    """Each distinct set of fields the parsed rows hold (every field where ``whole``), at
    the first row holding it."""
    if not frame.width or not len(rows):
        return []
    columns = frame.columns
    every = whole.to_numpy()
    words = []
    for start in range(0, len(columns), 64):  # one bit a field
        word = np.zeros(len(rows), dtype=np.uint64)
        for bit, name in enumerate(columns[start : start + 64]):
            held = frame[name].is_not_null().to_numpy() | every
            word |= held.astype(np.uint64) << np.uint64(bit)
        words.append(word)
    masks = words[0] if len(words) == 1 else np.stack(words, axis=1)
    _, first = np.unique(masks, axis=0, return_index=True)
    found = []
    for index in np.sort(first):
        mask = [int(w[index]) for w in words]
        held = [c for i, c in enumerate(columns) if mask[i // 64] >> (i % 64) & 1]
        found.append((int(rows[index]), held))
    return found


def _nulls(n: int, dtype: pl.DataType | type[pl.DataType]) -> pl.Series:
    return constant(None, n, dtype)


_CANDIDATES = 8  # bodies tried for the template (diagnostics.captures.body_template)


def _template_keys(text: pl.Series) -> list[str] | None:
    """The keys of the first of the first bodies that is a flat JSON object (every value
    one scalar), in its order: the usual body of the capture."""
    for value in text.drop_nulls().head(_CANDIDATES).to_list():
        found = python_body(value.encode("utf-8")).fields
        if found and all(kind_of(v) in SCALAR_KINDS.values() or v is None for v in found.values()):
            keys = list(found)
            return keys if usable_keys(keys) else None
    return None


def _column_source(rows: np.ndarray, column: pl.Series) -> FieldValues:
    """One key's values from polars' parsed (and checked) column."""
    if column.null_count() == column.len():
        return FieldValues(rows, frozenset(), constant(None, len(rows), pl.Null), column.to_list)
    return FieldValues(rows, frozenset({_kind_of_dtype(column.dtype)}), column, column.to_list)


def _python_source(rows: np.ndarray, values: list[Any]) -> FieldValues:
    """One key's values as Python read them."""
    kinds = frozenset(k for k in (kind_of(v) for v in values) if k is not None)
    kind = scalar_kind(tuple(kinds))
    column = None
    if kind is not None:
        dtype = pl.Null if kind == "null" else _DTYPES[kind]
        column = pl.Series(values, dtype=dtype)
    return FieldValues(rows, kinds, column, lambda: values)


def read_bodies(body: pl.Series) -> Bodies:
    """The bodies (a Binary series, null for a record without one) read as fields."""
    n = body.len()
    text = _as_text(body)
    taken = np.zeros(n, dtype=bool)
    sources: dict[str, list[FieldValues]] = {}
    nulls: dict[str, list[np.ndarray]] = {}
    holders: list[tuple[int, list[str]]] = []
    template_keys = _template_keys(text) if n else None
    found = template_tokens(text, template_keys) if template_keys else None
    if template_keys and found is not None:
        rows, tokens = found
        firsts = token_firsts(tokens)
        made = token_values(rows, template_keys, tokens, firsts)
        if made is not None:
            for key, token in zip(template_keys, tokens.columns, strict=True):
                if "n" in firsts[token]:  # some body holds the key as null
                    _held_null(nulls, key, rows, tokens[token] == "null")
            taken[rows] = True
            holders.append((int(rows[0]), template_keys))
            for key, source in made.items():
                sources.setdefault(key, []).append(source)
    left = np.flatnonzero(~taken)
    at = _plain_rows(body.gather(left), text.gather(left)) if len(left) else left
    at = left[at]
    frame = _parse_plain(text.gather(at)) if len(at) else None
    if frame is not None and any(_kind_of_dtype(d) == "other" for d in frame.dtypes):
        frame = None  # objects, arrays, large numbers: their columns are built from Python's values
    if frame is None:
        at, frame = np.zeros(0, dtype=np.int64), pl.DataFrame()
    fine = at
    if len(at):
        verified, whole = _verified(frame, text.gather(at))
        if not bool(verified.all()):
            fine = at[verified.to_numpy()]
            frame = frame.filter(verified)
            whole = whole.filter(verified)
        holders += _present_keys(frame, fine, whole)
        for key in frame.columns:
            sources.setdefault(key, []).append(_column_source(fine, frame[key]))
            _held_null(nulls, key, fine, frame[key].is_null() & whole)  # whole: nulls written
    read = taken
    read[fine] = True
    slow_rows = np.flatnonzero(~read)
    parsed = [python_body(v) for v in body.gather(slow_rows).to_list()] if len(slow_rows) else []
    holders += [
        (int(r), list(p.fields)) for r, p in zip(slow_rows, parsed, strict=True) if p.fields
    ]
    holders.sort(key=lambda item: item[0])  # the fields in order of first appearance
    keys = list(dict.fromkeys(k for _, held in holders for k in held))
    for key in keys:
        if parsed:
            values = [None if p.fields is None else p.fields.get(key) for p in parsed]
            sources.setdefault(key, []).append(_python_source(slow_rows, values))
            held = [
                v is None and p.fields is not None and key in p.fields
                for v, p in zip(values, parsed, strict=True)
            ]
            _held_null(nulls, key, slow_rows, pl.Series(held, dtype=pl.Boolean))
    columns, values_columns = [], []
    kinds: dict[str, tuple[str, ...]] = {}
    for key in keys:
        parts = sources.get(key, [])
        kinds[key] = tuple(sorted({k for part in parts for k in part.kinds})) or ("null",)
        kind = scalar_kind(kinds[key])
        if kind is None:  # the record-by-record reader's column, from Python's values
            every: list[Any] = [None] * n
            for part in parts:
                for i, v in zip(part.rows, part.values(), strict=True):
                    every[i] = v
            columns.append(field_column(FIELD + key, every))
            values_columns.append(values_text(every).alias(VALUES + key))
            continue
        dtype = pl.Null if kind == "null" else _DTYPES[kind]
        typed = [part for part in parts if part.kinds and part.column is not None]
        if len(typed) == 1 and len(typed[0].rows) == n:
            column = typed[0].column
        else:
            column = _nulls(n, dtype)
            for part in typed:
                assert part.column is not None
                column = column.scatter(part.rows, part.column.cast(dtype))
        assert column is not None
        columns.append(column.cast(dtype).alias(FIELD + key))
    raw = _nulls(n, pl.String).alias("Body")
    if len(slow_rows):
        raw = raw.scatter(slow_rows, pl.Series([p.raw for p in parsed], dtype=pl.String))
    return Bodies(
        fields=pl.DataFrame(columns) if columns else pl.DataFrame(),
        kinds=kinds,
        raw=raw,
        without_json=sum(p.fields is None for p in parsed),
        repeated=sum(p.repeated for p in parsed),
        values=pl.DataFrame(values_columns) if values_columns else pl.DataFrame(),
        nulls=_null_columns(nulls, n),
    )


def _held_null(
    found: dict[str, list[np.ndarray]], key: str, rows: np.ndarray, held: pl.Series
) -> None:
    """Note the ``rows`` (of ``held``: those whose body holds ``key`` as null) in ``found``."""
    if held.any():
        found.setdefault(key, []).append(rows[held.fill_null(False).to_numpy()])


def _null_columns(found: dict[str, list[np.ndarray]], n: int) -> pl.DataFrame:
    """The :data:`NULLS` columns of the fields some body holds as null."""
    columns = []
    for key, parts in found.items():
        held = np.zeros(n, dtype=bool)
        for rows in parts:
            held[rows] = True
        columns.append(pl.Series(NULLS + key, held, dtype=pl.Boolean))
    return pl.DataFrame(columns) if columns else pl.DataFrame()
