"""Capture's ``Properties`` and ``SystemProperties`` maps, decoded as Arrow arrays, as the
Capture table shows them: JSON text with sorted keys, exactly as ``json.dumps(map,
sort_keys=True)`` writes it (bytes as UTF-8 text, else ``base64:...``); and each record's
arrival time in epoch milliseconds, ``SystemProperties["x-opt-enqueued-time"]``, else its
``EnqueuedTimeUtc`` text (Capture's US format ``6/3/2024 8:00:01 AM``, else ISO 8601).

Everything is vectorised. Capture writes the same keys in the same order in nearly every
record of a file, so the records are grouped by their keys (a *shape*): each shape's text is
its keys, written once, around one column of value text per key. Maps of many shapes, or
with a key twice, go entry by entry; the values that plain text cannot carry as they are
(non-ASCII or escaped text, floating-point numbers, bytes) are written by ``json.dumps`` one
by one.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl
import pyarrow as pa

ENQUEUED_MS = "x-opt-enqueued-time"
_US_TIME = "%m/%d/%Y %I:%M:%S %p"
#: Text json.dumps writes between quotes unchanged: printable ASCII but the quote and backslash.
_PLAIN = r"^[\x20\x21\x23-\x5b\x5d-\x7e]*$"
#: Beyond this many shapes in one file, the maps are written entry by entry.
MAX_SHAPES = 32
_MIX = np.uint64(0x9E3779B97F4A7C15)
_NUMPY: dict[int, np.dtype[Any]] = {
    pa.int8().id: np.dtype(np.int8),
    pa.int32().id: np.dtype(np.int32),
    pa.int64().id: np.dtype(np.int64),
}


def raw_text(value: bytes) -> str:
    """Bytes as text: UTF-8, else ``base64:...``."""
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError:
        return "base64:" + base64.b64encode(value).decode("ascii")


def json_value(value: object) -> object:
    """``json.dumps``' ``default``: bytes as :func:`raw_text`."""
    if isinstance(value, bytes):
        return raw_text(value)
    msg = f"{type(value).__name__} is not JSON serializable"
    raise TypeError(msg)


def properties_text(value: object) -> str | None:
    """One record's map as JSON text (the reference the vectorised form matches)."""
    return None if value is None else json.dumps(value, default=json_value, sort_keys=True)


def _series(values: object) -> pl.Series:
    """An Arrow array as a polars series."""
    found = pl.from_arrow(values)
    assert isinstance(found, pl.Series)
    return found


def _indices(at: np.ndarray) -> pa.Array:
    """Positions as an Arrow array (without pyarrow's conversion of NumPy arrays)."""
    at = np.ascontiguousarray(at, dtype=np.int64)
    return pa.Array.from_buffers(pa.int64(), len(at), [None, pa.py_buffer(at)])


def _numpy(array: pa.Array) -> np.ndarray:
    """A primitive Arrow array without nulls as NumPy, without a copy (and without
    ``Array.to_numpy``, which imports pandas: a second of start-up)."""
    dtype = _NUMPY[array.type.id]
    return np.frombuffer(
        array.buffers()[1], dtype=dtype, count=len(array), offset=array.offset * dtype.itemsize
    )


def constant(value: object, n: int, dtype: pl.DataType | type[pl.DataType]) -> pl.Series:
    """``n`` times ``value`` (a tenth of the cost of ``pl.repeat`` on small files)."""
    return pl.Series([value], dtype=dtype).new_from_index(0, n)


def _nulls(n: int) -> pl.Series:
    return constant(None, n, pl.String)


def _quoted(text: pl.Series) -> pl.Series:
    """JSON string literals of ``text`` (json.dumps' escaping, ASCII only)."""
    plain = text.str.contains(_PLAIN).fill_null(False)
    fast = '"' + text + '"'
    if bool(plain.all()):
        return fast.alias(text.name)
    slow_at = (~plain).arg_true()
    slow = [json.dumps(v) for v in text.gather(slow_at).to_list()]
    return fast.scatter(slow_at, pl.Series(slow, dtype=pl.String)).alias(text.name)


