"""The incremental API as a live consumer uses it: batches in, releases out as τ advances."""

from __future__ import annotations

import polars as pl
import pytest

from diagnostics.durations import parse_duration
from diagnostics.engine.engine import OrderingEngine
from diagnostics.engine.policy import OrderingPolicy
from diagnostics.errors import EngineStateError

from .conftest import capture, clock

B = [
    ("00:10:00", "00:10:40"),
    ("00:10:30", "00:10:41"),
    ("00:10:42", "00:10:42"),
    ("00:10:38", "00:10:43"),
    ("00:10:35", "00:10:45"),
]
POLICY = OrderingPolicy(
    timestamp_by="ts", late_arrival_ns=parse_duration("15s"), out_of_order_ns=parse_duration("5s")
)


def test_releases_arrive_as_processing_time_advances() -> None:
    events = capture(B)
    engine = OrderingEngine(POLICY, [0])
    first = engine.process(events.slice(0, 2))
    # at τ = 10:41 only event 1 (System.Timestamp 10:25) is out
    assert first.releases["event_id"].to_list() == [0]
    assert clock(first.releases["release_time"]) == ["00:10:40"]
    assert first.events.columns[:2] == ["ts", "arrival_time"]
    assert clock(first.events["system_timestamp"]) == ["00:10:25", "00:10:30"]
    assert engine.pending_count == 1
    second = engine.process(events.slice(2, 3))
    assert sorted(second.releases["event_id"].to_list()) == [1, 4]
    assert engine.processing_time is not None
    rest = engine.close()
    assert dict(zip(rest["event_id"], clock(rest["release_time"]), strict=True)) == {
        2: "00:10:57",
        3: "00:10:53",
    }


def test_a_batch_from_the_past_is_refused() -> None:
    events = capture(B)
    engine = OrderingEngine(POLICY, [0])
    engine.process(events.slice(2, 3))
    with pytest.raises(EngineStateError, match="before the processing time"):
        engine.process(events.slice(0, 1))


def test_closed_engine_refuses_more() -> None:
    engine = OrderingEngine(POLICY, [0])
    engine.process(capture(B))
    engine.close()
    with pytest.raises(EngineStateError, match="closed"):
        engine.process(capture(B))


def test_unlimited_late_and_a_silent_partition_never_release() -> None:
    policy = OrderingPolicy(timestamp_by="ts", late_arrival_ns=None)
    engine = OrderingEngine(policy, [0, 1])
    batch = capture(B).with_columns(pl.lit(0).alias("partition_id"))
    result = engine.process(batch)
    assert result.releases.is_empty()
    rest = engine.close()
    assert rest.height == len(B)
    assert rest["release_time"].is_null().all()


def test_input_column_named_like_an_outcome_stays_apart_from_the_outcome() -> None:
    plain = OrderingEngine(POLICY, [0]).process(capture(B))
    named = OrderingEngine(POLICY, [0]).process(capture(B).with_columns(pl.lit(1).alias("late")))
    assert named.batch["late"].to_list() == [1] * len(B)
    assert named.outcomes["late"].dtype == pl.Boolean
    assert named.outcomes.equals(plain.outcomes)
    assert named.events["input_late"].to_list() == [1] * len(B)


def test_staged_batches_commit_in_order_and_before_close() -> None:
    events = capture(B)
    engine = OrderingEngine(POLICY, [0])
    first = engine.stage(events.slice(0, 2))
    second = engine.stage(events.slice(2, 3))
    with pytest.raises(EngineStateError, match="committed out of order"):
        engine.commit(second)
    with pytest.raises(EngineStateError, match="not committed before close"):
        engine.close()
    released = [*engine.commit(first)["event_id"], *engine.commit(second)["event_id"]]
    assert sorted(released) == [0, 1, 4]
    assert sorted(engine.close()["event_id"].to_list()) == [2, 3]
