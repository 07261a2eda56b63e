"""A sweep's setting is the engine's replay, reduced to counts and delays."""

from __future__ import annotations

import itertools

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from diagnostics.durations import MINUTE, SECOND
from diagnostics.engine.policy import Action, OrderingPolicy
from diagnostics.engine.replay import replay
from diagnostics.engine.summary import summarize
from diagnostics.errors import InputError
from diagnostics.whatif.evaluate import (
    Measures,
    by_partition,
    evaluate,
    evaluate_locally,
    prepare,
    with_over,
)

S = SECOND
LATES = (0, 5 * S, 121 * S, None)
OOOS = (0, 3 * S)


def _policies(over: tuple[str, ...]):
    for late, ooo, pby, action in itertools.product(LATES, OOOS, (False, True), Action):
        if over and not pby:
            continue
        yield OrderingPolicy(
            timestamp_by="event_time", late_arrival_ns=late, out_of_order_ns=ooo,
            partition_by=pby, over=over, action=action,
        )  # fmt: skip


def _assert_matches_replay(events, policy, parts) -> None:
    summary = summarize(replay(events, policy, partitions=parts))
    result = evaluate(prepare(events, "event_time", policy.over, partitions=parts), policy)
    counts = summary["counts"]
    assert (result.adjusted, result.dropped, result.never_released) == (
        counts["adjusted"],
        counts["dropped"],
        counts["never_released"],
    ), policy.describe()
    delays = summary["release_delay_seconds"]
    if result.delays_s.size:
        got = np.quantile(result.delays_s, [0.5, 0.95, 1.0], method="higher")
        assert np.allclose(got, [delays["p50"], delays["p95"], delays["max"]], atol=1e-3)
    else:
        assert delays["max"] is None


@pytest.mark.parametrize(
    "scenario", ["late_senders", "cross_device_disorder", "clock_skew", "idle_partition",
                 "historical_replay", "healthy"],
)  # fmt: skip
@pytest.mark.parametrize("over", [(), ("device_id",)])
def test_scenarios_match_a_full_replay(captures, scenario, over) -> None:
    # a declared partition that never sends holds the merge back (docs/semantics.md, "Watermarks, merge and output release")
    for policy in _policies(over):
        _assert_matches_replay(captures[scenario], policy, (0, 1, 2, 3, 4))


def test_spec_example_b_output_delays() -> None:
    """docs/semantics.md, "Worked examples", B: late 15 s, out-of-order 5 s: released at 10:40, 10:42, 10:57, 10:53, 10:45."""
    events = pl.DataFrame(
        {
            "event_time": ["00:10:00", "00:10:30", "00:10:42", "00:10:38", "00:10:35"],
            "arrival_time": ["00:10:40", "00:10:41", "00:10:42", "00:10:43", "00:10:45"],
        }
    ).select(("2024-01-01T" + pl.col(c) + "Z").alias(c) for c in ("event_time", "arrival_time"))
    policy = OrderingPolicy(
        timestamp_by="event_time", late_arrival_ns=15 * S, out_of_order_ns=5 * S
    )
    result = evaluate(prepare(events, "event_time", partitions=(0,)), policy)
    # release − arrival, in arrival order: 0, 1, 15, 10, 0 seconds
    assert result.delays_s.tolist() == [0.0, 1.0, 15.0, 10.0, 0.0]
    assert (result.adjusted, result.dropped) == (2, 0)


def test_over_without_partition_by_on_many_partitions_is_rejected(captures) -> None:
    prepared = prepare(captures["healthy"], "event_time", ("device_id",))
    policy = OrderingPolicy(timestamp_by="event_time", over=("device_id",))
    with pytest.raises(InputError, match="PARTITION BY"):
        evaluate(prepared, policy)


@st.composite
def captures_strategy(draw):
    n = draw(st.integers(1, 60))
    parts = draw(st.integers(1, 3))
    arrival = np.cumsum(draw(st.lists(st.integers(0, 20_000), min_size=n, max_size=n)))
    offsets = draw(
        st.lists(st.one_of(st.integers(-400_000, 30_000), st.just(None)), min_size=n, max_size=n)
    )
    base = 1_704_067_200_000
    return pl.DataFrame(
        {
            "arrival_time": pl.Series((arrival + base).tolist()).cast(pl.Datetime("ms", "UTC")),
            "event_time": pl.Series(
                [
                    None if o is None else int(a - o + base)
                    for a, o in zip(arrival, offsets, strict=True)
                ],
                dtype=pl.Int64,
            ).cast(pl.Datetime("ms", "UTC")),
            "partition_id": draw(st.lists(st.integers(0, parts - 1), min_size=n, max_size=n)),
            "key": draw(st.lists(st.sampled_from(["a", "b", None]), min_size=n, max_size=n)),
        }
    )


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    events=captures_strategy(),
    late=st.sampled_from([0, 2 * S, 10 * S, MINUTE, None]),
    ooo=st.sampled_from([0, 1 * S, 5 * S]),
    action=st.sampled_from(list(Action)),
    pby=st.booleans(),
    over=st.sampled_from([(), ("key",)]),
    early=st.booleans(),
    extra_partition=st.booleans(),
)
def test_random_captures_match_a_full_replay(
    events, late, ooo, action, pby, over, early, extra_partition
):
    parts = tuple(range(int(events["partition_id"].max()) + 1 + int(extra_partition)))
    if over and not pby and len(parts) > 1:
        pby = True
    policy = OrderingPolicy(
        timestamp_by="event_time", late_arrival_ns=late, out_of_order_ns=ooo, action=action,
        early_policy=early, partition_by=pby, over=over,
    )  # fmt: skip
    _assert_matches_replay(events, policy, parts)
    # with PARTITION BY the local evaluator runs the engine partition by partition (two at
    # a time), counts added and delays pooled: the numbers of one run on the whole capture
    prepared = prepare(events, "event_time", over, partitions=parts)
    units = by_partition(prepared)
    if len(parts) > 1:
        assert units is not None
        assert sum(unit.size for unit in units) == prepared.size
    assert evaluate_locally(prepared, [policy]) == [Measures.of(evaluate(prepared, policy))]


