"""The search guide's counts worked out with the events grouped by timeline (one running
maximum over the whole capture) equal the same counts event by event in processing order,
for every late tolerance, action and timeline layout, including times too far apart for the
one running maximum (then one per timeline); and the guide's steps are the same asked once
or again."""

from __future__ import annotations

import numpy as np
import polars as pl
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from diagnostics.durations import SECOND
from diagnostics.engine.policy import Action
from diagnostics.whatif.evaluate import Unsaveable
from diagnostics.whatif.staircase import (
    Timelines,
    counts,
    counts_in_order,
    staircase,
    substream_ids,
)

BASE = 1_767_225_600 * SECOND  # 2026-01-01


def timelines(
    arrival: np.ndarray, app: np.ndarray, timeline: np.ndarray, ok: np.ndarray
) -> Timelines:
    """Timelines as ``timelines_of`` lays them out (processing order, grouped, starts)."""
    return Timelines.laid_out(arrival, app, timeline, ok, Unsaveable(), 0)


@st.composite
def layouts(draw: st.DrawFn) -> Timelines:
    """0-300 events on 1-40 timelines, late by up to 20 s, some not decided by a tolerance,
    and (sometimes) a few events years off."""
    n = draw(st.integers(0, 300))
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
    lines = draw(st.integers(1, 40))
    arrival = BASE + np.sort(rng.integers(0, 600 * SECOND, n))
    app = arrival - rng.integers(-2 * SECOND, 20 * SECOND, n)
    if draw(st.booleans()) and n:
        far = rng.random(n) < 0.05
        app = np.where(far, app - 40 * 365 * 86_400 * SECOND, app)
    timeline = rng.integers(0, lines, n).astype(np.int64)
    # dense ids as timelines_of gives them
    timeline = np.unique(timeline, return_inverse=True)[1].astype(np.int64).reshape(-1)
    ok = rng.random(n) > 0.1
    return timelines(arrival.astype(np.int64), app.astype(np.int64), timeline, ok)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(layouts(), st.one_of(st.none(), st.integers(0, 25)), st.sampled_from(list(Action)))
def test_grouped_counts_equal_the_counts_in_processing_order(lines, late_s, action) -> None:
    late_ns = None if late_s is None else late_s * SECOND
    fast = counts(lines, late_ns, action)
    slow = counts_in_order(lines, late_ns, action)
    assert fast.late == slow.late
    assert np.array_equal(np.sort(fast.disorder), np.sort(slow.disorder))
    for allowed in (0, 1, 5, 50):
        assert fast.least_ooo_s(allowed) == slow.least_ooo_s(allowed)


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(layouts(), st.integers(0, 30), st.sampled_from(list(Action)))
def test_the_steps_are_the_same_asked_again(lines, allowed, action) -> None:
    values = list(range(0, 21, 3))
    first = staircase(lines, values, allowed, action)
    finer = staircase(lines, sorted({*values, *range(5, 12)}), allowed, action)
    fresh = timelines(lines.arrival, lines.app, lines.timeline, lines.ok)
    assert staircase(fresh, values, allowed, action) == first
    fresh = timelines(lines.arrival, lines.app, lines.timeline, lines.ok)
    assert staircase(fresh, sorted({*values, *range(5, 12)}), allowed, action) == finer


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rows=st.lists(
        st.tuples(
            st.integers(-1, 3),
            st.one_of(st.none(), st.sampled_from(["a", "b", "c", "1"])),
            st.one_of(st.none(), st.integers(0, 2)),
        ),
        max_size=60,
    ),
    two_keys=st.booleans(),
)
def test_substreams_are_the_partition_and_the_keys_as_text(rows, two_keys) -> None:
    """Two events share a substream id exactly when their partition and OVER keys (read as
    text) are equal; an event with a key missing has none (-1); the ids are 0, 1, ..."""
    frame = pl.DataFrame(
        {"k": [r[1] for r in rows], "n": [r[2] for r in rows]},
        schema={"k": pl.String, "n": pl.Int64},
    )
    part = np.array([r[0] for r in rows], dtype=np.int64)
    over = ("k", "n") if two_keys else ("k",)
    ids = substream_ids(frame, part, over)
    named = [
        None
        if any(r[i] is None for i in (1, 2)[: len(over)])
        else (r[0], *map(str, r[1 : 1 + len(over)]))
        for r in rows
    ]
    assert [i == -1 for i in ids] == [n is None for n in named]
    for i, a in enumerate(named):
        for j, b in enumerate(named):
            if a is not None and b is not None:
                assert (ids[i] == ids[j]) == (a == b)
    present = sorted({int(i) for i in ids if i >= 0})
    assert present == list(range(len(present)))
