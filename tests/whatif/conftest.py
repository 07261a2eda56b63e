"""Helpers for the what-if tests: the bundled scenario captures and an engine comparison."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

from diagnostics.engine.policy import OrderingPolicy
from diagnostics.engine.replay import replay
from diagnostics.whatif.fast import evaluate, prepare

SCENARIOS = Path(__file__).resolve().parents[2] / "sample_logs" / "scenarios"


@pytest.fixture(scope="session")
def captures() -> dict[str, pl.DataFrame]:
    """Every bundled scenario capture."""
    return {p.parent.name: pl.read_csv(p) for p in sorted(SCENARIOS.glob("*/capture.csv"))}


def engine_vs_fast(
    events: pl.DataFrame, policy: OrderingPolicy, partitions: tuple[int, ...] | None
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Per input event: release (ns, -1 none), dropped, adjusted, from the engine and the fast
    evaluator."""
    out = replay(events, policy, partitions=partitions).outcomes
    engine = {
        "release": out["release_time"].dt.epoch("ns").fill_null(-1).to_numpy(),
        "dropped": out["dropped"].to_numpy(),
        "adjusted": (out["status"].cast(pl.String) == "adjusted").to_numpy(),
    }
    assert policy.timestamp_by is not None
    prepared = prepare(events, policy.timestamp_by, policy.over, partitions=partitions)
    result = evaluate(prepared, policy)
    fast = {}
    for name, values in (
        ("release", result.release),
        ("dropped", result.dropped_mask),
        ("adjusted", result.adjusted_mask),
    ):
        back = np.empty_like(values)
        back[prepared.index] = values
        fast[name] = back
    return engine, fast
