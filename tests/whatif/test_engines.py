"""What-if under Flink's and Spark's rules: the search finds the engine's least setting within
the budget (checked against replays of its neighbours), idleness for a silent split, and the
job's own setting is always measured."""

from __future__ import annotations

from dataclasses import replace

import polars as pl

from diagnostics.durations import SECOND
from diagnostics.engines import FlinkRules, SparkRules, replay_rules
from diagnostics.whatif.engines import describe_setting, disorder_s, recommend_engine
from diagnostics.whatif.recommend import CURRENT
from diagnostics.whatif.rule import Rule

BASE = 1_704_067_200 * SECOND


def capture(rows: list[tuple[float, float, int]]) -> pl.DataFrame:
    """(arrival s, event time s, partition) rows after BASE."""
    return pl.DataFrame(
        {
            "ts": pl.Series([BASE + int(t * SECOND) for _, t, _ in rows]).cast(
                pl.Datetime("ns", "UTC")
            ),
            "arrival_time": pl.Series([BASE + int(a * SECOND) for a, _, _ in rows]).cast(
                pl.Datetime("ns", "UTC")
            ),
            "partition_id": [p for _, _, p in rows],
        }
    )


# Partition 0 is on time; partition 1's events arrive 7.5 s after their time, interleaved.
LAGGING = capture(
    [(s + 0.1, s, 0) for s in range(0, 120)] + [(s + 7.5, s, 1) for s in range(0, 120, 2)]
)
# The same events on one partition: out of order within the split.
MIXED = LAGGING.with_columns(pl.lit(0).alias("partition_id"))


def dropped(events: pl.DataFrame, rules) -> int:  # type: ignore[no-untyped-def]
    return int(replay_rules(events, rules).outcomes["dropped"].sum())


def test_flink_min_merge_keeps_a_lagging_partition_that_is_in_order() -> None:
    # the min over the splits waits for partition 1: nothing is late in Flink, unlike Spark.
    assert dropped(LAGGING, FlinkRules("ts", 10 * SECOND)) == 0
    assert dropped(LAGGING, SparkRules("ts", 10 * SECOND)) > 0


def test_flink_search_finds_the_least_bound_that_keeps_the_late_events() -> None:
    current = FlinkRules("ts", 10 * SECOND)
    assert dropped(MIXED, current) > 0
    rec = recommend_engine(MIXED, current, rule=Rule(budget_pct=0.0))
    assert isinstance(rec.rules, FlinkRules)
    bound = rec.rules.out_of_orderness_ns
    assert dropped(MIXED, rec.rules) == 0
    assert dropped(MIXED, replace(rec.rules, out_of_orderness_ns=bound - SECOND)) > 0
    assert rec.row["dropped"] == 0
    assert rec.current_row["tried_as"] == CURRENT
    assert rec.table.filter(pl.col("recommended")).height == 1
    assert rec.table["pareto"].any()


def test_spark_search_finds_the_least_delay_within_the_budget() -> None:
    current = SparkRules("ts", 10 * SECOND, trigger_ns=SECOND)
    rec = recommend_engine(LAGGING, current, rule=Rule(budget_pct=0.0))
    assert isinstance(rec.rules, SparkRules)
    delay = rec.rules.watermark_delay_ns
    assert dropped(LAGGING, rec.rules) == 0
    assert dropped(LAGGING, replace(rec.rules, watermark_delay_ns=delay - SECOND)) > 0
    assert describe_setting(rec.rules).startswith("withWatermark delay ")


def test_idleness_is_recommended_for_a_silent_split() -> None:
    # partition 1 sends once at the start, then nothing: without idleness no window closes.
    events = capture([(s + 0.1, s, 0) for s in range(0, 300)] + [(0.5, 0.4, 1)])
    rec = recommend_engine(events, FlinkRules("ts", 10 * SECOND))
    assert isinstance(rec.rules, FlinkRules)
    assert rec.rules.idleness_ns is not None
    assert rec.row["delay_p95_s"] < rec.current_row["delay_p95_s"] - 60


def test_disorder_is_measured_per_split_for_flink_and_globally_for_spark() -> None:
    flink = disorder_s(LAGGING, FlinkRules("ts", 10 * SECOND), columns=_columns())
    spark = disorder_s(LAGGING, SparkRules("ts", 10 * SECOND), columns=_columns())
    assert flink.max() == 0  # each partition is in order on its own
    assert spark.max() == 7  # arriving at s + 7.5, behind the s + 7 seen last: 7 s


def _columns():  # type: ignore[no-untyped-def]
    from diagnostics.engine.columns import EventColumns

    return EventColumns()
