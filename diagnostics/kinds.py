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


#: Older documentation's names for the same conditions (ASA's page "Azure Stream Analytics
#: data error codes"), and the Azure Monitor metric names that count them; readers must
#: accept all of them.
LEGACY_KIND_NAMES: dict[str, ErrorKind] = {
    "InputEventLateBeyondThreshold": ErrorKind.LATE,
    "InputEventEarlyBeyondThreshold": ErrorKind.EARLY,
    "InputEventTimestampNotFound": ErrorKind.INVALID_TIMESTAMP,
    "InputEventTimestampByOverValueNotFound": ErrorKind.INVALID_KEY,
    "LateInputEvents": ErrorKind.LATE,
    "EarlyInputEvents": ErrorKind.EARLY,
}

#: Prefixes of the kinds that are not about time: ``InputDeserializerError.InvalidData``, ...
INPUT_DATA_PREFIX = "InputDeserializerError"
OUTPUT_DATA_PREFIX = "OutputDataConversionError"


class KindFamily(StrEnum):
    """What a data-error kind is about: which part of the job lost or changed the events."""

    ORDERING = "ordering"  # late, early, out of order: adjusted or dropped by the time rules
    TIMESTAMP = "timestamp"  # no usable TIMESTAMP BY value or OVER key: dropped
    INPUT_DATA = "input_data"  # the payload could not be read: lost before any ordering
    OUTPUT_DATA = "output_data"  # a result row did not fit the output's schema
    IDLE = "idle"  # InputPartitionNotProgressing: not an error, a silent partition
    CTI = "cti"  # CTI violations of the CTI replay
    OTHER = "other"


#: The older data error codes that have no current name: the payload could not be read, or a
#: result row could not be written (ASA's page "Azure Stream Analytics data error codes").
LEGACY_DATA_ERROR_CODES: dict[str, KindFamily] = {
    "InputDeserializationError": KindFamily.INPUT_DATA,
    "AzureFunctionMessageSizeExceeded": KindFamily.OUTPUT_DATA,
    "EventHubOutputRecordExceedsSizeLimit": KindFamily.OUTPUT_DATA,
    "CosmosDBOutputInvalidId": KindFamily.OUTPUT_DATA,
    "CosmosDBOutputInvalidIdCharacter": KindFamily.OUTPUT_DATA,
    "CosmosDBOutputMissingId": KindFamily.OUTPUT_DATA,
    "CosmosDBOutputMissingIdColumn": KindFamily.OUTPUT_DATA,
    "CosmosDBOutputMissingPartitionKey": KindFamily.OUTPUT_DATA,
    "CosmosDBOutputSingleRecordTooLarge": KindFamily.OUTPUT_DATA,
    "SQLDatabaseOutputDataError": KindFamily.OUTPUT_DATA,
}

_FAMILY = {
    ErrorKind.LATE.value: KindFamily.ORDERING,
    ErrorKind.EARLY.value: KindFamily.ORDERING,
    ErrorKind.OUT_OF_ORDER.value: KindFamily.ORDERING,
    ErrorKind.INVALID_TIMESTAMP.value: KindFamily.TIMESTAMP,
    ErrorKind.INVALID_KEY.value: KindFamily.TIMESTAMP,
    ErrorKind.PARTITION_NOT_PROGRESSING.value: KindFamily.IDLE,
    ErrorKind.CTI_VIOLATION.value: KindFamily.CTI,
}


def normalise_kind(name: str) -> str:
    """Map a ``DataErrorType`` (or activity-log ``type``, or metric name) to its current name.

    Known older names map to :class:`ErrorKind`; any other name is kept as it is, so that an
    unknown kind is counted under its own name rather than lost.
    """
    if name in LEGACY_KIND_NAMES:
        return LEGACY_KIND_NAMES[name].value
    return name


def kind_family(kind: str) -> KindFamily:
    """The :class:`KindFamily` of a (normalised) kind name."""
    family = _FAMILY.get(kind) or LEGACY_DATA_ERROR_CODES.get(kind)
    if family is not None:
        return family
    head = kind.split(".", 1)[0]
    if head == INPUT_DATA_PREFIX:
        return KindFamily.INPUT_DATA
    if head == OUTPUT_DATA_PREFIX:
        return KindFamily.OUTPUT_DATA
    return KindFamily.OTHER


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
