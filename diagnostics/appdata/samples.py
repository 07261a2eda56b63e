"""The bundled samples the Load page offers: ``sample_logs/scenarios/*/capture.csv`` and the
Event Hubs Capture folder of ``sample_logs/captures`` (each replayed under ASA's default
policy, as ``scripts/make_samples.py`` does) and the hand-made log shapes of
``sample_logs/asa`` (aggregated)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from diagnostics.appdata.build import (
    CaptureSettings,
    Progress,
    build_from_logs,
)
from diagnostics.appdata.capture_input import build_from_reader
from diagnostics.captures.reader import read_capture
from diagnostics.durations import SECOND
from diagnostics.engine.policy import OrderingPolicy
from diagnostics.logs.inputs import expand_inputs
from diagnostics.resources import samples_dir

#: Scenarios listed first (the most telling ones), the rest follow alphabetically.
FIRST = ("late_senders", "idle_partition", "cross_device_disorder", "clock_skew")
#: The scenarios' capture settings (sample_logs/scenarios/README.md).
SCENARIO_PARTITIONS = 4
ASA_LABEL = "ASA log shapes (sample_logs/asa)"
CAPTURE_LABEL = "Event Hubs Capture folder, late senders (sample_logs/captures)"


@dataclass(frozen=True)
class Sample:
    """One bundled sample: a capture to replay or a folder of logs to aggregate."""

    name: str
    path: Path
    is_capture: bool

    def fingerprint(self) -> bytes:
        """Changes when a file of the sample changes."""
        files = [self.path] if self.path.is_file() else sorted(self.path.rglob("*"))
        parts = [
            f"{p.name}:{p.stat().st_size}:{p.stat().st_mtime_ns}" for p in files if p.is_file()
        ]
        return ("sample|" + self.name + "|" + "|".join(parts)).encode()


def root() -> Path | None:
    """``ORDERDOC_SAMPLES`` or the samples shipped with the package, if present."""
    return samples_dir()


def choices() -> dict[str, Sample]:
    """Label → sample, the telling scenarios first."""
    folder = root()
    if folder is None:
        return {}
    scenarios = folder / "scenarios"
    names = sorted(p.parent.name for p in scenarios.glob("*/capture.csv"))
    ordered = [n for n in FIRST if n in names] + [n for n in names if n not in FIRST]
    found = {
        f"scenario: {n} (event capture)": Sample(n, scenarios / n / "capture.csv", True)
        for n in ordered
    }
    capture = folder / "captures" / "eventhubs-capture"
    if capture.is_dir():
        found[CAPTURE_LABEL] = Sample("eventhubs-capture", capture, True)
    if (folder / "asa").is_dir():
        found[ASA_LABEL] = Sample("asa", folder / "asa", False)
    return found


def default_settings(name: str) -> CaptureSettings:
    """ASA's default policy on the scenarios' ``event_time`` column, job ``sample-<name>``."""
    policy = OrderingPolicy(timestamp_by="event_time", late_arrival_ns=5 * SECOND)
    return CaptureSettings(policy=policy, job=f"sample-{name}")


def build(sample: Sample, target: Path, progress: Progress) -> Path:
    """Build the aggregate folder of ``sample`` into ``target``."""
    if sample.is_capture:
        return build_from_reader(
            read_capture(sample.path),
            default_settings(sample.name),
            target,
            progress,
            partitions=range(SCENARIO_PARTITIONS),
        )
    files = expand_inputs([str(sample.path)])
    return build_from_logs(
        [Path(p) for p in files.logs],
        target,
        progress,
        metrics=[Path(p) for p in files.metrics],
        skipped=files.skipped,
    )
