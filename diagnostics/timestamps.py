"""Timestamps: every time in orderdoc is a timezone-aware UTC ``Datetime("ns", "UTC")``.

Strings are ISO-8601 with ``Z`` or an offset (converted to UTC); a naive value means UTC.
Native datetime columns are converted (naive ones are taken as UTC). What cannot be parsed
becomes null; callers decide whether a null is an input error (arrival time) or an event
outcome (application time: ``InvalidInputTimeStamp``).
"""

from __future__ import annotations

import datetime as dt

import polars as pl

UTC_NS = pl.Datetime("ns", "UTC")

_AWARE_FORMATS = ("%Y-%m-%dT%H:%M:%S%.f%#z", "%Y-%m-%d %H:%M:%S%.f%#z")
_NAIVE_FORMATS = ("%Y-%m-%dT%H:%M:%S%.f", "%Y-%m-%d %H:%M:%S%.f", "%Y-%m-%dT%H:%M", "%Y-%m-%d")


def _fallback(value: str | None) -> dt.datetime | None:
    """Python's ISO parser for the rare forms polars' formats miss (``None`` if invalid)."""
    if value is None:
        return None
    text = value.strip()
    if text.endswith(" UTC"):
        text = text[:-4]
    try:
        parsed = dt.datetime.fromisoformat(text)
    except ValueError:
        return None
    if parsed.tzinfo is None:
        return parsed.replace(tzinfo=dt.UTC)
    return parsed.astimezone(dt.UTC)


def to_utc(series: pl.Series) -> pl.Series:
    """Return ``series`` as ``Datetime("ns", "UTC")``; unparsable values become null.

    Invariant: the result has the same length and name as the input, and a value is null in
    the result only if it was null or unparsable in the input.
    """
    name = series.name
    dtype = series.dtype
    if dtype == pl.Null:
        return pl.Series(name, [None] * len(series), dtype=UTC_NS)
    if isinstance(dtype, pl.Datetime):
        if dtype.time_zone is None:
            return series.dt.replace_time_zone("UTC").dt.cast_time_unit("ns")
        return series.dt.convert_time_zone("UTC").dt.cast_time_unit("ns")
    if dtype == pl.Date:
        return series.cast(pl.Datetime("ns")).dt.replace_time_zone("UTC")
    if dtype != pl.String:
        return pl.Series(name, [None] * len(series), dtype=UTC_NS)
    stripped = series.str.strip_chars()
    parsers = [
        lambda s, f=fmt: s.str.to_datetime(f, time_unit="ns", time_zone="UTC", strict=False)
        for fmt in _AWARE_FORMATS
    ] + [
        lambda s, f=fmt: s.str.to_datetime(f, time_unit="ns", strict=False).dt.replace_time_zone(
            "UTC"
        )
        for fmt in _NAIVE_FORMATS
    ]
    parsed = parsers[0](stripped)
    for parse in parsers[1:]:
        missing = parsed.is_null() & stripped.is_not_null()
        if not missing.any():
            break
        parsed = parsed.scatter(missing.arg_true(), parse(stripped.filter(missing)))
    missing = parsed.is_null() & stripped.is_not_null()
    if missing.any():
        rescued = [_fallback(v) for v in stripped.filter(missing).to_list()]
        values = pl.Series(name, rescued, dtype=pl.Datetime("us", "UTC"))
        parsed = parsed.scatter(missing.arg_true(), values.dt.cast_time_unit("ns"))
    return parsed.alias(name)


def to_ns(series: pl.Series) -> pl.Series:
    """Nanoseconds since the epoch (Int64, nulls kept) of a ``Datetime("ns", "UTC")`` series."""
    return series.dt.epoch("ns")


def from_ns(series: pl.Series) -> pl.Series:
    """Inverse of :func:`to_ns`."""
    return series.cast(pl.Datetime("ns")).dt.replace_time_zone("UTC")


def iso(ns: int | None) -> str | None:
    """ISO-8601 UTC text (``2024-01-01T00:00:00.000000000Z``) of nanoseconds, ``None`` kept."""
    if ns is None:
        return None
    seconds, rest = divmod(ns, 1_000_000_000)
    base = dt.datetime.fromtimestamp(seconds, tz=dt.UTC).strftime("%Y-%m-%dT%H:%M:%S")
    return f"{base}.{rest:09d}Z"