def _escaped(values: pa.Array) -> np.ndarray | None:
    """The positions of the strings ``json.dumps`` writes otherwise than as they are between
    quotes (non-ASCII, a control character, a quote, a backslash), read from the array's
    bytes at once; ``None`` when some string is null."""
    if values.null_count:
        return None
    wide = pa.types.is_large_string(values.type)
    kind = np.dtype(np.int64 if wide else np.int32)
    buffers = values.buffers()
    offsets = np.frombuffer(
        buffers[1], dtype=kind, count=len(values) + 1, offset=values.offset * kind.itemsize
    )
    if not len(values) or buffers[2] is None:
        return np.zeros(0, dtype=np.int64)
    data = np.frombuffer(buffers[2], dtype=np.uint8)[offsets[0] : offsets[-1]]
    bad = np.flatnonzero((data < 0x20) | (data > 0x7E) | (data == 0x22) | (data == 0x5C))
    if not len(bad):
        return np.zeros(0, dtype=np.int64)
    return np.unique(np.searchsorted(offsets, bad + offsets[0], side="right") - 1)


def _child_text(child: pa.Array, at: np.ndarray) -> tuple[pl.Series, bool]:
    """The JSON text of the union child's values at positions ``at``, and whether it is
    the strings themselves, to be written between quotes."""
    values = child.take(_indices(at))
    kind = values.type
    if pa.types.is_integer(kind):
        text = _series(values).cast(pl.String)
        return (text.fill_null("null") if values.null_count else text), False
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        text = _series(values).cast(pl.String)
        slow = _escaped(values)
        if slow is None:
            return _quoted(text).fill_null("null"), False
        if not len(slow):
            return text, True
        quoted = '"' + text + '"'
        fixed = [json.dumps(v) for v in text.gather(slow).to_list()]
        return quoted.scatter(slow, pl.Series(fixed, dtype=pl.String)), False
    if pa.types.is_null(kind):
        return constant("null", len(at), pl.String), False
    texts = [json.dumps(v, default=json_value) for v in values.to_pylist()]
    return pl.Series(texts, dtype=pl.String), False


def _json(text: pl.Series, bare: bool) -> pl.Series:
    return '"' + text + '"' if bare else text


def _text_at(items: pa.Array, at: np.ndarray) -> tuple[pl.Series, bool]:
    """The JSON text of the map values at entries ``at`` (an Avro union, or one type), and
    whether it is strings to be written between quotes."""
    if not isinstance(items, pa.UnionArray):
        return _child_text(items, at)
    codes = _numpy(items.type_codes)[at]
    dense = items.type.mode == "dense"
    offsets = _numpy(items.offsets)[at] if dense else at
    out: pl.Series | None = None
    for index, code in enumerate(items.type.type_codes):
        where = np.flatnonzero(codes == code)
        if len(where) == len(at):
            return _child_text(items.field(index), offsets)
        if len(where):
            texts = _json(*_child_text(items.field(index), offsets[where]))
            out = (_nulls(len(at)) if out is None else out).scatter(where, texts)
    return (_nulls(len(at)) if out is None else out), False


def _int_at(items: pa.Array, at: np.ndarray) -> pl.Series:
    """The map values at entries ``at`` that are whole numbers (null for the others)."""
    out = constant(None, len(at), pl.Int64)
    if isinstance(items, pa.UnionArray):
        codes = _numpy(items.type_codes)[at]
        dense = items.type.mode == "dense"
        offsets = _numpy(items.offsets)[at] if dense else at
        for index, code in enumerate(items.type.type_codes):
            child = items.field(index)
            where = np.flatnonzero(codes == code)
            if pa.types.is_integer(child.type) and len(where):
                picked = _series(child.take(_indices(offsets[where]))).cast(pl.Int64)
                out = picked if len(where) == len(at) else out.scatter(where, picked)
    elif pa.types.is_integer(items.type):
        out = _series(items.take(_indices(at))).cast(pl.Int64)
    return out


