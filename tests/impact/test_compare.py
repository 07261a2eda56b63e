"""As emitted beside on time: late and dropped events change windows, sessions and HAVING;
each window counts the events moved in, moved out and missing, and the causes add up."""

from __future__ import annotations

from datetime import timedelta

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diagnostics.durations import DAY
from diagnostics.engine.policy import OrderingPolicy
from diagnostics.engine.replay import replay
from diagnostics.errors import InputError
from diagnostics.impact import measure_impact, summarize
from diagnostics.timestamps import UTC_NS

from .helpers import T0, at, outcomes


def table(rows, query):
    return measure_impact(outcomes(rows), query, "input").table


def by_end(frame: pl.DataFrame) -> dict:
    return {(r["window_end"] - T0).total_seconds(): r for r in frame.iter_rows(named=True)}


def test_a_late_event_moves_to_a_later_window_and_a_dropped_one_is_missing():
    rows = [
        {"app": 5},
        {"app": 8, "sys": 12, "late": True},  # adjusted: counted in (10, 20]
        {"app": 9, "sys": None, "early": True},  # dropped
        {"app": 15},
    ]
    got = by_end(
        table(rows, "SELECT COUNT(*) AS n INTO o FROM input GROUP BY TumblingWindow(second, 10)")
    )
    first, second = got[10.0], got[20.0]
    assert (first["value_as_emitted"], first["value_on_time"]) == (1, 3)
    assert (first["events_moved_out"], first["events_missing"], first["events_moved_in"]) == (
        1,
        1,
        0,
    )
    assert first["absolute_difference"] == 2
    assert abs(first["relative_difference"] - 2 / 3) < 1e-12
    assert (second["value_as_emitted"], second["value_on_time"], second["events_moved_in"]) == (
        2,
        1,
        1,
    )
    assert first["changed"]
    assert second["changed"]
    # window (0, 10] is out once an event at or after 10 s is released: 12 s + 1 s
    assert first["emitted_at"] == at(13)


def test_causes_share_the_moves_of_changed_windows():
    rows = [
        {"app": 5},
        {"app": 8, "sys": 12, "late": True},
        {"app": 9, "sys": None, "early": True},
        {"app": 15},
    ]
    impact = measure_impact(
        outcomes(rows),
        "SELECT COUNT(*) AS n INTO o FROM input GROUP BY TumblingWindow(second, 10)",
        "input",
    )
    summary = summarize(impact)
    shares = {c["cause"]: (c["events"], c["share"]) for c in summary["causes"]}
    # one late event (it left one window and entered another) and one early event
    assert shares["late adjustments"] == (1, 1 / 2)
    assert shares["early events"] == (1, 1 / 2)
    assert shares["drops"] == (0, 0.0)
    assert summary["windows_compared"] == 2
    assert summary["windows_changed"] == 2
    # without arrival times no window is at an edge: both are interior and off (1 vs 2)
    assert summary["interior"]["windows"] == 2
    assert summary["interior"]["off"] == 2
    assert summary["edges"] == []


def test_events_a_session_carries_along_are_their_own_named_cause():
    # on time 1, 2 and 10 are two sessions (timeout 5 s); 10 adjusted to 6 as emitted joins
    # the first: 1 and 2 did not move, their session did
    rows = [{"app": 1}, {"app": 2}, {"app": 10, "sys": 6, "out_of_order": True}]
    impact = measure_impact(
        outcomes(rows),
        "SELECT COUNT(*) AS n INTO o FROM input GROUP BY SessionWindow(second, 5, 60)",
        "input",
    )
    shares = {c["cause"]: c["events"] for c in summarize(impact)["causes"]}
    assert shares["out-of-order adjustments"] == 1
    assert shares["reshaped by moved events"] == 2


