"""Scenario names and the validated settings of one synthetic capture."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from diagnostics.durations import HOUR, MINUTE
from diagnostics.engine.replay import partition_count_problem
from diagnostics.errors import Setting, UsageError

#: Upper bounds that keep one capture within memory (10M events take about 2 GB).
MAX_EVENTS = 50_000_000
#: 2024-01-01T00:00:00Z in milliseconds: the default first arrival of every capture.
DEFAULT_START_MS = 1_704_067_200_000


class Scenario(StrEnum):
    """The synthetic captures, each with one known cause (see :data:`CAUSES`)."""

    HEALTHY = "healthy"
    IDLE_PARTITION = "idle_partition"
    LATE_SENDERS = "late_senders"
    CLOCK_SKEW = "clock_skew"
    CROSS_DEVICE_DISORDER = "cross_device_disorder"
    HISTORICAL_REPLAY = "historical_replay"
    HOT_PARTITION = "hot_partition"


#: One line per scenario: the cause built into it and what ASA's default policy
#: (late 5 s, out-of-order 0 s, Adjust, early window 5 min, no OVER) reports for it.
CAUSES: dict[Scenario, str] = {
    Scenario.HEALTHY: (
        "no fault: every partition's events arrive in event-time order 50-500 ms after they "
        "happen; the default policy reports no data errors and no idle partition"
    ),
    Scenario.IDLE_PARTITION: (
        "the last partition sends nothing from 20% to 80% of the duration while the others go "
        "on; InputPartitionNotProgressing for that partition only, no data errors"
    ),
    Scenario.LATE_SENDERS: (
        "every fifth device buffers its readings and sends them in batches every 2 minutes; "
        "LateInputEvent on those devices' events (and OutOfOrderEvent where a batch lands "
        "behind punctual devices of the same partition)"
    ),
    Scenario.CLOCK_SKEW: (
        "device dev-00000's clock runs 10 minutes fast; EarlyInputEvent for its events only "
        "(dropped), nothing else"
    ),
    Scenario.CROSS_DEVICE_DISORDER: (
        "each device sends in order, but device clocks are skewed 0-4 s against each other; "
        "OutOfOrderEvent across devices within a partition, no late events; "
        "TIMESTAMP BY ... OVER device_id (with PARTITION BY PartitionId) removes them"
    ),
    Scenario.HISTORICAL_REPLAY: (
        "a week of 30-day-old data is pushed through a live job within the duration; every "
        "event is a LateInputEvent (lateness of about 23 to 30 days)"
    ),
    Scenario.HOT_PARTITION: (
        "partition 0 receives 80% of the events, the rest share 20%; no data errors, the "
        "per-partition InputEvents metric shows the skew"
    ),
}


def check_size(events: int, partitions: int) -> None:
    """Refuse a number of events outside 1..:data:`MAX_EVENTS` or a number of partitions
    the engine does not take (:class:`UsageError` naming the flag)."""
    if not 1 <= events <= MAX_EVENTS:
        msg = f"number of events {events}: must be 1 to {MAX_EVENTS}"
        raise UsageError(msg, Setting.EVENT_COUNT)
    problem = partition_count_problem(partitions)
    if problem is not None:
        raise UsageError(problem, Setting.PARTITIONS)


@dataclass(frozen=True)
class GenerateConfig:
    """Settings of one capture. Invariants: all counts and the duration are positive.

    ``start_ms`` is the first moment of the capture (epoch milliseconds, UTC); no wall clock
    is read anywhere, so the same settings always give the same capture.
    """

    events: int = 100_000
    partitions: int = 4
    duration_ms: int = HOUR // 1_000_000
    seed: int = 0
    start_ms: int = DEFAULT_START_MS

    def __post_init__(self) -> None:
        check_size(self.events, self.partitions)
        if not 1_000 <= self.duration_ms <= 366 * 86_400_000:
            msg = f"duration {self.duration_ms} ms: must be 1s to 366 days"
            raise UsageError(msg, Setting.DURATION)
        if self.seed < 0:
            msg = f"seed {self.seed}: must be zero or positive"
            raise UsageError(msg, Setting.SEED)

    def check(self, scenario: Scenario) -> None:
        """Raise :class:`UsageError` if ``scenario`` cannot show its cause with these settings."""
        needs_two = (Scenario.IDLE_PARTITION, Scenario.HOT_PARTITION)
        if scenario in needs_two and self.partitions < 2:
            msg = f"partition count {self.partitions}: scenario {scenario} needs at least 2"
            raise UsageError(msg, Setting.PARTITIONS)
        if scenario == Scenario.IDLE_PARTITION and self.duration_ms * 1_000_000 < 20 * MINUTE:
            msg = (
                f"duration {self.duration_ms // 1000}s: scenario idle_partition needs at "
                "least 20m so that the idle gap outlasts the 5-minute notice interval"
            )
            raise UsageError(msg, Setting.DURATION)
