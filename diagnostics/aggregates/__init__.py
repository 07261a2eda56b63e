"""The aggregate folder: its tables (names, columns, types) and its files, in one place.

Written by the Spark job (:mod:`diagnostics.spark.job`) and by the in-process aggregation
(:mod:`diagnostics.logs.aggregate`, used by the app and the demo); read by the app
(:mod:`diagnostics.appdata.store`), the explainer and the rules engine, all through
:mod:`diagnostics.aggregates.folder`. The tables are defined in
:mod:`diagnostics.aggregates.schema`.
"""

from diagnostics.aggregates.folder import (
    SUMMARY_FILE,
    Tables,
    files_summary,
    present_tables,
    read_summary,
    require_aggregate,
    scan,
    table_files,
    write_summary,
    write_tables,
)
from diagnostics.aggregates.schema import (
    TABLES,
    ColumnType,
    TableName,
    TableSpec,
    arrow_schema,
    parsed_schema,
    polars_schema,
)

__all__ = [
    "SUMMARY_FILE",
    "TABLES",
    "ColumnType",
    "TableName",
    "TableSpec",
    "Tables",
    "arrow_schema",
    "files_summary",
    "parsed_schema",
    "polars_schema",
    "present_tables",
    "read_summary",
    "require_aggregate",
    "scan",
    "table_files",
    "write_summary",
    "write_tables",
]
