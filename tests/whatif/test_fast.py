"""The vectorised evaluator gives the engine's result, event by event."""

from __future__ import annotations

import itertools

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from diagnostics.durations import MINUTE, SECOND
from diagnostics.engine.policy import Action, OrderingPolicy
from diagnostics.errors import PolicyError
from diagnostics.whatif.fast import evaluate, prepare

from .conftest import engine_vs_fast

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


def _assert_same(engine: dict, fast: dict, label: str) -> None:
    for name in ("dropped", "adjusted", "release"):
        diff = np.flatnonzero(engine[name] != fast[name])
        assert diff.size == 0, f"{label}: {name} differs at events {diff[:5].tolist()}"


@pytest.mark.parametrize(
    "scenario", ["late_senders", "cross_device_disorder", "clock_skew", "idle_partition",
                 "historical_replay", "healthy"],
)  # fmt: skip
@pytest.mark.parametrize("over", [(), ("device_id",)])
def test_scenarios_match_the_engine_event_by_event(captures, scenario, over) -> None:
    events = captures[scenario]
    # a declared partition that never sends holds the merge back (spec §4)
    for policy in _policies(over):
        engine, fast = engine_vs_fast(events, policy, (0, 1, 2, 3, 4))
        _assert_same(engine, fast, f"{scenario} {policy.describe()}")


def test_spec_example_b_release_times() -> None:
    """Spec §6 B: late 15 s, out-of-order 5 s: released at 10:40, 10:42, 10:57, 10:53, 10:45."""
    events = pl.DataFrame(
        {
            "event_time": ["00:10:00", "00:10:30", "00:10:42", "00:10:38", "00:10:35"],
            "arrival_time": ["00:10:40", "00:10:41", "00:10:42", "00:10:43", "00:10:45"],
        }
    ).select(("2024-01-01T" + pl.col(c) + "Z").alias(c) for c in ("event_time", "arrival_time"))
    policy = OrderingPolicy(
        timestamp_by="event_time", late_arrival_ns=15 * S, out_of_order_ns=5 * S
    )
    prepared = prepare(events, "event_time", partitions=(0,))
    result = evaluate(prepared, policy)
    base = int(
        pl.Series(["2024-01-01T00:10:00Z"]).str.to_datetime(time_zone="UTC").dt.epoch("ns")[0]
    )
    released = (result.release[np.argsort(prepared.index)] - base) // S
    assert released.tolist() == [40, 42, 57, 53, 45]
    assert (result.adjusted, result.dropped) == (2, 0)


def test_over_without_partition_by_on_many_partitions_is_rejected(captures) -> None:
    prepared = prepare(captures["healthy"], "event_time", ("device_id",))
    policy = OrderingPolicy(timestamp_by="event_time", over=("device_id",))
    with pytest.raises(PolicyError, match="PARTITION BY"):
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
def test_random_captures_match_the_engine(
    events, late, ooo, action, pby, over, early, extra_partition
):
    parts = tuple(range(int(events["partition_id"].max()) + 1 + int(extra_partition)))
    if over and not pby and len(parts) > 1:
        pby = True
    policy = OrderingPolicy(
        timestamp_by="event_time", late_arrival_ns=late, out_of_order_ns=ooo, action=action,
        early_policy=early, partition_by=pby, over=over,
    )  # fmt: skip
    engine, fast = engine_vs_fast(events, policy, parts)
    _assert_same(engine, fast, policy.describe())


EXAMPLE_C = [  # spec §6 C: application, arrival, device
    ("12:07", "12:07", "d1"), ("12:08", "12:08", "d2"), ("12:17", "12:11", "d1"),
    ("12:08", "12:13", "d3"), ("12:19", "12:16", "d1"), ("12:12", "12:17", "d3"),
    ("12:17", "12:18", "d2"), ("12:20", "12:19", "d2"), ("12:16", "12:21", "d3"),
    ("12:23", "12:22", "d2"), ("12:22", "12:24", "d2"), ("12:21", "12:27", "d3"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("early", "over", "dropped", "adjusted"),
    [
        (True, (), {3}, {6, 9, 12}),  # C1 as configured
        (False, (), set(), {4, 6, 9, 12}),  # C2 without an early-arrival policy
        (True, ("device",), {3}, {12}),  # C3 OVER device
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
    prepared = prepare(events, "event_time", over, partitions=(0,))
    result = evaluate(prepared, policy)
    back = np.argsort(prepared.index)
    numbers = np.arange(1, len(EXAMPLE_C) + 1)
    assert set(numbers[result.dropped_mask[back]].tolist()) == dropped
    assert set(numbers[result.adjusted_mask[back]].tolist()) == adjusted
