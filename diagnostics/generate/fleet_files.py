"""The fleet (:mod:`diagnostics.generate.fleet`) as a user has it: an Event Hubs Capture folder
as Capture writes it, the job's ARM template as the portal exports it, and the resource logs
of two jobs as ASA writes them to a storage account.

* **Capture**: one Avro file (schema ``EventData``, deflate) per partition and 5 minutes of
  enqueued time, under ``{Namespace}/{EventHub}/{PartitionId}/{Year}/.../{Second}.avro``,
  including the empty files Capture writes for windows without events (the silent
  partition's). Each record has Capture's ``SequenceNumber``, ``Offset``, ``EnqueuedTimeUtc``
  (``6/3/2024 8:00:01 AM``), ``SystemProperties`` (sequence number, offset, enqueued time in
  ms, partition key) and ``Properties`` (content type, gateway) maps, and the JSON body.
* **job**: ``fleet-telemetry``, input ``telemetry-eh`` (``TIMESTAMP BY eventTime``), late
  arrival 10 s, out-of-order 3 s, Adjust; a ``WITH`` step, a per-device hopping window, a
  per-partition count and a join with reference data ``device-registry``.
* **logs**: the resource logs (category ``Execution``) that replaying the capture under the
  job writes, and those of a second job, ``billing-agg`` (late senders, three hours), in the
  ``resourceId=/.../y=YYYY/m=MM/d=DD/h=HH/m=00/PT1H.json`` layout, plus one ``Authoring``
  record (the portal's "Start Job") in the first hour of the telemetry job.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import fastavro

from diagnostics.captures.avro import ENQUEUED_MS, EVENT_DATA_SCHEMA
from diagnostics.captures.capture_writer import us_time
from diagnostics.captures.reader import read_capture
from diagnostics.engine.policy import OrderingPolicy
from diagnostics.engine.replay import replay
from diagnostics.errors import Setting, UsageError
from diagnostics.generate.config import GenerateConfig
from diagnostics.generate.fleet import (
    DEVICES_PER_GATEWAY,
    FLEET_START_MS,
    MINUTE_MS,
    FleetConfig,
    FleetEvents,
    bodies,
    device_name,
    fleet_events,
    gateway_name,
)
from diagnostics.generate.output import generate
from diagnostics.generate.output import write_capture as write_table
from diagnostics.instrument.options import InstrumentOptions
from diagnostics.instrument.outputs import DIAGNOSTICS_FILE, write_outputs
from diagnostics.jobdef import job_policy, read_job_definition

_PARSED = fastavro.parse_schema(EVENT_DATA_SCHEMA)
NAMESPACE = "contoso-iot"
EVENTHUB = "telemetry"
WINDOW_MS = 5 * MINUTE_MS
TELEMETRY_JOB = "fleet-telemetry"
BILLING_JOB = "billing-agg"
INPUT = "telemetry-eh"
REFERENCE = "device-registry"
SUBSCRIPTION = "6f1c2b9e-0000-4000-8000-00000000f1ee"
RESOURCE_GROUP = "rg-fleet"

QUERY = """-- Fleet telemetry: per-device statistics, per-partition counts, hot readings by site.
WITH Readings AS (
    SELECT deviceId, gatewayId, temperature, humidity, PartitionId
    FROM [telemetry-eh] TIMESTAMP BY eventTime
    WHERE temperature IS NOT NULL
)
SELECT deviceId, AVG(temperature) AS avgTemperature, MAX(temperature) AS maxTemperature,
       COUNT(*) AS readings
INTO [device-stats]
FROM Readings
GROUP BY deviceId, HoppingWindow(minute, 5, 1)

SELECT PartitionId, COUNT(*) AS events
INTO [partition-counts]
FROM Readings
GROUP BY PartitionId, TumblingWindow(minute, 1)

