"""Timestamps: every time in orderdoc is a timezone-aware UTC ``Datetime("ns", "UTC")``.

Strings are ISO-8601 with ``Z`` or an offset (converted to UTC); a naive value means UTC.
That is what ASA accepts for a datetime read from CSV or JSON, whatever the job's data
locale: ``06/03/2024 08:00:01 AM`` is not a time there either (docs/schemas.md, "Times").
Native datetime columns are converted (naive ones are taken as UTC). What cannot be parsed
becomes null; callers decide whether a null is an input error (arrival time) or an event
outcome (application time: ``InvalidInputTimeStamp``).

Times before :data:`EARLIEST` or after :data:`LATEST` (a device clock at year 1 or 9999, an
export error) are replayed at that bound, never wrapped around: nanoseconds since the epoch
hold about 1677..2262, and the bounds keep any two times (and a tolerance added to one) less
than 2^63 ns apart. An event that
far off is late or early by centuries either way; :func:`clamped` finds such values.
"""

from __future__ import annotations

import datetime as dt

import numpy as np
import polars as pl
from polars._typing import TimeUnit

from diagnostics.iso_layout import read_iso

UTC_NS = pl.Datetime("ns", "UTC")

#: The earliest and latest time a replay represents (ns since the epoch); see the module text.
EARLIEST = int(dt.datetime(1900, 1, 1, tzinfo=dt.UTC).timestamp()) * 1_000_000_000
LATEST = int(dt.datetime(2150, 1, 1, tzinfo=dt.UTC).timestamp()) * 1_000_000_000
_BOUNDS = (dt.datetime(1900, 1, 1, tzinfo=dt.UTC), dt.datetime(2150, 1, 1, tzinfo=dt.UTC))
#: The bounds as a note says them.
TIME_RANGE = "1900-01-01 .. 2150-01-01"


def in_time_range(moment: dt.datetime) -> bool:
    """Whether an aware datetime lies within :data:`EARLIEST` .. :data:`LATEST`."""
    return _BOUNDS[0] <= moment <= _BOUNDS[1]


#: What an error or a note says the accepted datetime strings are.
ACCEPTED_FORMATS = (
    "ISO 8601, e.g. 2024-06-03T08:00:01Z, 2024-06-03T08:00:01.5+02:00 or 2024-06-03 08:00:01 "
    "(naive means UTC)"
)

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
    if isinstance(dtype, pl.Datetime) or dtype == pl.Date:
        wide = series.cast(pl.Datetime("ms")) if dtype == pl.Date else series
        if isinstance(wide.dtype, pl.Datetime) and wide.dtype.time_zone is not None:
            wide = wide.dt.convert_time_zone("UTC").dt.replace_time_zone(None)
        unit: TimeUnit = wide.dtype.time_unit if isinstance(wide.dtype, pl.Datetime) else "us"
        per = {"ns": 1, "us": 1_000, "ms": 1_000_000}[unit]
        raw = wide.dt.epoch(unit).clip(EARLIEST // per, LATEST // per) * per
        return raw.cast(pl.Datetime("ns")).dt.replace_time_zone("UTC").alias(name)
    if dtype != pl.String:
        return pl.Series(name, [None] * len(series), dtype=UTC_NS)
    stripped = series.str.strip_chars()
    parsed = _parse(stripped, "ns")
    ns = parsed.dt.epoch("ns").clip(EARLIEST, LATEST)
    # Nanoseconds wrap around outside 1677..2262. Every accepted form starts with its year,
    # so only a text sorting before "1678" or from "2262" on can have wrapped: those are
    # read again in microseconds and held at the bound.
    suspect = (ns.is_not_null() & ((stripped < "1678") | (stripped >= "2262"))).fill_null(False)
    if suspect.any():
        rows = suspect.arg_true()
        wide = _parse(stripped.gather(rows), "us").dt.epoch("us")
        held = pl.select(
            pl.when(wide < EARLIEST // 1_000)
            .then(pl.lit(EARLIEST))
            .when(wide > LATEST // 1_000)
            .then(pl.lit(LATEST))
            .otherwise(ns.gather(rows))
        ).to_series()
        ns = ns.scatter(rows, held)
    parsed = ns.cast(pl.Datetime("ns")).dt.replace_time_zone("UTC")
    return parsed.alias(name)


def _parse(stripped: pl.Series, unit: TimeUnit) -> pl.Series:
    """``stripped`` parsed as :func:`to_utc` says, in ``unit`` (nulls where unparsable): in
    nanoseconds, the commonest layouts from their bytes first
    (:func:`diagnostics.iso_layout.read_iso`), the rest by :func:`_parse_formats`."""
    if unit != "ns":
        return _parse_formats(stripped, unit)
    ns, read = read_iso(stripped)
    if not read.any():
        return _parse_formats(stripped, unit)
    known = pl.Series(stripped.name, ns).cast(pl.Datetime("ns")).dt.replace_time_zone("UTC")
    parsed = pl.select(pl.when(pl.Series(read)).then(known)).to_series().alias(stripped.name)
    rest = np.flatnonzero(~read & stripped.is_not_null().to_numpy())
    if rest.size:
        parsed = parsed.scatter(rest, _parse_formats(stripped.gather(rest), unit))
    return parsed


def _parse_formats(stripped: pl.Series, unit: TimeUnit) -> pl.Series:
    """``stripped`` parsed by polars' formats for :func:`to_utc`'s forms, then Python's ISO
    parser, in ``unit`` (nulls where unparsable)."""
    name = stripped.name
    parsers = [
        lambda s, f=fmt: s.str.to_datetime(f, time_unit=unit, time_zone="UTC", strict=False)
        for fmt in _AWARE_FORMATS
    ] + [
        lambda s, f=fmt: s.str.to_datetime(f, time_unit=unit, strict=False).dt.replace_time_zone(
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
        if unit == "ns":  # held at the bounds, as to_utc holds a time it reads that far off
            values = values.clip(_BOUNDS[0], _BOUNDS[1])
        parsed = parsed.scatter(missing.arg_true(), values.dt.cast_time_unit(unit))
    return parsed.alias(name)


def clamped(series: pl.Series) -> pl.Series:
    """Whether each value of a :func:`to_utc` result sits on a bound (was clamped there)."""
    ns = series.dt.epoch("ns")
    return ((ns == EARLIEST) | (ns == LATEST)).fill_null(False)


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
