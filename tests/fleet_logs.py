"""Two jobs' resource logs of the production-shaped fleet (``orderdoc generate fleet --logs``,
small sizes) and their aggregate folder: the test data of the two-job points (one finding
per cause and job, a job definition for one job of two, job events, the app's job scope).

The telemetry job (FLEET-TELEMETRY) replays the fleet's capture under its ARM template (late
10 s, out-of-order 3 s, Adjust) with partition 5 silent; the billing job (BILLING-AGG) is a
late-senders replay under ASA's defaults; the telemetry job's logs start with the portal's
"Start Job" Authoring record.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from diagnostics.generate.fleet import FleetConfig, fleet_events
from diagnostics.generate.fleet_files import (
    BILLING_JOB,
    TELEMETRY_JOB,
    job_template,
    write_capture,
    write_logs,
)
from diagnostics.report.pipeline import write_agg_dir

TELEMETRY = TELEMETRY_JOB.upper()
BILLING = BILLING_JOB.upper()
#: The fleet, small: 40 minutes, partition 5 silent for 10 of them.
CONFIG = FleetConfig(
    events=20_000, duration_ms=40 * 60_000, silent_from_ms=5 * 60_000, silent_for_ms=10 * 60_000
)


@dataclass(frozen=True)
class FleetLogs:
    """Where the fleet's files are: the capture, the telemetry job's ARM template, the logs
    folder and their aggregate folder (the polars reference, which the Spark tests hold equal
    to the Spark job)."""

    capture: Path
    job: Path
    logs: Path
    agg: Path


def build(root: Path, billing_events: int = 8_000) -> FleetLogs:
    """Write the small fleet with two jobs' logs under ``root`` and aggregate them."""
    capture, job, logs = root / "capture", root / "job.arm.json", root / "logs"
    write_capture(fleet_events(CONFIG), CONFIG, capture)
    job.write_text(json.dumps(job_template(), indent=2) + "\n")
    write_logs(capture, job, logs, billing_events=billing_events)
    files = sorted(logs.rglob("PT1H.json"))
    write_agg_dir(files, [], root / "agg")
    return FleetLogs(capture, job, logs, root / "agg")
