"""Property tests (hypothesis): the vectorised Flink and Spark rules agree with a literal
tick-by-tick reading of docs/engines.md, and their invariants hold (a larger bound or delay
never drops more, idleness changes nothing on one split, input order does not matter, Flink
2.2's watermark is never behind 2.1's and they differ only when every split is idle)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import polars as pl
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from diagnostics.engine.columns import OUTCOME_COLUMNS
from diagnostics.engines import FlinkRules, SparkRules, WatermarkPolicy, replay_rules
from diagnostics.engines import flink as flink_module
from diagnostics.engines.policy import FlinkVersion

from .reference import Event, flink, spark

MS = 1_000_000
S = 1_000 * MS
BASE = 1_704_067_200 * S  # 2024-01-01T00:00:00Z

events_strategy = st.lists(
    st.tuples(
        st.integers(0, 20_000),  # arrival, ms after BASE
        st.one_of(st.none(), st.integers(-12_000, 2_000)),  # event time − arrival, ms
        st.integers(0, 2),  # split / input
        st.integers(0, 999),  # sub-millisecond part of the event time, µs
    ),
    min_size=1,
    max_size=30,
)
flink_strategy = st.builds(
    FlinkRules,
    event_time=st.just("ts"),
    window_ns=st.sampled_from([1 * S, 2 * S, 5 * S]),
    out_of_orderness_ns=st.sampled_from([0, 500 * MS, 2 * S]),
    idleness_ns=st.sampled_from([None, 300 * MS, 1 * S, 3 * S]),
    allowed_lateness_ns=st.sampled_from([0, 1 * S]),
    watermark_interval_ns=st.sampled_from([100 * MS, 200 * MS, 1 * S]),
    version=st.sampled_from(list(FlinkVersion)),
)
spark_strategy = st.builds(
    SparkRules,
    event_time=st.just("ts"),
    window_ns=st.sampled_from([1 * S, 2 * S, 5 * S]),
    watermark_delay_ns=st.sampled_from([0, 1 * S, 3 * S]),
    trigger_ns=st.sampled_from([0, 500 * MS, 1 * S]),
    input_column=st.sampled_from([None, "src"]),
    watermark_policy=st.sampled_from(list(WatermarkPolicy)),
)
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def frame(rows) -> pl.DataFrame:
    arrival = [BASE + a * MS for a, _, _, _ in rows]
    ts = [None if d is None else BASE + (a + d) * MS + us * 1_000 for a, d, _, us in rows]
    return pl.DataFrame(
        {
            "ts": pl.Series(ts, dtype=pl.Int64).cast(pl.Datetime("ns", "UTC")),
            "arrival_time": pl.Series(arrival, dtype=pl.Int64).cast(pl.Datetime("ns", "UTC")),
            "partition_id": [p for _, _, p, _ in rows],
            "src": [f"in{p % 2}" for _, _, p, _ in rows],
        }
    )


def in_arrival_order(rows) -> tuple[list[int], list[Event]]:
    order = sorted(range(len(rows)), key=lambda i: (rows[i][0], i))
    events = []
    for i in order:
        a, d, p, us = rows[i]
        ts = None if d is None else BASE + (a + d) * MS + us * 1_000
        events.append(Event(BASE + a * MS, p, ts))
    return order, events


def ns(series: pl.Series) -> list[int | None]:
    return series.dt.epoch("ns").to_list()


def check(out: pl.DataFrame, order: list[int], expected) -> None:
    dropped, late = out["dropped"].to_list(), out["late"].to_list()
    watermark, release = ns(out["watermark"]), ns(out["release_time"])
    for position, row in enumerate(order):
        want = expected[position]
        got = (dropped[row], late[row], watermark[row], release[row])
        assert got == (want.dropped, want.late, want.watermark, want.release), (row, got, want)


@SETTINGS
@given(rows=events_strategy, rules=flink_strategy)
def test_flink_agrees_with_the_tick_by_tick_reading(rows, rules: FlinkRules) -> None:
    result = replay_rules(frame(rows), rules, partitions=(0, 1, 2))
    order, events = in_arrival_order(rows)
    check(result.outcomes, order, flink(events, 3, rules))
    assert tuple(result.outcomes.columns[-len(OUTCOME_COLUMNS) :]) == OUTCOME_COLUMNS


@SETTINGS
@given(rows=events_strategy, rules=spark_strategy)
def test_spark_agrees_with_the_batch_by_batch_reading(rows, rules: SparkRules) -> None:
    result = replay_rules(frame(rows), rules)
    order, events = in_arrival_order(rows)
    if rules.input_column is None:
        events = [replace(e, split=0) for e in events]
        inputs = 1
    else:
        events = [replace(e, split=e.split % 2) for e in events]
        inputs = len({e.split for e in events})
        names = sorted({e.split for e in events})
        events = [replace(e, split=names.index(e.split)) for e in events]
    check(result.outcomes, order, spark(events, inputs, rules))


@SETTINGS
@given(rows=events_strategy, rules=flink_strategy)
def test_a_larger_flink_bound_or_lateness_never_drops_more(rows, rules: FlinkRules) -> None:
    events = frame(rows)
    base = replay_rules(events, rules).outcomes["dropped"].to_numpy()
    looser = replace(
        rules,
        out_of_orderness_ns=rules.out_of_orderness_ns + 1 * S,
        allowed_lateness_ns=rules.allowed_lateness_ns + 500 * MS,
    )
    more = replay_rules(events, looser).outcomes["dropped"].to_numpy()
    assert not np.any(more & ~base)


@SETTINGS
@given(rows=events_strategy, rules=spark_strategy)
def test_a_larger_spark_delay_never_drops_more(rows, rules: SparkRules) -> None:
    events = frame(rows)
    base = replay_rules(events, rules).outcomes["dropped"].to_numpy()
    looser = replace(rules, watermark_delay_ns=rules.watermark_delay_ns + 2 * S)
    more = replay_rules(events, looser).outcomes["dropped"].to_numpy()
    assert not np.any(more & ~base)


@SETTINGS
@given(rows=events_strategy, rules=flink_strategy)
def test_idleness_changes_nothing_on_one_split(rows, rules: FlinkRules) -> None:
    events = frame(rows).with_columns(pl.lit(0).alias("partition_id"))
    with_idle = replay_rules(events, replace(rules, idleness_ns=300 * MS)).outcomes
    without = replay_rules(events, replace(rules, idleness_ns=None)).outcomes
    assert with_idle.select(OUTCOME_COLUMNS).equals(without.select(OUTCOME_COLUMNS))


@SETTINGS
@given(
    rows=events_strategy, rules=st.one_of(flink_strategy, spark_strategy), seed=st.integers(0, 99)
)
def test_input_order_does_not_change_an_event_outcome(rows, rules, seed: int) -> None:
    distinct = list({a: (a, d, p, us) for a, d, p, us in rows}.values())  # distinct arrivals
    events = frame(distinct)
    shuffled = events.with_row_index("original").sample(fraction=1.0, shuffle=True, seed=seed)
    a = replay_rules(events, rules).outcomes.drop("event_id")
    b = replay_rules(shuffled.drop("original"), rules).outcomes.drop("event_id")
    back = b.with_columns(shuffled["original"]).sort("original").drop("original")
    assert a.drop("output_rank").equals(back.drop("output_rank"))
    assert a["output_rank"].is_null().to_list() == back["output_rank"].is_null().to_list()


@SETTINGS
@given(rows=events_strategy, rules=flink_strategy)
def test_the_min_merge_gives_the_same_result_in_small_chunks(rows, rules: FlinkRules) -> None:
    events = frame(rows)
    whole = replay_rules(events, rules, partitions=(0, 1, 2)).outcomes
    saved = flink_module._CELLS
    flink_module._CELLS = 3
    try:
        chunked = replay_rules(events, rules, partitions=(0, 1, 2)).outcomes
    finally:
        flink_module._CELLS = saved
    assert whole.equals(chunked)


@SETTINGS
@given(rows=events_strategy, rules=flink_strategy)
def test_flink_2_2_is_never_behind_2_1_and_differs_only_when_every_split_is_idle(
    rows, rules: FlinkRules
) -> None:
    # 2.2 differs only on a tick where every split is idle, where it takes the maximum over the
    # splits instead of keeping the combined watermark: its watermark is never behind 2.1's, so
    # it drops every event 2.1 drops; without idleness, or on one split (whose maximum is the
    # combined watermark already), nothing differs.
    events = frame(rows)

    def under(version: FlinkVersion, events: pl.DataFrame = events) -> pl.DataFrame:
        return replay_rules(events, replace(rules, version=version)).outcomes

    old, new = under(FlinkVersion.V2_1), under(FlinkVersion.V2_2)
    floor = np.iinfo(np.int64).min
    old_wm = old["watermark"].dt.epoch("ns").fill_null(floor).to_numpy()
    new_wm = new["watermark"].dt.epoch("ns").fill_null(floor).to_numpy()
    assert np.all(new_wm >= old_wm)
    assert not np.any(old["dropped"].to_numpy() & ~new["dropped"].to_numpy())
    if rules.idleness_ns is None:
        assert old.equals(new)
    single = events.with_columns(pl.lit(0).alias("partition_id"))
    assert under(FlinkVersion.V2_1, single).equals(under(FlinkVersion.V2_2, single))
