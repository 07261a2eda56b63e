"""The record-by-record Capture reader the columnar one replaced, kept as the reference its
results are compared with: fastavro decodes each record, Python's ``json`` reads each body,
each body field becomes a column from its Python values (its own type, else text)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any

import fastavro
import polars as pl

from diagnostics.captures.bodies import field_column, python_body
from diagnostics.captures.capture_maps import properties_text
from diagnostics.captures.names import RenameReason, name_empty, rename_taken
from diagnostics.captures.paths import CaptureFile

_NAMES = ("PartitionId", "EventEnqueuedUtcTime", "SequenceNumber", "Offset", "Properties", "SystemProperties", "Body")  # fmt: skip


def _arrival(record: dict[str, Any]) -> int:
    enqueued = (record.get("SystemProperties") or {}).get("x-opt-enqueued-time")
    if isinstance(enqueued, int) and not isinstance(enqueued, bool):
        return enqueued
    text = str(record.get("EnqueuedTimeUtc")).strip()
    try:
        parsed = dt.datetime.strptime(text, "%m/%d/%Y %I:%M:%S %p").replace(tzinfo=dt.UTC)
    except ValueError:
        parsed = dt.datetime.fromisoformat(text)
        parsed = parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.UTC)
    return int(parsed.timestamp() * 1000)


def reference_frame(files: Sequence[CaptureFile]) -> pl.DataFrame:
    """The Capture table of ``files`` as the record-by-record reader built it."""
    records, partitions = [], []
    for file in files:
        with file.path.open("rb") as handle:
            for record in fastavro.reader(handle):
                records.append(record)
                partitions.append(file.partition if file.partition is not None else 0)
    bodies = [python_body(r.get("Body")) for r in records]
    dicts = [b.fields or {} for b in bodies]
    keys = list(dict.fromkeys(k for d in dicts for k in d))
    names = name_empty(keys, _NAMES)
    fields = pl.DataFrame(
        [field_column(n, [d.get(k) for d in dicts]) for k, n in zip(keys, names, strict=True)]
    )
    fields, _ = rename_taken(fields, _NAMES, RenameReason.CAPTURE)
    head = pl.DataFrame(
        {
            "PartitionId": pl.Series(partitions, dtype=pl.Int64),
            "EventEnqueuedUtcTime": pl.Series([_arrival(r) for r in records], dtype=pl.Int64).cast(
                pl.Datetime("ms", "UTC")
            ),
            "SequenceNumber": pl.Series([r["SequenceNumber"] for r in records], dtype=pl.Int64),
            "Offset": pl.Series([str(r["Offset"]) for r in records], dtype=pl.String),
        }
    )
    tail = {
        name: pl.Series([properties_text(r.get(name)) for r in records], dtype=pl.String)
        for name in ("Properties", "SystemProperties")
    }
    if any(b.raw is not None for b in bodies):
        tail["Body"] = pl.Series([b.raw for b in bodies], dtype=pl.String)
    parts = [head, *([fields] if fields.width else []), pl.DataFrame(tail)]
    return pl.concat(parts, how="horizontal")