def test_a_late_event_splits_a_session_as_emitted():
    # on time 1, 3, 5 are one session (timeout 4 s); 3 is adjusted to 8 as emitted: the
    # gaps 1 -> 5 -> 8 are still within 4 s, so one session ending at 12 instead of 9
    rows = [{"app": 1}, {"app": 3, "sys": 8, "late": True}, {"app": 5}]
    got = by_end(
        table(rows, "SELECT COUNT(*) AS n INTO o FROM input GROUP BY SessionWindow(second, 4, 60)")
    )
    assert got[9.0]["output"] == "on time only"
    assert got[9.0]["value_on_time"] == 3
    assert got[12.0]["output"] == "as emitted only"
    assert got[12.0]["value_as_emitted"] == 3
    # adjusted to 11 the event opens a session of its own as emitted
    rows[1] = {"app": 3, "sys": 11, "late": True}
    got = by_end(
        table(rows, "SELECT COUNT(*) AS n INTO o FROM input GROUP BY SessionWindow(second, 4, 60)")
    )
    assert got[9.0]["value_as_emitted"] == 2
    assert got[9.0]["value_on_time"] == 3
    assert got[15.0]["value_as_emitted"] == 1
    assert got[15.0]["output"] == "as emitted only"


def test_having_flips_a_window_in_or_out():
    rows = [{"app": 1}, {"app": 2}, {"app": 3, "sys": 11, "late": True}, {"app": 12}]
    query = (
        "SELECT COUNT(*) AS n INTO o FROM input GROUP BY TumblingWindow(second, 10) HAVING n >= 3"
    )
    got = by_end(table(rows, query))
    # on time (0, 10] holds 3 events: output; as emitted 2: HAVING leaves it out
    assert got[10.0]["output"] == "on time only"
    assert got[10.0]["changed"]
    assert 20.0 not in got  # 1 on time, 2 as emitted: out on both sides
    flipped = by_end(table(rows, query.replace("n >= 3", "COUNT(*) = 2")))
    assert flipped[20.0]["output"] == "as emitted only"
    assert flipped[10.0]["output"] == "as emitted only"  # 2 as emitted, 3 on time


def test_where_filters_both_sides_and_keys_split_windows():
    rows = [
        {"app": 1, "device": "a", "value": 50},
        {"app": 2, "device": "b", "value": 50, "sys": 12, "late": True},
        {"app": 3, "device": "a", "value": 5},
    ]
    query = (
        "WITH Hot AS (SELECT device AS d, value FROM input WHERE value > 10) "
        "SELECT d, SUM(value) AS s INTO o FROM Hot GROUP BY d, TumblingWindow(second, 10)"
    )
    frame = table(rows, query)
    rows_by = {
        (r["keys"], (r["window_end"] - T0).total_seconds()): r for r in frame.iter_rows(named=True)
    }
    assert rows_by[("d=a", 10.0)]["value_on_time"] == 50
    assert not rows_by[("d=a", 10.0)]["changed"]
    assert rows_by[("d=b", 10.0)]["output"] == "on time only"
    assert rows_by[("d=b", 20.0)]["output"] == "as emitted only"


def _events(spec: list[tuple[int, int, int]]) -> pl.DataFrame:
    """Events at T0 + app ms, arriving delay ms later, in partition p."""
    return pl.DataFrame(
        {
            "event_time": [T0 + timedelta(milliseconds=a) for a, _, _ in spec],
            "arrival_time": [T0 + timedelta(milliseconds=a + d) for a, d, _ in spec],
            "partition_id": [p for _, _, p in spec],
            "device": [f"d{a % 3}" for a, _, _ in spec],
            "value": [float(a % 7) for a, _, _ in spec],
        }
    ).with_columns(pl.col("event_time", "arrival_time").cast(UTC_NS))


GROUPS = [
    "device, TumblingWindow(second, 2)",
    "TumblingWindow(Duration(second, 3), Offset(millisecond, -1))",
    "device, HoppingWindow(second, 4, 1)",
    "SlidingWindow(second, 2)",
    "device, SessionWindow(second, 1, 5) OVER (PARTITION BY device)",
]


