"""Each scenario: well-formed, deterministic, and showing its one known cause (and no other)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diagnostics.errors import Setting, UsageError
from diagnostics.generate import GenerateConfig, Scenario, generate
from diagnostics.instrument import InstrumentOptions, instrument

from .conftest import CONFIG, flagged, replayed

COLUMNS = ["message_id", "device_id", "partition_id", "event_time", "arrival_time", "value"]
FLAGS = ("late", "early", "out_of_order", "invalid_timestamp", "invalid_key")


def _ms(frame: pl.DataFrame, name: str) -> pl.Series:
    return frame[name].str.to_datetime("%Y-%m-%dT%H:%M:%S%.3fZ", time_zone="UTC").dt.epoch("ms")


@settings(max_examples=25, deadline=None)
@given(
    scenario=st.sampled_from(list(Scenario)),
    events=st.integers(1, 3_000),
    partitions=st.integers(2, 8),
    seed=st.integers(0, 2**31),
)
def test_shape_and_arrival_order(scenario, events, partitions, seed):
    config = GenerateConfig(
        events=events, partitions=partitions, duration_ms=30 * 60_000, seed=seed
    )
    frame = generate(scenario, config)
    assert frame.columns == COLUMNS
    assert frame.height == events
    assert frame["message_id"].to_list() == list(range(events))
    assert frame["partition_id"].is_between(0, partitions - 1).all()
    arrival = _ms(frame, "arrival_time")
    assert arrival.is_sorted()  # overall, hence per partition
    assert frame["event_time"].str.ends_with("Z").all()
    # Every device lives in one partition.
    assert (
        frame.group_by("device_id").agg(pl.col("partition_id").n_unique())["partition_id"].max()
        == 1
    )


@pytest.mark.parametrize("scenario", list(Scenario))
def test_deterministic_per_seed(scenario):
    config = GenerateConfig(events=500, partitions=3, duration_ms=30 * 60_000, seed=5)
    assert generate(scenario, config).equals(generate(scenario, config))
    other = GenerateConfig(events=500, partitions=3, duration_ms=30 * 60_000, seed=6)
    assert not generate(scenario, config).equals(generate(scenario, other))


def _flag_counts(result) -> dict[str, int]:
    return {flag: int(result.outcomes[flag].sum()) for flag in FLAGS}


def _notices(result, interval_ns: int = 300_000_000_000) -> set[int]:
    done = instrument(
        result.outcomes,
        InstrumentOptions(idle_notice_ns=interval_ns),
        policy_text="p",
        partitions=result.partitions,
    )
    return set(done.notices["partition"].to_list())


@pytest.mark.parametrize("scenario", ["healthy", "hot_partition"])
def test_fault_free_scenarios_raise_nothing(scenario):
    result = replayed(scenario)
    assert _flag_counts(result) == dict.fromkeys(FLAGS, 0)
    assert _notices(result) == set()


def test_hot_partition_share():
    frame = generate("hot_partition", CONFIG)
    share = (frame["partition_id"] == 0).mean()
    assert 0.75 < share < 0.85


def test_idle_partition_only_notices_for_the_last_partition():
    result = replayed("idle_partition")
    assert _flag_counts(result) == dict.fromkeys(FLAGS, 0)
    assert _notices(result) == {CONFIG.partitions - 1}


def test_late_senders_are_the_batching_devices():
    result = replayed("late_senders")
    late = flagged(result, "late")
    assert late.height > 0
    batching = late["device_id"].str.slice(4).cast(pl.Int64) % 5 == 0
    assert batching.all()
    assert _flag_counts(result)["early"] == 0


def test_clock_skew_is_early_events_of_one_device():
    result = replayed("clock_skew")
    early = flagged(result, "early")
    assert early.height > 0
    assert early["device_id"].unique().to_list() == ["dev-00000"]
    counts = _flag_counts(result)
    assert counts["late"] == counts["out_of_order"] == 0


def test_cross_device_disorder_is_fixed_by_over_device():
    plain = _flag_counts(replayed("cross_device_disorder"))
    assert plain["out_of_order"] > 0
    assert plain["late"] == plain["early"] == 0
    fixed = _flag_counts(replayed("cross_device_disorder", over=("device_id",), partition_by=True))
    assert fixed == dict.fromkeys(FLAGS, 0)


def test_historical_replay_is_all_late():
    result = replayed("historical_replay")
    assert result.outcomes["late"].all()
    lateness = (result.outcomes["arrival"] - result.outcomes["application_time"]).dt.total_days()
    assert lateness.min() >= 22
    assert lateness.max() <= 30


def test_settings_that_cannot_show_the_cause_are_refused():
    with pytest.raises(UsageError, match="partition count 1: scenario idle_partition") as few:
        generate("idle_partition", GenerateConfig(partitions=1))
    assert few.value.setting is Setting.PARTITIONS
    with pytest.raises(UsageError, match="duration 60s: scenario idle_partition") as short:
        generate("idle_partition", GenerateConfig(duration_ms=60_000))
    assert short.value.setting is Setting.DURATION
    with pytest.raises(UsageError, match="unknown"):
        generate("sunny_day", CONFIG)
    with pytest.raises(UsageError, match="number of events 0") as none:
        GenerateConfig(events=0)
    assert none.value.setting is Setting.EVENT_COUNT


def test_event_times_are_whole_milliseconds_and_arrival_follows_true_time():
    frame = generate("healthy", CONFIG)
    lag = _ms(frame, "arrival_time") - _ms(frame, "event_time")
    assert lag.min() >= 50
    assert lag.max() < 500
    assert np.all(np.diff(_ms(frame, "arrival_time").to_numpy()) >= 0)


@pytest.mark.parametrize(
    "scenario", ["healthy", "late_senders", "cross_device_disorder", "historical_replay"]
)
def test_each_device_sends_in_event_time_order(scenario):
    frame = generate(scenario, CONFIG).with_columns(_ms(generate(scenario, CONFIG), "event_time"))
    per_device = frame.group_by("device_id").agg(pl.col("event_time").is_sorted().alias("ok"))
    assert per_device["ok"].all()
