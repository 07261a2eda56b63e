"""The issue's accuracy requirements, on every scenario ``orderdoc generate`` makes."""

from __future__ import annotations

import re

import numpy as np
import polars as pl
import pytest

from diagnostics.aggregates import read_summary
from diagnostics.durations import SECOND
from diagnostics.engine.policy import OrderingPolicy
from diagnostics.engine.replay import replay
from diagnostics.explain import Cause, Finding, SuggestionKind, explain
from diagnostics.generate import Scenario
from diagnostics.kinds import Severity

from .conftest import EXPECTED, EXPECTED_WITH_CAPTURE, PARTITIONS, POLICY, SEEDS

CASES = [(s, seed) for s in Scenario for seed in SEEDS]


@pytest.mark.parametrize(("scenario", "seed"), CASES)
def test_top_finding_from_logs_alone_names_the_injected_cause(runs, scenario, seed) -> None:
    run = runs[(scenario.value, seed)]
    report = explain(run.agg_dir, policy=POLICY)
    assert report.top is not None
    assert report.top.cause.value == EXPECTED[scenario]
    # no capture; "logs" only when the replay wrote log records (a healthy one writes none)
    logged = read_summary(run.agg_dir)["records_total"] > 0
    assert report.sources == (("logs", "metrics") if logged else ("metrics",))


@pytest.mark.parametrize(("scenario", "seed"), CASES)
def test_top_finding_with_the_capture_names_the_injected_cause(runs, scenario, seed) -> None:
    run = runs[(scenario.value, seed)]
    report = explain(run.agg_dir, events=run.events, policy=POLICY, partitions=PARTITIONS)
    assert report.top is not None
    assert report.top.cause.value == EXPECTED_WITH_CAPTURE[scenario]
    assert "capture" in report.sources


@pytest.mark.parametrize("seed", SEEDS)
def test_healthy_job_gets_no_warning_or_critical(runs, seed) -> None:
    run = runs[("healthy", seed)]
    for report in (
        explain(run.agg_dir, policy=POLICY),
        explain(run.agg_dir, events=run.events, policy=POLICY, partitions=PARTITIONS),
        explain(None, events=run.events, policy=POLICY, partitions=PARTITIONS),
    ):
        assert [f.severity for f in report.findings] == [Severity.INFO]
        assert report.findings[0].cause is Cause.HEALTHY


@pytest.mark.parametrize(("scenario", "seed"), CASES)
def test_non_healthy_scenarios_get_a_warning_or_worse(runs, scenario, seed) -> None:
    if scenario is Scenario.HEALTHY:
        return
    report = explain(runs[(scenario.value, seed)].agg_dir, policy=POLICY)
    assert report.top is not None
    assert report.top.severity in (Severity.WARNING, Severity.CRITICAL)
    assert report.top.suggestions


def _observed_lateness(events: pl.DataFrame) -> np.ndarray:
    """Lateness (s) of the events the default policy flags late, computed from the capture."""
    times = (
        events.select(
            (
                pl.col("arrival_time").str.to_datetime(time_zone="UTC")
                - pl.col("event_time").str.to_datetime(time_zone="UTC")
            )
            .dt.total_milliseconds()
            .alias("ms")
        )["ms"].to_numpy()
        / 1000
    )
    return times[times > 5]


def _late_value(finding: Finding) -> float:
    values = [
        s.value_seconds
        for s in finding.suggestions
        if s.kind is SuggestionKind.LATE_ARRIVAL_TOLERANCE
    ]
    assert values
    assert values[0] is not None
    return values[0]


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("with_capture", [False, True])
def test_recommended_late_tolerance_covers_and_is_tight(runs, seed, with_capture) -> None:
    run = runs[("late_senders", seed)]
    events = run.events if with_capture else None
    report = explain(run.agg_dir, events=events, policy=POLICY, partitions=PARTITIONS)
    value = _late_value(report.top)
    observed = _observed_lateness(run.events)
    assert observed.size > 100
    assert value <= 2 * np.quantile(observed, 0.999)
    if not with_capture:
        assert (observed <= value).mean() >= 0.99
        return
    # with a capture the finding's tolerance is the one recommendation's (issue 25): the
    # rule lets it leave at most 1 % of all events adjusted or dropped, with OVER the rest
    rec = report.recommended
    assert rec is not None
    assert value == rec.late_seconds
    assert rec.adjusted + rec.dropped <= 0.01 * run.events.height