EXAMPLE_C = [  # docs/semantics.md, "Worked examples", C: application, arrival, device
    ("12:07", "12:07", "d1"), ("12:08", "12:08", "d2"), ("12:17", "12:11", "d1"),
    ("12:08", "12:13", "d3"), ("12:19", "12:16", "d1"), ("12:12", "12:17", "d3"),
    ("12:17", "12:18", "d2"), ("12:20", "12:19", "d2"), ("12:16", "12:21", "d3"),
    ("12:23", "12:22", "d2"), ("12:22", "12:24", "d2"), ("12:21", "12:27", "d3"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("early", "over", "dropped", "adjusted"),
    [
        (True, (), 1, 3),  # C1 as configured: #3 dropped; #6, #9, #12 adjusted
        (False, (), 0, 4),  # C2 without an early-arrival policy: #4, #6, #9, #12 adjusted
        (True, ("device",), 1, 1),  # C3 OVER device: #3 dropped, #12 adjusted
    ],
)
def test_spec_example_c(early, over, dropped, adjusted) -> None:
    events = pl.DataFrame(
        {
            "event_time": [f"2024-01-01T{a}:00Z" for a, _, _ in EXAMPLE_C],
            "arrival_time": [f"2024-01-01T{b}:00Z" for _, b, _ in EXAMPLE_C],
            "device": [d for _, _, d in EXAMPLE_C],
        }
    )
    policy = OrderingPolicy(
        timestamp_by="event_time", late_arrival_ns=5 * MINUTE, out_of_order_ns=2 * MINUTE,
        early_policy=early, over=over,
    )  # fmt: skip
    result = evaluate(prepare(events, "event_time", over, partitions=(0,)), policy)
    assert (result.dropped, result.adjusted) == (dropped, adjusted)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    events=captures_strategy(),
    over=st.sampled_from([(), ("key",), ("key", "partition_id"), ("partition_id",)]),
    as_text=st.booleans(),
)
def test_the_capture_prepared_once_gives_each_over_key_sets_frame(events, over, as_text):
    """The recommender parses and sorts a capture once and adds each OVER key set's columns
    to it: the same frame, column for column, as preparing it with those keys."""
    if as_text:
        events = events.with_columns(pl.col("event_time").dt.to_string("%Y-%m-%dT%H:%M:%S%.3fZ"))
    base = prepare(events, "event_time")
    assert with_over(base, events, "event_time", over).frame.equals(
        prepare(events, "event_time", over).frame
    )
    assert with_over(base, events, "event_time", over).partitions == base.partitions


def test_an_over_column_missing_is_named_when_added_to_a_prepared_capture(captures) -> None:
    events = captures["healthy"]
    base = prepare(events, "event_time")
    with pytest.raises(InputError, match="OVER column 'nope' is missing"):
        with_over(base, events, "event_time", ("nope",))


def test_an_undeclared_partition_is_refused_by_the_whole_run(captures) -> None:
    """An event on a partition the capture does not declare: no split, the engine's error."""
    events = captures[next(iter(captures))]
    prepared = prepare(events, "event_time", partitions=(0, 1))
    if set(events["partition_id"].unique().to_list()) <= {0, 1}:
        pytest.skip("the scenario has no partition beyond 1")
    assert by_partition(prepared) is None
    with pytest.raises(InputError):
        evaluate_locally(prepared, [OrderingPolicy(timestamp_by="event_time", partition_by=True)])


def test_an_event_without_a_partition_number_is_refused_by_the_whole_run(captures) -> None:
    """An event whose partition is empty: no split (no partition would hold it), the
    engine's one error naming the row, as without PARTITION BY."""
    events = captures[next(iter(captures))]
    blank = events.with_columns(
        pl.when(pl.int_range(pl.len()) == 3)
        .then(None)
        .otherwise(pl.col("partition_id"))
        .alias("partition_id")
    )
    prepared = prepare(blank, "event_time", partitions=(0, 1, 2, 3))
    assert by_partition(prepared) is None
    policy = OrderingPolicy(timestamp_by="event_time", partition_by=True)
    with pytest.raises(InputError, match="is not a partition number"):
        evaluate_locally(prepared, [policy])
