"""The ordering policy: a frozen, validated description of a job's time-handling settings.

The policy is configuration only; the stateful logic lives in :mod:`diagnostics.engine.engine`.
Ranges and defaults are those of docs/semantics.md, "Policy settings".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from diagnostics.durations import MINUTE, SECOND, format_duration
from diagnostics.errors import PolicyError, Setting

#: ASA's fixed early-arrival window (docs/semantics.md, "Policy settings").
EARLY_WINDOW_NS = 5 * MINUTE
#: Until a partition has received its first event, its arrival time is estimated as τ − 5 s.
UNSTARTED_ESTIMATE_NS = 5 * SECOND
#: The largest finite tolerance ASA accepts, in whole seconds: 1,814,399 s, which is 20 days
#: 23:59:59 (the ARM reference's range of the two tolerance settings; docs/semantics.md,
#: "Policy settings").
MAX_TOLERANCE_S = 1_814_399
MAX_TOLERANCE_NS = MAX_TOLERANCE_S * SECOND
_MAX_TEXT = f"{format_duration(MAX_TOLERANCE_NS)} ({MAX_TOLERANCE_S}s)"


class Action(StrEnum):
    """What happens to events outside the tolerances."""

    ADJUST = "adjust"
    DROP = "drop"


@dataclass(frozen=True, slots=True)
class OrderingPolicy:
    """An ASA job's event-ordering settings.

    ``timestamp_by`` is the application-time column (``None``: the job runs on arrival time
    and no tolerance, early window or ordering diagnostic applies). ``late_arrival_ns`` is
    ``None`` for *unlimited* (ASA's -1). ``over`` holds the ``TIMESTAMP BY ... OVER`` key
    columns (empty: one timeline per partition).
    """

    timestamp_by: str | None = None
    late_arrival_ns: int | None = 5 * SECOND
    out_of_order_ns: int = 0
    action: Action = Action.ADJUST
    early_policy: bool = True
    partition_by: bool = False
    over: tuple[str, ...] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        late = self.late_arrival_ns
        if late is not None and not 0 <= late <= MAX_TOLERANCE_NS:
            msg = (
                f"late-arrival tolerance {format_duration(late)} is out of range: "
                f"it must be 0s to {_MAX_TEXT}, or unlimited"
            )
            raise PolicyError(msg, Setting.LATE_ARRIVAL)
        if not 0 <= self.out_of_order_ns <= MAX_TOLERANCE_NS:
            msg = (
                f"out-of-order tolerance {format_duration(self.out_of_order_ns)} is out of "
                f"range: it must be 0s to {_MAX_TEXT}"
            )
            raise PolicyError(msg, Setting.OUT_OF_ORDER)
        if not isinstance(self.action, Action):
            object.__setattr__(self, "action", Action(self.action))
        object.__setattr__(self, "over", tuple(self.over))
        if self.over and self.timestamp_by is None:
            msg = "TIMESTAMP BY ... OVER needs a TIMESTAMP BY column"
            raise PolicyError(msg, Setting.TIMESTAMP_BY)

    @property
    def application_time(self) -> bool:
        """True when the job runs on application time (``TIMESTAMP BY``)."""
        return self.timestamp_by is not None

    @property
    def effective_late_ns(self) -> int | None:
        """Late tolerance in force: 0 on arrival time (no tolerances apply), ``None`` = unlimited."""
        return self.late_arrival_ns if self.application_time else 0

    @property
    def effective_ooo_ns(self) -> int:
        """Out-of-order tolerance in force: min(late, ooo), since late adjustment runs first.

        On arrival time it is 0. With unlimited late tolerance it is ``out_of_order_ns``.
        """
        if not self.application_time:
            return 0
        late = self.late_arrival_ns
        return self.out_of_order_ns if late is None else min(late, self.out_of_order_ns)

    @property
    def early_window_ns(self) -> int | None:
        """The early-arrival window in force, or ``None`` when it does not apply."""
        return EARLY_WINDOW_NS if self.application_time and self.early_policy else None

    def partition_problem(self, partitions: int) -> str | None:
        """Why ASA rejects these settings on an input of ``partitions`` partitions, or
        ``None``: ``TIMESTAMP BY ... OVER`` on more than one partition needs PARTITION BY."""
        if self.over and partitions > 1 and not self.partition_by:
            return (
                f"TIMESTAMP BY ... OVER {', '.join(self.over)} on an input with {partitions} "
                "partitions needs PARTITION BY PartitionId, as ASA requires"
            )
        return None

    def describe(self) -> str:
        """One line in the user's terms, e.g. ``TIMESTAMP BY ts, late 5s, out-of-order 0s, adjust``."""
        if not self.application_time:
            return "arrival time (no TIMESTAMP BY: no tolerances apply)"
        parts = [f"TIMESTAMP BY {self.timestamp_by}"]
        if self.over:
            parts[0] += f" OVER {', '.join(self.over)}"
        parts.append(f"late {format_duration(self.late_arrival_ns)}")
        parts.append(f"out-of-order {format_duration(self.out_of_order_ns)}")
        parts.append(self.action.value)
        if self.partition_by:
            parts.append("PARTITION BY PartitionId")
        if not self.early_policy:
            parts.append("no early policy")
        return ", ".join(parts)
