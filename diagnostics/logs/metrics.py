"""Reading metrics files into the aggregate ``metrics`` table (:data:`METRICS_SCHEMA`).

* the engine's per-minute ``metrics.parquet`` (the replay contract): ``job``, ``time``
  (minute start), ``partition_id`` (null = whole job), ``InputEvents``, ``LateInputEvents``,
  ``EarlyInputEvents``, ``DroppedOrAdjustedEvents``, ``OutputWatermarkDelaySeconds``;
  missing count columns become null; a file without ``time`` raises; the job is read as the
  log readers read a job (:func:`diagnostics.logs.jobs.job_ref`: a name is upper-cased);
* Azure Monitor exports of a real job (``az monitor metrics list`` JSON, the Log Analytics
  ``AzureMetrics`` table as CSV or JSON): :mod:`diagnostics.logs.azure_metrics`.

Times are microsecond UTC.
"""

from __future__ import annotations

import io

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from diagnostics.aggregates.schema import TableName, arrow_schema
from diagnostics.errors import InputError
from diagnostics.logs.azure_metrics import read_azure_metrics
from diagnostics.logs.normalise import job_of
from diagnostics.logs.reader import PARQUET_MAGIC, gunzip

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
    "InputEventsSourcesBacklogged": "backlogged_input_events",
}


def read_metrics(data: bytes, name: str) -> pa.Table:
    """The metrics rows of the file ``name`` whose bytes are ``data`` (engine Parquet, or an
    Azure Monitor export, gzipped or not) with METRICS_SCHEMA."""
    if data[:2] == b"\x1f\x8b":
        data, error = gunzip(data)
        if error is not None:
            msg = f"{name}: {error}"
            raise InputError(msg)
    if not data.startswith(PARQUET_MAGIC):
        return read_azure_metrics(data, name, METRICS_SCHEMA)
    try:
        table = pq.read_table(io.BytesIO(data))
    except (OSError, ValueError, pa.ArrowException) as exc:
        msg = f"{name}: not a readable Parquet file ({exc})"
        raise InputError(msg) from exc
    if "time" not in table.column_names:
        msg = f"{name}: column 'time' missing from a metrics file"
        raise InputError(msg)
    columns = []
    job_ids = pa.nulls(table.num_rows, pa.string())
    for field in METRICS_SCHEMA:
        source = next((k for k, v in _RENAMES.items() if v == field.name), None)
        if field.name == "source_file":
            columns.append(pa.array([name] * table.num_rows, pa.string()))
        elif field.name == "job_id":
            columns.append(job_ids)  # filled from "job", which comes before it
        elif source in table.column_names:
            column = table[source]
            if field.name == "minute" and pa.types.is_timestamp(column.type):
                if column.type.tz is None:
                    column = pc.assume_timezone(column, "UTC")
                column = column.cast(pa.timestamp("us", tz="UTC"), safe=False)
            column = column.cast(field.type, safe=False)
            if field.name == "job":  # one job, one name, as in the logs
                refs = [job_of(value) for value in column.to_pylist()]
                column = pa.array([ref.name for ref in refs], pa.string())
                job_ids = pa.array([ref.job_id for ref in refs], pa.string())
            columns.append(column)
        else:
            columns.append(pa.nulls(table.num_rows, field.type))
    return pa.Table.from_arrays(columns, schema=METRICS_SCHEMA)
