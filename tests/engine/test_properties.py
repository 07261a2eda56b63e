"""Property tests (hypothesis): batch-split invariance, watermark monotonicity, accounting,
and agreement with a literal event-by-event reading of docs/semantics.md."""

from __future__ import annotations

import numpy as np
import polars as pl
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from diagnostics.engine.columns import OUTCOME_COLUMNS
from diagnostics.engine.policy import Action, OrderingPolicy
from diagnostics.engine.replay import _release_order, _Releases, replay
from diagnostics.engine.summary import summarize

from .reference import reference

S = 1_000_000_000
BASE = 1_704_067_200 * S  # 2024-01-01T00:00:00Z

events_strategy = st.lists(
    st.tuples(
        st.one_of(st.none(), st.integers(-900, 420)),  # application − arrival, seconds
        st.integers(0, 600),  # arrival, seconds after BASE
        st.integers(0, 2),  # partition
        st.one_of(st.none(), st.sampled_from(["a", "b", "c"])),  # device key
    ),
    min_size=1,
    max_size=25,
)
policy_strategy = st.fixed_dictionaries(
    {
        "late": st.sampled_from([0, 1, 5, 60, None]),
        "ooo": st.sampled_from([0, 2, 30]),
        "drop": st.booleans(),
        "early_policy": st.booleans(),
        "partition_by": st.booleans(),
        "over": st.booleans(),
        "declared": st.integers(0, 2),  # extra partitions that never send data
        "app_time": st.booleans(),
    }
)


def build(rows, p):
    frame = pl.DataFrame(
        {
            "ts": [None if d is None else BASE + (a + d) * S for d, a, _, _ in rows],
            "arrival_time": [BASE + a * S for _, a, _, _ in rows],
            "partition_id": [part for *_, part, _ in rows],
            "device": [k for *_, k in rows],
        },
        schema={
            "ts": pl.Int64,
            "arrival_time": pl.Int64,
            "partition_id": pl.Int64,
            "device": pl.String,
        },
    ).with_columns(pl.col("ts", "arrival_time").cast(pl.Datetime("ns")).dt.replace_time_zone("UTC"))
    over = p["over"] and p["app_time"]
    policy = OrderingPolicy(
        timestamp_by="ts" if p["app_time"] else None,
        late_arrival_ns=None if p["late"] is None else p["late"] * S,
        out_of_order_ns=p["ooo"] * S,
        action=Action.DROP if p["drop"] else Action.ADJUST,
        early_policy=p["early_policy"],
        partition_by=p["partition_by"] or over,
        over=("device",) if over else (),
    )
    parts = tuple(range(3 + p["declared"]))
    return frame, policy, parts


COMPARED = list(OUTCOME_COLUMNS)  # every column the engine adds


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows=events_strategy, p=policy_strategy, batch=st.integers(1, 25))
def test_batches_never_change_the_result(rows, p, batch):
    frame, policy, parts = build(rows, p)
    whole = replay(frame, policy, partitions=parts).outcomes.select(COMPARED)
    split = replay(frame, policy, partitions=parts, batch_size=batch).outcomes.select(COMPARED)
    assert whole.equals(split)


@settings(max_examples=150, deadline=None)
@given(rows=events_strategy, p=policy_strategy)
def test_invariants(rows, p):
    frame, policy, parts = build(rows, p)
    out = replay(frame, policy, partitions=parts, batch_size=4).outcomes
    # every input event appears exactly once, in input order
    assert out["event_id"].to_list() == list(range(len(rows)))
    # dropped exactly when System.Timestamp is null
    assert out["dropped"].to_list() == out["system_timestamp"].is_null().to_list()
    # released events are released at or after their arrival; dropped ones never
    released = out.filter(pl.col("release_time").is_not_null())
    assert (released["release_time"] >= released["arrival"]).all()
    assert out.filter("dropped")["release_time"].is_null().all()
    # watermarks never decrease on a timeline (in processing order; null = −∞)
    ordered = out.filter(pl.col("timeline").is_not_null()).sort("arrival", "event_id")
    for _, group in ordered.group_by("timeline"):
        marks = group.sort("arrival", "event_id")["watermark"].dt.epoch("ns").fill_null(-(2**62))
        assert marks.diff().drop_nulls().min() is None or marks.diff().drop_nulls().min() >= 0
    # output ranks are a permutation over the released events
    assert sorted(released["output_rank"].to_list()) == list(range(released.height))


@settings(max_examples=300, deadline=None)
@given(rows=events_strategy, p=policy_strategy)
def test_agrees_with_literal_reading_of_the_spec(rows, p):
    frame, policy, parts = build(rows, p)
    out = replay(frame, policy, partitions=parts, batch_size=3).outcomes
    ns = lambda c: out[c].dt.epoch("ns").to_list()  # noqa: E731
    expected = reference(
        list(
            zip(
                ns("ts"),
                ns("arrival_time"),
                out["partition_id"].to_list(),
                out["device"].to_list(),
                strict=True,
            )
        ),
        late=policy.late_arrival_ns,
        ooo=policy.out_of_order_ns,
        drop=policy.action is Action.DROP,
        early_policy=policy.early_policy,
        partition_by=policy.partition_by,
        over=bool(policy.over),
        partitions=parts,
        app_time=policy.application_time,
    )
    assert ns("system_timestamp") == [r.sys for r in expected]
    assert out["late"].to_list() == [r.late for r in expected]
    assert out["early"].to_list() == [r.early for r in expected]
    assert out["out_of_order"].to_list() == [r.ooo for r in expected]
    assert ns("release_time") == [r.release for r in expected]


