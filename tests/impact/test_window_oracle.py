"""The window rules against a brute-force oracle: for random events and random tumbling and
hopping windows (sizes, hops and offsets in milliseconds, offsets of either sign), every
window's count equals the events with start < t <= end, end = offset + k * hop since time
zero (1970-01-01T00:00:00Z)."""

from __future__ import annotations

from collections import Counter

from hypothesis import example, given, settings
from hypothesis import strategies as st

from diagnostics.impact import measure_impact

from .helpers import T0, outcomes

#: T0 in milliseconds since time zero, where windows are aligned
T0_MS = round(T0.timestamp() * 1000)


def oracle(times_ms: list[int], size: int, hop: int, offset: int) -> Counter:
    """Counts by window end (ms since time zero) of events at ``times_ms`` (ms since T0)."""
    times_ms = [T0_MS + t for t in times_ms]
    counts: Counter = Counter()
    lo, hi = min(times_ms) - 2 * size, max(times_ms) + 2 * size
    k = (lo - offset) // hop
    while offset + k * hop <= hi:
        end = offset + k * hop
        n = sum(1 for t in times_ms if end - size < t <= end)
        if n:
            counts[end] = n
        k += 1
    return counts


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.integers(0, 5_000), min_size=1, max_size=30),
    st.integers(1, 8),
    st.integers(1, 8),
    st.integers(-1_500, 1_500),
)
@example([0], 1, 7, 0)  # 700 ms windows are aligned to time zero, not to the first event
def test_tumbling_and_hopping_counts_match_the_oracle(times, hops, per_hop, offset):
    hop = per_hop * 100  # ms
    size = hop * hops
    rows = [{"app": t / 1000} for t in times]
    query = (
        "SELECT COUNT(*) AS n INTO o FROM input GROUP BY "
        f"HoppingWindow(Duration(millisecond, {size}), Hop(millisecond, {hop}), "
        f"Offset(millisecond, {offset}))"
    )
    table = measure_impact(outcomes(rows), query, "input").table
    got = {
        T0_MS + round((e - T0).total_seconds() * 1000): v
        for e, v in zip(table["window_end"], table["value_on_time"], strict=True)
        if v is not None
    }
    assert got == dict(oracle(times, size, hop, offset))
    if hops == 1:  # a hopping window whose hop is its size is a tumbling window
        tumbling = query.replace("HoppingWindow", "TumblingWindow").replace(
            f", Hop(millisecond, {hop})", ""
        )
        again = measure_impact(outcomes(rows), tumbling, "input").table
        assert again["value_on_time"].to_list() == table["value_on_time"].to_list()
