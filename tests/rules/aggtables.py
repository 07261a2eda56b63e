"""Write aggregate tables the way ``orderdoc aggregate`` does, for rule tests.

``write_table(agg_dir, table, rows)`` writes ``rows`` (dicts; missing columns are null) with
exactly the agreed columns and types to ``AGG_DIR/<table>/date=YYYY-MM-DD/part-0.parquet``
(hive-partitioned by ``date`` when the table has one; ``date`` is derived from the table's time
column when a row does not give it), or ``AGG_DIR/<table>/part-0.parquet`` otherwise.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import polars as pl

from diagnostics.rules.tables import TABLES, ColumnType, TableName

DTYPES: dict[ColumnType, pl.DataType] = {
    ColumnType.STRING: pl.String(),
    ColumnType.INT: pl.Int64(),
    ColumnType.FLOAT: pl.Float64(),
    ColumnType.TIMESTAMP: pl.Datetime("ns", "UTC"),
    ColumnType.DATE: pl.Date(),
    ColumnType.BOOLEAN: pl.Boolean(),
}


def parse_time(value: Any) -> datetime | None:
    """A UTC datetime from an ISO string (``Z`` accepted) or a datetime; ``None`` stays."""
    if value is None or isinstance(value, datetime):
        return value.astimezone(UTC) if isinstance(value, datetime) else None
    moment = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def table_frame(table: str | TableName, rows: Iterable[Mapping[str, Any]]) -> pl.DataFrame:
    """The rows as a frame with exactly the table's columns and types."""
    spec = TABLES[TableName(table)]
    records = []
    for row in rows:
        unknown = set(row) - set(spec.columns)
        if unknown:
            msg = f"unknown column(s) {sorted(unknown)} for table {spec.name}"
            raise ValueError(msg)
        record: dict[str, Any] = {}
        for column, kind in spec.columns.items():
            value = row.get(column)
            if kind is ColumnType.TIMESTAMP:
                value = parse_time(value)
            elif kind is ColumnType.DATE and isinstance(value, str):
                value = date.fromisoformat(value)
            record[column] = value
        if "date" in spec.columns and record["date"] is None and spec.time_column:
            moment = record[spec.time_column]
            record["date"] = moment.date() if moment else None
        records.append(record)
    schema = {c: DTYPES[t] for c, t in spec.columns.items()}
    return pl.DataFrame(records, schema=schema, orient="row")


def write_table(agg_dir: Path, table: str | TableName, rows: Iterable[Mapping[str, Any]]) -> Path:
    """Write the rows as the Parquet table ``agg_dir/<table>``; return the folder."""
    frame = table_frame(table, rows)
    folder = Path(agg_dir) / TableName(table).value
    folder.mkdir(parents=True, exist_ok=True)
    if "date" not in frame.columns:
        frame.write_parquet(folder / "part-0.parquet")
        return folder
    for (day,), part in frame.group_by(["date"], maintain_order=True):
        sub = folder / f"date={day.isoformat() if day else '__HIVE_DEFAULT_PARTITION__'}"
        sub.mkdir(parents=True, exist_ok=True)
        part.drop("date").write_parquet(sub / "part-0.parquet")
    return folder
