"""Helpers for the what-if tests: the bundled scenario captures."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

SCENARIOS = Path(__file__).resolve().parents[2] / "sample_logs" / "scenarios"


@pytest.fixture(scope="session")
def captures() -> dict[str, pl.DataFrame]:
    """Every bundled scenario capture."""
    return {p.parent.name: pl.read_csv(p) for p in sorted(SCENARIOS.glob("*/capture.csv"))}
