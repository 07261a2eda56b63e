"""One session-scoped local Spark for all Spark tests (local[2], 2 shuffle partitions, no UI)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pytest

from diagnostics.spark.session import SparkTarget, build_session, java_problem

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs" / "asa"
TEST_CONF = (
    ("spark.sql.shuffle.partitions", "2"),
    ("spark.ui.enabled", "false"),
    ("spark.driver.memory", "1g"),
)


@pytest.fixture(scope="session")
def spark() -> Iterator[object]:
    """The shared local[2] session; skipped tests would hide a broken set-up, so Java is required."""
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    problem = java_problem()
    assert problem is None, problem
    session = build_session(SparkTarget(master="local[2]", conf=TEST_CONF))
    yield session
    session.stop()


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
