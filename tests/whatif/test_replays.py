"""The replays kept for one capture are the engine's replays: with the TIMESTAMP BY text
parsed once for every replay, the outcomes equal a plain replay's, column for column (the
text kept as the capture has it, unparsable times, a time column named like an outcome
column)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from diagnostics.durations import SECOND
from diagnostics.engine.policy import Action, OrderingPolicy
from diagnostics.engine.replay import replay
from diagnostics.timestamps import to_utc
from diagnostics.whatif import evaluate
from diagnostics.whatif import replays as replays_module
from diagnostics.whatif.recommend import recommend
from diagnostics.whatif.replays import FLAGS, Replays

BASE = 1_767_225_600_000  # 2026-01-01, ms


@st.composite
def text_captures(draw: st.DrawFn) -> tuple[pl.DataFrame, str]:
    """1-60 events on 1-3 partitions, their times as text (some unparsable or missing),
    the time column named ``event_time`` or like an outcome column (``late``)."""
    n = draw(st.integers(1, 60))
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
    arrival = BASE + np.cumsum(rng.integers(0, 20_000, n))
    sent = arrival - rng.integers(-30_000, 400_000, n)
    texts = (
        pl.Series(sent.tolist())
        .cast(pl.Datetime("ms", "UTC"))
        .dt.to_string("%Y-%m-%dT%H:%M:%S%.3fZ")
    )
    odd = rng.random(n)
    texts = pl.Series(
        [
            None if u < 0.05 else "not a time" if u < 0.1 else t
            for u, t in zip(odd, texts, strict=True)
        ],
        dtype=pl.String,
    )
    name = draw(st.sampled_from(["event_time", "late"]))
    return pl.DataFrame(
        {
            "arrival_time": pl.Series(arrival.tolist()).cast(pl.Datetime("ms", "UTC")),
            name: texts,
            "partition_id": rng.integers(0, draw(st.integers(1, 3)), n),
            "device": rng.choice(["a", "b", "c"], n),
        }
    ), name  # fmt: skip


@st.composite
def policies(draw: st.DrawFn, name: str) -> OrderingPolicy:
    """A setting of every kind on the time column ``name`` (OVER device or not)."""
    over = draw(st.booleans())
    return OrderingPolicy(
        timestamp_by=name,
        late_arrival_ns=draw(st.sampled_from([0, 2 * SECOND, 60 * SECOND, None])),
        out_of_order_ns=draw(st.sampled_from([0, 5 * SECOND])),
        action=draw(st.sampled_from(list(Action))),
        partition_by=draw(st.booleans()) or over,
        over=("device",) if over else (),
    )


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text_captures(), st.data())
def test_a_kept_replay_is_the_engines_replay(capture, data) -> None:
    events, name = capture
    policy = data.draw(policies(name))
    replays = Replays(events)
    replays.put(
        OrderingPolicy(timestamp_by=name), replay(events, OrderingPolicy(timestamp_by=name))
    )
    kept = replays.result(policy)
    plain = replay(events, policy)
    assert kept.outcomes.equals(plain.outcomes)
    assert kept.outcomes.schema == plain.outcomes.schema
    assert (kept.policy, kept.renames) == (plain.policy, plain.renames)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text_captures(), st.data())
def test_a_fixs_flags_are_the_engines_replays(capture, data) -> None:
    """The outcome columns a fix's measurement reads, from one engine run on the capture
    prepared once, equal a replay's, event for event in input order."""
    events, name = capture
    policy = data.draw(policies(name))
    flags = Replays(events).flags(policy)
    plain = replay(events, policy).outcomes.select(FLAGS)
    assert flags.equals(plain)
    assert flags.schema == plain.schema


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text_captures(), st.data())
def test_a_replay_put_gives_the_time_as_the_engine_reads_it(capture, data) -> None:
    """A replay made elsewhere (the app's load) gives the TIMESTAMP BY text as the engine
    read it: equal to reading it again, unparsable and missing times included, its numbers
    as the recommender measures them, and a fix's flags from it equal a plain replay's."""
    events, name = capture
    replays = Replays(events)
    first = OrderingPolicy(timestamp_by=name)
    replays.put(first, replay(events, first))
    assert replays.parsed(events, name).equals(to_utc(events[name]).alias(name))
    # and the numbers the recommender would measure for it, without running the engine
    prepared = evaluate.prepare(events, name)
    assert replays.search.measures[first] == evaluate.evaluate_locally(prepared, [first])[0]
    policy = data.draw(policies(name))
    assert replays.flags(policy).equals(replay(events, policy).outcomes.select(FLAGS))


