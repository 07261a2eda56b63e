"""diagnostics.iso_layout: the times it reads from their bytes are the times polars'
formats read (diagnostics.timestamps), to the nanosecond; what it cannot read for sure it
leaves to them."""

from __future__ import annotations

import numpy as np
import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from diagnostics.iso_layout import read_iso
from diagnostics.timestamps import _parse, _parse_formats, to_utc


def _two(high: int) -> st.SearchStrategy[str]:
    return st.integers(0, high).map(lambda v: f"{v:02d}")


#: Texts in and around the layouts read_iso reads: fields out of range, other separators,
#: fractions of 0 to 11 digits, zones it reads and zones it leaves to the formats.
_near_iso = st.builds(
    lambda y, mo, d, sep, h, mi, s, frac, zone, noise: _noisy(
        f"{y:04d}-{mo}-{d}{sep}{h}:{mi}:{s}{frac}{zone}", noise
    ),
    st.sampled_from([1, 1677, 1678, 1900, 1970, 2000, 2023, 2024, 2100, 2261, 2262, 9999])
    | st.integers(0, 9999),
    _two(13),
    _two(32),
    st.sampled_from(["T", " ", "t", "_"]),
    _two(25),
    _two(61),
    _two(61),
    st.one_of(
        st.just(""),
        st.just("."),
        st.integers(1, 11)
        .flatmap(lambda n: st.text("0123456789", min_size=n, max_size=n))
        .map(lambda digits: "." + digits),
    ),
    st.one_of(
        st.sampled_from(["Z", "z", "", "+00:00", "-00:00", "+0530", "+05", " UTC"]),
        st.builds(
            lambda sign, h, m: f"{sign}{h}:{m}",
            st.sampled_from(["+", "-"]),
            _two(25),
            _two(61),
        ),
    ),
    st.one_of(st.none(), st.tuples(st.integers(0, 40), st.sampled_from(list("x9:-.Z+ ")))),
)


def _noisy(text: str, noise: tuple[int, str] | None) -> str:
    if noise is None or noise[0] >= len(text):
        return text
    at, char = noise
    return text[:at] + char + text[at + 1 :]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(_near_iso, st.none(), st.text(max_size=30)), max_size=40))
def test_bytes_read_as_the_formats_read(values: list[str | None]) -> None:
    """Every value: the fast path and polars' formats agree, nulls included."""
    series = pl.Series("t", values, dtype=pl.String).str.strip_chars()
    fast = _parse(series, "ns")
    slow = _parse_formats(series, "ns")
    assert fast.dtype == slow.dtype
    assert fast.eq_missing(slow).all(), list(
        zip(values, fast.to_list(), slow.to_list(), strict=True)
    )


@settings(max_examples=200, deadline=None)
@given(st.lists(_near_iso, min_size=1, max_size=30))
def test_every_value_read_is_the_formats_value(values: list[str]) -> None:
    """What read_iso says it read is what the formats read, and not null there."""
    series = pl.Series("t", values, dtype=pl.String)
    ns, read = read_iso(series)
    slow = _parse_formats(series, "ns").dt.epoch("ns").to_numpy()
    assert (ns[read] == slow[read]).all()


def test_the_commonest_layouts_are_read() -> None:
    """Event Hubs' and senders' usual texts are read from their bytes (no format needed)."""
    values = [
        "2024-06-03T08:00:01.123Z",
        "2024-06-03T08:00:01Z",
        "2024-06-03 08:00:01.5+02:00",
        "2024-02-29T23:59:59.123456789-05:30",
    ]
    ns, read = read_iso(pl.Series(values))
    assert read.all()
    expected = to_utc(pl.Series(values)).dt.epoch("ns").to_numpy()
    assert np.array_equal(ns, expected)
    assert ns[0] == 1_717_401_601_123_000_000


def test_left_to_the_formats() -> None:
    """Texts it does not read for sure: a day out of its month, a leap second, a year where
    nanoseconds wrap, another layout; to_utc still reads them as before."""
    values = [
        "2023-02-29T00:00:00Z",
        "2024-06-30T23:59:60Z",
        "1500-01-01T00:00:00Z",
        "06/03/2024 08:00:01 AM",
        "2024-06-03T08:00:01.1234567891Z",
    ]
    _, read = read_iso(pl.Series(values))
    assert not read.any()
    parsed = to_utc(pl.Series(values))
    assert parsed[0] is None
    assert parsed[3] is None
    assert parsed[2] is not None  # held at the earliest time a replay represents
