"""Property tests: whatever the seed and partition count, the top finding of a generated
scenario names its injected cause (with the capture, and from logs alone)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from diagnostics.engine.policy import OrderingPolicy
from diagnostics.explain import explain
from diagnostics.generate import GenerateConfig, Scenario, generate, write_capture
from diagnostics.kinds import Severity
from diagnostics.report.pipeline import write_agg_dir

from .conftest import EXPECTED, EXPECTED_WITH_CAPTURE, run_cli

POLICY = OrderingPolicy(timestamp_by="event_time")

shapes = st.tuples(
    st.sampled_from(list(Scenario)),
    st.integers(0, 10_000),  # seed
    st.integers(2, 8),  # partitions
    st.sampled_from([(1_000, 25), (3_000, 40)]),  # events, minutes
)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shapes)
def test_top_cause_with_the_capture(shape) -> None:
    scenario, seed, parts, (events, minutes) = shape
    config = GenerateConfig(
        events=events, partitions=parts, duration_ms=minutes * 60_000, seed=seed
    )
    capture = generate(scenario, config)
    report = explain(None, events=capture, policy=POLICY, partitions=tuple(range(parts)))
    assert report.top.cause.value == EXPECTED_WITH_CAPTURE[scenario]
    if scenario is Scenario.HEALTHY:
        assert {f.severity for f in report.findings} == {Severity.INFO}


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shapes)
def test_top_cause_from_logs_alone(shape) -> None:
    scenario, seed, parts, (events, minutes) = shape
    config = GenerateConfig(
        events=events, partitions=parts, duration_ms=minutes * 60_000, seed=seed
    )
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        write_capture(generate(scenario, config), root / "capture.csv")
        argv = ["replay", str(root / "capture.csv"), "--out", str(root / "r"),
                "--timestamp-by", "event_time", "--partitions", str(parts)]  # fmt: skip
        assert run_cli(argv) == 0
        write_agg_dir(
            [root / "r" / "diagnostics.jsonl"], [root / "r" / "metrics.parquet"], root / "a"
        )
        report = explain(root / "a", policy=POLICY)
    assert report.top.cause.value == EXPECTED[scenario]


def _logs_report(scenario: Scenario, config: GenerateConfig):
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        write_capture(generate(scenario, config), root / "capture.csv")
        argv = ["replay", str(root / "capture.csv"), "--out", str(root / "r"),
                "--timestamp-by", "event_time", "--partitions", str(config.partitions)]  # fmt: skip
        assert run_cli(argv) == 0
        write_agg_dir(
            [root / "r" / "diagnostics.jsonl"], [root / "r" / "metrics.parquet"], root / "a"
        )
        return explain(root / "a", policy=POLICY)


def test_out_of_order_caused_by_late_adjustment_follows_the_late_finding() -> None:
    """Found by hypothesis: with two partitions the late senders' consequences outnumber
    the late events; the out-of-order finding is then placed after its cause (with the
    capture, the batching senders' finding, which holds every late event)."""
    config = GenerateConfig(events=3_000, partitions=2, duration_ms=40 * 60_000, seed=74)
    capture = generate(Scenario.LATE_SENDERS, config)
    report = explain(None, events=capture, policy=POLICY, partitions=(0, 1))
    causes = [f.cause.value for f in report.findings]
    assert causes[:2] == ["batching_senders", "out_of_order"]
    assert "late_arrivals" not in causes  # no late event is left to a general finding
    ooo = report.findings[1]
    assert ooo.evidence["events"] > report.findings[0].evidence["late_events"]
    assert ooo.impact["consequence_of"] == "batching_senders"
    assert ooo.evidence["share_following_late_events"] >= 0.9
    logs = _logs_report(Scenario.LATE_SENDERS, config)
    assert [f.cause.value for f in logs.findings][:2] == ["late_arrivals", "out_of_order"]


def test_idle_cold_partitions_of_a_skewed_input_follow_the_skew() -> None:
    """Found by hypothesis: 1,000 events on 8 partitions, 80 % on one: the cold partitions
    go quiet for minutes; the skew is reported first and the idleness as its consequence."""
    config = GenerateConfig(events=1_000, partitions=8, duration_ms=25 * 60_000, seed=0)
    report = _logs_report(Scenario.HOT_PARTITION, config)
    causes = [f.cause.value for f in report.findings]
    assert causes[:2] == ["hot_partition", "idle_partition"]
    assert report.findings[1].impact["consequence_of"] == "hot_partition"


def test_cross_device_disorder_is_not_called_a_consequence() -> None:
    capture = generate(Scenario.CROSS_DEVICE_DISORDER, GenerateConfig(events=2_000, seed=3))
    report = explain(None, events=capture, policy=POLICY, partitions=(0, 1, 2, 3))
    assert "consequence_of" not in report.top.impact
    assert report.top.evidence["share_following_late_events"] is None