@dataclass(frozen=True, slots=True)
class _Shape:
    """The records (``rows``) whose maps hold ``keys``, in this order."""

    rows: np.ndarray
    keys: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class _Maps:
    """A map column's parts: each record's first entry and entries, the entries' keys (as
    codes into ``names``) and values."""

    maps: pa.MapArray
    starts: np.ndarray
    lengths: np.ndarray
    codes: np.ndarray
    names: list[str]
    items: pa.Array

    @classmethod
    def of(cls, maps: pa.MapArray) -> _Maps:
        offsets = _numpy(maps.offsets).astype(np.int64)
        start, end = int(offsets[0]), int(offsets[-1])
        # (the array's method: pyarrow.compute is imported only when a map is read)
        keys = maps.keys.slice(start, end - start).dictionary_encode()
        codes = _numpy(keys.indices).astype(np.int64)
        names = keys.dictionary.to_pylist()
        items = maps.items.slice(start, end - start)
        return cls(maps, offsets[:-1] - start, np.diff(offsets), codes, names, items)

    @property
    def keys(self) -> pl.Series:
        """Each entry's key."""
        names = pl.Series(self.names, dtype=pl.String)
        return names.gather(self.codes).alias("key")

    def shapes(self) -> list[_Shape] | None:
        """The records grouped by their keys, or ``None`` (too many shapes)."""
        n = len(self.lengths)
        if not len(self.codes):
            return [_Shape(np.arange(n), ())]
        width = int(self.lengths[0]) if n else 0
        if width and len(self.codes) == n * width and bool((self.lengths == width).all()):
            grid = self.codes.reshape(n, width)  # every map as long: one shape, the usual
            if bool((grid == grid[0]).all()):
                return [_Shape(np.arange(n), tuple(self.names[c] for c in grid[0]))]
        position = np.arange(len(self.codes)) - np.repeat(self.starts, self.lengths)
        with np.errstate(over="ignore"):
            code = (self.codes.astype(np.uint64) + np.uint64(1)) * _MIX
            mixed = code ^ (code >> np.uint64(29)) ^ (position.astype(np.uint64) * _MIX)
            mixed *= _MIX
            total = np.concatenate([np.zeros(1, np.uint64), np.cumsum(mixed, dtype=np.uint64)])
            signature = total[self.starts + self.lengths] - total[self.starts]
            signature ^= self.lengths.astype(np.uint64) * _MIX
        found, first, which = np.unique(signature, return_index=True, return_inverse=True)
        if len(found) > MAX_SHAPES:
            return None
        shapes = []
        for group, row in enumerate(first):
            rows = np.flatnonzero(which == group) if len(found) > 1 else np.arange(n)
            length = int(self.lengths[row])
            start = int(self.starts[row])
            codes = self.codes[start : start + length]
            if bool((self.lengths[rows] != length).any()):
                return None
            for j, code in enumerate(codes):  # the same keys, not only the same signature
                if bool((self.codes[self.starts[rows] + j] != code).any()):
                    return None
            shapes.append(_Shape(rows, tuple(self.names[c] for c in codes)))
        return shapes

    def shape_text(self, shape: _Shape) -> pl.Series:
        """The JSON text of the maps of one shape (its keys distinct)."""
        if not shape.keys:
            return constant("{}", len(shape.rows), pl.String)
        starts = self.starts[shape.rows]
        parts: list[pl.Expr] = []
        close = ""  # the quote that ends the value before
        for n, j in enumerate(sorted(range(len(shape.keys)), key=lambda i: shape.keys[i])):
            text, bare = _text_at(self.items, starts + j)
            quote = '"' if bare else ""
            lead = close + ("{" if n == 0 else ", ") + json.dumps(shape.keys[j]) + ": " + quote
            parts += [pl.lit(lead), pl.lit(text)]
            close = quote
        parts.append(pl.lit(close + "}"))
        return pl.select(pl.concat_str(parts).alias("map")).to_series()

    def python_text(self, rows: np.ndarray) -> pl.Series:
        """The maps of ``rows`` written one by one (a key twice: the last value counts)."""
        picked = self.maps.take(_indices(rows)).to_pylist()
        texts = [None if m is None else properties_text(dict(m)) for m in picked]
        return pl.Series(texts, dtype=pl.String)

    def text(self) -> pl.Series:
        """Each record's map as sorted-key JSON text."""
        shapes = self.shapes()
        if shapes is None:
            return _entry_text(self)
        out: pl.Series | None = None
        for shape in shapes:
            if len(set(shape.keys)) == len(shape.keys):
                text = self.shape_text(shape)
            else:
                text = self.python_text(shape.rows)
            if len(shapes) == 1:
                return text.alias("map")
            out = (_nulls(len(self.lengths)) if out is None else out).scatter(shape.rows, text)
        return (out if out is not None else _nulls(0)).alias("map")

    def last_int(self, key: str) -> pl.Series:
        """Each record's value of ``key`` when a whole number (its last entry; else null)."""
        n = len(self.lengths)
        out = constant(None, n, pl.Int64)
        if key not in self.names:
            return out
        found = np.flatnonzero(self.codes == self.names.index(key))
        owner = np.repeat(np.arange(n), self.lengths)[found]
        last = np.r_[owner[1:] != owner[:-1], True]  # the last entry of each record
        found, owner = found[last], owner[last]
        values = _int_at(self.items, found)
        return values if len(owner) == n else out.scatter(owner, values)


