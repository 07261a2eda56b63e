"""Write sample_logs/jobs: one ASA job definition per bundled scenario, in the three shapes
``--job-definition`` reads (ARM template, resource JSON, ``az stream-analytics job show``
output), each describing the job the scenario samples were replayed under (input
``telemetry``, TIMESTAMP BY event_time, late 5 s, out-of-order 0 s, Adjust).

``late_senders.counts.asaql`` is a query for ``--query``: the late senders' readings counted
per device and minute (docs/impact.md).

``two_inputs.resource.json`` is a job with two stream inputs (``telemetry`` and ``alarms``),
read in two ``WITH`` steps and joined, so that ``--input`` must pick one; its ``telemetry``
is the same as in the scenario samples.

``telemetry.portal-export.json`` is a job as the portal's "Export template" writes it (the
inputs, outputs and query as child resources): a hyphenated input ``telemetry-eh``, ``WITH``
steps, a per-device ``HoppingWindow(minute, 5, 1)`` with AVG/MAX/COUNT, a tumbling count with
HAVING, a ``SlidingWindow`` step and a ``JOIN`` with the reference input ``devices``: the
sample of ``orderdoc translate`` (docs/engines.md, "Translating an ASA job").

Usage: python scripts/make_job_samples.py [OUT]   (default: sample_logs/jobs)
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESOURCE_ID = (
    "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg-telemetry/"
    "providers/Microsoft.StreamAnalytics/streamingjobs/{name}"
)

SIMPLE = """-- {title}
SELECT
    device_id,
    System.Timestamp() AS window_end,
    AVG(value) AS avg_value
INTO [output]
FROM [telemetry] TIMESTAMP BY event_time
GROUP BY device_id, TumblingWindow(minute, 1)
"""

MULTI = """-- Late senders: readings enriched with device metadata, alerts and an archive.
-- Text like 'FROM telemetry TIMESTAMP BY wrong' in comments or strings is not a clause.
WITH Readings AS (
    SELECT device_id, partition_id, event_time, value,
           'raw TIMESTAMP BY note' AS note  /* a string, not a clause */
    FROM telemetry TIMESTAMP BY event_time
),
Enriched AS (
    SELECT r.device_id, r.value, d.site, d.max_value
    FROM Readings r
    JOIN devices d ON r.device_id = d.device_id
)
SELECT device_id, site, COUNT(*) AS over_limit
INTO alerts
FROM Enriched
WHERE value > max_value
GROUP BY device_id, site, TumblingWindow(minute, 5)

SELECT device_id, event_time, value
INTO archive
FROM Readings
"""

TWO_STREAMS = """-- Two event hubs from the same devices: readings and alarms, joined within a minute.
WITH Readings AS (
    SELECT device_id, event_time, value
    FROM [telemetry] TIMESTAMP BY event_time
),
Alarms AS (
    SELECT device_id, raised_at, code
    FROM [alarms] TIMESTAMP BY CASE
            WHEN raised_at IS NULL
              OR DATEDIFF(hour, raised_at, EventEnqueuedUtcTime) NOT BETWEEN 0 AND 24
            THEN EventEnqueuedUtcTime ELSE raised_at END OVER device_id
)
SELECT r.device_id, r.value, a.code
INTO [output]
FROM Readings r
JOIN Alarms a
  ON r.device_id = a.device_id AND DATEDIFF(second, r, a) BETWEEN 0 AND 60
"""

#: The late senders' readings counted per device and minute: the query of docs/impact.md's
#: worked example (``orderdoc impact ... --query late_senders.counts.asaql``).
COUNTS = """-- Late senders: readings per device and minute.
SELECT
    device_id,
    System.Timestamp() AS window_end,
    COUNT(*) AS readings
INTO [counts]
FROM telemetry TIMESTAMP BY event_time
GROUP BY device_id, TumblingWindow(minute, 1)
"""

#: The portal-export sample's query (``orderdoc translate``'s sample).
PORTAL_QUERY = """-- Telemetry: per-device statistics every minute over the last 5 minutes, readings per
-- minute, a smoothed value per device and readings above their device's limit.
WITH Readings AS (
    SELECT device_id, partition_id, value, event_time
    FROM [telemetry-eh] TIMESTAMP BY event_time
    WHERE value IS NOT NULL
),
Smoothed AS (
    SELECT device_id, AVG(value) AS avg_value
    FROM Readings
    GROUP BY device_id, SlidingWindow(minute, 2)
)
SELECT
    device_id,
    System.Timestamp() AS window_end,
    AVG(value) AS avg_value,
    MAX(value) AS max_value,
    COUNT(*) AS readings
INTO [device-stats]
FROM Readings
GROUP BY device_id, HoppingWindow(minute, 5, 1)

SELECT System.Timestamp() AS window_end, COUNT(*) AS readings
INTO [minute-counts]
FROM Readings
GROUP BY TumblingWindow(minute, 1)
HAVING COUNT(*) > 0

SELECT r.device_id, r.value, d.site, d.max_value
INTO [alerts]
FROM Readings r
JOIN [devices] d ON r.device_id = d.device_id
WHERE r.value > d.max_value

