"""Helpers of the Spark tests. Their session is tests/conftest.py's ``spark`` (one for the run)."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs" / "asa"


@pytest.fixture(scope="session")
def samples() -> Path:
    """The hand-made sample folder."""
    return SAMPLES


def read_table(folder: Path) -> pl.DataFrame:
    """A table folder written by the job, read the way other parts of orderdoc read it."""
    return pl.scan_parquet(folder / "**" / "*.parquet", hive_partitioning=True).collect()


def canonical(frame: pl.DataFrame, columns: list[str]) -> list[tuple]:
    """Rows of ``columns`` in a total order, for comparing tables across engines."""
    return sorted(
        frame.select(columns).rows(), key=lambda row: tuple((v is None, str(v)) for v in row)
    )
