"""Golden tests: the worked examples of docs/engines.md, row by row."""

from __future__ import annotations

import polars as pl
import pytest

from diagnostics.durations import parse_duration
from diagnostics.engines import FlinkRules, SparkRules, replay_rules
from diagnostics.engines.policy import FlinkVersion

DAY = "2024-01-01T"


def capture(rows, **extra) -> pl.DataFrame:
    frame = pl.DataFrame(
        {
            "name": [r[0] for r in rows],
            "ts": [f"{DAY}{r[1]}Z" for r in rows],
            "arrival_time": [f"{DAY}{r[2]}Z" for r in rows],
        }
    )
    return frame.with_columns(**{k: pl.Series(v) for k, v in extra.items()})


def table(out: pl.DataFrame) -> list[tuple]:
    """(name, watermark, dropped, release) with times as clock text (None kept)."""
    clock = pl.col("watermark", "release_time").dt.strftime("%H:%M:%S%.3f")
    rows = out.select("name", clock, "dropped").iter_rows()
    return [(n, w, d, r) for n, w, r, d in rows]


def d(text: str) -> int:
    return parse_duration(text)


F1 = capture(
    [
        ("a", "00:00:01", "00:00:01.100"),
        ("b", "00:00:08", "00:00:08.100"),
        ("c", "00:00:12", "00:00:12.100"),
        ("f", "00:00:07", "00:00:12.150"),
        ("d", "00:00:09", "00:00:12.300"),
        ("e", "00:00:11", "00:00:12.500"),
    ]
)


def test_example_f1_the_tick_decides() -> None:
    rules = FlinkRules("ts", d("10s"), out_of_orderness_ns=d("2s"))
    assert table(replay_rules(F1, rules).outcomes) == [
        ("a", None, False, "00:00:12.200"),
        ("b", "23:59:58.999", False, "00:00:12.200"),
        ("c", "00:00:05.999", False, None),
        ("f", "00:00:05.999", False, "00:00:12.200"),
        ("d", "00:00:09.999", True, None),
        ("e", "00:00:09.999", False, None),
    ]


def test_example_f1_allowed_lateness_keeps_d_and_fires_again() -> None:
    rules = FlinkRules("ts", d("10s"), out_of_orderness_ns=d("2s"), allowed_lateness_ns=d("1s"))
    out = replay_rules(F1, rules).outcomes
    row = table(out)[4]
    assert row == ("d", "00:00:09.999", False, "00:00:12.300")
    assert out["late"][4] is True


F2 = capture(
    [
        ("a", "00:00:01", "00:00:01.100"),
        ("b", "00:00:02", "00:00:02.100"),
        ("c", "00:00:15", "00:00:15.100"),
        ("d", "00:00:05", "00:00:20.100"),
    ],
    partition_id=[0, 1, 0, 1],
)


def test_example_f2_without_idleness_the_silent_split_holds_the_watermark() -> None:
    out = replay_rules(F2, FlinkRules("ts", d("10s"))).outcomes
    assert table(out) == [
        ("a", None, False, None),
        ("b", None, False, None),
        ("c", "00:00:00.999", False, None),
        ("d", "00:00:01.999", False, None),
    ]


def test_example_f2_idleness_releases_and_drops_the_returning_split() -> None:
    out = replay_rules(F2, FlinkRules("ts", d("10s"), idleness_ns=d("5s"))).outcomes
    assert table(out) == [
        ("a", None, False, "00:00:15.200"),
        ("b", None, False, "00:00:15.200"),
        ("c", "00:00:01.999", False, None),
        ("d", "00:00:14.999", True, None),
    ]


