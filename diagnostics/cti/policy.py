"""StreamInsight application-time settings: a frozen, validated configuration (docs/semantics.md, "StreamInsight application-time advancement (CTI)").

:class:`CtiPolicy` restates ``AdvanceTimeSettings``: generation (``AdvanceTimeGenerationSettings``:
frequency as a count of start edges *or* as a duration of application time, a delay, and
flush-at-infinity on shutdown), import of another stream's CTIs (``AdvanceTimeImportSettings``)
and the violation policy (``AdvanceTimePolicy``). Generation and import may be combined, but
at least one of them must be set, as in StreamInsight.

:class:`HoppingWindow` describes the one CTI-altering operator the replay models: a hopping
(or tumbling) window holds a CTI back to the start of the earliest window it falls in.

All times are integer nanoseconds since the Unix epoch (UTC); :data:`INFINITY` is +∞.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from diagnostics.durations import TICK, format_duration
from diagnostics.errors import PolicyError

#: +∞ on the application timeline (the flush CTI); the largest int64, never a real event time.
INFINITY = 2**63 - 1
#: The smallest delay StreamInsight's documentation uses: −1 tick commits each point event at once.
MIN_DELAY_NS = -TICK


class ViolationPolicy(StrEnum):
    """``AdvanceTimePolicy``: what happens to an event that starts before the latest CTI."""

    DROP = "drop"
    ADJUST = "adjust"


class Operator(StrEnum):
    """Two-input operators; both release up to the minimum of the inputs' latest CTIs."""

    JOIN = "join"
    UNION = "union"


@dataclass(frozen=True, slots=True)
class CtiPolicy:
    """One input's application-time settings.

    Invariants: at most one of ``every_events`` (> 0) and ``every_ns`` (> 0) is set; a policy
    with neither generates no CTI and must import (``imports``); ``delay_ns`` ≥ −100 ns
    (−1 tick); ``violation`` is a :class:`ViolationPolicy`.
    """

    every_events: int | None = None
    every_ns: int | None = None
    delay_ns: int = 0
    violation: ViolationPolicy = ViolationPolicy.ADJUST
    flush_at_infinity: bool = False
    imports: bool = False

    def __post_init__(self) -> None:
        if self.every_events is not None and self.every_ns is not None:
            msg = (
                f"CTI frequency is both a count ({self.every_events}) and a duration "
                f"({format_duration(self.every_ns)}); give one of them"
            )
            raise PolicyError(msg)
        if self.every_events is not None and self.every_events <= 0:
            msg = f"CTI frequency {self.every_events} is not a positive number of events"
            raise PolicyError(msg)
        if self.every_ns is not None and self.every_ns <= 0:
            msg = (
                f"CTI frequency {format_duration(self.every_ns)} is not a positive duration "
                "of application time"
            )
            raise PolicyError(msg)
        if self.delay_ns < MIN_DELAY_NS:
            msg = (
                f"CTI delay {format_duration(self.delay_ns)} is below -1 tick (-100ns): a CTI "
                "further ahead than the latest event would reject the next in-order event"
            )
            raise PolicyError(msg)
        if not self.generates and not self.imports:
            msg = "a CTI policy needs generation (a frequency), import, or both"
            raise PolicyError(msg)
        if not isinstance(self.violation, ViolationPolicy):
            try:
                object.__setattr__(self, "violation", ViolationPolicy(str(self.violation)))
            except ValueError as exc:
                msg = f"CTI violation policy '{self.violation}' is not one of drop, adjust"
                raise PolicyError(msg) from exc

    @property
    def generates(self) -> bool:
        """True when this policy generates CTIs (a frequency is set)."""
        return self.every_events is not None or self.every_ns is not None

    def describe(self) -> str:
        """One line, e.g. ``CTI every 10 events, delay 5s, adjust, flush``."""
        parts: list[str] = []
        if self.every_events is not None:
            n = self.every_events
            parts.append("CTI after every event" if n == 1 else f"CTI every {n} events")
        elif self.every_ns is not None:
            parts.append(f"CTI every {format_duration(self.every_ns)} of application time")
        if self.generates:
            parts.append(f"delay {format_duration(self.delay_ns)}")
        if self.imports:
            parts.append("imported CTIs")
        parts.append(self.violation.value)
        if self.flush_at_infinity:
            parts.append("flush at +inf")
        return ", ".join(parts)


@dataclass(frozen=True, slots=True)
class HoppingWindow:
    """A hopping window of ``size_ns`` every ``hop_ns`` (windows start at ``offset + k·hop``).

    Invariants: 0 < ``hop_ns`` ≤ ``size_ns``; 0 ≤ ``offset_ns`` < ``hop_ns``. A tumbling window
    is ``hop_ns == size_ns``.
    """

    size_ns: int
    hop_ns: int
    offset_ns: int = 0

    def __post_init__(self) -> None:
        if self.hop_ns <= 0 or self.size_ns <= 0:
            msg = (
                f"hopping window size {format_duration(self.size_ns)} and hop "
                f"{format_duration(self.hop_ns)} must both be positive"
            )
            raise PolicyError(msg)
        if self.hop_ns > self.size_ns:
            msg = (
                f"hopping window hop {format_duration(self.hop_ns)} is longer than its size "
                f"{format_duration(self.size_ns)}; windows would leave gaps"
            )
            raise PolicyError(msg)
        if not 0 <= self.offset_ns < self.hop_ns:
            msg = f"hopping window offset {format_duration(self.offset_ns)} must be in [0, hop)"
            raise PolicyError(msg)

    def hold(self, cti_ns: int) -> int:
        """The CTI held back to the start of the earliest window containing ``cti_ns``.

        That is the smallest window start ``s`` with ``s + size > cti``: every window that
        starts earlier has ended by ``cti`` and its result is final. Monotone in ``cti_ns``;
        +∞ stays +∞.
        """
        if cti_ns == INFINITY:
            return INFINITY
        # smallest k with offset + k·hop > cti − size
        k = (cti_ns - self.size_ns - self.offset_ns) // self.hop_ns + 1
        return self.offset_ns + k * self.hop_ns
