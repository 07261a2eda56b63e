"""The what-if under Flink's and Spark's rules reads the capture once and measures each setting
from the engine's decisions (``EngineCapture``, ``measures``), reusing what settings share
(Flink's combined watermark per idleness, its windows); every row must equal the reference:
a full ``replay_rules`` of that setting and the counts and quantiles taken from its outcome
columns, as the what-if did before."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

from diagnostics.durations import SECOND
from diagnostics.engine.columns import EventColumns
from diagnostics.engines import FlinkRules, SparkRules, replay_rules
from diagnostics.engines.policy import EngineRules, FlinkVersion
from diagnostics.engines.replay import EngineCapture
from diagnostics.whatif.engines import measures, recommend_engine, settings_of
from tests.engines.test_properties import SETTINGS, events_strategy, flink_strategy, frame
from tests.engines.test_properties import spark_strategy as spark_rules

PARTS = (0, 1, 2)


def reference(events: pl.DataFrame, rules: EngineRules, partitions=PARTS) -> dict:  # type: ignore[no-untyped-def]
    """The row of ``rules`` from a full replay's outcome columns: dropped events, and the
    window emission delay of the events kept (a window not emitted: until the last arrival)."""
    out = replay_rules(events, rules, partitions=partitions).outcomes
    n = out.height
    dropped = int(out["dropped"].sum())
    kept = out.filter(~pl.col("dropped"))
    emitted = kept["release_time"].fill_null(out["arrival"].max())
    delay = (emitted - kept["arrival"]).dt.total_nanoseconds().to_numpy() / SECOND
    p50 = round(float(np.quantile(delay, 0.5)), 3) if len(delay) else None
    p95 = round(float(np.quantile(delay, 0.95)), 3) if len(delay) else None
    return {
        "events": n,
        "dropped": dropped,
        "pct_dropped": round(100 * dropped / n, 4) if n else 0.0,
        "never_emitted": int(kept["release_time"].is_null().sum()),
        "delay_p50_s": p50,
        "delay_p95_s": p95,
    }


# Settings that share a capture read: Flink bounds, lateness, idleness, windows and releases
# mixed, so the cached watermarks and windows are reused across them in any order.
flink_settings = st.lists(flink_strategy, min_size=1, max_size=6).map(
    lambda rules: [replace(r, watermark_interval_ns=rules[0].watermark_interval_ns) for r in rules]
)
spark_settings = st.lists(spark_rules, min_size=1, max_size=4)


@SETTINGS
@given(rows=events_strategy, settings=st.one_of(flink_settings, spark_settings))
def test_each_setting_measured_on_one_capture_read_equals_a_full_replay(rows, settings) -> None:
    events = frame(rows)
    capture = EngineCapture(events, "ts", partitions=PARTS)
    for rules in settings:
        assert measures(capture, capture.releases(rules)) == reference(events, rules), rules
        assert measures(capture, capture.decisions(rules)) == reference(events, rules), rules


@SETTINGS
@given(rows=events_strategy, rules=st.one_of(flink_strategy, spark_rules))
def test_a_replay_from_a_capture_read_once_equals_replay_rules(rows, rules) -> None:
    events = frame(rows)
    capture = EngineCapture(events, "ts", partitions=PARTS)
    capture.decisions(replace(rules, window_ns=7 * SECOND))  # fills the caches first
    again = capture.replay(rules).outcomes
    assert again.equals(replay_rules(events, rules, partitions=PARTS).outcomes)


@pytest.mark.parametrize("scenario", ["late_senders", "idle_partition", "cross_device_disorder"])
@pytest.mark.parametrize(
    "current",
    [
        FlinkRules("event_time", 60 * SECOND, idleness_ns=5 * SECOND),
        FlinkRules("event_time", 60 * SECOND, version=FlinkVersion.V2_1),
        SparkRules("event_time", 60 * SECOND),
    ],
    ids=["flink-2.2", "flink-2.1", "spark"],
)
def test_the_search_table_equals_full_replays_of_its_settings(
    captures: dict[str, pl.DataFrame], scenario: str, current: EngineRules
) -> None:
    events = captures[scenario]
    rec = recommend_engine(events, current, columns=EventColumns())
    assert rec.table.height == len(rec.settings) >= 5
    partitions = tuple(range(events["partition_id"].n_unique()))
    for rules, row in zip(rec.settings, rec.table.iter_rows(named=True), strict=True):
        want = {**settings_of(rules), **reference(events, rules, partitions)}
        assert {k: row[k] for k in want} == want, rules
