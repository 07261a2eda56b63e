"""Quarantine data: the log records that could not be read, and a count per reason."""

from __future__ import annotations

import polars as pl

from diagnostics.aggregates import TableName
from diagnostics.appdata.store import Aggregate, collect, scan
from diagnostics.appdata.workdir import shown_column

SCHEMA = {
    "source_file": pl.String,
    "source_line": pl.Int64,
    "reason": pl.String,
    "raw": pl.String,
    "raw_bytes": pl.Int64,
}
#: At most this many characters of each raw record are shown.
RAW_SHOWN = 500


def records(agg: Aggregate) -> pl.DataFrame:
    """Quarantined records (``raw`` cut to :data:`RAW_SHOWN` characters), by file and line."""
    frame = scan(agg, TableName.QUARANTINE)
    if frame is None:
        return pl.DataFrame(schema=SCHEMA)
    return (
        collect(
            frame.select(
                pl.col("source_file").cast(pl.String),
                pl.col("source_line").cast(pl.Int64),
                pl.col("reason").cast(pl.String),
                pl.col("raw").cast(pl.String).str.slice(0, RAW_SHOWN),
                pl.col("raw_bytes").cast(pl.Int64),
            ),
            agg,
            TableName.QUARANTINE,
        )
        .with_columns(shown_column("source_file"))
        .sort("source_file", "source_line")
    )


def reason_counts(table: pl.DataFrame) -> pl.DataFrame:
    """Records per reason (the text before any parenthesised detail): ``reason``, ``records``;
    most frequent first."""
    return (
        table.select(pl.col("reason").str.split(" (").list.first().str.strip_chars())
        .group_by("reason")
        .agg(pl.len().cast(pl.Int64).alias("records"))
        .sort(["records", "reason"], descending=[True, False])
    )
