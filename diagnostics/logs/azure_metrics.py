"""Reading Azure Monitor metric exports of an ASA job into the aggregate ``metrics`` rows.

Two export shapes (recognised by :func:`looks_like_azure_metrics`):

* the JSON of ``az monitor metrics list`` (the Metrics REST API's response): ``value`` is a
  list of metrics, each with ``id`` (the job's resource id, then ``/providers/
  Microsoft.Insights/metrics/<name>``), ``name.value`` and ``timeseries``: per dimension
  combination (``metadatavalues``: ``LogicalName`` = the input, ``PartitionId``) a list of
  ``data`` points with ``timeStamp`` and ``total`` / ``average`` / ``maximum`` /
  ``minimum`` / ``count``;
* the Log Analytics ``AzureMetrics`` table exported as CSV or JSON: one row per metric and
  time grain with ``TimeGenerated`` (or ``TimeGenerated [UTC]``), ``ResourceId`` /
  ``_ResourceId``, ``MetricName``, ``Total``, ``Maximum``, ``Average``, ``Count``.

Metrics read: ``InputEvents``, ``LateInputEvents``, ``EarlyInputEvents``,
``DroppedOrAdjustedEvents``, ``InputEventsSourcesBacklogged`` (counts: the ``total``, else the
``maximum``) and ``OutputWatermarkDelaySeconds`` (the ``maximum``, else the ``average``);
other metrics are ignored. Rows are keyed by job (its resource id and name, as in the logs:
:mod:`diagnostics.logs.jobs`), input
(``source``: the ``LogicalName`` dimension; null without it: every input), partition (null
without a ``PartitionId`` dimension) and the point's minute, so partition 0 of one input is
never added to partition 0 of another; points that share a key (the same series listed
twice) are summed, the watermark delay is their maximum.
A file that holds none of these shapes raises :class:`InputError` naming the file.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import pyarrow as pa

from diagnostics.errors import InputError
from diagnostics.logs.jobs import JobRef
from diagnostics.logs.normalise import job_of, key_of
from diagnostics.logs.times import parse_log_time

#: ASA metric name -> metrics table column.
METRIC_COLUMNS = {
    "InputEvents": "input_events",
    "LateInputEvents": "late_input_events",
    "EarlyInputEvents": "early_input_events",
    "DroppedOrAdjustedEvents": "dropped_or_adjusted_events",
    "InputEventsSourcesBacklogged": "backlogged_input_events",
    "OutputWatermarkDelaySeconds": "output_watermark_delay_seconds",
}
_BY_KEY = {key_of(name): column for name, column in METRIC_COLUMNS.items()}
_DELAY = "output_watermark_delay_seconds"
_COUNT_AGGREGATIONS = ("total", "maximum", "average")
_DELAY_AGGREGATIONS = ("maximum", "average", "total")

#: (job, source, partition, minute) of a metrics row.
Key = tuple[JobRef, str | None, int | None, dt.datetime]


def looks_like_azure_metrics(head: bytes) -> bool:
    """True when the start of a file is one of the two metric export shapes."""
    if b'"timeseries"' in head and b'"value"' in head:
        return True
    return b"MetricName" in head and b"properties_s" not in head


def _number(value: object) -> float | None:
    if isinstance(value, bool) or value is None or value == "":
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    return None


def _pick(values: Mapping[str, object], column: str) -> float | None:
    order = _DELAY_AGGREGATIONS if column == _DELAY else _COUNT_AGGREGATIONS
    for aggregation in order:
        number = _number(values.get(aggregation))
        if number is not None:
            return number
    return None


def _minute(value: object, name: str, where: str) -> dt.datetime:
    parsed = parse_log_time(value)
    if parsed is None:
        msg = f"{name}: {where}: {str(value)[:40]!r} is not a time stamp"
        raise InputError(msg)
    return parsed.replace(second=0, microsecond=0)


def _partition(value: object) -> int | None:
    text = str(value).strip() if value is not None else ""
    return int(text) if text.isdigit() and len(text) < 19 else None


def _monitor_points(document: Mapping[str, Any], name: str) -> Iterator[tuple[Key, str, float]]:
    metrics = document.get("value")
    if not isinstance(metrics, list):
        msg = f"{name}: an az monitor metrics export needs a 'value' list of metrics"
        raise InputError(msg)
    for index, metric in enumerate(metrics):
        if not isinstance(metric, dict):
            continue
        metric_name = metric.get("name")
        if isinstance(metric_name, dict):
            metric_name = metric_name.get("value")
        column = _BY_KEY.get(key_of(str(metric_name or "")))
        if column is None:
            continue
        job = job_of(str(metric.get("id") or ""))
        for series in metric.get("timeseries") or []:
            if not isinstance(series, dict):
                continue
            partition, source = None, None
            for meta in series.get("metadatavalues") or []:
                if not isinstance(meta, dict):
                    continue
                label = meta.get("name")
                label = key_of(
                    str((label.get("value") if isinstance(label, dict) else label) or "")
                )
                if label == "partitionid":
                    partition = _partition(meta.get("value"))
                elif label == "logicalname" and meta.get("value") not in (None, ""):
                    source = str(meta["value"])
            for point in series.get("data") or []:
                if not isinstance(point, dict):
                    continue
                where = f"value[{index}] ({metric_name}) timeStamp"
                minute = _minute(point.get("timeStamp"), name, where)
                value = _pick({key_of(str(k)): v for k, v in point.items()}, column)
                if value is not None:
                    yield (job, source, partition, minute), column, value


def _table_points(rows: Iterable[Mapping[str, Any]], name: str) -> Iterator[tuple[Key, str, float]]:
    for number, row in enumerate(rows, start=1):
        fields = {key_of(str(k)): v for k, v in row.items() if v not in (None, "")}
        column = _BY_KEY.get(key_of(str(fields.get("metricname", ""))))
        if column is None:
            continue
        time = fields.get("timegeneratedutc") or fields.get("timegenerated")
        minute = _minute(time, name, f"row {number} TimeGenerated")
        value = _pick(fields, column)
        if value is not None:
            job = job_of(str(fields.get("resourceid") or ""))
            yield (job, None, None, minute), column, value


def _rows(data: bytes, name: str) -> Iterator[tuple[Key, str, float]]:
    text = data.decode("utf-8-sig", "replace")
    stripped = text.lstrip()
    if not stripped.startswith(("{", "[")):
        return _table_points(csv.DictReader(io.StringIO(text, newline="")), name)
    try:
        document = json.loads(text)
    except ValueError:  # JSON Lines of AzureMetrics rows
        rows = []
        for number, line in enumerate(text.splitlines(), start=1):
            if line.strip():
                try:
                    rows.append(json.loads(line))
                except ValueError as exc:
                    msg = f"{name}: line {number}: not JSON ({exc})"
                    raise InputError(msg) from exc
        return _table_points([r for r in rows if isinstance(r, dict)], name)
    if isinstance(document, dict) and "value" in document:
        return _monitor_points(document, name)
    if isinstance(document, dict) and isinstance(document.get("tables"), list):
        return _query_tables(document["tables"], name)
    if isinstance(document, list):
        return _table_points([r for r in document if isinstance(r, dict)], name)
    msg = f"{name}: neither an az monitor metrics export nor AzureMetrics rows"
    raise InputError(msg)


def _query_tables(tables: list[Any], name: str) -> Iterator[tuple[Key, str, float]]:
    """The Log Analytics query API's ``{"tables": [{"columns": [...], "rows": [...]}]}``."""
    for table in tables:
        if not isinstance(table, dict):
            continue
        names = [
            str(c.get("name") if isinstance(c, dict) else c) for c in table.get("columns") or []
        ]
        rows = [dict(zip(names, row, strict=False)) for row in table.get("rows") or []]
        yield from _table_points(rows, name)


