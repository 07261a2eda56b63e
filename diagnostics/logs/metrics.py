"""Reading the engine's per-minute ``metrics.parquet`` into the aggregate ``metrics`` table.

Input columns (the replay contract): ``job``, ``time`` (minute start), ``partition_id``
(null = whole job), ``InputEvents``, ``LateInputEvents``, ``EarlyInputEvents``,
``DroppedOrAdjustedEvents``, ``OutputWatermarkDelaySeconds``. Output: :data:`METRICS_SCHEMA`,
times as microsecond UTC. Missing count columns become null; a file without ``time`` raises.
"""

from __future__ import annotations

import io

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from diagnostics.aggregates.schema import TableName, arrow_schema
from diagnostics.errors import InputError

#: The metrics rows read from one file: the input columns of the ``metrics`` table
#: (:mod:`diagnostics.aggregates.schema`), then the file they came from.
METRICS_SCHEMA = arrow_schema(TableName.METRICS, derived=False).append(
    pa.field("source_file", pa.string())
)
_RENAMES = {
    "job": "job",
    "partition_id": "partition_id",
    "time": "minute",
    "InputEvents": "input_events",
    "LateInputEvents": "late_input_events",
    "EarlyInputEvents": "early_input_events",
    "DroppedOrAdjustedEvents": "dropped_or_adjusted_events",
    "OutputWatermarkDelaySeconds": "output_watermark_delay_seconds",
}


def read_metrics(data: bytes, name: str) -> pa.Table:
    """The metrics rows of the Parquet bytes ``data`` (file ``name``) with METRICS_SCHEMA."""
    try:
        table = pq.read_table(io.BytesIO(data))
    except (OSError, ValueError, pa.ArrowException) as exc:
        msg = f"{name}: not a readable Parquet file ({exc})"
        raise InputError(msg) from exc
    if "time" not in table.column_names:
        msg = f"{name}: column 'time' missing from a metrics file"
        raise InputError(msg)
    columns = []
    for field in METRICS_SCHEMA:
        source = next((k for k, v in _RENAMES.items() if v == field.name), None)
        if field.name == "source_file":
            columns.append(pa.array([name] * table.num_rows, pa.string()))
        elif source in table.column_names:
            column = table[source]
            if field.name == "minute" and pa.types.is_timestamp(column.type):
                if column.type.tz is None:
                    column = pc.assume_timezone(column, "UTC")
                column = column.cast(pa.timestamp("us", tz="UTC"), safe=False)
            columns.append(column.cast(field.type, safe=False))
        else:
            columns.append(pa.nulls(table.num_rows, field.type))
    return pa.Table.from_arrays(columns, schema=METRICS_SCHEMA)
