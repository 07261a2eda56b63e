"""ASA's window rules at the boundaries: a window holds events with timestamp > start and
<= end; Offset moves the boundaries; hopping and sliding windows overlap; session windows
close at the timeout or at a maximum-duration check point."""

from __future__ import annotations

import polars as pl

from diagnostics.impact import measure_impact

from .helpers import at, outcomes


def windows(rows, group_by: str, select: str = "COUNT(*) AS n") -> dict:
    """{window end (seconds after T0): value} on time."""
    query = f"SELECT {select} INTO o FROM input GROUP BY {group_by}"
    table = measure_impact(outcomes(rows), query, "input").table
    start = at(0)
    return {
        (row["window_end"] - start).total_seconds(): row["value_on_time"]
        for row in table.filter(pl.col("value_on_time").is_not_null()).iter_rows(named=True)
    }


def test_tumbling_event_at_the_end_is_in_the_window_at_the_start_in_the_one_before():
    got = windows(
        [{"app": 0}, {"app": 10}, {"app": 10.001}, {"app": 20}], "TumblingWindow(second, 10)"
    )
    assert got == {0.0: 1, 10.0: 1, 20.0: 2}


def test_tumbling_offset_moves_the_boundaries():
    rows = [{"app": 0}, {"app": 10}, {"app": 12}, {"app": 13}]
    assert windows(rows, "TumblingWindow(second, 10, 2)") == {2.0: 1, 12.0: 2, 22.0: 1}
    # ASA's example: Offset(millisecond, -1) takes the start and leaves the end out
    got = windows(rows, "TumblingWindow(Duration(second, 10), Offset(millisecond, -1))")
    assert got == {9.999: 1, 19.999: 3}


def test_hopping_windows_overlap_and_hold_the_event_at_their_end():
    got = windows([{"app": 5}, {"app": 7}], "HoppingWindow(second, 10, 5)")
    # 5 s is the end of (−5, 5] and inside (0, 10]; not in (5, 15] (its start)
    assert got == {5.0: 1, 10.0: 2, 15.0: 1}
    offset = windows(
        [{"app": 5}], "HoppingWindow(Duration(second, 10), Hop(second, 5), Offset(second, 1))"
    )
    assert offset == {6.0: 1, 11.0: 1}


def test_sliding_window_output_where_an_event_enters_or_leaves():
    got = windows([{"app": 1}, {"app": 4}, {"app": 20}], "SlidingWindow(second, 5)")
    # enters at 1, 4, 20; 1 leaves at 6 (4 still in); 4 leaves at 9 (empty: no output)
    assert got == {1.0: 1, 4.0: 2, 6.0: 1, 20.0: 1}


def test_session_window_timeout_and_maximum_duration():
    rows = [{"app": t} for t in (1, 3, 5, 20, 21)]
    # timeout 4 s: 1, 3, 5 are one session ending at 5 + 4; 20, 21 another ending at 25
    assert windows(rows, "SessionWindow(second, 4, 100)") == {9.0: 3, 25.0: 2}
    long = [{"app": t} for t in range(1, 30, 2)]  # 1, 3, ..., 29 every 2 s
    # maximum 10 s: checks at 10, 20, 30; the first at least 10 s after the start (1) is 20
    got = windows(long, "SessionWindow(second, 3, 10)")
    assert got == {20.0: 10, 30.0: 5}


def test_session_windows_per_partition_key():
    rows = [{"app": 1, "device": "a"}, {"app": 3, "device": "b"}, {"app": 6, "device": "a"}]
    query = "SessionWindow(second, 4, 60) OVER (PARTITION BY device)"
    got = windows(rows, f"device, {query}")
    assert got == {5.0: 1, 7.0: 1, 10.0: 1}
    # without the partition key the three are one session (each within 4 s of the last)
    assert windows(rows, "SessionWindow(second, 4, 60)") == {10.0: 3}


def test_aggregates_of_one_window():
    rows = [{"app": 1, "value": 2}, {"app": 2, "value": 6}, {"app": 3, "value": 1}]
    select = (
        "COUNT(value) AS c, SUM(value) AS s, AVG(value) AS a, MIN(value) AS lo, MAX(value) AS hi"
    )
    query = f"SELECT {select} INTO o FROM input GROUP BY TumblingWindow(second, 10)"
    table = measure_impact(outcomes(rows), query, "input").table
    assert dict(zip(table["aggregate"], table["value_on_time"], strict=True)) == {
        "c": 3, "s": 9, "a": 3, "lo": 1, "hi": 6,
    }  # fmt: skip
