"""The aggregate tables and their columns: the one definition (documented in docs/schemas.md).

Each table is a :class:`TableSpec`: ordered columns with a logical :class:`ColumnType`, the
columns the aggregation derives (``date``, not read from any input), the columns a partitioned
writer splits folders by, and the time column rules are windowed on. Every other view is
derived from it: the Arrow schema (:func:`arrow_schema`; the parsers' record schema and the
Spark schemas are built from it), the polars schema (:func:`polars_schema`), and the rules'
column check (:attr:`TableSpec.columns`). Adding a column to a table is a change here (and in
whatever computes its value).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType
from typing import Final

import polars as pl
import pyarrow as pa


class ColumnType(StrEnum):
    """The logical type of an aggregate column."""

    STRING = "string"
    INT = "int"
    FLOAT = "float"
    TIMESTAMP = "timestamp"
    DATE = "date"
    BOOLEAN = "boolean"

    @property
    def numeric(self) -> bool:
        """True for integer and floating-point columns."""
        return self in (ColumnType.INT, ColumnType.FLOAT)

    @property
    def arrow(self) -> pa.DataType:
        """The Arrow type (timestamps: microseconds, UTC)."""
        return _ARROW[self]

    @property
    def polars(self) -> pl.DataType:
        """The polars type (timestamps: microseconds, UTC)."""
        return _POLARS[self]


_ARROW: Final = {
    ColumnType.STRING: pa.string(),
    ColumnType.INT: pa.int64(),
    ColumnType.FLOAT: pa.float64(),
    ColumnType.TIMESTAMP: pa.timestamp("us", tz="UTC"),
    ColumnType.DATE: pa.date32(),
    ColumnType.BOOLEAN: pa.bool_(),
}
_POLARS: Final[dict[ColumnType, pl.DataType]] = {
    ColumnType.STRING: pl.String(),
    ColumnType.INT: pl.Int64(),
    ColumnType.FLOAT: pl.Float64(),
    ColumnType.TIMESTAMP: pl.Datetime("us", "UTC"),
    ColumnType.DATE: pl.Date(),
    ColumnType.BOOLEAN: pl.Boolean(),
}


class TableName(StrEnum):
    """The aggregate tables (each a folder of Parquet files under the aggregate folder)."""

    DATA_ERRORS = "data_errors"
    ERROR_ROLLUP = "error_rollup"
    PARTITION_IDLE = "partition_idle"
    METRICS = "metrics"
    QUARANTINE = "quarantine"
    JOB_EVENTS = "job_events"


@dataclass(frozen=True)
class TableSpec:
    """One aggregate table.

    ``columns`` are in table order. ``derived`` columns are computed by the aggregation (not
    read from a parsed record or a metrics file). ``partition_by`` are the columns a
    partitioned writer (the Spark job) makes folders of (``date=YYYY-MM-DD``). ``time_column``
    is ``None`` for a table without time (``quarantine``): rules on it are evaluated once, at
    the evaluation time, over the whole table.
    """

    name: TableName
    columns: MappingProxyType[str, ColumnType]
    time_column: str | None
    derived: tuple[str, ...] = ()
    partition_by: tuple[str, ...] = ()

    @property
    def names(self) -> tuple[str, ...]:
        """The column names in table order."""
        return tuple(self.columns)

    @property
    def input_columns(self) -> tuple[str, ...]:
        """The columns taken as they are from the input (all but the derived ones)."""
        return tuple(c for c in self.columns if c not in self.derived)

    def timestamp_columns(self) -> tuple[str, ...]:
        """The columns usable as a rule's ``time_column``."""
        return tuple(c for c, t in self.columns.items() if t is ColumnType.TIMESTAMP)


_S, _I, _F, _T, _D, _B = (
    ColumnType.STRING,
    ColumnType.INT,
    ColumnType.FLOAT,
    ColumnType.TIMESTAMP,
    ColumnType.DATE,
    ColumnType.BOOLEAN,
)


def _spec(
    name: TableName, columns: dict[str, ColumnType], time_column: str | None, *, dated: bool
) -> TableSpec:
    by_date = ("date",) if dated else ()
    return TableSpec(name, MappingProxyType(columns), time_column, by_date, by_date)