def _apply(policy: OrderingPolicy, finding: Finding) -> OrderingPolicy:
    """The policy with every setting the finding suggests applied together."""
    changes: dict = {}
    for s in finding.suggestions:
        if s.kind is SuggestionKind.LATE_ARRIVAL_TOLERANCE:
            changes["late_arrival_ns"] = (
                None if s.value_seconds is None else int(s.value_seconds * SECOND)
            )
        elif s.kind is SuggestionKind.OUT_OF_ORDER_TOLERANCE and "over" not in changes:
            changes["out_of_order_ns"] = int(s.value_seconds * SECOND)
        elif s.kind is SuggestionKind.TIMESTAMP_BY_OVER:
            key = re.search(r"OVER (\w+)", s.snippet)
            assert key is not None
            changes["over"] = (key.group(1),)
            changes["partition_by"] = "PARTITION BY PartitionId" in s.snippet
            changes.pop("out_of_order_ns", None)
    return OrderingPolicy(**{**_fields(policy), **changes})


def _fields(policy: OrderingPolicy) -> dict:
    return {
        "timestamp_by": policy.timestamp_by,
        "late_arrival_ns": policy.late_arrival_ns,
        "out_of_order_ns": policy.out_of_order_ns,
        "action": policy.action,
        "early_policy": policy.early_policy,
        "partition_by": policy.partition_by,
        "over": policy.over,
    }


TARGET_FLAG = {Cause.LATE_ARRIVALS: "late", Cause.OUT_OF_ORDER: "out_of_order",
               Cause.HISTORICAL_REPLAY: "late", Cause.BATCHING_SENDERS: "late"}  # fmt: skip


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("scenario", ["late_senders", "cross_device_disorder", "historical_replay"])
@pytest.mark.parametrize("with_capture", [False, True])
def test_recommended_fix_replayed_removes_90_percent(runs, scenario, seed, with_capture) -> None:
    run = runs[(scenario, seed)]
    events = run.events if with_capture else None
    report = explain(run.agg_dir, events=events, policy=POLICY, partitions=PARTITIONS)
    top = report.top
    flag = TARGET_FLAG[top.cause]
    before = replay(run.events, POLICY, partitions=PARTITIONS).outcomes
    targeted = int(before[flag].sum())
    assert targeted > 0
    fixed = _apply(POLICY, top)
    assert fixed != POLICY
    after = replay(run.events, fixed, partitions=PARTITIONS).outcomes
    still = int(((after["status"] != "accepted") & before[flag]).sum())
    assert still <= 0.10 * targeted, (fixed.describe(), still, targeted)
    # and the fix does not move the problem elsewhere
    assert int((after["status"] != "accepted").sum()) <= 0.10 * targeted


@pytest.mark.parametrize("seed", SEEDS)
def test_clock_fix_for_the_named_sender_removes_the_early_drops(runs, seed) -> None:
    run = runs[("clock_skew", seed)]
    report = explain(run.agg_dir, events=run.events, policy=POLICY, partitions=PARTITIONS)
    top = report.top
    assert top.cause is Cause.FAST_CLOCKS
    senders = list(top.evidence["senders"])
    assert senders == ["dev-00000"]  # the scenario's fast clock, and only it
    offset = -top.evidence["clock_offset_seconds"]  # how far ahead
    assert re.search(r"dev-\d+", top.suggestions[0].snippet)
    corrected = run.events.with_columns(
        pl.when(pl.col("device_id").is_in(senders))
        .then(
            pl.col("event_time").str.to_datetime(time_zone="UTC")
            - pl.duration(milliseconds=round(offset * 1000))
        )
        .otherwise(pl.col("event_time").str.to_datetime(time_zone="UTC"))
        .alias("event_time")
    )
    before = int(replay(run.events, POLICY, partitions=PARTITIONS).outcomes["early"].sum())
    after = int(replay(corrected, POLICY, partitions=PARTITIONS).outcomes["early"].sum())
    assert before > 0
    assert after <= 0.10 * before


@pytest.mark.parametrize("seed", SEEDS)
def test_from_logs_alone_the_tolerance_is_an_estimate_said_as_one(runs, seed) -> None:
    from diagnostics.explain.causes_time import ESTIMATE_MARGIN

    run = runs[("late_senders", seed)]
    report = explain(run.agg_dir, policy=POLICY)
    finding = report.top
    assert finding is not None
    lateness = finding.evidence["lateness"]
    examples = lateness["max_seconds"]
    value = _late_value(finding)
    # the largest example lateness plus the stated margin, rounded up to a second
    assert value == np.ceil(examples * (1 + ESTIMATE_MARGIN) - 1e-9)
    count = int(finding.evidence["records"])
    assert f"from {count:,} example events" in lateness["estimate"]
    assert "a capture of the input gives the exact value" in lateness["estimate"]
    assert "an estimate" in finding.explanation
    assert f"{ESTIMATE_MARGIN:.0%} margin" in finding.explanation
    assert "share_covered_by_suggestion" not in lateness  # no claim about all events