SELECT r.deviceId, r.temperature, d.site
INTO [hot-readings]
FROM Readings r
JOIN [device-registry] d ON r.deviceId = d.deviceId
WHERE r.temperature > 30
"""


def _window_files(events: FleetEvents, config: FleetConfig) -> Iterator[tuple[int, int, slice]]:
    """(partition, window start ms, rows) of every Capture file, empty windows included,
    over the whole span of arrivals."""
    first = config.start_ms - config.start_ms % WINDOW_MS
    last = int(events.arrival_ms.max()) if events.size else first
    windows = range(first, last + 1, WINDOW_MS)
    for p in range(config.partitions):
        lo = int(events.partition.searchsorted(p, "left"))
        hi = int(events.partition.searchsorted(p, "right"))
        arrivals = events.arrival_ms[lo:hi]
        for start in windows:
            a = lo + int(arrivals.searchsorted(start, "left"))
            b = lo + int(arrivals.searchsorted(start + WINDOW_MS, "left"))
            yield p, start, slice(a, b)


def _records(
    events: FleetEvents, body: list[bytes], rows: slice, sequence: int, offset: int
) -> tuple[list[dict[str, Any]], int]:
    records = []
    for i in range(rows.start, rows.stop):
        ms = int(events.arrival_ms[i])
        device = int(events.device[i])
        records.append(
            {
                "SequenceNumber": sequence,
                "Offset": str(offset),
                "EnqueuedTimeUtc": us_time(ms),
                "SystemProperties": {
                    "x-opt-sequence-number": sequence,
                    "x-opt-offset": str(offset),
                    ENQUEUED_MS: ms,
                    "x-opt-partition-key": device_name(device),
                },
                "Properties": {
                    "content-type": "application/json",
                    "gateway": gateway_name(device // DEVICES_PER_GATEWAY),
                },
                "Body": body[i],
            }
        )
        sequence += 1
        offset += len(body[i])
    return records, offset


def write_capture(events: FleetEvents, config: FleetConfig, out: Path) -> list[Path]:
    """The fleet as an Event Hubs Capture folder under ``out`` (see the module docstring);
    deterministic: a file's sync marker derives from its path inside the folder."""
    body = bodies(events)
    written = []
    sequence: dict[int, int] = {}
    offset: dict[int, int] = {}
    for p, start, rows in _window_files(events, config):
        t = dt.datetime.fromtimestamp(start // 1000, tz=dt.UTC)
        name = f"{NAMESPACE}/{EVENTHUB}/{p}/{t.strftime('%Y/%m/%d/%H/%M/%S')}.avro"
        records, offset[p] = _records(events, body, rows, sequence.get(p, 0), offset.get(p, 0))
        sequence[p] = sequence.get(p, 0) + len(records)
        path = out / name
        path.parent.mkdir(parents=True, exist_ok=True)
        marker = hashlib.md5(name.encode(), usedforsecurity=False).digest()
        with path.open("wb") as handle:
            fastavro.writer(handle, _PARSED, records, codec="deflate", sync_marker=marker)
        written.append(path)
    return written


def job_template(late_s: int = 10, out_of_order_s: int = 3) -> dict[str, Any]:
    """The telemetry job as the portal's "Export template" writes it (an ARM template)."""

    def blob(container: str) -> dict[str, Any]:
        return {
            "type": "Microsoft.Storage/Blob",
            "properties": {
                "storageAccounts": [{"accountName": "contosofleet"}],
                "container": container,
                "pathPattern": "{date}/{time}",
            },
        }

    json_lines = {"type": "Json", "properties": {"encoding": "UTF8", "format": "LineSeparated"}}
    return {
        "$schema": "https://schema.management.azure.com/schemas/2019-04-01/deploymentTemplate.json#",
        "contentVersion": "1.0.0.0",
        "parameters": {
            "streamingjobs_fleet_telemetry_name": {
                "defaultValue": TELEMETRY_JOB,
                "type": "String",
            }
        },
        "variables": {},
        "resources": [
            {
                "type": "Microsoft.StreamAnalytics/streamingjobs",
                "apiVersion": "2021-10-01-preview",
                "name": "[parameters('streamingjobs_fleet_telemetry_name')]",
                "location": "West Europe",
                "properties": {
                    "sku": {"name": "StandardV2"},
                    "outputStartMode": "JobStartTime",
                    "eventsOutOfOrderPolicy": "Adjust",
                    "outputErrorPolicy": "Stop",
                    "eventsOutOfOrderMaxDelayInSeconds": out_of_order_s,
                    "eventsLateArrivalMaxDelayInSeconds": late_s,
                    "dataLocale": "en-US",
                    "compatibilityLevel": "1.2",
                    "contentStoragePolicy": "SystemAccount",
                    "jobType": "Cloud",
                    "inputs": [
                        {
                            "name": INPUT,
                            "properties": {
                                "type": "Stream",
                                "datasource": {
                                    "type": "Microsoft.ServiceBus/EventHub",
                                    "properties": {
                                        "serviceBusNamespace": NAMESPACE,
                                        "eventHubName": EVENTHUB,
                                        "consumerGroupName": "asa-fleet",
                                        "authenticationMode": "Msi",
                                    },
                                },
                                "serialization": {
                                    "type": "Json",
                                    "properties": {"encoding": "UTF8"},
                                },
                                "compression": {"type": "None"},
                            },
                        },
                        {
                            "name": REFERENCE,
                            "properties": {
                                "type": "Reference",
                                "datasource": blob("reference"),
                                "serialization": {
                                    "type": "Json",
                                    "properties": {"encoding": "UTF8"},
                                },
                            },
                        },
                    ],
                    "transformation": {
                        "name": "Transformation",
                        "properties": {"streamingUnits": 3, "query": QUERY},
                    },
                    "outputs": [
                        {"name": name, "properties": {"datasource": blob(name), "serialization": json_lines}}
                        for name in ("device-stats", "partition-counts", "hot-readings")
                    ],
                },
            }
        ],
    }  # fmt: skip


def resource_id(job: str) -> str:
    """The job's resource id as ASA writes it in its logs (upper case)."""
    return (
        f"/SUBSCRIPTIONS/{SUBSCRIPTION}/RESOURCEGROUPS/{RESOURCE_GROUP}/PROVIDERS/"
        f"MICROSOFT.STREAMANALYTICS/STREAMINGJOBS/{job}"
    ).upper()


def authoring_record(job: str, at: dt.datetime) -> dict[str, Any]:
    """The Authoring resource-log record of the portal's "Start Job" (a job lifecycle
    record), in the shape ASA documents for its resource logs (ASA docs, "Troubleshoot Azure
    Stream Analytics by using resource logs"): the common envelope (``time``, upper-case
    ``resourceId``, ``category: Authoring``, ``operationName``, ``status``, ``level``) and
    ``properties`` serialized as a JSON string in the generic-event schema (``Error``,
    ``Message``, ``Type``, ``Correlation ID``). The documentation names no operation or type
    of Authoring records: the operation is the start action's display name in the resource
    provider's operation list ("Start Stream Analytics Job"), the message and type are
    illustrative; orderdoc reads such a record by its category, whatever they say
    (:mod:`diagnostics.logs.lifecycle`)."""
    correlation = hashlib.sha256(f"{job}{at.isoformat()}".encode()).hexdigest()
    properties = {
        "Error": None,
        "Message": f"Streaming job '{job}' start requested with output start mode 'JobStartTime'.",
        "Type": "JobStart",
        "Correlation ID": "-".join(
            (
                correlation[:8],
                correlation[8:12],
                correlation[12:16],
                correlation[16:20],
                correlation[20:32],
            )
        ),
    }
    return {
        "time": at.strftime("%Y-%m-%dT%H:%M:%S.%f0Z"),
        "resourceId": resource_id(job),
        "category": "Authoring",
        "operationName": "Start Stream Analytics Job",
        "status": "Succeeded",
        "level": "Informational",
        "properties": json.dumps(properties),
    }


def _hour_path(root: Path, job: str, time_text: str) -> Path:
    t = dt.datetime.fromisoformat(time_text.replace("Z", "+00:00"))
    return (
        root
        / ("resourceId=" + resource_id(job))
        / f"y={t.year:04d}/m={t.month:02d}/d={t.day:02d}/h={t.hour:02d}/m=00/PT1H.json"
    )


def _replay_logs(
    capture: Path, job: str, policy: OrderingPolicy, work: Path
) -> list[dict[str, Any]]:
    """The resource-log records replaying ``capture`` under ``policy`` as job ``job`` writes
    (what ``orderdoc replay --job JOB`` writes to ``diagnostics.jsonl``)."""
    read = read_capture(capture)
    events, applied = read.apply(policy)
    result = replay(events, applied, columns=read.columns)
    out = work / job
    out.mkdir(parents=True)
    write_outputs(result, out, InstrumentOptions(job=job, source=INPUT))
    lines = (out / DIAGNOSTICS_FILE).read_text().splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def write_logs(
    capture: Path, job_file: Path, out: Path, billing_events: int = 60_000
) -> list[Path]:
    """Two jobs' resource logs under ``out`` (see the module docstring): the telemetry job's
    from replaying ``capture`` under ``job_file``, the billing job's from a late-senders
    capture of ``billing_events`` over three hours; hour files in ASA's layout."""

    by_file: dict[Path, list[str]] = {}
    with tempfile.TemporaryDirectory(prefix="orderdoc-fleet-") as tmp:
        work = Path(tmp)
        policy = job_policy(read_job_definition(job_file)).policy
        telemetry = _replay_logs(capture, TELEMETRY_JOB, policy, work)
        billing_capture = work / "billing.parquet"
        write_table(
            generate(
                "late_senders",
                GenerateConfig(
                    events=billing_events,
                    partitions=4,
                    duration_ms=3 * 60 * MINUTE_MS,
                    seed=7,
                    start_ms=FLEET_START_MS,
                ),
            ),
            billing_capture,
        )
        billing = _replay_logs(
            billing_capture, BILLING_JOB, OrderingPolicy(timestamp_by="event_time"), work
        )
    start = dt.datetime.fromtimestamp(FLEET_START_MS / 1000, tz=dt.UTC)
    lifecycle = authoring_record(TELEMETRY_JOB, start - dt.timedelta(minutes=2))
    for job, records in ((TELEMETRY_JOB, telemetry), (BILLING_JOB, billing)):
        for record in records:
            record = {**record, "resourceId": resource_id(job)}
            by_file.setdefault(_hour_path(out, job, record["time"]), []).append(
                json.dumps(record, separators=(",", ":"))
            )
    by_file.setdefault(_hour_path(out, TELEMETRY_JOB, lifecycle["time"]), []).insert(
        0, json.dumps(lifecycle, separators=(",", ":"))
    )
    written = []
    for path, lines in sorted(by_file.items()):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(lines) + "\n")
        written.append(path)
    return written


