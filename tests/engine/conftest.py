"""Helpers for engine tests: build captures from the clock-time tables of docs/semantics.md, "Worked examples"."""

from __future__ import annotations

import polars as pl
import pytest

DAY = "2024-01-01"


def at(clock: str) -> str:
    """``12:07`` or ``00:10:42`` on a fixed day, as ISO-8601 UTC."""
    if clock.count(":") == 1:
        clock += ":00"
    return f"{DAY}T{clock}Z"


def capture(rows: list[tuple], names: tuple[str, ...] = ("ts", "arrival_time")) -> pl.DataFrame:
    """A capture frame from rows of clock strings (other values kept as they are)."""
    columns = {
        name: [at(row[i]) if name in ("ts", "arrival_time") else row[i] for row in rows]
        for i, name in enumerate(names)
    }
    return pl.DataFrame(columns)


def clock(values: pl.Series) -> list[str | None]:
    """Datetimes as ``HH:MM:SS`` on the fixed day (``None`` kept)."""
    return [None if v is None else v.strftime("%H:%M:%S") for v in values.to_list()]


@pytest.fixture
def clocks():
    return clock
