"""The Spark side of the aggregate folder: table schemas and the partitioned writer.

Imported only by the Spark job (PySpark is the ``spark`` extra). The layout is the one of
:mod:`diagnostics.aggregates.folder`: ``AGG/<table>/`` split into ``date=YYYY-MM-DD`` folders
for the tables partitioned by date, replaced as a whole by each write.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql.pandas.types import from_arrow_schema
from pyspark.sql.types import StructType

from diagnostics.aggregates.folder import check_columns
from diagnostics.aggregates.schema import TABLES, TableName, arrow_schema


def from_arrow(schema: pa.Schema) -> StructType:
    """The Spark schema of an Arrow schema (UTC timestamps as Spark timestamps)."""
    return from_arrow_schema(schema, prefer_timestamp_ntz=False)


def spark_schema(table: TableName) -> StructType:
    """The Spark schema of ``table``."""
    return from_arrow(arrow_schema(table))


def write_frame(frame: DataFrame, out: Path, table: TableName) -> None:
    """Write ``frame`` as ``out/<table>`` (Parquet, partitioned as the table's definition
    says), replacing what the table held; runs the frame's job."""
    expected = {f.name: f.dataType for f in spark_schema(table).fields}
    check_columns(table, {f.name: f.dataType for f in frame.schema.fields}, expected)
    writer = frame.write.mode("overwrite")
    partition_by = TABLES[table].partition_by
    if partition_by:
        writer = writer.partitionBy(*partition_by)
    writer.parquet(str(out / table.value))
