"""The production-shaped fleet (diagnostics.generate.fleet) as the capture reader reads its
Capture folder, built straight from the generator's columns: the tests of many seeds and
sizes skip writing and reading Avro. ``test_the_table_is_what_the_reader_reads`` holds the
two to the same values."""

from __future__ import annotations

import json

import numpy as np
import polars as pl

from diagnostics.engine.columns import EventColumns
from diagnostics.generate.fleet import (
    BODY_FIELDS,
    DEVICES_PER_GATEWAY,
    FleetConfig,
    bodies,
    fleet_events,
)

#: The columns the capture reader finds for a Capture folder.
COLUMNS = EventColumns(arrival="EventEnqueuedUtcTime", partition="PartitionId")
#: The fleet job's TIMESTAMP BY column.
TIMESTAMP_BY = "eventTime"


def fleet_table(config: FleetConfig) -> pl.DataFrame:
    """The fleet's events with Capture's columns (``PartitionId``, ``EventEnqueuedUtcTime``,
    ``SequenceNumber``, ``Offset``), the body's fields, ``Properties``, ``SystemProperties``
    and the raw ``Body`` of the bodies that are not JSON, in partition and arrival order."""
    events = fleet_events(config)
    raw = bodies(events)
    sizes = np.array([len(b) for b in raw], dtype=np.int64)
    parsed = [None if events.non_json[i] else json.loads(b) for i, b in enumerate(raw)]
    fields = {name: [None if p is None else p.get(name) for p in parsed] for name in BODY_FIELDS}
    part = events.partition
    starts = np.r_[0, np.flatnonzero(np.diff(part)) + 1]
    counts = np.diff(np.r_[starts, part.size])
    sequence = np.arange(part.size) - np.repeat(starts, counts)
    ends = np.cumsum(sizes)
    offset = ends - sizes - np.repeat(np.r_[0, ends][starts], counts)
    gateway = [f"gw-{d // DEVICES_PER_GATEWAY:02d}" for d in events.device]
    frame = pl.DataFrame(
        {
            "PartitionId": part.astype(np.int64),
            "EventEnqueuedUtcTime": pl.Series(events.arrival_ms, dtype=pl.Int64).cast(
                pl.Datetime("ms", "UTC")
            ),
            "SequenceNumber": sequence.astype(np.int64),
            "Offset": pl.Series(offset).cast(pl.String),
            "deviceId": pl.Series(fields["deviceId"], dtype=pl.String),
            "gatewayId": pl.Series(fields["gatewayId"], dtype=pl.String),
            "eventTime": pl.Series(fields["eventTime"], dtype=pl.String),
            "temperature": pl.Series(fields["temperature"], dtype=pl.Float64),
            "humidity": pl.Series(fields["humidity"], dtype=pl.Float64),
            "battery": pl.Series(fields["battery"], dtype=pl.Int64),
            "firmware": pl.Series(fields["firmware"], dtype=pl.String),
            "msgSeq": pl.Series(fields["msgSeq"], dtype=pl.Int64),
            "Properties": [
                json.dumps({"content-type": "application/json", "gateway": g}) for g in gateway
            ],
            "SystemProperties": [
                json.dumps({"x-opt-sequence-number": int(s), "x-opt-enqueued-time": int(a)})
                for s, a in zip(sequence, events.arrival_ms, strict=True)
            ],
            "Body": [b.decode() if events.non_json[i] else None for i, b in enumerate(raw)],
        }
    )
    return frame
