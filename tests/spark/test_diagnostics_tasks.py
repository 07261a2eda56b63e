"""The watermark-delay task of the Spark replay's stage S8, fed a partition's change points
of M in batches of any size, gives the local replay's per-minute delays (no Spark needed:
the task is a plain function over Arrow batches); the example events' slices are found on
the driver."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import polars as pl
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from diagnostics.engine.policy import Action, OrderingPolicy
from diagnostics.engine.release import NEG
from diagnostics.engine.replay import replay
from diagnostics.engine.watermarks import watermark_delay_per_minute
from diagnostics.minutes import minute_grid, minute_of
from diagnostics.spark.diagnostics_tasks import DelayPlan, delay_batches
from diagnostics.spark.replay_diagnostics import split_of
from diagnostics.spark.replay_splits import Slice

BASE = datetime(2024, 1, 1, tzinfo=UTC)


def change_points(outcomes: pl.DataFrame) -> pl.DataFrame:
    """What stage S3 emits as change points: accepted events that raise their timeline's M,
    with that M, sorted by (partition, arrival, event)."""
    accepted = outcomes.filter(~pl.col("dropped")).select(
        pl.col("partition").alias("part"),
        pl.col("arrival").dt.epoch("ns").alias("arr"),
        pl.col("event_id").alias("eid"),
        pl.col("timeline"),
        pl.col("system_timestamp").dt.epoch("ns").alias("t"),
    )
    ordered = accepted.sort("part", "arr", "eid")
    with_m = ordered.with_columns(pl.col("t").cum_max().over("timeline").alias("m_after"))
    before = pl.col("m_after").shift(1).over("timeline").fill_null(NEG)
    return with_m.filter(pl.col("m_after") > before).drop("t")


@settings(max_examples=30, deadline=None)
@given(
    steps=st.lists(st.sampled_from([0, 1, 5, 30, 61, 200, 4000]), min_size=1, max_size=30),
    offsets=st.data(),
    over=st.booleans(),
    late=st.sampled_from([None, 0, 5, 90]),
    batch=st.integers(1, 7),
)
def test_delays_in_chunks_equal_the_local_ones(steps, offsets, over, late, batch):
    seconds = np.cumsum(steps).tolist()
    n = len(seconds)
    arrivals = [BASE + timedelta(seconds=s) for s in seconds]
    ts = [a + timedelta(seconds=offsets.draw(st.sampled_from([-100, -3, 0, 2]))) for a in arrivals]
    events = pl.DataFrame(
        {
            "ts": ts,
            "arrival_time": arrivals,
            "partition_id": [offsets.draw(st.integers(0, 1)) for _ in range(n)],
            "device": [offsets.draw(st.sampled_from(["a", "b", "c"])) for _ in range(n)],
        }
    )
    policy = OrderingPolicy(
        timestamp_by="ts",
        late_arrival_ns=None if late is None else late * 10**9,
        out_of_order_ns=2 * 10**9,
        action=Action.ADJUST,
        partition_by=True,
        over=("device",) if over else (),
    )
    result = replay(events, policy, partitions=(0, 1))
    expected = watermark_delay_per_minute(result)
    points = change_points(result.outcomes)
    arr = result.outcomes["arrival"].dt.epoch("ns")
    tau0, tau_end = int(arr.min()), int(arr.max())
    grid = minute_grid(np.r_[minute_of(arr.to_numpy()), minute_of(tau_end)])
    plan = DelayPlan(over, tau0, tau_end, tuple(int(m) for m in grid), policy.effective_late_ns,
                     policy.effective_ooo_ns)  # fmt: skip
    batches = [
        pa.RecordBatch.from_pandas(points.slice(i, batch).to_pandas(), preserve_index=False)
        for i in range(0, points.height, batch)
    ]
    got = pl.from_arrow(pa.Table.from_batches(list(delay_batches(plan, iter(batches)))))
    assert isinstance(got, pl.DataFrame)
    got = got.group_by("part", "m").agg(pl.col("d").max()).sort("part", "m")
    want = (
        expected.filter(pl.col("partition_id").is_in(points["part"].unique().to_list()))
        .select(
            pl.col("partition_id").alias("part"),
            pl.col("time").dt.epoch("ns").alias("m"),
            (pl.col("OutputWatermarkDelaySeconds") * 1e9).round(0).cast(pl.Int64).alias("d"),
        )
        .sort("part", "m")
    )
    assert got.to_dicts() == want.to_dicts()


@settings(max_examples=200, deadline=None)
@given(
    lengths=st.lists(st.integers(0, 5), min_size=1, max_size=12),
    picks=st.lists(st.integers(0, 10**6), max_size=20),
)
def test_example_events_are_found_in_the_slices_that_hold_them(lengths, picks):
    """S8 finds the slice of each example event on the driver from the slices' event ranges
    (empty slices included), as the join on the outcome rows' slice column did."""
    offsets = np.r_[0, np.cumsum(lengths)[:-1]]
    slices = [Slice(int(o), n) for o, n in zip(offsets, lengths, strict=True)]
    total = int(sum(lengths))
    if total == 0:
        assert split_of(slices, []) == {}
        return
    eids = [p % total for p in picks]
    found = split_of(slices, eids)
    assert sorted(e for ids in found.values() for e in ids) == sorted(set(eids))
    for split, ids in found.items():
        assert list(ids) == sorted(ids)
        assert all(
            slices[split].offset <= e < slices[split].offset + slices[split].length for e in ids
        )
