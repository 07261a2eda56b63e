"""Column names: where the engine finds its inputs, and the outcome columns it adds."""

from __future__ import annotations

from dataclasses import dataclass

#: Outcome columns added to every input row, in this order (see docs/schemas.md).
#: The outcome's boolean columns, in their order among :data:`OUTCOME_COLUMNS`.
FLAG_COLUMNS: tuple[str, ...] = (
    "late",
    "early",
    "out_of_order",
    "reordered",
    "invalid_timestamp",
    "invalid_key",
    "dropped",
)
OUTCOME_COLUMNS: tuple[str, ...] = (
    "event_id",
    "partition",
    "timeline",
    "application_time",
    "arrival",
    "system_timestamp",
    *FLAG_COLUMNS,
    "status",
    "watermark",
    "release_time",
    "output_rank",
)


@dataclass(frozen=True, slots=True)
class EventColumns:
    """Input column names. ``partition`` absent from the data means one partition 0.

    ``row`` names an optional column holding each event's 0-based position in the input
    file, used to name rows in error messages and to restore input order. ``parsed_arrival``
    names an optional column of arrival times already parsed to ``Datetime("ns", "UTC")``
    (the replay driver parses once to sort, and the engine reuses it).
    """

    arrival: str = "arrival_time"
    partition: str | None = "partition_id"
    row: str = "__row"
    parsed_arrival: str = "__arrival"
