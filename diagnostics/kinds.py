"""Closed vocabularies shared by the engine, the log readers, the explainer and the rules."""

from __future__ import annotations

from enum import StrEnum


class ErrorKind(StrEnum):
    """Diagnostic kinds, under ASA's current names (the older names are aliases on read)."""

    LATE = "LateInputEvent"
    EARLY = "EarlyInputEvent"
    OUT_OF_ORDER = "OutOfOrderEvent"
    INVALID_TIMESTAMP = "InvalidInputTimeStamp"
    INVALID_KEY = "InvalidInputTimeStampKey"
    PARTITION_NOT_PROGRESSING = "InputPartitionNotProgressing"
    CTI_VIOLATION = "CtiViolation"


#: Older documentation's names for the same conditions; readers must accept both.
LEGACY_KIND_NAMES: dict[str, ErrorKind] = {
    "InputEventLateBeyondThreshold": ErrorKind.LATE,
    "InputEventEarlyBeyondThreshold": ErrorKind.EARLY,
}


def normalise_kind(name: str) -> str:
    """Map a ``DataErrorType`` (or activity-log ``type``) to its current name.

    Known legacy names map to :class:`ErrorKind`; any other name is kept as it is, so that an
    unknown kind is counted under its own name rather than lost.
    """
    if name in LEGACY_KIND_NAMES:
        return LEGACY_KIND_NAMES[name].value
    return name


class Severity(StrEnum):
    """Severity of a finding or an alert, in increasing order."""

    INFO = "info"
    WARNING = "warning"
    CRITICAL = "critical"

    @property
    def rank(self) -> int:
        """0 for info, 1 for warning, 2 for critical."""
        return list(Severity).index(self)


class EventStatus(StrEnum):
    """What the engine did with one input event."""

    ACCEPTED = "accepted"
    ADJUSTED = "adjusted"
    DROPPED = "dropped"
