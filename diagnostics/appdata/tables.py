"""Tables as the pages show them: never a ``None`` cell.

A grid shows a missing value as ``None``, which reads as a bug. A column the source cannot
fill at all is left out (the page says what would fill it); a column missing some values
shows them as :data:`MISSING` or as the words that say why (``not ended``).
"""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

#: A value the source does not have.
MISSING = "—"


def empty_columns(frame: pl.DataFrame) -> list[str]:
    """The columns of ``frame`` without a single value (none when it has no rows)."""
    if frame.is_empty():
        return []
    return [c for c in frame.columns if frame[c].null_count() == frame.height]


def _as_text(column: pl.Series) -> pl.Expr:
    expr = pl.col(column.name)
    if column.dtype == pl.Datetime:
        return expr.dt.strftime("%Y-%m-%d %H:%M:%S UTC")
    if column.dtype.is_float():
        return expr.round(3).cast(pl.String)
    return expr.cast(pl.String)


def shown(frame: pl.DataFrame, words: Mapping[str, str] | None = None) -> pl.DataFrame:
    """``frame`` with every column that misses some values as text, a missing value shown as
    ``words[column]`` (``{"ends_at": "not ended"}``) or :data:`MISSING`; columns without a
    missing value keep their type (and the grid's number formatting and sorting)."""
    words = words or {}
    return frame.with_columns(
        _as_text(frame[c]).fill_null(words.get(c, MISSING)).alias(c)
        for c in frame.columns
        if frame[c].null_count()
    )


#: Column headings that the general rule of :func:`heading` would not say well.
HEADINGS = {
    "max_delay_s": "max watermark delay (s)",
    "share_beyond": "share beyond tolerance",
    "beyond_tolerance": "events beyond tolerance",
    "raw_bytes": "size (bytes)",
    "late_arrival_s": "late-arrival tolerance (s)",
    "out_of_order_s": "out-of-order tolerance (s)",
    "partition_by": "PARTITION BY PartitionId",
    "over": "TIMESTAMP BY ... OVER",
    "delay_p50_s": "release delay p50 (s)",
    "delay_p95_s": "release delay p95 (s)",
    "delay_max_s": "release delay max (s)",
}


def heading(column: str) -> str:
    """A column's heading in words: ``idle_minutes`` → ``idle minutes``, ``p95_s`` →
    ``p95 (s)``, ``pct_adjusted`` → ``% adjusted``, ``partition_id`` → ``partition``."""
    if column in HEADINGS:
        return HEADINGS[column]
    name, unit = column, ""
    if name.endswith("_s"):
        name, unit = name[:-2], " (s)"
    if name.endswith("_id"):
        name = name[:-3]
    if name.startswith("pct_"):
        name = "% " + name[4:]
    return name.replace("_", " ") + unit