#: Every table, in the order the tables are listed and written.
TABLES: Final[MappingProxyType[TableName, TableSpec]] = MappingProxyType(
    {
        TableName.DATA_ERRORS: _spec(
            TableName.DATA_ERRORS,
            {
                "job": _S,  # the name the job is shown under (one per job_id)
                "job_id": _S,  # its resource id, lower-case; null when no record gave one
                "source": _S,
                "partition_id": _I,
                "kind": _S,
                "event_count": _I,  # null when the record names no count
                "count_known": _B,
                "record_time": _T,
                "from_time": _T,
                "to_time": _T,
                "example_application_time": _T,
                "example_arrival_time": _T,
                "lateness_seconds": _F,
                "idle_minutes": _I,
                "level": _S,
                "correlation_id": _S,
                "column_name": _S,  # the column a data-error message names
                "source_file": _S,
                "source_line": _I,
                "date": _D,  # UTC date of record_time
            },
            "record_time",
            dated=True,
        ),
        TableName.ERROR_ROLLUP: _spec(
            TableName.ERROR_ROLLUP,
            {
                "job": _S,
                "kind": _S,
                "partition_id": _I,
                "minute": _T,
                "event_count": _I,
                "records": _I,
                "records_without_count": _I,  # records that named no count
                "max_lateness_seconds": _F,
                "date": _D,  # UTC date of minute
            },
            "minute",
            dated=True,
        ),
        TableName.PARTITION_IDLE: _spec(
            TableName.PARTITION_IDLE,
            {
                "job": _S,
                "source": _S,
                "partition_id": _I,
                "start": _T,
                "end": _T,
                "notices": _I,
                "max_idle_minutes": _I,
                "date": _D,  # UTC date of start
            },
            "end",
            dated=True,
        ),
        TableName.METRICS: _spec(
            TableName.METRICS,
            {
                "job": _S,
                "job_id": _S,  # the job's resource id, lower-case (null: engine metrics)
                "source": _S,  # the input (ASA's LogicalName dimension); null: every input
                "partition_id": _I,
                "minute": _T,
                "input_events": _I,
                "late_input_events": _I,
                "early_input_events": _I,
                "dropped_or_adjusted_events": _I,
                "output_watermark_delay_seconds": _F,
                "backlogged_input_events": _I,  # InputEventsSourcesBacklogged
                "date": _D,  # UTC date of minute
            },
            "minute",
            dated=True,
        ),
        TableName.QUARANTINE: _spec(
            TableName.QUARANTINE,
            {
                "source_file": _S,
                "source_line": _I,
                "reason": _S,
                "raw": _S,
                "raw_bytes": _I,
            },
            None,
            dated=False,
        ),
        TableName.JOB_EVENTS: _spec(
            TableName.JOB_EVENTS,
            {
                "job": _S,  # as in data_errors (the job a record's id or name joins)
                "job_id": _S,
                "record_time": _T,
                "category": _S,  # Authoring (resource log) or Administrative (activity log)
                "operation": _S,  # the operation as the record names it
                "action": _S,  # start, stop, scale, update, delete or other
                "status": _S,  # as written: Succeeded, Started, Failed, Accept, ...
                "level": _S,
                "message": _S,
                "correlation_id": _S,
                "source_file": _S,
                "source_line": _I,
                "date": _D,  # UTC date of record_time
            },
            "record_time",
            dated=True,
        ),
    }
)


def arrow_schema(table: TableName, *, derived: bool = True) -> pa.Schema:
    """The Arrow schema of ``table`` (without its derived columns when ``derived`` is False)."""
    spec = TABLES[table]
    names = spec.names if derived else spec.input_columns
    return pa.schema([(name, spec.columns[name].arrow) for name in names])


def polars_schema(table: TableName) -> pl.Schema:
    """The polars schema of ``table``."""
    return pl.Schema({name: kind.polars for name, kind in TABLES[table].columns.items()})


def parsed_schema() -> pa.Schema:
    """One row per log record, parsed or quarantined: the input columns of ``data_errors``,
    then those of ``job_events`` it lacks, then those of ``quarantine`` it lacks. ``reason``
    is null exactly for parsed records; ``category`` is set exactly for job events."""
    errors = arrow_schema(TableName.DATA_ERRORS, derived=False)
    events = [
        f for f in arrow_schema(TableName.JOB_EVENTS, derived=False) if f.name not in errors.names
    ]
    known = {*errors.names, *(f.name for f in events)}
    rest = [f for f in arrow_schema(TableName.QUARANTINE) if f.name not in known]
    return pa.schema([*errors, *events, *rest])
