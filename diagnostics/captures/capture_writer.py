"""Writing events as Event Hubs Capture writes them: one Avro file (schema ``EventData``) per
partition and time window, under ``{Namespace}/{EventHub}/{PartitionId}/{Year}/{Month}/
{Day}/{Hour}/{Minute}/{Second}.avro``. Used by ``orderdoc generate --format avro`` and tests.
Deterministic: the same frame gives the same bytes (fixed sync markers, no clock)."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import fastavro
import polars as pl

from diagnostics.captures.avro import ENQUEUED_MS, EVENT_DATA_SCHEMA
from diagnostics.errors import InputError
from diagnostics.timestamps import to_utc

_PARSED = fastavro.parse_schema(EVENT_DATA_SCHEMA)


def us_time(ms: int) -> str:
    """Capture's ``EnqueuedTimeUtc`` text: ``11/5/2021 1:25:22 PM`` (whole seconds)."""
    t = dt.datetime.fromtimestamp(ms // 1000, tz=dt.UTC)
    hour = t.hour % 12 or 12
    return f"{t.month}/{t.day}/{t.year} {hour}:{t.minute:02d}:{t.second:02d} {'AM' if t.hour < 12 else 'PM'}"


def write_avro(
    path: Path, records: Iterable[dict[str, Any]], codec: str = "deflate", name: str = ""
) -> None:
    """One Capture file at ``path`` (folders created); its sync marker derives from
    ``name`` (the path inside the capture folder), so the bytes do not depend on where."""
    path.parent.mkdir(parents=True, exist_ok=True)
    marker = hashlib.md5(name.encode(), usedforsecurity=False).digest()
    with path.open("wb") as handle:
        fastavro.writer(handle, _PARSED, records, codec=codec, sync_marker=marker)


def capture_records(
    bodies: Iterable[bytes | None], arrivals_ms: Iterable[int], first_sequence: int = 0
) -> list[dict[str, Any]]:
    """Capture records for bodies arriving at ``arrivals_ms`` (one partition, in order)."""
    records = []
    offset = 0
    for n, (body, ms) in enumerate(zip(bodies, arrivals_ms, strict=True), start=first_sequence):
        records.append(
            {
                "SequenceNumber": n,
                "Offset": str(offset),
                "EnqueuedTimeUtc": us_time(ms),
                "SystemProperties": {
                    "x-opt-sequence-number": n,
                    "x-opt-offset": str(offset),
                    ENQUEUED_MS: int(ms),
                },
                "Properties": {},
                "Body": body,
            }
        )
        offset += len(body or b"")
    return records


def write_capture_folder(
    frame: pl.DataFrame,
    out: Path,
    *,
    arrival: str = "arrival_time",
    partition: str = "partition_id",
    namespace: str = "orderdoc",
    eventhub: str = "events",
    window_s: int = 300,
    codec: str = "deflate",
) -> list[Path]:
    """``frame`` as a Capture folder under ``out``: the other columns become the JSON body,
    ``arrival`` the enqueued time, ``partition`` the partition; files of ``window_s``."""
    for name in (arrival, partition):
        if name not in frame.columns:
            msg = f"column '{name}' is missing (columns: {', '.join(frame.columns)})"
            raise InputError(msg)
    ms = to_utc(frame[arrival]).dt.epoch("ms")
    if ms.is_null().any():
        msg = f"column '{arrival}': row {int(ms.is_null().arg_true()[0]) + 1} is not a time"
        raise InputError(msg)
    body_columns = [c for c in frame.columns if c not in (arrival, partition)]
    rows = frame.select(body_columns).rows(named=True)
    work = pl.DataFrame(
        {"p": frame[partition].cast(pl.Int64), "ms": ms, "i": range(frame.height)}
    ).sort("p", "ms", "i", maintain_order=True)
    written = []
    for (p,), group in work.group_by("p", maintain_order=True):
        sequence = 0
        for (start,), window in group.group_by(
            (pl.col("ms") // (window_s * 1000)).alias("w"), maintain_order=True
        ):
            t = dt.datetime.fromtimestamp(int(start) * window_s, tz=dt.UTC)
            name = f"{namespace}/{eventhub}/{p}/{t.strftime('%Y/%m/%d/%H/%M/%S')}.avro"
            path = out / name
            bodies = [
                json.dumps(rows[i], default=str, separators=(",", ":")).encode()
                for i in window["i"]
            ]
            records = capture_records(bodies, window["ms"].to_list(), sequence)
            write_avro(path, records, codec, name)
            sequence += window.height
            written.append(path)
    return written
