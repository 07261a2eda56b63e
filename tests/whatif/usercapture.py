"""The capture and job of issue 25, rebuilt: a user's Event Hubs passthrough capture nobody
here made (3,977 events, 12 devices, 4 partitions, 30 minutes; columns ``deviceId,
temperature, eventTime, EventEnqueuedUtcTime, PartitionId``), two devices 30-90 s late,
partition 3 silent for 10 minutes, and its ARM job (late 5 s, out-of-order 0 s, Adjust,
``TIMESTAMP BY eventTime``, ``GROUP BY deviceId, TumblingWindow(minute, 1)``)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import polars as pl

EVENTS = 3977
DEVICES = 12
PARTITIONS = 4
MINUTES = 30
LATE_DEVICES = ("dev-03", "dev-08")
START = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)

QUERY = (
    "SELECT deviceId, AVG(temperature) AS avgTemperature, COUNT(*) AS readings\n"
    "INTO [output]\n"
    "FROM [input] TIMESTAMP BY eventTime\n"
    "GROUP BY deviceId, TumblingWindow(minute, 1)\n"
)


def user_capture(seed: int = 25) -> pl.DataFrame:
    """The capture, in arrival order as Event Hubs Capture/passthrough writes it."""
    rng = np.random.default_rng(seed)
    device = rng.integers(0, DEVICES, size=EVENTS * 2)
    sent = rng.uniform(0, MINUTES * 60, size=EVENTS * 2)
    names = np.array([f"dev-{d:02d}" for d in range(DEVICES)])[device]
    partition = device % PARTITIONS
    delay = rng.uniform(0.05, 0.8, size=device.size)
    late = np.isin(names, LATE_DEVICES)
    delay[late] = rng.uniform(30, 90, size=int(late.sum()))
    arrival = sent + delay
    silent = (partition == 3) & (arrival >= 12 * 60) & (arrival < 22 * 60)
    keep = ~silent & (arrival < MINUTES * 60)
    keep &= np.cumsum(keep) <= EVENTS
    frame = pl.DataFrame(
        {
            "deviceId": names[keep],
            "temperature": np.round(rng.normal(21.5, 2.0, size=device.size)[keep], 2),
            "eventTime": [START + timedelta(seconds=float(s)) for s in sent[keep]],
            "EventEnqueuedUtcTime": [START + timedelta(seconds=float(a)) for a in arrival[keep]],
            "PartitionId": partition[keep].astype(np.int64),
        }
    )
    frame = frame.sort("EventEnqueuedUtcTime")
    iso = "%Y-%m-%dT%H:%M:%S%.6fZ"
    return frame.with_columns(
        pl.col("eventTime").dt.strftime(iso), pl.col("EventEnqueuedUtcTime").dt.strftime(iso)
    )


def user_job() -> dict:
    """The job's ARM template."""
    return {
        "$schema": "https://schema.management.azure.com/schemas/2019-04-01/deploymentTemplate.json#",
        "contentVersion": "1.0.0.0",
        "resources": [
            {
                "type": "Microsoft.StreamAnalytics/streamingjobs",
                "apiVersion": "2021-10-01-preview",
                "name": "fridge-telemetry",
                "location": "westeurope",
                "properties": {
                    "sku": {"name": "Standard"},
                    "eventsOutOfOrderPolicy": "Adjust",
                    "eventsOutOfOrderMaxDelayInSeconds": 0,
                    "eventsLateArrivalMaxDelayInSeconds": 5,
                    "inputs": [
                        {
                            "name": "input",
                            "properties": {
                                "type": "Stream",
                                "datasource": {
                                    "type": "Microsoft.ServiceBus/EventHub",
                                    "properties": {"eventHubName": "fridges"},
                                },
                                "serialization": {"type": "Json"},
                            },
                        }
                    ],
                    "transformation": {
                        "name": "Transformation",
                        "properties": {"streamingUnits": 1, "query": QUERY},
                    },
                    "outputs": [{"name": "output", "properties": {}}],
                },
            }
        ],
    }


def write_user_files(folder: Path) -> tuple[Path, Path]:
    """``capture.csv`` and ``job.arm.json`` in ``folder``."""
    capture = folder / "capture.csv"
    user_capture().write_csv(capture)
    job = folder / "job.arm.json"
    job.write_text(json.dumps(user_job(), indent=2) + "\n", encoding="utf-8")
    return capture, job
