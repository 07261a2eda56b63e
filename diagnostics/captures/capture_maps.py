"""Capture's ``Properties`` and ``SystemProperties`` maps, decoded as Arrow arrays, as the
Capture table shows them: JSON text with sorted keys, exactly as ``json.dumps(map,
sort_keys=True)`` writes it (bytes as UTF-8 text, else ``base64:...``); and each record's
arrival time in epoch milliseconds, ``SystemProperties["x-opt-enqueued-time"]``, else its
``EnqueuedTimeUtc`` text (Capture's US format ``6/3/2024 8:00:01 AM``, else ISO 8601).

Everything is vectorised; the entries that plain text cannot carry as they are (non-ASCII or
escaped text, floating-point numbers, bytes) are written by ``json.dumps`` one by one.
"""

from __future__ import annotations

import base64
import datetime as dt
import json

import numpy as np
import polars as pl
import pyarrow as pa

ENQUEUED_MS = "x-opt-enqueued-time"
_US_TIME = "%m/%d/%Y %I:%M:%S %p"
#: Text json.dumps writes between quotes unchanged: printable ASCII but the quote and backslash.
_PLAIN = r"^[\x20\x21\x23-\x5b\x5d-\x7e]*$"


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


def _quoted(text: pl.Series) -> pl.Series:
    """JSON string literals of ``text`` (json.dumps' escaping, ASCII only)."""
    plain = text.str.contains(_PLAIN).fill_null(False)
    fast = '"' + text + '"'
    if bool(plain.all()):
        return fast.alias(text.name)
    slow_at = (~plain).arg_true()
    slow = [json.dumps(v) for v in text.gather(slow_at).to_list()]
    return fast.scatter(slow_at, pl.Series(slow, dtype=pl.String)).alias(text.name)


def _child_text(child: pa.Array, at: np.ndarray) -> pl.Series:
    """The JSON text of the union child's values at positions ``at``."""
    values = child.take(pa.array(at, type=pa.int64()))
    kind = values.type
    if pa.types.is_integer(kind):
        return _series(values).cast(pl.String)
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        return _quoted(_series(values).cast(pl.String))
    if pa.types.is_null(kind):
        return pl.Series([None] * len(at), dtype=pl.String).fill_null("null")
    texts = [json.dumps(v, default=json_value) for v in values.to_pylist()]
    return pl.Series(texts, dtype=pl.String)


def _value_text(items: pa.Array) -> pl.Series:
    """The JSON text of each map value (an Avro union, or a single type)."""
    n = len(items)
    if not isinstance(items, pa.UnionArray):
        text = _child_text(items, np.arange(n))
        return text.set(_series(items.is_null()), "null")
    codes = items.type_codes.to_numpy(zero_copy_only=False)
    dense = items.type.mode == "dense"
    offsets = items.offsets.to_numpy(zero_copy_only=False) if dense else np.arange(n)
    out = pl.Series([None] * n, dtype=pl.String)
    for index, code in enumerate(items.type.type_codes):
        where = np.flatnonzero(codes == code)
        if len(where):
            texts = _child_text(items.field(index), offsets[where])
            out = out.scatter(where, texts)
    return out


def _parts(maps: pa.MapArray) -> tuple[np.ndarray, pa.Array, pa.Array]:
    """Each entry's record, the keys and the values (of the maps' own entries only)."""
    offsets = maps.offsets.to_numpy(zero_copy_only=False).astype(np.int64)
    start, end = int(offsets[0]), int(offsets[-1])
    row = np.repeat(np.arange(len(maps)), np.diff(offsets))
    return row, maps.keys.slice(start, end - start), maps.items.slice(start, end - start)


def _entries(maps: pa.MapArray) -> pl.DataFrame:
    """One row per map entry: its record (``row``), key, and ``key: value`` JSON text."""
    row, keys_array, items = _parts(maps)
    keys = _series(keys_array).cast(pl.String).alias("key")
    pair = _quoted(keys) + ": " + _value_text(items)
    return pl.DataFrame({"row": row, "key": keys, "pair": pair})


