"""Data-error aggregation: accounting, windows, examples, extras."""

from __future__ import annotations

import json

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diagnostics.errors import InputError
from diagnostics.instrument import InstrumentOptions, instrument
from diagnostics.instrument.aggregate import KIND_FLAGS, aggregate_errors

from .conftest import BASE_NS, SECOND, make_outcomes, outcome_frames

WINDOWS = st.sampled_from([SECOND, 7 * SECOND, 60 * SECOND, 300 * SECOND, 3_600 * SECOND])


@settings(max_examples=100, deadline=None)
@given(outcomes=outcome_frames(), window=WINDOWS)
def test_event_counts_add_up_to_flagged_events_per_kind(outcomes: pl.DataFrame, window: int):
    """The sum of EventCount per kind equals the number of events flagged with it."""
    result = instrument(outcomes, InstrumentOptions(error_window_ns=window), policy_text="p")
    written: dict[str, int] = {}
    for record in result.records:
        props = record["properties"]
        if props["Type"] == "DataError":
            kind = props["DataErrorType"]
            written[kind] = written.get(kind, 0) + props["EventCount"]
    for kind, flag in KIND_FLAGS:
        assert written.get(kind.value, 0) == int(outcomes[flag].sum())


@settings(max_examples=60, deadline=None)
@given(outcomes=outcome_frames(), window=WINDOWS)
def test_each_aggregate_is_one_partition_and_window(outcomes: pl.DataFrame, window: int):
    """from/to lie in the aggregate's window; the example is the group's first event."""
    aggregates = aggregate_errors(outcomes, window)
    tau = outcomes["arrival"].dt.epoch("ns").to_list()
    parts = outcomes["partition"].to_list()
    flags = dict(KIND_FLAGS)
    for row in aggregates.iter_rows(named=True):
        flag = flags[next(k for k in flags if k.value == row["kind"])]
        members = [
            i
            for i in range(outcomes.height)
            if outcomes[flag][i]
            and parts[i] == row["partition"]
            and tau[i] // window == row["window"]
        ]
        assert len(members) == row["event_count"]
        assert row["from_ns"] == min(tau[i] for i in members)
        assert row["to_ns"] == max(tau[i] for i in members)
        first = min(members, key=lambda i: (tau[i], i))
        assert row["example_event_id"] == first
    keys = aggregates.select("kind", "partition", "window")
    assert keys.is_unique().all()


def test_an_event_late_and_out_of_order_counts_under_both(small_outcomes: pl.DataFrame):
    aggregates = aggregate_errors(small_outcomes, 60 * SECOND)
    counts = dict(aggregates.group_by("kind").agg(pl.col("event_count").sum()).iter_rows())
    assert counts == {
        "LateInputEvent": 3,
        "OutOfOrderEvent": 1,
        "EarlyInputEvent": 1,
        "InvalidInputTimeStamp": 1,
    }


def test_resource_record_fields(small_outcomes: pl.DataFrame):
    options = InstrumentOptions(job="asajob", source="telemetry")
    result = instrument(small_outcomes, options, policy_text="late 5s")
    first = result.records[0]
    assert list(first) == [
        "time",
        "resourceId",
        "category",
        "operationName",
        "level",
        "properties",
        "orderdoc",
    ]
    assert first["resourceId"].endswith("/PROVIDERS/MICROSOFT.STREAMANALYTICS/STREAMINGJOBS/asajob")
    assert first["category"] == "Execution"
    assert first["operationName"] == "Process Events"
    props = first["properties"]
    assert props["DataErrorType"] == "LateInputEvent"
    assert props["EventCount"] == 2
    assert props["FromTimestamp"] == "2024-01-01T00:00:30.0000000Z"
    assert props["ToTimestamp"] == "2024-01-01T00:00:40.0000000Z"
    assert first["time"] == props["ToTimestamp"]
    assert props["BriefMessage"] == (
        "Input event with application timestamp '2024-01-01T00:00:00.0000000' and arrival "
        "time '2024-01-01T00:00:30.0000000' was sent later than configured tolerance."
    )
    assert props["Message"] == (
        "Source 'telemetry' had 2 data errors of kind 'LateInputEvent' between processing "
        "times '2024-01-01T00:00:30.0000000Z' and '2024-01-01T00:00:40.0000000Z'. "
        + props["BriefMessage"]
    )
    assert json.loads(props["ExampleEvents"]) == [{"device_id": "a", "value": 0.0}]
    extra = first["orderdoc"]
    assert extra["partition_id"] == 0
    assert extra["lateness_seconds"] == {"min": 30.0, "p50": 30.0, "p95": 30.0, "max": 30.0}
    assert extra["distinct_keys"] == 2
    assert extra["correlation_id"] == result.correlation_id