@pytest.mark.parametrize(
    ("idleness", "before", "idle_from"),
    [("4.8s", "00:00:07.200", "00:00:07.400"), ("5s", "00:00:07.400", "00:00:07.600")],
)
def test_example_f2_idle_from_the_first_tick_more_than_the_timeout_after(
    idleness, before, idle_from
) -> None:
    # The timer starts at 02.400; the split is idle on the first tick *more* than the timeout
    # later. An event of split 0 on that tick meets split 0's watermark alone just after it.
    probe = capture(
        [("a", "00:00:01", "00:00:01.100"), ("b", "00:00:02", "00:00:02.100"),
         ("p", "00:00:06", "00:00:06.100"), ("r", "00:00:06", f"{before}1"),
         ("q", "00:00:06", f"{idle_from}1")],
        partition_id=[0, 1, 0, 0, 0],
    )  # fmt: skip
    out = replay_rules(probe, FlinkRules("ts", d("10s"), idleness_ns=d(idleness))).outcomes
    assert [row[1] for row in table(out)[3:]] == ["00:00:01.999", "00:00:05.999"]


F3 = capture(
    [
        ("a", "00:00:20", "00:00:01.000"),
        ("b", "00:00:05", "00:00:01.000"),
        ("c", "00:00:06", "00:00:10.000"),
    ],
    partition_id=[0, 1, 1],
)


def test_example_f3_flink_2_2_flushes_the_maximum_when_every_split_is_idle() -> None:
    # Tick 01.000 sees a and b: split 0 at 19.999, split 1 at 4.999, combined 4.999. Both
    # timers start at 01.200; on tick 02.400 (the first more than 1 s later) both splits are
    # idle and Flink 2.2 takes the maximum, 19.999: window [0 s, 10 s) fires with b, c meets
    # 19.999 and is dropped.
    rules = FlinkRules("ts", d("10s"), idleness_ns=d("1s"))
    assert rules.version is FlinkVersion.V2_2  # the default: the newest modelled
    assert table(replay_rules(F3, rules).outcomes) == [
        ("a", None, False, None),
        ("b", None, False, "00:00:02.400"),
        ("c", "00:00:19.999", True, None),
    ]


def test_example_f3_flink_2_1_keeps_the_watermark_while_every_split_is_idle() -> None:
    # 2.1: no change while all are idle; c meets 4.999 and is kept. On tick 10.000 split 1 is
    # active again (5.999) while split 0 is idle: [0 s, 10 s) waits for a later watermark.
    rules = FlinkRules("ts", d("10s"), idleness_ns=d("1s"), version=FlinkVersion.V2_1)
    assert table(replay_rules(F3, rules).outcomes) == [
        ("a", None, False, None),
        ("b", None, False, None),
        ("c", "00:00:04.999", False, None),
    ]


S1 = capture(
    [
        ("a", "00:00:01", "00:00:01.500"),
        ("b", "00:00:12", "00:00:12.500"),
        ("c", "00:00:05", "00:00:13"),
        ("d", "00:00:25", "00:00:26"),
        ("e", "00:00:09", "00:00:27"),
        ("f", "00:00:15", "00:00:27"),
    ]
)


def test_example_s1_late_rows_meet_the_previous_batch_watermark() -> None:
    rules = SparkRules("ts", d("10s"), watermark_delay_ns=d("2s"), trigger_ns=d("1s"))
    assert table(replay_rules(S1, rules).outcomes) == [
        ("a", "00:00:00.000", False, "00:00:14.000"),
        ("b", "23:59:59.000", False, "00:00:27.000"),
        ("c", "23:59:59.000", False, "00:00:14.000"),
        ("d", "00:00:10.000", False, None),
        ("e", "00:00:10.000", True, None),
        ("f", "00:00:10.000", False, "00:00:27.000"),
    ]


S2 = capture(
    [
        ("a", "00:00:10", "00:00:01.500"),
        ("b", "00:00:03", "00:00:01.600"),
        ("c", "00:00:20", "00:00:02.500"),
        ("d", "00:00:04", "00:00:03.500"),
    ],
    src=["A", "B", "A", "B"],
)


@pytest.mark.parametrize(
    ("policy", "watermark", "dropped"),
    [("min", "00:00:03.000", False), ("max", "00:00:10.000", True)],
)
def test_example_s2_the_policy_decides_the_slow_input(policy, watermark, dropped) -> None:
    rules = SparkRules("ts", d("10s"), input_column="src", watermark_policy=policy)
    out = replay_rules(S2, rules).outcomes
    assert table(out)[3][:3] == ("d", watermark, dropped)
    assert out["timeline"].to_list() == [0, 1, 0, 1]
