"""The aggregate folder on disk: where each table's Parquet files are, writing, summary.json.

Layout (docs/schemas.md): ``AGG/<table>/`` holding Parquet files at any depth (the Spark job
writes ``date=YYYY-MM-DD/part-*.parquet``, the in-process aggregation ``part-0.parquet`` with
``date`` as a column), or a single file ``AGG/<table>.parquet``; and ``AGG/summary.json``.

One rule for every reader (:func:`table_files`): a table is its folder's ``*.parquet`` files,
skipping hidden ones (a file or folder on the way whose name starts with ``.`` or ``_``, as
Spark and Hadoop do: ``_temporary/``, ``.part-0.parquet.crc``); when the folder has none, the
single file ``AGG/<table>.parquet``; otherwise the table is absent.

Invariant of the writers: a table written replaces the whole table (no stale files of an
earlier run stay), and its columns are exactly those of :data:`~diagnostics.aggregates.schema.TABLES`.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from diagnostics.aggregates.schema import TABLES, TableName, polars_schema
from diagnostics.errors import InputError

SUMMARY_FILE = "summary.json"


@dataclass(frozen=True)
class Tables:
    """The aggregate tables as polars frames, and the summary (``summary.json`` content)."""

    data_errors: pl.DataFrame
    error_rollup: pl.DataFrame
    partition_idle: pl.DataFrame
    metrics: pl.DataFrame
    quarantine: pl.DataFrame
    job_events: pl.DataFrame
    summary: dict[str, Any]

    def frame(self, table: TableName) -> pl.DataFrame:
        """The frame of ``table``."""
        frame: pl.DataFrame = getattr(self, table.value)
        return frame


def _hidden(path: Path, root: Path) -> bool:
    return any(part.startswith((".", "_")) for part in path.relative_to(root).parts)


def table_files(agg_dir: Path, table: TableName) -> list[Path]:
    """The Parquet files of ``table`` in ``agg_dir`` (sorted; empty when it is absent)."""
    folder = agg_dir / table.value
    if folder.is_dir():
        files = sorted(p for p in folder.rglob("*.parquet") if not _hidden(p, folder))
        if files:
            return files
    single = agg_dir / f"{table.value}.parquet"
    return [single] if single.is_file() else []


def present_tables(agg_dir: Path) -> tuple[TableName, ...]:
    """The tables of ``agg_dir`` that have at least one Parquet file, in table order."""
    return tuple(t for t in TableName if table_files(agg_dir, t))


def scan(agg_dir: Path, table: TableName) -> pl.LazyFrame | None:
    """A lazy scan of ``table`` (hive columns such as ``date`` included; columns a file lacks
    are null), or ``None`` when the table is absent."""
    files = table_files(agg_dir, table)
    if not files:
        return None
    try:
        return pl.scan_parquet(
            [str(p) for p in files], hive_partitioning=True, missing_columns="insert"
        )
    except (OSError, pl.exceptions.PolarsError) as exc:
        msg = f"{agg_dir / table.value}: cannot read the Parquet files: {exc}"
        raise InputError(msg) from exc


def check_columns(
    table: TableName, columns: Mapping[str, object], expected: Mapping[str, object]
) -> None:
    """Raise ValueError unless ``columns`` (name -> type) equal ``expected`` in order."""
    if list(columns.items()) != list(expected.items()):
        msg = (
            f"aggregate table {table}: columns {dict(columns)} differ from its definition "
            f"{dict(expected)} (diagnostics.aggregates.schema)"
        )
        raise ValueError(msg)


def remove_table(out: Path, table: TableName) -> None:
    """Delete ``table`` from ``out`` (its folder and a single-file form), if there."""
    shutil.rmtree(out / table.value, ignore_errors=True)
    (out / f"{table.value}.parquet").unlink(missing_ok=True)


def write_table(frame: pl.DataFrame, out: Path, table: TableName) -> None:
    """Write ``frame`` as ``out/<table>/part-0.parquet`` (``date`` kept as a column),
    replacing what the table held."""
    check_columns(table, dict(frame.schema), dict(polars_schema(table)))
    remove_table(out, table)
    folder = out / table.value
    folder.mkdir(parents=True)
    frame.write_parquet(folder / "part-0.parquet")


def files_summary(read: int, skipped: Sequence[str]) -> dict[str, Any]:
    """The summary's keys about the input files, the same for every producer:
    ``files_read`` (log and metrics files read) and ``files_skipped`` (the paths of files
    found in folders or globs that are not read, sorted)."""
    return {"files_read": read, "files_skipped": sorted(skipped)}


def write_summary(out: Path, summary: Mapping[str, Any]) -> None:
    """Write ``out/summary.json`` (indented JSON, UTF-8)."""
    text = json.dumps(dict(summary), indent=2, default=str) + "\n"
    (out / SUMMARY_FILE).write_text(text, encoding="utf-8")


def write_tables(tables: Tables, out: Path, extra_summary: Mapping[str, Any] | None = None) -> None:
    """Write every table and ``summary.json`` (the summary plus ``extra_summary``) under
    ``out`` (created if needed). An empty ``metrics`` table is not written (and an earlier
    one removed): no metrics file was read; nor an empty ``job_events`` (no lifecycle
    record), as the Spark job writes none."""
    out.mkdir(parents=True, exist_ok=True)
    for table in TableName:
        frame = tables.frame(table)
        if table in (TableName.METRICS, TableName.JOB_EVENTS) and frame.is_empty():
            remove_table(out, table)
        else:
            write_table(frame, out, table)
    write_summary(out, {**tables.summary, **(extra_summary or {})})


def require_aggregate(
    path: str | Path, *, hint: str = "make one with 'orderdoc aggregate LOGS --out DIR'"
) -> Path:
    """``path`` as an aggregate folder, or an InputError saying what it is instead: missing,
    a file, or a folder with neither summary.json nor any table (``hint``: how to get one)."""
    root = Path(path).expanduser()
    if not root.exists():
        msg = f"{root}: no such aggregate folder (expected the output of 'orderdoc aggregate')"
        raise InputError(msg)
    if not root.is_dir():
        msg = f"{root}: not a folder (an aggregate folder is the --out of 'orderdoc aggregate')"
        raise InputError(msg)
    if not present_tables(root) and not (root / SUMMARY_FILE).is_file():
        msg = (
            f"{root}: not an aggregate folder: it has no summary.json and none of the tables "
            f"{', '.join(TableName)} ({hint})"
        )
        raise InputError(msg)
    return root


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


__all__ = [
    "SUMMARY_FILE",
    "TABLES",
    "Tables",
    "check_columns",
    "files_summary",
    "present_tables",
    "read_summary",
    "remove_table",
    "scan",
    "table_files",
    "write_summary",
    "write_table",
    "write_tables",
]