def test_early_brief_message_and_negative_lateness(small_outcomes: pl.DataFrame):
    result = instrument(small_outcomes, InstrumentOptions(), policy_text="p")
    early = next(
        r for r in result.records if r["properties"].get("DataErrorType") == "EarlyInputEvent"
    )
    assert early["properties"]["BriefMessage"] == (
        "Input event arrival time '2024-01-01T00:01:00.0000000' is earlier than input event "
        "application timestamp '2024-01-01T00:20:00.0000000' by more than 5 minutes."
    )
    assert early["orderdoc"]["lateness_seconds"]["max"] == -1140.0


def test_invalid_timestamp_has_no_lateness(small_outcomes: pl.DataFrame):
    result = instrument(small_outcomes, InstrumentOptions(), policy_text="p")
    invalid = next(
        r for r in result.records if r["properties"].get("DataErrorType") == "InvalidInputTimeStamp"
    )
    assert invalid["orderdoc"]["lateness_seconds"] is None
    assert invalid["properties"]["EventCount"] == 1


def test_lateness_statistics_per_aggregate():
    s = SECOND
    arrival = [BASE_NS + 100 * s + i for i in range(5)]
    lateness = [10, 20, 30, 40, 100]
    outcomes = make_outcomes(
        arrival,
        [0] * 5,
        [a - d * s for a, d in zip(arrival, lateness, strict=True)],
        {"late": [True] * 5},
        ["a", "b", "a", "b", "c"],
    )
    row = aggregate_errors(outcomes, 60 * s).row(0, named=True)
    assert row["event_count"] == 5
    assert row["lateness_min"] == 10.0
    assert row["lateness_max"] == 100.0
    assert row["lateness_p50"] == 30.0
    assert row["lateness_p95"] == 88.0  # linear: 40 + 0.8 * (100 - 40)
    assert row["distinct_keys"] == 3


def test_records_are_in_time_order(small_outcomes: pl.DataFrame):
    result = instrument(small_outcomes, InstrumentOptions(), policy_text="p")
    times = [r["time"] for r in result.records]
    assert times == sorted(times)
    assert {r["properties"]["Type"] for r in result.records} == {
        "DataError",
        "InputPartitionNotProgressing",
    }


def test_empty_replay_writes_nothing():
    result = instrument(make_outcomes([], []), InstrumentOptions(), policy_text="p")
    assert result.records == ()
    assert result.metrics.height == 0
    assert result.notices.height == 0


def test_missing_flag_column_is_an_input_error(small_outcomes: pl.DataFrame):
    with pytest.raises(InputError, match="early"):
        aggregate_errors(small_outcomes.drop("early"), 60 * SECOND)


@settings(max_examples=60, deadline=None)
@given(outcomes=outcome_frames(), window=WINDOWS)
def test_one_group_at_a_time_gives_the_same_rows(outcomes: pl.DataFrame, window: int):
    """Aggregating each partition on its own (as a Spark task does) gives the rows of the
    whole frame, bit for bit: the lateness quantiles too."""
    whole = aggregate_errors(outcomes, window)
    alone = [
        aggregate_errors(outcomes.filter(pl.col("partition") == p), window)
        for p in outcomes["partition"].unique().sort()
    ]
    pieces = pl.concat(alone) if alone else whole.clear()
    order = ["kind", "partition", "window"]
    assert pieces.sort(order).equals(whole.sort(order))


def test_lateness_quantiles_of_many_groups_equal_those_of_each_group():
    """The case polars' own quantile got wrong in the last bit (one group against many)."""
    s = SECOND
    n = 4_000
    arrival = [BASE_NS + 100 * s + i * 997 for i in range(n)]
    lateness = [(i * 7_919_000_003) % (900 * s) + 1 for i in range(n)]
    outcomes = make_outcomes(
        arrival,
        [i % 7 for i in range(n)],
        [a - d for a, d in zip(arrival, lateness, strict=True)],
        {"late": [True] * n},
        [str(i % 13) for i in range(n)],
    )
    whole = aggregate_errors(outcomes, 3_600 * s).sort("partition")
    for row in whole.iter_rows(named=True):
        part = aggregate_errors(outcomes.filter(pl.col("partition") == row["partition"]), 3_600 * s)
        alone = part.row(0, named=True)
        assert (alone["lateness_p50"], alone["lateness_p95"]) == (
            row["lateness_p50"],
            row["lateness_p95"],
        )
