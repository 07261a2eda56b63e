"""Explicit Spark schemas of the job (no inference anywhere), mirroring the Arrow ones.

``PARSED`` mirrors :data:`diagnostics.logs.records.PARSED_SCHEMA` and ``METRICS`` mirrors
:data:`diagnostics.logs.metrics.METRICS_SCHEMA`; a test checks the mirrors field by field.
"""

from __future__ import annotations

from pyspark.sql.types import (
    BooleanType,
    DoubleType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)


def _fields(spec: list[tuple[str, object]]) -> StructType:
    return StructType([StructField(name, kind, True) for name, kind in spec])  # type: ignore[arg-type]


#: The files a job reads: local paths, as the driver listed them (read by the parsing tasks).
PATHS = StructType([StructField("path", StringType(), False)])

PARSED = _fields(
    [
        ("job", StringType()),
        ("source", StringType()),
        ("partition_id", LongType()),
        ("kind", StringType()),
        ("event_count", LongType()),
        ("count_known", BooleanType()),
        ("record_time", TimestampType()),
        ("from_time", TimestampType()),
        ("to_time", TimestampType()),
        ("example_application_time", TimestampType()),
        ("example_arrival_time", TimestampType()),
        ("lateness_seconds", DoubleType()),
        ("idle_minutes", LongType()),
        ("level", StringType()),
        ("correlation_id", StringType()),
        ("source_file", StringType()),
        ("source_line", LongType()),
        ("reason", StringType()),
        ("raw", StringType()),
        ("raw_bytes", LongType()),
    ]
)

METRICS = _fields(
    [
        ("job", StringType()),
        ("partition_id", LongType()),
        ("minute", TimestampType()),
        ("input_events", LongType()),
        ("late_input_events", LongType()),
        ("early_input_events", LongType()),
        ("dropped_or_adjusted_events", LongType()),
        ("output_watermark_delay_seconds", DoubleType()),
        ("backlogged_input_events", LongType()),
        ("source_file", StringType()),
    ]
)