@settings(max_examples=15, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 20_000), st.integers(0, 60_000), st.integers(0, 1)),
        min_size=1,
        max_size=40,
    )
)
def test_without_late_early_or_out_of_order_events_emitted_equals_on_time(spec):
    # unlimited late tolerance, a day of out-of-order tolerance, arrivals never early: the
    # policy moves nothing, so every window is the same as emitted and on time
    policy = OrderingPolicy(timestamp_by="event_time", late_arrival_ns=None, out_of_order_ns=DAY)
    out = replay(_events(spec), policy).outcomes
    assert not (out["late"].any())
    assert not (out["early"].any())
    assert not (out["out_of_order"].any())
    for group in GROUPS:
        query = (
            f"SELECT COUNT(*) AS n, AVG(value) AS a INTO o FROM input GROUP BY {group} HAVING n > 1"
        )
        frame = measure_impact(out, query, "input").table
        assert not frame["changed"].any(), group
        assert (frame["output"] == "both").all()
        assert frame["events_moved_in"].sum() == frame["events_moved_out"].sum() == 0


def test_emitted_at_per_timeline_waits_for_every_timeline_of_the_window():
    rows = [
        {"app": 5, "timeline": 0, "release": 6},
        {"app": 6, "timeline": 1, "release": 7},
        {"app": 11, "timeline": 0, "release": 12},  # timeline 0 passes 10 s at 12 s
        {"app": 30, "timeline": 1, "release": 31},  # timeline 1 passes 10 s at 31 s
    ]
    query = "SELECT COUNT(*) AS n INTO o FROM input GROUP BY TumblingWindow(second, 10)"
    merged = by_end(measure_impact(outcomes(rows), query, "input").table)
    assert merged[10.0]["emitted_at"] == at(12)
    split = by_end(measure_impact(outcomes(rows), query, "input", per_timeline=True).table)
    assert split[10.0]["emitted_at"] == at(31)
    # (20, 30] holds timeline 1's event at its end: out when that event is released
    assert split[30.0]["emitted_at"] == at(31)
    # a window not emitted at all has no emitted-at time
    late = [{"app": 5, "sys": 15, "late": True}, {"app": 25}]
    got = by_end(measure_impact(outcomes(late), query, "input").table)
    assert got[10.0]["output"] == "on time only"
    assert got[10.0]["emitted_at"] is None


def test_having_on_a_group_key_and_a_sum_of_text_is_one_error():
    rows = [{"app": 1, "device": "a"}, {"app": 2, "device": "b"}, {"app": 3, "device": "b"}]
    query = (
        "SELECT device, COUNT(*) AS n INTO o FROM input "
        "GROUP BY device, TumblingWindow(second, 10) HAVING device = 'b'"
    )
    frame = table(rows, query)
    assert frame["keys"].to_list() == ["device=b"]
    assert frame["value_on_time"].to_list() == [2]
    with pytest.raises(
        InputError, match=r"SUM\(device\): row 1 of the capture has device = 'a', not a number"
    ):
        table(rows, "SELECT SUM(device) AS s INTO o FROM input GROUP BY TumblingWindow(second, 10)")


def test_events_without_an_application_time_are_counted_apart():
    rows = [{"app": 1}, {"app": None, "sys": None}, {"app": 2}]
    impact = measure_impact(
        outcomes(rows),
        "SELECT COUNT(*) AS n INTO o FROM input GROUP BY TumblingWindow(second, 10)",
        "input",
    )
    summary = summarize(impact)
    assert summary["events_without_application_time"] == 1
    assert summary["windows_changed"] == 0
    from diagnostics.impact import format_summary

    assert "1 event without a valid application time (InvalidInputTimeStamp)" in format_summary(
        summary
    )
