"""ISO-8601 times of the commonest layouts read from their bytes, for
:func:`diagnostics.timestamps.to_utc`: ``YYYY-MM-DDTHH:MM:SS`` (or a space for the ``T``), an
optional fraction of 1 to 9 digits, then ``Z`` or an offset ``+HH:MM`` / ``-HH:MM``
(``2024-06-03T08:00:01.123Z``, what senders and Event Hubs write).

Invariant: a value this module reads is read to the nanosecond that polars' formats read it
to (``tests/test_iso_layout.py``: every layout, and texts that are almost one); a value it
does not read for sure (another layout, a day or an hour out of range, a second of 60, a
year outside 1678..2261, where nanoseconds wrap) is left to those formats. It only saves time.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pyarrow as pa

_DAYS_BEFORE = np.array([0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334], dtype=np.int64)
_MONTH_DAYS = np.array([31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31], dtype=np.int64)
_NS = 1_000_000_000


def read_iso(series: pl.Series) -> tuple[np.ndarray, np.ndarray]:
    """``(ns, read)``: the nanoseconds since the epoch (UTC) of each value of ``series`` (a
    String series, already stripped) this module reads, and which values it read (the
    other ``ns`` entries are 0)."""
    n = series.len()
    ns = np.zeros(n, dtype=np.int64)
    read = np.zeros(n, dtype=bool)
    if n == 0:
        return ns, read
    lengths = series.str.len_bytes()
    for length in lengths.filter((lengths >= 20) & (lengths <= 35)).unique().to_list():
        same = (lengths == length).fill_null(False)
        rows = np.flatnonzero(same.to_numpy())
        values = _fixed(series.filter(same), length)
        for end in (length - 1, length - 6):
            if end < 19:
                continue
            zone = values[:, end]
            is_zone = zone == ord("Z") if end == length - 1 else (zone == 43) | (zone == 45)
            mine = np.flatnonzero(is_zone)
            if mine.size == 0:
                continue
            some = values if mine.size == rows.size else values[mine]
            got, ok = _layout(some, end)
            ns[rows[mine[ok]]] = got[ok]
            read[rows[mine[ok]]] = True
    return ns, read


def _fixed(values: pl.Series, length: int) -> np.ndarray:
    """``values`` (all ``length`` bytes long) as a matrix of bytes, one row a value."""
    array = values.to_arrow()
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    fixed = array.cast(pa.binary(length))
    data = np.frombuffer(fixed.buffers()[1], dtype=np.uint8)
    start = fixed.offset * length
    return data[start : start + len(fixed) * length].reshape(len(fixed), length)


def _layout(values: np.ndarray, end: int) -> tuple[np.ndarray, np.ndarray]:
    """The nanoseconds of values of one length (``values``: a matrix of bytes, one row a
    value) whose zone starts at byte ``end`` (``Z``, the last byte, else ``+HH:MM`` or
    ``-HH:MM``), and which of them are of a layout this module reads, every field in range."""
    rows, length = values.shape
    fraction = end - 20  # digits after the dot
    if end != 19 and not 1 <= fraction <= 9:
        return np.zeros(rows, dtype=np.int64), np.zeros(rows, dtype=bool)
    # each field's digits, most significant first: year, month, day, hour, minute, second,
    # the fraction, the zone's hours and minutes
    fields = [(0, 1, 2, 3), (5, 6), (8, 9), (11, 12), (14, 15), (17, 18)]
    fields.append(tuple(range(20, end)) if end > 19 else ())
    zoned = end != length - 1
    fields += [(end + 1, end + 2), (end + 4, end + 5)] if zoned else [(), ()]
    at = [k for field in fields for k in field]
    digits = values[:, at] - np.uint8(48)  # a byte below '0' wraps: > 9 either way
    ok = digits.max(axis=1) <= 9
    marks = {4: "-", 7: "-", 13: ":", 16: ":"}
    if end > 19:
        marks[19] = "."
    if zoned:
        marks[end + 3] = ":"
    else:
        marks[end] = "Z"
    expected = np.frombuffer("".join(marks.values()).encode(), dtype=np.uint8)
    ok &= (values[:, list(marks)] == expected).all(axis=1)
    ok &= (values[:, 10] == ord("T")) | (values[:, 10] == ord(" "))
    numbers = []
    column = 0
    for field in fields:  # up to 3 digits at a time in 16 bits, then in 64
        number = np.zeros(rows, dtype=np.int64)
        for start in range(0, len(field), 3):
            part = digits[:, column].astype(np.uint16)
            width = min(3, len(field) - start)
            for k in range(1, width):
                part = part * np.uint16(10) + digits[:, column + k]
            number = number * 10**width + part if start else part.astype(np.int64)
            column += width
        numbers.append(number)
    year, month, day, hour, minute, second, nanos, zone_h, zone_m = numbers
    nanos = nanos * 10 ** (9 - max(fraction, 0)) if end > 19 else nanos
    offset = (zone_h * 3600 + zone_m * 60) * _NS
    if zoned:
        offset = np.where(values[:, end] == ord("-"), -offset, offset)
    leap = ((year % 4 == 0) & (year % 100 != 0)) | (year % 400 == 0)
    month_at = np.clip(month, 1, 12) - 1
    ok &= (
        (year >= 1678)
        & (year <= 2261)
        & (month >= 1)
        & (month <= 12)
        & (day >= 1)
        & (day <= _MONTH_DAYS[month_at] + (leap & (month == 2)))
        & (hour <= 23)
        & (minute <= 59)
        & (second <= 59)
        & (zone_h <= 23)
        & (zone_m <= 59)
    )
    before = year - 1
    days = (
        365 * (year - 1970)
        + (before // 4 - before // 100 + before // 400)
        - (1969 // 4 - 1969 // 100 + 1969 // 400)
        + _DAYS_BEFORE[month_at]
        + ((month > 2) & leap)
        + day
        - 1
    )
    seconds = ((days * 24 + hour) * 60 + minute) * 60 + second
    return seconds * _NS + nanos - offset, ok
