"""Hand-built outcome frames that follow the replay contract, and hypothesis strategies."""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl
import pytest
from hypothesis import strategies as st

from diagnostics.instrument.aggregate import KIND_FLAGS

BASE_NS = 1_704_067_200_000_000_000  # 2024-01-01T00:00:00Z
SECOND = 1_000_000_000
FLAGS = tuple(flag for _, flag in KIND_FLAGS)


def _datetimes(name: str, values: Sequence[int | None]) -> pl.Series:
    return pl.Series(name, values, dtype=pl.Int64).cast(pl.Datetime("ns", "UTC"))


def make_outcomes(
    arrival_ns: Sequence[int],
    partition: Sequence[int],
    application_ns: Sequence[int | None] | None = None,
    flags: dict[str, Sequence[bool]] | None = None,
    device: Sequence[str] | None = None,
) -> pl.DataFrame:
    """An outcomes frame in input order with the columns the instrument reads."""
    n = len(arrival_ns)
    flags = flags or {}
    app = list(application_ns) if application_ns is not None else list(arrival_ns)
    return pl.DataFrame(
        [
            pl.Series("device_id", list(device) if device else ["d0"] * n, dtype=pl.String),
            pl.Series("value", [float(i) for i in range(n)], dtype=pl.Float64),
            pl.Series("event_id", range(n), dtype=pl.Int64),
            pl.Series("partition", partition, dtype=pl.Int64),
            _datetimes("application_time", app),
            _datetimes("arrival", arrival_ns),
            *(pl.Series(f, flags.get(f, [False] * n), dtype=pl.Boolean) for f in FLAGS),
        ]
    )


@st.composite
def outcome_frames(draw: st.DrawFn, max_events: int = 60) -> pl.DataFrame:
    """Random outcomes: arrivals non-decreasing in input order, random flags and partitions."""
    n = draw(st.integers(1, max_events))
    steps = draw(st.lists(st.integers(0, 90 * SECOND), min_size=n, max_size=n))
    arrival = []
    now = BASE_NS
    for step in steps:
        now += step
        arrival.append(now)
    partition = draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
    lateness = draw(st.lists(st.integers(-900 * SECOND, 900 * SECOND), min_size=n, max_size=n))
    app = [a - d for a, d in zip(arrival, lateness, strict=True)]
    flags = {f: draw(st.lists(st.booleans(), min_size=n, max_size=n)) for f in FLAGS}
    devices = draw(st.lists(st.sampled_from(["a", "b", "c"]), min_size=n, max_size=n))
    app = [None if bad else t for t, bad in zip(app, flags["invalid_timestamp"], strict=True)]
    return make_outcomes(arrival, partition, app, flags, devices)


@pytest.fixture
def small_outcomes() -> pl.DataFrame:
    """Five events on three partitions: two late, one late and out of order, one early, one
    invalid; partition 2 silent for 11.5 minutes after the replay starts."""
    s = SECOND
    return make_outcomes(
        arrival_ns=[
            BASE_NS + 30 * s,
            BASE_NS + 40 * s,
            BASE_NS + 60 * s,
            BASE_NS + 120 * s,
            BASE_NS + 720 * s,
        ],
        partition=[0, 0, 1, 0, 2],
        application_ns=[BASE_NS, BASE_NS + 10 * s, BASE_NS + 1200 * s, None, BASE_NS],
        flags={
            "late": [True, True, False, False, True],
            "early": [False, False, True, False, False],
            "out_of_order": [False, True, False, False, False],
            "invalid_timestamp": [False, False, False, True, False],
        },
        device=["a", "b", "a", "c", "b"],
    )