def _entry_text(parts: _Maps) -> pl.Series:
    """Maps of many shapes: one row per entry, sorted, joined per record."""
    n = len(parts.lengths)
    owner = np.repeat(np.arange(n), parts.lengths)
    keys = parts.keys.alias("key")
    pair = _quoted(keys) + ": " + _json(*_text_at(parts.items, np.arange(len(keys))))
    entries = pl.DataFrame({"row": owner, "key": keys, "pair": pair}).sort(["row", "key"])
    same_row = entries["row"].head(-1) == entries["row"].tail(-1)
    if bool((same_row & (entries["key"].head(-1) == entries["key"].tail(-1))).any()):
        return parts.python_text(np.arange(n)).alias("map")  # a key twice in one map
    offsets = np.zeros(n + 1, dtype=np.int32)
    np.cumsum(np.bincount(entries["row"].to_numpy(), minlength=n), out=offsets[1:])
    lists = _series(pa.ListArray.from_arrays(_offsets(offsets), entries["pair"].to_arrow()))
    return ("{" + lists.list.join(", ") + "}").alias("map")


def _offsets(values: np.ndarray) -> pa.Array:
    values = np.ascontiguousarray(values, dtype=np.int32)
    return pa.Array.from_buffers(pa.int32(), len(values), [None, pa.py_buffer(values)])


def _map_array(maps: pa.Array | pa.ChunkedArray) -> pa.Array:
    if isinstance(maps, pa.ChunkedArray):
        return maps.combine_chunks() if maps.num_chunks else pa.array([], maps.type)
    return maps


def map_columns(
    maps: pa.Array | pa.ChunkedArray | None, rows: int, *, int_key: str | None = None
) -> tuple[pl.Series, pl.Series | None]:
    """Each record's map as sorted-key JSON text (null where the record has no map), and
    with ``int_key`` its value of that key when a whole number (its last entry, as a map
    keeps its last value; null otherwise)."""
    ints = constant(None, rows, pl.Int64) if int_key is not None else None
    if maps is None:
        return _nulls(rows).alias("map"), ints
    array = _map_array(maps)
    if not isinstance(array, pa.MapArray):
        texts = [None if m is None else properties_text(dict(m)) for m in array.to_pylist()]
        return pl.Series("map", texts, dtype=pl.String), ints
    if not len(array):
        return _nulls(0).alias("map"), ints
    parts = _Maps.of(array)
    text = parts.text()
    if int_key is not None:
        ints = parts.last_int(int_key)
    if array.null_count:
        nulls = _series(array.is_null())
        text = text.set(nulls, None)
        ints = None if ints is None else ints.set(nulls, None)
    return text.alias("map"), None if ints is None else ints.alias("ms")


def map_text(maps: pa.Array | pa.ChunkedArray | None, rows: int) -> pl.Series:
    """Each record's map as sorted-key JSON text (null where the record has no map)."""
    return map_columns(maps, rows)[0]


def enqueued_ms(maps: pa.Array | pa.ChunkedArray | None, rows: int) -> pl.Series:
    """``SystemProperties["x-opt-enqueued-time"]`` of each record when it is a whole number
    (its last entry, as a map keeps its last value; null otherwise)."""
    ints = map_columns(maps, rows, int_key=ENQUEUED_MS)[1]
    assert ints is not None
    return ints.alias("ms")


def _python_arrival(text: object) -> int | None:
    """``EnqueuedTimeUtc`` as epoch ms, as the record-by-record reader reads it."""
    if not isinstance(text, str):
        return None
    try:
        parsed = dt.datetime.strptime(text.strip(), _US_TIME).replace(tzinfo=dt.UTC)
    except ValueError:
        try:
            parsed = dt.datetime.fromisoformat(text.strip())
        except ValueError:
            return None
        parsed = parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.UTC)
    return int(parsed.timestamp() * 1000)


def text_ms(text: pl.Series) -> pl.Series:
    """``EnqueuedTimeUtc`` texts as epoch ms (null where not a time)."""
    stripped = text.str.strip_chars()
    us = stripped.str.strptime(pl.Datetime("ms"), _US_TIME, strict=False).dt.epoch("ms")
    missing = (us.is_null() & text.is_not_null()).arg_true()
    if len(missing):
        slow = [_python_arrival(t) for t in text.gather(missing).to_list()]
        us = us.scatter(missing, pl.Series(slow, dtype=pl.Int64))
    return us.alias("ms")
