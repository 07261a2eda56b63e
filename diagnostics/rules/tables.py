"""The aggregate tables a rule may read, with their columns, as agreed in ``docs/schemas.md``.

Invariant: every column a rule names (in ``where``, the aggregate, ``group_by``) is checked
against :data:`TABLES` when the rules load, so evaluation never meets an unknown column in a
well-formed aggregate folder.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class ColumnType(StrEnum):
    """The logical type of an aggregate column."""

    STRING = "string"
    INT = "int"
    FLOAT = "float"
    TIMESTAMP = "timestamp"
    DATE = "date"

    @property
    def numeric(self) -> bool:
        """True for integer and floating-point columns."""
        return self in (ColumnType.INT, ColumnType.FLOAT)


class TableName(StrEnum):
    """The aggregate tables (each a folder of Parquet files under ``AGG_DIR``)."""

    DATA_ERRORS = "data_errors"
    ERROR_ROLLUP = "error_rollup"
    PARTITION_IDLE = "partition_idle"
    METRICS = "metrics"
    QUARANTINE = "quarantine"


@dataclass(frozen=True)
class TableSpec:
    """One aggregate table: its columns and the timestamp column rules are windowed on.

    ``time_column`` is ``None`` for a table without time (``quarantine``): rules on it are
    evaluated once, at the evaluation time, over the whole table.
    """

    name: TableName
    columns: dict[str, ColumnType]
    time_column: str | None

    def timestamp_columns(self) -> tuple[str, ...]:
        """The columns usable as a rule's ``time_column``."""
        return tuple(c for c, t in self.columns.items() if t is ColumnType.TIMESTAMP)


_S, _I, _F, _T, _D = (
    ColumnType.STRING,
    ColumnType.INT,
    ColumnType.FLOAT,
    ColumnType.TIMESTAMP,
    ColumnType.DATE,
)

TABLES: dict[TableName, TableSpec] = {
    TableName.DATA_ERRORS: TableSpec(
        TableName.DATA_ERRORS,
        {
            "job": _S,
            "source": _S,
            "partition_id": _I,
            "kind": _S,
            "event_count": _I,
            "record_time": _T,
            "from_time": _T,
            "to_time": _T,
            "example_application_time": _T,
            "example_arrival_time": _T,
            "lateness_seconds": _F,
            "idle_minutes": _I,
            "level": _S,
            "correlation_id": _S,
            "source_file": _S,
            "source_line": _I,
            "date": _D,
        },
        "record_time",
    ),
    TableName.ERROR_ROLLUP: TableSpec(
        TableName.ERROR_ROLLUP,
        {
            "job": _S,
            "kind": _S,
            "partition_id": _I,
            "minute": _T,
            "event_count": _I,
            "records": _I,
            "records_without_count": _I,
            "max_lateness_seconds": _F,
            "date": _D,
        },
        "minute",
    ),
    TableName.PARTITION_IDLE: TableSpec(
        TableName.PARTITION_IDLE,
        {
            "job": _S,
            "source": _S,
            "partition_id": _I,
            "start": _T,
            "end": _T,
            "notices": _I,
            "max_idle_minutes": _I,
            "date": _D,
        },
        "end",
    ),
    TableName.METRICS: TableSpec(
        TableName.METRICS,
        {
            "job": _S,
            "partition_id": _I,
            "minute": _T,
            "input_events": _I,
            "late_input_events": _I,
            "early_input_events": _I,
            "dropped_or_adjusted_events": _I,
            "output_watermark_delay_seconds": _F,
            "backlogged_input_events": _I,
            "date": _D,
        },
        "minute",
    ),
    TableName.QUARANTINE: TableSpec(
        TableName.QUARANTINE,
        {
            "source_file": _S,
            "source_line": _I,
            "reason": _S,
            "raw": _S,
            "raw_bytes": _I,
        },
        None,
    ),
}