SELECT device_id, avg_value
INTO [smoothed-values]
FROM Smoothed
"""

#: The shape each scenario's definition is written in.
SHAPES = {
    "healthy": "resource",
    "idle_partition": "az-show",
    "late_senders": "arm",
    "clock_skew": "az-show",
    "cross_device_disorder": "resource",
    "historical_replay": "arm",
    "hot_partition": "resource",
}
JSON_SERIALIZATION = {"type": "Json", "properties": {"encoding": "UTF8"}}


def _event_hub(name: str) -> dict[str, Any]:
    return {
        "name": name,
        "properties": {
            "type": "Stream",
            "datasource": {
                "type": "Microsoft.ServiceBus/EventHub",
                "properties": {
                    "serviceBusNamespace": "contoso-iot",
                    "eventHubName": name,
                    "consumerGroupName": "asa",
                    "sharedAccessPolicyName": "listen",
                },
            },
            "serialization": JSON_SERIALIZATION,
        },
    }


def _inputs(with_reference: bool) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [_event_hub("telemetry")]
    if with_reference:
        out.append(
            {
                "name": "devices",
                "properties": {
                    "type": "Reference",
                    "datasource": {
                        "type": "Microsoft.Storage/Blob",
                        "properties": {
                            "storageAccounts": [{"accountName": "contosoref"}],
                            "container": "reference",
                            "pathPattern": "devices.json",
                        },
                    },
                    "serialization": JSON_SERIALIZATION,
                },
            }
        )
    return out


def _outputs(names: list[str]) -> list[dict[str, Any]]:
    return [
        {
            "name": name,
            "properties": {
                "datasource": {
                    "type": "Microsoft.Storage/Blob",
                    "properties": {
                        "storageAccounts": [{"accountName": "contosoout"}],
                        "container": name,
                        "pathPattern": "{date}",
                    },
                },
                "serialization": {
                    "type": "Json",
                    "properties": {"encoding": "UTF8", "format": "LineSeparated"},
                },
            },
        }
        for name in names
    ]


def _properties(query: str, with_reference: bool, outputs: list[str]) -> dict[str, Any]:
    return {
        "sku": {"name": "Standard"},
        "eventsOutOfOrderPolicy": "Adjust",
        "outputErrorPolicy": "Stop",
        "eventsOutOfOrderMaxDelayInSeconds": 0,
        "eventsLateArrivalMaxDelayInSeconds": 5,
        "dataLocale": "en-US",
        "compatibilityLevel": "1.2",
        "inputs": _inputs(with_reference),
        "transformation": {
            "name": "Transformation",
            "properties": {"streamingUnits": 3, "query": query},
        },
        "outputs": _outputs(outputs),
    }


def arm(name: str, props: dict[str, Any]) -> dict[str, Any]:
    """An ARM deployment template with the tolerances as parameters."""
    props = {
        **props,
        "eventsLateArrivalMaxDelayInSeconds": "[parameters('lateArrivalSeconds')]",
        "eventsOutOfOrderMaxDelayInSeconds": "[parameters('outOfOrderSeconds')]",
        "eventsOutOfOrderPolicy": "[variables('outOfOrderAction')]",
    }
    return {
        "$schema": "https://schema.management.azure.com/schemas/2019-04-01/deploymentTemplate.json#",
        "contentVersion": "1.0.0.0",
        "parameters": {
            "jobName": {"type": "string", "defaultValue": name},
            "location": {"type": "string", "defaultValue": "[resourceGroup().location]"},
            "lateArrivalSeconds": {
                "type": "int",
                "defaultValue": 5,
                "minValue": -1,
                "maxValue": 1814399,
            },
            "outOfOrderSeconds": {"type": "int", "defaultValue": 0},
        },
        "variables": {"outOfOrderAction": "Adjust"},
        "resources": [
            {
                "type": "Microsoft.StreamAnalytics/streamingjobs",
                "apiVersion": "2021-10-01-preview",
                "name": "[parameters('jobName')]",
                "location": "[parameters('location')]",
                "properties": props,
            }
        ],
    }


def resource(name: str, props: dict[str, Any]) -> dict[str, Any]:
    """The resource JSON the portal shows."""
    return {
        "id": RESOURCE_ID.format(name=name),
        "name": name,
        "type": "Microsoft.StreamAnalytics/streamingjobs",
        "location": "westeurope",
        "properties": props,
    }


def az_show(name: str, props: dict[str, Any]) -> dict[str, Any]:
    """What ``az stream-analytics job show`` prints (properties flattened)."""
    rid = RESOURCE_ID.format(name=name)
    return {
        "compatibilityLevel": props["compatibilityLevel"],
        "contentStoragePolicy": "SystemAccount",
        "createdDate": "2024-01-01T00:00:00+00:00",
        "dataLocale": "en-US",
        "eventsLateArrivalMaxDelayInSeconds": props["eventsLateArrivalMaxDelayInSeconds"],
        "eventsOutOfOrderMaxDelayInSeconds": props["eventsOutOfOrderMaxDelayInSeconds"],
        "eventsOutOfOrderPolicy": "Adjust",
        "id": rid,
        "inputs": [
            dict(
                i,
                id=f"{rid}/inputs/{i['name']}",
                type="Microsoft.StreamAnalytics/streamingjobs/inputs",
            )
            for i in props["inputs"]
        ],
        "jobId": "5f0c8a2e-0000-4000-8000-000000000001",
        "jobState": "Running",
        "jobType": "Cloud",
        "location": "West Europe",
        "name": name,
        "outputErrorPolicy": "Stop",
        "outputs": [
            dict(
                o,
                id=f"{rid}/outputs/{o['name']}",
                type="Microsoft.StreamAnalytics/streamingjobs/outputs",
            )
            for o in props["outputs"]
        ],
        "provisioningState": "Succeeded",
        "resourceGroup": "rg-telemetry",
        "sku": {"name": "Standard"},
        "transformation": {
            "id": f"{rid}/transformations/Transformation",
            "name": "Transformation",
            "query": props["transformation"]["properties"]["query"],
            "streamingUnits": 3,
            "type": "Microsoft.StreamAnalytics/streamingjobs/transformations",
        },
        "type": "Microsoft.StreamAnalytics/streamingjobs",
    }


def portal_export(name: str) -> dict[str, Any]:
    """The job as the portal's "Export template" writes it: the job, then its inputs,
    outputs and transformation as child resources named ``[concat(parameters(...), '/x')]``."""
    param = f"streamingjobs_{name.replace('-', '_')}_name"
    job = f"[parameters('{param}')]"
    depends = [f"[resourceId('Microsoft.StreamAnalytics/streamingjobs', {job[1:-1]})]"]

    def child(kind: str, child_name: str, props: dict[str, Any]) -> dict[str, Any]:
        return {
            "type": f"Microsoft.StreamAnalytics/streamingjobs/{kind}",
            "apiVersion": "2021-10-01-preview",
            "name": f"[concat(parameters('{param}'), '/{child_name}')]",
            "dependsOn": depends,
            "properties": props,
        }

    hub = _event_hub("telemetry-eh")["properties"]
    reference = _inputs(True)[1]["properties"]
    outputs = {
        o["name"]: o["properties"]
        for o in _outputs(["device-stats", "minute-counts", "alerts", "smoothed-values"])
    }
    job_props = {
        k: v
        for k, v in _properties(PORTAL_QUERY, False, []).items()
        if k not in ("inputs", "outputs", "transformation")
    }
    return {
        "$schema": "https://schema.management.azure.com/schemas/2019-04-01/deploymentTemplate.json#",
        "contentVersion": "1.0.0.0",
        "parameters": {param: {"defaultValue": name, "type": "String"}},
        "variables": {},
        "resources": [
            {
                "type": "Microsoft.StreamAnalytics/streamingjobs",
                "apiVersion": "2021-10-01-preview",
                "name": job,
                "location": "West Europe",
                "properties": job_props,
            },
            child("inputs", "telemetry-eh", hub),
            child("inputs", "devices", reference),
            *(child("outputs", n, props) for n, props in outputs.items()),
            child(
                "transformations",
                "Transformation",
                {"streamingUnits": 3, "query": PORTAL_QUERY},
            ),
        ],
    }


def _write(path: Path, document: dict[str, Any]) -> None:
    path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")


def build(out: Path) -> list[Path]:
    """Write every definition (and the ARM parameter file) into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for scenario, shape in SHAPES.items():
        name = f"sample-{scenario.replace('_', '-')}"
        multi = scenario == "late_senders"
        query = (
            MULTI if multi else SIMPLE.format(title=f"{scenario}: per-device averages per minute")
        )
        props = _properties(query, multi, ["alerts", "archive"] if multi else ["output"])
        document = {"arm": arm, "resource": resource, "az-show": az_show}[shape](name, props)
        path = out / f"{scenario}.{shape}.json"
        _write(path, document)
        written.append(path)
    two = _properties(TWO_STREAMS, False, ["output"])
    two["inputs"] = [_event_hub("telemetry"), _event_hub("alarms")]
    path = out / "two_inputs.resource.json"
    _write(path, resource("sample-two-inputs", two))
    written.append(path)
    path = out / "telemetry.portal-export.json"
    _write(path, portal_export("telemetry"))
    written.append(path)
    counts = out / "late_senders.counts.asaql"
    counts.write_text(COUNTS, encoding="utf-8")
    written.append(counts)
    parameters = out / "late_senders.parameters.json"
    _write(
        parameters,
        {
            "$schema": "https://schema.management.azure.com/schemas/2019-04-01/deploymentParameters.json#",
            "contentVersion": "1.0.0.0",
            "parameters": {
                "jobName": {"value": "sample-late-senders-prod"},
                "lateArrivalSeconds": {"value": 5},
            },
        },
    )
    return [*written, parameters]


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "sample_logs" / "jobs"
    for path in build(target):
        print(path)
