"""Reading the aggregating steps of a query: windows in both argument forms and every unit,
aggregates, keys, WHERE through a WITH step, HAVING; other shapes named in one line."""

from __future__ import annotations

import pytest

from diagnostics.durations import (
    DAY,
    HOUR,
    MINUTE,
    MS,
    SECOND,
    US,
    format_duration,
    parse_duration,
)
from diagnostics.errors import InputError
from diagnostics.impact.model import Function, Logic, WindowKind
from diagnostics.impact.steps import read_steps


def one(query: str):
    steps = read_steps(query, "input")
    assert len(steps.steps) == 1, steps.skipped
    return steps.steps[0]


@pytest.mark.parametrize(
    ("written", "unit"),
    [
        ("day", DAY), ("dd", DAY), ("d", DAY), ("hour", HOUR), ("hh", HOUR),
        ("minute", MINUTE), ("mi", MINUTE), ("n", MINUTE), ("second", SECOND),
        ("ss", SECOND), ("s", SECOND), ("millisecond", MS), ("ms", MS),
        ("microsecond", US), ("mcs", US),
    ],
)  # fmt: skip
def test_every_time_unit_in_both_forms(written, unit):
    short = one(f"SELECT COUNT(*) INTO o FROM input GROUP BY TumblingWindow({written}, 2)")
    long = one(f"SELECT COUNT(*) INTO o FROM input GROUP BY Tumbling(Duration({written}, 2))")
    assert short.window.size == long.window.size == 2 * unit
    assert short.window.hop == 2 * unit


def test_offsets_hops_sessions_and_sliding():
    tumbling = one(
        "SELECT COUNT(*) INTO o FROM input "
        "GROUP BY TumblingWindow(Duration(hour, 1), Offset(millisecond, -1))"
    ).window
    assert (tumbling.kind, tumbling.size, tumbling.offset) == (WindowKind.TUMBLING, HOUR, -MS)
    assert (
        one("SELECT COUNT(*) INTO o FROM input GROUP BY TumblingWindow(minute, 5, 2)").window.offset
        == 2 * MINUTE
    )
    hopping = one("SELECT COUNT(*) INTO o FROM input GROUP BY HoppingWindow(second, 10, 5)").window
    assert (hopping.kind, hopping.size, hopping.hop, hopping.offset) == (
        WindowKind.HOPPING,
        10 * SECOND,
        5 * SECOND,
        0,
    )
    long = one(
        "SELECT COUNT(*) INTO o FROM input GROUP BY "
        "Hopping(Duration(hour, 1), Hop(minute, 15), Offset(second, 30))"
    ).window
    assert (long.size, long.hop, long.offset) == (HOUR, 15 * MINUTE, 30 * SECOND)
    sliding = one(
        "SELECT COUNT(*) INTO o FROM input GROUP BY SlidingWindow(Duration(minute, 5))"
    ).window
    assert (sliding.kind, sliding.size) == (WindowKind.SLIDING, 5 * MINUTE)
    session = one(
        "SELECT COUNT(*) INTO o FROM input GROUP BY user_id, "
        "SessionWindow(Timeout(minute, 2), MaxDuration(hour, 1)) OVER (PARTITION BY user_id)"
    ).window
    assert (session.size, session.max_duration, session.partition_key) == (
        2 * MINUTE,
        HOUR,
        "user_id",
    )
    short = one("SELECT COUNT(*) INTO o FROM input GROUP BY Session(second, 5, 60)").window
    assert (short.size, short.max_duration, short.partition_key) == (5 * SECOND, 60 * SECOND, None)


def test_aggregates_keys_and_names():
    step = one(
        "SELECT i.body.device, site, COUNT(*) AS n, COUNT(v) c, SUM(v), AVG(v) AS a, "
        "MIN(v) AS lo, MAX(v) AS hi, System.Timestamp() AS t INTO [out put] "
        "FROM input i TIMESTAMP BY ts GROUP BY i.body.device, site, TumblingWindow(second, 1)"
    )
    assert step.name == "out put"
    assert step.keys == ("body.device", "site")
    assert [(a.function, a.column, a.name) for a in step.aggregates] == [
        (Function.COUNT, None, "n"),
        (Function.COUNT, "v", "c"),
        (Function.SUM, "v", "SUM(v)"),
        (Function.AVG, "v", "a"),
        (Function.MIN, "v", "lo"),
        (Function.MAX, "v", "hi"),
    ]