def test_after_the_loads_replay_no_time_is_read_again(monkeypatch) -> None:
    """The recommender's search and a fix's flags after a replay put (the app's load) read
    no TIMESTAMP BY text again."""
    rng = np.random.default_rng(7)
    n = 400
    arrival = BASE + np.cumsum(rng.integers(0, 2_000, n))
    sent = arrival - rng.integers(-1_000, 90_000, n)
    events = pl.DataFrame(
        {
            "arrival_time": pl.Series(arrival.tolist()).cast(pl.Datetime("ms", "UTC")),
            "event_time": pl.Series(sent.tolist())
            .cast(pl.Datetime("ms", "UTC"))
            .dt.to_string("%Y-%m-%dT%H:%M:%S%.3fZ"),
            "partition_id": rng.integers(0, 2, n),
            "device": rng.choice(["a", "b", "c"], n),
        }
    )
    job = OrderingPolicy(timestamp_by="event_time", late_arrival_ns=5 * SECOND)
    replays = Replays(events)
    replays.put(job, replay(events, job))
    reads: list[int] = []

    def counted(series: pl.Series) -> pl.Series:
        reads.append(len(series))
        return to_utc(series)

    monkeypatch.setattr(evaluate, "to_utc", counted)
    monkeypatch.setattr(replays_module, "to_utc", counted)
    rec = recommend(events, job, store=replays.search)
    replays.flags(rec.policy)
    assert reads == []
    fresh = recommend(events, job)
    assert reads, "a search without the load's replay reads the time itself"
    assert rec.table.equals(fresh.table)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text_captures(), st.data())
def test_a_search_run_for_a_fix_gives_the_same_numbers_and_its_flags(capture, data) -> None:
    """The fix's search evaluator (``Replays.evaluate``) gives the numbers the local
    evaluator gives, and a fix then reads that setting's flags without running the engine
    again: the flags a replay has."""
    events, name = capture
    policy = data.draw(policies(name))
    replays = Replays(events)
    prepared = evaluate.with_over(replays._prepared(events, name), events, name, policy.over)
    assert replays.evaluate(prepared, [policy]) == evaluate.evaluate_locally(prepared, [policy])
    runs: list[OrderingPolicy] = []
    engine_run = evaluate.run

    def counted(prepared: evaluate.Prepared, policy: OrderingPolicy):
        runs.append(policy)
        return engine_run(prepared, policy)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(evaluate, "run", counted)
        flags = replays.flags(policy)
    assert runs == []
    assert flags.equals(replay(events, policy).outcomes.select(FLAGS))
    assert replays.search.measures[policy] == evaluate.evaluate_locally(prepared, [policy])[0]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text_captures(), st.data())
def test_a_fix_reads_a_searched_setting_with_partition_by_from_its_counts(capture, data) -> None:
    """A setting with PARTITION BY the recommender measured: a fix's measurement of it is
    its counts (no event is held back by another partition), without running the engine
    again, and equal to the one made from its flags."""
    from diagnostics.jobdef import plan

    events, name = capture
    policy = replace(data.draw(policies(name)), partition_by=True)
    searched = Replays(events)
    prepared = evaluate.with_over(searched._prepared(events, name), events, name, policy.over)
    searched.search.measures[policy] = evaluate.evaluate_locally(prepared, [policy])[0]
    runs: list[OrderingPolicy] = []
    engine_run = evaluate.run

    def counted(prepared: evaluate.Prepared, policy: OrderingPolicy):  # type: ignore[no-untyped-def]
        runs.append(policy)
        return engine_run(prepared, policy)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(evaluate, "run", counted)
        by_counts = plan._measured(searched, policy)
    assert runs == []
    assert by_counts == plan._measured(Replays(events), policy)
