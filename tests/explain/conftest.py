"""Scenario runs shared by the explain tests: each scenario generated (two seeds), replayed
under ASA's default policy with ASA-format diagnostics and metrics, and aggregated once per
test session with the polars reference aggregation (the Spark job's tables, checked equal
by tests/spark)."""

from __future__ import annotations

import contextlib
import io
from dataclasses import dataclass
from pathlib import Path

import polars as pl
import pytest

from diagnostics.cli import main as orderdoc
from diagnostics.engine.policy import OrderingPolicy
from diagnostics.generate import Scenario
from diagnostics.report.pipeline import write_agg_dir

SEEDS = (7, 21)
PARTITIONS = (0, 1, 2, 3)
POLICY = OrderingPolicy(timestamp_by="event_time")

#: The cause each generated scenario has built in, as explain names it.
EXPECTED = {
    Scenario.HEALTHY: "healthy",
    Scenario.IDLE_PARTITION: "idle_partition",
    Scenario.LATE_SENDERS: "late_arrivals",
    Scenario.CLOCK_SKEW: "early_arrivals",
    Scenario.CROSS_DEVICE_DISORDER: "out_of_order",
    Scenario.HISTORICAL_REPLAY: "historical_replay",
    Scenario.HOT_PARTITION: "hot_partition",
}
#: With the capture, per-sender lateness tells which senders: the batching devices and the
#: fast clock are findings of their own (docs/explain.md, "A fleet's causes").
EXPECTED_WITH_CAPTURE = {
    **EXPECTED,
    Scenario.LATE_SENDERS: "batching_senders",
    Scenario.CLOCK_SKEW: "fast_clocks",
}


@dataclass(frozen=True)
class Run:
    """One generated scenario: its capture and aggregate folder."""

    scenario: Scenario
    seed: int
    capture: Path
    agg_dir: Path
    events: pl.DataFrame


def run_cli(argv: list[str]) -> int:
    """``orderdoc ARGV`` in-process, stdout swallowed; returns the exit code."""
    with contextlib.redirect_stdout(io.StringIO()):
        return orderdoc(argv)


def build_run(scenario: Scenario, seed: int, root: Path) -> Run:
    """generate → replay → aggregate for one scenario and seed."""
    folder = root / f"{scenario.value}-{seed}"
    folder.mkdir(parents=True)
    capture = folder / "capture.csv"
    argv = ["generate", scenario.value, "--out", str(capture), "--events", "2000"]
    assert run_cli([*argv, "--partitions", "4", "--duration", "30m", "--seed", str(seed)]) == 0
    replay = folder / "replay"
    assert (
        run_cli(
            [
                "replay",
                str(capture),
                "--out",
                str(replay),
                "--timestamp-by",
                "event_time",
                "--partitions",
                "4",
                "--job",
                f"job-{scenario.value}",
                "--source",
                "telemetry",
            ]
        )
        == 0
    )
    agg = folder / "agg"
    write_agg_dir([replay / "diagnostics.jsonl"], [replay / "metrics.parquet"], agg)
    return Run(scenario, seed, capture, agg, pl.read_csv(capture))


@pytest.fixture(scope="session")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, int], Run]:
    """Every scenario × seed, built once."""
    root = tmp_path_factory.mktemp("scenarios")
    return {(s.value, seed): build_run(s, seed, root) for s in Scenario for seed in SEEDS}
