"""Fixtures for the log-reader tests (no Spark)."""

from __future__ import annotations

from pathlib import Path

import pytest

from diagnostics.logs.reader import read_records
from diagnostics.logs.records import DataError, Quarantined

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs" / "asa"


@pytest.fixture(scope="session")
def samples() -> Path:
    """The hand-made sample folder."""
    return SAMPLES


def split(outcomes: list) -> tuple[list[DataError], list[Quarantined]]:
    """(parsed, quarantined) of a list of outcomes."""
    parsed = [o for o in outcomes if isinstance(o, DataError)]
    bad = [o for o in outcomes if isinstance(o, Quarantined)]
    return parsed, bad


@pytest.fixture
def read():
    """read(bytes, name) -> (parsed, quarantined)."""

    def run(data: bytes, name: str = "f.json") -> tuple[list[DataError], list[Quarantined]]:
        return split(list(read_records(data, name)))

    return run
