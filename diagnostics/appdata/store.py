"""Opening an aggregate folder (the output of ``orderdoc aggregate``) for the app.

An aggregate folder holds Parquet tables and ``summary.json``; where a table's files are is
the rule of :mod:`diagnostics.aggregates.folder`, shared with the explainer and the rules
engine. :func:`open_aggregate` accepts a folder holding ``summary.json`` or at least one of
the tables and rejects anything else with an :class:`~diagnostics.errors.InputError`
whose message says what was expected. :func:`signature` changes whenever a file in the
folder changes; the app uses it as the cache key.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from diagnostics.aggregates import (
    TableName,
    folder,
    present_tables,
    read_summary,
    require_aggregate,
)
from diagnostics.errors import InputError


@dataclass(frozen=True)
class Aggregate:
    """A validated aggregate folder. Invariant: ``tables`` lists only tables with Parquet data."""

    path: Path
    tables: tuple[TableName, ...]
    summary: dict[str, Any]

    def has(self, table: TableName) -> bool:
        """True when ``table`` has at least one Parquet file."""
        return table in self.tables


def open_aggregate(path: str | Path) -> Aggregate:
    """Validate ``path`` as an aggregate folder; raises InputError saying what is wrong."""
    root = require_aggregate(
        path,
        hint="make one with 'orderdoc aggregate LOGS --out DIR', or upload raw logs on the "
        "Load page",
    )
    return Aggregate(path=root.resolve(), tables=present_tables(root), summary=read_summary(root))


def signature(agg_dir: str | Path) -> str:
    """A digest of every file's relative path, size and modification time under ``agg_dir``."""
    root = Path(agg_dir)
    digest = hashlib.sha1(usedforsecurity=False)
    for dirpath, dirs, files in os.walk(root):
        dirs.sort()
        for name in sorted(files):
            full = Path(dirpath) / name
            try:
                stat = full.stat()
            except OSError:
                continue
            digest.update(f"{full.relative_to(root)}|{stat.st_size}|{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()[:16]


def scan(agg: Aggregate, table: TableName) -> pl.LazyFrame | None:
    """A lazy scan of ``table`` (hive columns included), or ``None`` when it is absent."""
    return folder.scan(agg.path, table)


def collect(frame: pl.LazyFrame, agg: Aggregate, table: TableName) -> pl.DataFrame:
    """Collect a query on one table, turning read errors into an InputError naming it."""
    try:
        return frame.collect()
    except (OSError, pl.exceptions.PolarsError) as exc:
        msg = f"{agg.path / table}: cannot read the table: {str(exc).splitlines()[0]}"
        raise InputError(msg) from exc


def utc(expr: pl.Expr) -> pl.Expr:
    """A timestamp column as ``Datetime('us', 'UTC')`` whatever unit or zone it was written in."""
    return expr.cast(pl.Datetime("us", "UTC"))


def of_job(frame: pl.LazyFrame, job: str | None) -> pl.LazyFrame:
    """``frame``'s rows of ``job`` (every row when ``None``): the app's job scope."""
    return frame if job is None else frame.filter(pl.col("job") == job)
