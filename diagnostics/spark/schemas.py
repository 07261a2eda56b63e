"""Explicit Spark schemas of the job (no inference anywhere), derived from the Arrow ones.

``PARSED`` is :data:`diagnostics.logs.records.PARSED_SCHEMA` and ``METRICS`` is
:data:`diagnostics.logs.metrics.METRICS_SCHEMA`, both built from the table definitions of
:mod:`diagnostics.aggregates.schema`.
"""

from __future__ import annotations

from pyspark.sql.types import StringType, StructField, StructType

from diagnostics.aggregates.spark import from_arrow
from diagnostics.logs.metrics import METRICS_SCHEMA
from diagnostics.logs.records import PARSED_SCHEMA

#: The files a job reads: local paths, as the driver listed them (read by the parsing tasks).
PATHS = StructType([StructField("path", StringType(), False)])
#: The (job_id, job) pairs read and the pair each is aggregated under
#: (:func:`diagnostics.spark.job.job_mapping`).
JOB_MAPPING = StructType(
    [StructField(name, StringType()) for name in ("_from_id", "_from_job", "_to_id", "_to_job")]
)
PARSED = from_arrow(PARSED_SCHEMA)
METRICS = from_arrow(METRICS_SCHEMA)
