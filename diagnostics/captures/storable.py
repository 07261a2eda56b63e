"""Input columns that Parquet can store. A JSON field holding only empty objects (``{}``) is
read as a struct without fields, which Parquet cannot write (``outcomes.parquet`` would fail):
such a column, and any column with an empty struct inside it (``{"b": {}}``, ``[{}]``), is
kept as JSON text instead (``{}``, ``{"b": {}}``, ``[{}]``; null stays null), so the values
survive and ``TIMESTAMP BY a.b`` still reaches into it."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import polars as pl

if TYPE_CHECKING:
    from polars._typing import PolarsDataType


def _has_empty_struct(dtype: PolarsDataType) -> bool:
    if isinstance(dtype, pl.Struct):
        return not dtype.fields or any(_has_empty_struct(f.dtype) for f in dtype.fields)
    if isinstance(dtype, pl.List | pl.Array):
        return _has_empty_struct(dtype.inner)
    return False


def _as_json(series: pl.Series) -> pl.Series:
    values = [None if v is None else json.dumps(v, default=str) for v in series.to_list()]
    return pl.Series(series.name, values, dtype=pl.String)


def storable(frame: pl.DataFrame) -> tuple[pl.DataFrame, tuple[str, ...]]:
    """``frame`` with each column Parquet cannot store as JSON text, and a note for each."""
    bad = [name for name, dtype in frame.schema.items() if _has_empty_struct(dtype)]
    if not bad:
        return frame, ()
    notes = tuple(
        f"column '{name}' holds empty JSON objects ({{}}): kept as JSON text" for name in bad
    )
    return frame.with_columns(_as_json(frame[name]) for name in bad), notes