def read_azure_metrics(data: bytes, name: str, schema: pa.Schema) -> pa.Table:
    """The metrics rows of an Azure Monitor export with ``schema`` (the metrics table's),
    sorted by job, partition and minute."""
    merged: dict[Key, dict[str, float]] = {}
    for key, column, value in _rows(data, name):
        row = merged.setdefault(key, {})
        if column == _DELAY:
            row[column] = max(row.get(column, value), value)
        else:
            row[column] = row.get(column, 0.0) + value
    keys = sorted(
        merged,
        key=lambda k: (k[0].name or "", k[0].job_id or "", k[1] is not None, k[1] or "",
                       k[2] is not None, k[2] or 0, k[3]),
    )  # fmt: skip
    columns: dict[str, list[object]] = {field.name: [] for field in schema}
    for key in keys:
        job, source, partition, minute = key
        values = merged[key]
        columns["job"].append(job.name)
        columns["job_id"].append(job.job_id)
        columns["source"].append(source)
        columns["partition_id"].append(partition)
        columns["minute"].append(minute)
        columns["source_file"].append(name)
        for column in METRIC_COLUMNS.values():
            found = values.get(column)
            columns[column].append(found if column == _DELAY or found is None else round(found))
    return pa.Table.from_pydict(columns, schema=schema)