def check_fleet_out(out: Path) -> Path:
    """``out`` when the fleet can be written there (absent, or an empty folder, in an
    existing folder); else a one-line :class:`UsageError` naming it."""
    out = Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        msg = f"output path {out}: exists and is not an empty folder"
        raise UsageError(msg, Setting.OUTPUT)
    if not out.parent.is_dir():
        what = "is a file, not a folder" if out.parent.exists() else "does not exist"
        msg = f"output path {out}: folder {out.parent} {what}"
        raise UsageError(msg, Setting.OUTPUT)
    return out


@dataclass(frozen=True)
class FleetFiles:
    """Where :func:`write_fleet` put the fleet: the Capture folder, the job's ARM template,
    the logs folder (``None`` when not written)."""

    capture: Path
    job: Path
    logs: Path | None
    files: int
    events: int


def write_fleet(out: Path, config: FleetConfig, *, logs: bool = False) -> FleetFiles:
    """The fleet under ``out`` (``capture/``, ``job.arm.json``, with ``logs`` also ``logs/``),
    built in a temporary folder beside it and renamed into place."""
    out = Path(out)
    tmp = out.with_name(f".{out.name}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    events = fleet_events(config)
    files = write_capture(events, config, tmp / "capture")
    (tmp / "job.arm.json").write_text(json.dumps(job_template(), indent=2) + "\n")
    if logs:
        write_logs(tmp / "capture", tmp / "job.arm.json", tmp / "logs")
    if out.exists():
        out.rmdir()  # an empty folder (check_fleet_out)
    tmp.rename(out)
    return FleetFiles(
        capture=out / "capture",
        job=out / "job.arm.json",
        logs=(out / "logs") if logs else None,
        files=len(files),
        events=events.size,
    )
