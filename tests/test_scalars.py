"""diagnostics.scalars: polars scalars as checked plain numbers."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

import polars as pl
import pytest

from diagnostics.scalars import as_datetime, as_float, as_int


def test_numbers_from_polars_become_plain_numbers() -> None:
    values = pl.Series([3, 9, 4])
    assert as_int(values.max()) == 9
    assert as_float(values.mean()) == pytest.approx(16 / 3)
    assert as_int(Decimal("7")) == 7
    assert as_float(pl.Series([1.5]).quantile(0.5, "higher")) == 1.5


def test_datetimes_stay_datetimes() -> None:
    when = datetime(2024, 1, 1, tzinfo=UTC)
    assert as_datetime(pl.Series([when]).min()) == when


@pytest.mark.parametrize("value", [None, True, "3", datetime(2024, 1, 1)])
def test_anything_else_is_a_type_error(value: object) -> None:
    with pytest.raises(TypeError, match="expected a number"):
        as_int(value)
    with pytest.raises(TypeError, match="expected a number"):
        as_float(value)


def test_an_empty_series_has_no_datetime() -> None:
    with pytest.raises(TypeError, match="expected a datetime"):
        as_datetime(pl.Series([], dtype=pl.Datetime("us", "UTC")).min())