@settings(max_examples=60, deadline=None)
@given(rows=events_strategy, p=policy_strategy)
def test_merge_table_chunking_does_not_change_releases(rows, p):
    from diagnostics.engine import release

    frame, policy, parts = build(rows, p)
    whole = replay(frame, policy, partitions=parts).outcomes["release_time"]
    saved = release._TABLE_CELLS
    release._TABLE_CELLS = 4  # a handful of events per chunk
    try:
        chunked = replay(frame, policy, partitions=parts).outcomes["release_time"]
    finally:
        release._TABLE_CELLS = saved
    assert whole.equals(chunked)


@settings(max_examples=60, deadline=None)
@given(rows=events_strategy, p=policy_strategy)
def test_both_substream_searches_agree(rows, p):
    from diagnostics.engine import release

    frame, policy, parts = build(rows, p)
    saved = release._LOOP_TIMELINES
    try:
        release._LOOP_TIMELINES = 10**9  # one searchsorted per timeline
        looped = replay(frame, policy, partitions=parts, batch_size=5).outcomes["release_time"]
        release._LOOP_TIMELINES = 0  # the vectorised binary search over all timelines
        vectorised = replay(frame, policy, partitions=parts, batch_size=5).outcomes["release_time"]
    finally:
        release._LOOP_TIMELINES = saved
    assert looped.equals(vectorised)


@settings(max_examples=100, deadline=None)
@given(rows=events_strategy, p=policy_strategy, batch=st.integers(1, 25))
def test_both_substream_running_maxima_agree(rows, p, batch):
    """OVER substreams' running maxima, one timeline after another (few timelines) or in one
    grouped pass (many): every outcome the same, whatever the batches."""
    from diagnostics.engine import engine

    frame, policy, parts = build(rows, p)
    saved = engine.FEW_TIMELINES
    try:
        engine.FEW_TIMELINES = 10**9  # timeline by timeline
        looped = replay(frame, policy, partitions=parts, batch_size=batch).outcomes
        engine.FEW_TIMELINES = 0  # one grouped pass
        grouped = replay(frame, policy, partitions=parts, batch_size=batch).outcomes
    finally:
        engine.FEW_TIMELINES = saved
    assert looped.select(COMPARED).equals(grouped.select(COMPARED))


@settings(max_examples=150, deadline=None)
@given(rows=events_strategy, p=policy_strategy, batch=st.integers(1, 25))
def test_output_rank_is_release_then_system_timestamp_then_arrival(rows, p, batch):
    """Ranked commit by commit, the order equals one global sort by its definition (docs/semantics.md, "Watermarks, merge and output release")."""
    frame, policy, parts = build(rows, p)
    out = replay(frame, policy, partitions=parts, batch_size=batch).outcomes
    released = out.filter(pl.col("release_time").is_not_null())
    expected = released.sort(
        "release_time", "system_timestamp", "arrival", "event_id", maintain_order=True
    )["event_id"].to_list()
    assert released.sort("output_rank")["event_id"].to_list() == expected


def test_output_rank_falls_back_to_a_global_sort_when_commits_overlap():
    """Commits whose release times interleave (never produced by the engine) still rank by
    the definition: the collector notices and sorts everything at the end."""
    releases = _Releases(4)
    releases.sys[:] = [10, 5, 7, 1]
    for ids, times in (([0, 1], [100, 100]), ([2, 3], [100, 90])):
        releases.take(
            pl.DataFrame({"event_id": ids, "release_time": times}).with_columns(
                pl.col("release_time").cast(pl.Datetime("ns")).dt.replace_time_zone("UTC")
            )
        )
    # (release, sys, id): 3 (90, 1), 1 (100, 5), 2 (100, 7), 0 (100, 10)
    assert releases.output_rank().to_list() == [3, 1, 2, 0]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 6), st.integers(0, 6)), min_size=0, max_size=40),
    st.booleans(),
)
def test_release_order_is_the_three_key_sort(pairs, shuffled):
    """The shortcut (one sort by System.Timestamp when release times follow it) and the
    fallback both give the (release, System.Timestamp, id) order, ties included."""
    sys_ns = np.array([s for s, _ in pairs], dtype=np.int64)
    release = np.array([r for _, r in pairs], dtype=np.int64)
    if not shuffled:  # release times that rise with System.Timestamp: the shortcut applies
        release = np.sort(release)[np.argsort(np.argsort(sys_ns, kind="stable"))]
    ids = np.arange(len(pairs), dtype=np.int64) * 3
    if shuffled:
        ids = ids[::-1].copy()
    expected = np.lexsort((ids, sys_ns, release))
    assert _release_order(ids, sys_ns, release).tolist() == expected.tolist()


@settings(max_examples=60, deadline=None)
@given(rows=events_strategy, p=policy_strategy)
def test_summary_counts_timelines_and_outcomes(rows, p):
    frame, policy, parts = build(rows, p)
    result = replay(frame, policy, partitions=parts)
    out = result.outcomes
    summary = summarize(result)
    assert summary["timelines"] == out["timeline"].drop_nulls().n_unique()
    assert summary["counts"]["events"] == len(rows)
    assert summary["counts"]["dropped"] == out["dropped"].sum()
