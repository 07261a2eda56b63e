"""A small fleet for the tests of the diagnosis on production-shaped data (issue 39): the
generator's fleet (``diagnostics.generate.fleet``) with every cause, over 30 minutes, written
once per test module that asks for it."""

from __future__ import annotations

from pathlib import Path

from diagnostics.generate.fleet import MINUTE_MS, FleetConfig
from diagnostics.generate.fleet_files import FleetFiles, write_fleet

#: 24,000 readings over 30 minutes: the gateway's 180 s batches ten times over, partition 5
#: silent from minute 10 to 20, the fast and slow clocks, bad and far-off times.
SMALL_FLEET = FleetConfig(
    events=24_000,
    duration_ms=30 * MINUTE_MS,
    silent_from_ms=10 * MINUTE_MS,
    silent_for_ms=10 * MINUTE_MS,
)


def small_fleet(root: Path, *, logs: bool = False, config: FleetConfig = SMALL_FLEET) -> FleetFiles:
    """The fleet of ``config`` written under ``root`` (capture, job.arm.json, with ``logs``
    the two jobs' resource logs)."""
    return write_fleet(root / "fleet", config, logs=logs)
