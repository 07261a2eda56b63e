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

from .conftest import EXPECTED, run_cli

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
    assert report.top.cause.value == EXPECTED[scenario]
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
