"""Polars scalars (``Series.min()``, ``max()``, ``quantile()``, ``mean()``) as plain numbers.

Polars types these results as any Python literal or ``None``; the helpers check that the
value is a number and give it a precise type, so callers need no ``# type: ignore``.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal


def as_int(value: object) -> int:
    """``value`` (an int, float or Decimal from polars) as an int; TypeError otherwise."""
    if isinstance(value, int | float | Decimal) and not isinstance(value, bool):
        return int(value)
    msg = f"expected a number from polars, got {value!r}"
    raise TypeError(msg)


def as_float(value: object) -> float:
    """``value`` (an int, float or Decimal from polars) as a float; TypeError otherwise."""
    if isinstance(value, int | float | Decimal) and not isinstance(value, bool):
        return float(value)
    msg = f"expected a number from polars, got {value!r}"
    raise TypeError(msg)


def as_datetime(value: object) -> datetime:
    """``value`` (a datetime from polars) as is; TypeError otherwise."""
    if isinstance(value, datetime):
        return value
    msg = f"expected a datetime from polars, got {value!r}"
    raise TypeError(msg)