def _python_maps(maps: pa.Array) -> pl.Series:
    texts = [None if m is None else properties_text(dict(m)) for m in maps.to_pylist()]
    return pl.Series(texts, dtype=pl.String)


def map_text(maps: pa.Array | pa.ChunkedArray | None, rows: int) -> pl.Series:
    """Each record's map as sorted-key JSON text (null where the record has no map)."""
    if maps is None:
        return pl.Series([None] * rows, dtype=pl.String)
    if isinstance(maps, pa.ChunkedArray):
        maps = maps.combine_chunks() if maps.num_chunks else pa.array([], maps.type)
    if not isinstance(maps, pa.MapArray):
        return _python_maps(maps)
    entries = _entries(maps)
    if entries.height:
        ordered = entries.sort(["row", "key"])
        same_row = ordered["row"].head(-1) == ordered["row"].tail(-1)
        if bool((same_row & (ordered["key"].head(-1) == ordered["key"].tail(-1))).any()):
            return _python_maps(maps)  # a key twice in one map: the last value counts
        entries = ordered
    offsets = np.zeros(len(maps) + 1, dtype=np.int32)
    np.cumsum(np.bincount(entries["row"].to_numpy(), minlength=len(maps)), out=offsets[1:])
    pairs = entries["pair"].to_arrow()
    lists = _series(pa.ListArray.from_arrays(pa.array(offsets), pairs))
    text = "{" + lists.list.join(", ") + "}"
    nulls = maps.is_null()
    if nulls.true_count:
        text = text.set(_series(nulls), None)
    return text.alias("map")


def enqueued_ms(maps: pa.Array | pa.ChunkedArray | None, rows: int) -> pl.Series:
    """``SystemProperties["x-opt-enqueued-time"]`` of each record when it is a whole number
    (its last entry, as a map keeps its last value; null otherwise)."""
    out = pl.Series("ms", [None] * rows, dtype=pl.Int64)
    if maps is None:
        return out
    if isinstance(maps, pa.ChunkedArray):
        maps = maps.combine_chunks() if maps.num_chunks else pa.array([], maps.type)
    if not isinstance(maps, pa.MapArray) or not len(maps):
        return out
    owners, keys_array, items = _parts(maps)
    keys = _series(keys_array).cast(pl.String)
    found = keys.eq(ENQUEUED_MS).fill_null(False).arg_true().to_numpy()
    if not len(found):
        return out
    row = owners[found]
    last = np.r_[row[1:] != row[:-1], True]  # the last entry of each record
    found, row = found[last], row[last]
    value = pl.Series([None] * len(found), dtype=pl.Int64)
    if isinstance(items, pa.UnionArray):
        codes = items.type_codes.to_numpy(zero_copy_only=False)[found]
        dense = items.type.mode == "dense"
        offsets = items.offsets.to_numpy(zero_copy_only=False)[found] if dense else found
        for index, code in enumerate(items.type.type_codes):
            child = items.field(index)
            if not pa.types.is_integer(child.type):
                continue
            where = np.flatnonzero(codes == code)
            picked = child.take(pa.array(offsets[where], type=pa.int64()))
            value = value.scatter(where, _series(picked).cast(pl.Int64))
    elif pa.types.is_integer(items.type):
        picked = items.take(pa.array(found, type=pa.int64()))
        value = _series(picked).cast(pl.Int64)
    return out.scatter(row, value)


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


def arrival_ms(
    system: pa.Array | pa.ChunkedArray | None, enqueued_text: pl.Series
) -> tuple[pl.Series, pl.Series]:
    """Each record's arrival (epoch ms, null: none) and whether it came from the text."""
    rows = enqueued_text.len()
    ms = enqueued_ms(system, rows)
    from_text = ms.is_null()
    if bool(from_text.any()):
        at = from_text.arg_true()
        ms = ms.scatter(at, text_ms(enqueued_text.gather(at)))
    return ms, from_text


def first_null(values: pl.Series) -> int | None:
    """The index of the first null, if any."""
    nulls = values.is_null()
    return int(nulls.arg_true()[0]) if bool(nulls.any()) else None