def test_a_with_step_that_filters_and_renames():
    step = one(
        "WITH Hot AS (SELECT device_id AS dev, value AS v FROM input TIMESTAMP BY t WHERE value > 30) "
        "SELECT dev, AVG(v) AS avg_v INTO o FROM Hot WHERE v <> 99 "
        "GROUP BY dev, TumblingWindow(minute, 1) HAVING COUNT(*) >= 2 AND avg_v < 50"
    )
    assert step.keys == ("device_id",)
    assert step.aggregates[0].column == "value"
    assert len(step.filters) == 2
    first = step.filters[0].parts[0]
    assert first.left.column == "value"
    assert first.right.literal == 30.0
    assert step.having is not None
    assert step.having.logic is Logic.AND
    assert [a.name for a in step.hidden] == ["COUNT(*)"]


@pytest.mark.parametrize(
    ("query", "said"),
    [
        ("SELECT a.x, COUNT(*) INTO o FROM input a JOIN ref b ON a.k = b.k GROUP BY a.x, TumblingWindow(minute, 1)",
         "step `o`: JOIN is not replayed; events only"),
        ("SELECT * INTO o FROM input", "step `o`: no window aggregate; its rows are the events themselves (events only)"),
        ("SELECT COUNT(*) INTO o FROM input GROUP BY SnapshotWindow()", "step `o`: SnapshotWindow is not replayed; events only"),
        ("SELECT TopOne() OVER (ORDER BY v) INTO o FROM input GROUP BY TumblingWindow(minute, 1)",
         "step `o`: TopOne() OVER (ORDER BY v) is not replayed"),
        ("SELECT COUNT(DISTINCT v) INTO o FROM input GROUP BY TumblingWindow(minute, 1)",
         "step `o`: aggregate COUNT ( DISTINCT v ) is not replayed (only COUNT(*) and COUNT(column))"),
        ("SELECT COUNT(*) INTO o FROM input WHERE v LIKE 'a%' GROUP BY TumblingWindow(minute, 1)",
         "step `o`: condition: 'LIKE' is not a comparison (=, <>, <, <=, >, >=)"),
        ("SELECT COUNT(*) INTO o FROM input GROUP BY TumblingWindow(minute, 1) HAVING zz > 3",
         "step `o`: HAVING zz: not an aggregate or a GROUP BY key of the step"),
        ("SELECT COUNT(*) INTO o FROM other GROUP BY TumblingWindow(minute, 1)",
         "step `o`: reads other, not the job's input; not replayed"),
    ],
)  # fmt: skip
def test_other_shapes_are_named_in_one_line(query, said):
    steps = read_steps(query, "input")
    assert steps.steps == ()
    assert [s.describe() for s in steps.skipped] == [said]


def test_a_step_passing_an_aggregate_through_names_that_step_not_the_events():
    steps = read_steps(
        "WITH c AS (SELECT d, COUNT(*) AS n FROM input GROUP BY d, TumblingWindow(minute, 1)) "
        "SELECT * INTO o FROM c",
        "input",
    )
    assert [s.name for s in steps.steps] == ["c"]
    assert [s.describe() for s in steps.skipped] == [
        "step `o`: no window aggregate; its rows are step c's results"
    ]
    over = read_steps(
        "WITH c AS (SELECT COUNT(*) AS n FROM input GROUP BY TumblingWindow(minute, 1)) "
        "SELECT COUNT(*) INTO o FROM c GROUP BY TumblingWindow(minute, 5)",
        "input",
    )
    assert [s.describe() for s in over.skipped] == [
        "step `o`: reads c's windowed results; a window over results is not replayed"
    ]


def test_sub_millisecond_windows_are_said_in_microseconds():
    steps = read_steps(
        "SELECT COUNT(*) INTO o FROM input GROUP BY TumblingWindow(mcs, 500)", "input"
    )
    assert steps.steps[0].window.describe() == "TumblingWindow(500us)"
    assert parse_duration(format_duration(1_500_250)) == 1_500_250  # 1ms500us250ns


def test_a_wrong_unit_names_the_step_line_and_column():
    with pytest.raises(
        InputError, match=r"query step o \(line 2, column 1\): 'week' is not a time unit"
    ):
        read_steps("\nSELECT COUNT(*) INTO o FROM input GROUP BY TumblingWindow(week, 1)", "input")
    with pytest.raises(InputError, match="the window size must be positive"):
        read_steps("SELECT COUNT(*) INTO o FROM input GROUP BY TumblingWindow(second, 0)", "input")
    with pytest.raises(InputError, match="over 7 days"):
        read_steps("SELECT COUNT(*) INTO o FROM input GROUP BY TumblingWindow(day, 8)", "input")
