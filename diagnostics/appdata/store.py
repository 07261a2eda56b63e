"""Opening an aggregate folder (the output of ``orderdoc aggregate``) for the app.

An aggregate folder holds Parquet tables as folders (``data_errors``, ``error_rollup``,
``partition_idle``, ``metrics``, ``quarantine``; hive-partitioned by ``date`` or not) and
``summary.json``. :func:`open_aggregate` accepts a folder holding ``summary.json`` or at least
one of the tables and rejects anything else with an :class:`~diagnostics.errors.InputError`
whose message says what was expected. :func:`signature` changes whenever a file in the
folder changes; the app uses it as the cache key.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from diagnostics.errors import InputError

TABLES: tuple[str, ...] = ("data_errors", "error_rollup", "partition_idle", "metrics", "quarantine")
SUMMARY_FILE = "summary.json"


@dataclass(frozen=True)
class Aggregate:
    """A validated aggregate folder. Invariant: ``tables`` lists only tables with Parquet data."""

    path: Path
    tables: tuple[str, ...]
    summary: dict[str, Any]

    def has(self, table: str) -> bool:
        """True when ``table`` has at least one Parquet file."""
        return table in self.tables


def _parquet_files(folder: Path) -> list[Path]:
    if folder.is_dir():
        return sorted(p for p in folder.rglob("*.parquet") if not p.name.startswith("."))
    single = folder.with_name(folder.name + ".parquet")
    return [single] if single.is_file() else []


def table_glob(agg_dir: Path, table: str) -> str | None:
    """The Parquet path or glob of ``table`` in ``agg_dir``, or ``None`` when it is absent."""
    folder = agg_dir / table
    if folder.is_dir() and _parquet_files(folder):
        return str(folder / "**" / "*.parquet")
    single = agg_dir / f"{table}.parquet"
    return str(single) if single.is_file() else None


def read_summary(agg_dir: Path) -> dict[str, Any]:
    """``summary.json`` as a dict (empty when absent); a broken file is an InputError."""
    path = agg_dir / SUMMARY_FILE
    if not path.is_file():
        return {}
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        msg = f"{path}: not a readable summary.json ({exc})"
        raise InputError(msg) from exc
    if not isinstance(value, dict):
        msg = f"{path}: summary.json must hold a JSON object, got {type(value).__name__}"
        raise InputError(msg)
    return value


def open_aggregate(path: str | Path) -> Aggregate:
    """Validate ``path`` as an aggregate folder; raises InputError saying what is wrong."""
    root = Path(path).expanduser()
    if not root.exists():
        msg = f"{root}: no such folder"
        raise InputError(msg)
    if not root.is_dir():
        msg = f"{root}: not a folder (an aggregate folder is the --out of 'orderdoc aggregate')"
        raise InputError(msg)
    tables = tuple(t for t in TABLES if table_glob(root, t) is not None)
    summary = read_summary(root)
    if not tables and not summary:
        msg = (
            f"{root}: not an aggregate folder: it has no summary.json and none of the tables "
            f"{', '.join(TABLES)} (make one with 'orderdoc aggregate LOGS --out DIR', or "
            "upload raw logs on the Load page)"
        )
        raise InputError(msg)
    return Aggregate(path=root.resolve(), tables=tables, summary=summary)


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


def scan(agg: Aggregate, table: str) -> pl.LazyFrame | None:
    """A lazy scan of ``table`` (hive columns included), or ``None`` when it is absent."""
    pattern = table_glob(agg.path, table)
    if pattern is None:
        return None
    try:
        return pl.scan_parquet(pattern, hive_partitioning=True, missing_columns="insert")
    except (OSError, pl.exceptions.PolarsError) as exc:
        msg = f"{agg.path / table}: cannot read the Parquet files: {exc}"
        raise InputError(msg) from exc


def collect(frame: pl.LazyFrame, agg: Aggregate, table: str) -> pl.DataFrame:
    """Collect a query on one table, turning read errors into an InputError naming it."""
    try:
        return frame.collect()
    except (OSError, pl.exceptions.PolarsError) as exc:
        msg = f"{agg.path / table}: cannot read the table: {str(exc).splitlines()[0]}"
        raise InputError(msg) from exc


def utc(expr: pl.Expr) -> pl.Expr:
    """A timestamp column as ``Datetime('us', 'UTC')`` whatever unit or zone it was written in."""
    return expr.cast(pl.Datetime("us", "UTC"))
