"""Suggestions as the exact text a user applies: portal settings and ASA query clauses.

Tolerances are whole seconds (the portal takes ``hh:mm:ss``; the ARM properties
``eventsLateArrivalMaxDelayInSeconds`` / ``eventsOutOfOrderMaxDelayInSeconds`` take seconds)
and are clamped to ASA's range (0 s .. 1,814,399 s, or -1 for unlimited; docs/semantics.md).
"""

from __future__ import annotations

import math

from diagnostics.durations import SECOND, format_clock
from diagnostics.engine.policy import MAX_TOLERANCE_S
from diagnostics.errors import Setting
from diagnostics.explain.model import SnippetForm, Suggestion, SuggestionKind
from diagnostics.words import noun


def whole_seconds(value: float) -> int:
    """``value`` rounded up to a whole second, at least 1 s and at most ASA's maximum."""
    return int(min(max(math.ceil(value - 1e-9), 1), MAX_TOLERANCE_S))


def late_tolerance(seconds: int | None) -> Suggestion:
    """``Events that arrive late: hh:mm:ss`` (``None``: unlimited, ARM value -1)."""
    if seconds is None:
        return Suggestion(
            SuggestionKind.LATE_ARRIVAL_TOLERANCE,
            None,
            "Event ordering > Events that arrive late: unlimited "
            "(eventsLateArrivalMaxDelayInSeconds: -1)",
            form=SnippetForm.SETTING,
        )
    return Suggestion(
        SuggestionKind.LATE_ARRIVAL_TOLERANCE,
        float(seconds),
        f"Event ordering > Events that arrive late: {format_clock(seconds * SECOND)} "
        f"(eventsLateArrivalMaxDelayInSeconds: {seconds})",
        form=SnippetForm.SETTING,
    )


def ooo_tolerance(seconds: int) -> Suggestion:
    """``Out of order events: hh:mm:ss``."""
    return Suggestion(
        SuggestionKind.OUT_OF_ORDER_TOLERANCE,
        float(seconds),
        f"Event ordering > Out of order events: {format_clock(seconds * SECOND)} "
        f"(eventsOutOfOrderMaxDelayInSeconds: {seconds})",
        form=SnippetForm.SETTING,
    )


def partition_by(source: str = "input", timestamp: str | None = None) -> Suggestion:
    """``FROM input [TIMESTAMP BY ts] PARTITION BY PartitionId`` (the job's TIMESTAMP BY kept
    when it is known, so that the clause can replace the query's FROM as it is)."""
    clause = f"FROM {source}" + (f" TIMESTAMP BY {timestamp}" if timestamp else "")
    return Suggestion(
        SuggestionKind.PARTITION_BY,
        None,
        f"{clause} PARTITION BY PartitionId",
        form=SnippetForm.QUERY,
    )


def timestamp_by_over(
    timestamp: str | None, keys: tuple[str, ...], *, multi_partition: bool, source: str = "input"
) -> Suggestion:
    """``FROM input TIMESTAMP BY ts OVER key [PARTITION BY PartitionId]``."""
    clause = (
        f"FROM {source} TIMESTAMP BY {timestamp or '<timestamp column>'} OVER {', '.join(keys)}"
    )
    if multi_partition:
        clause += " PARTITION BY PartitionId"
    return Suggestion(SuggestionKind.TIMESTAMP_BY_OVER, None, clause, form=SnippetForm.QUERY)


def feed_partitions(partitions: list[int]) -> Suggestion:
    """Check the senders of idle partitions."""
    names = ", ".join(str(p) for p in partitions)
    return Suggestion(
        SuggestionKind.FEED_ALL_PARTITIONS,
        None,
        f"Check the producers writing to {noun(len(partitions), 'partition')} "
        f"{names}: send with a partition key spread "
        "over all partitions (or none, for round-robin) so that no partition goes silent",
    )


def fix_clocks(keys: list[str], offset_s: float | None) -> Suggestion:
    """Correct the senders' clocks (no ASA setting changes the 5-minute early window)."""
    if keys:
        who = f"{noun(len(keys), 'sender')} {', '.join(keys)}"
    else:
        who = "the senders whose events are early"
    by = f" (about {abs(offset_s):.0f} s fast)" if offset_s is not None else ""
    return Suggestion(
        SuggestionKind.FIX_SENDER_CLOCKS,
        None,
        f"Synchronise the clock of {who}{by} with NTP; ASA's 5-minute early-arrival window "
        "is fixed, so no tolerance setting keeps these events",
    )


def fix_payload(column: str | None, who: str = "") -> Suggestion:
    """Make every event carry a valid timestamp (and key); ``who``: which senders write what
    (``deviceId dev-078 writes values such as '6/3/2024 9:20:01 AM'``), said first."""
    named = column or "the TIMESTAMP BY column"
    sql = column or "<timestamp column>"  # query text: a placeholder, as in timestamp_by_over
    return Suggestion(
        SuggestionKind.FIX_PAYLOAD,
        None,
        (f"{who}: " if who else "")
        + ("make" if who else "Make")
        + f" every event carry {named} as an ISO-8601 UTC time (and the OVER key, if any); "
        f"or filter them first: WHERE TRY_CAST({sql} AS datetime) IS NOT NULL in a step "
        "without TIMESTAMP BY",
    )


def _live_tolerance(live_late_s: int | None) -> str:
    """The live job's late tolerance as the portal shows it, when known and finite."""
    if live_late_s is None:
        return "its late-arrival tolerance"
    return f"its late-arrival tolerance ({format_clock(live_late_s * SECOND)})"


def separate_replay_job(live_late_s: int | None = None) -> Suggestion:
    """Replay history in its own job; the live job keeps its tolerance (``live_late_s``: the
    live job's late tolerance in seconds, ``None`` when unknown)."""
    return Suggestion(
        SuggestionKind.SEPARATE_REPLAY_JOB,
        None,
        "Replay the backfill in a separate job (a copy of this job reading the historical "
        "data) whose Events that arrive late is unlimited "
        "(eventsLateArrivalMaxDelayInSeconds: -1), or without TIMESTAMP BY; the live job "
        f"keeps {_live_tolerance(live_late_s)} and reads live data only",
    )


def backfill_late_tolerance(live_late_s: int | None = None) -> Suggestion:
    """The unlimited late tolerance of the separate backfill job (never the live job's: it
    would make live output wait for the oldest event)."""
    return Suggestion(
        SuggestionKind.LATE_ARRIVAL_TOLERANCE,
        None,
        "On the separate backfill job only: Event ordering > Events that arrive late: "
        "unlimited (eventsLateArrivalMaxDelayInSeconds: -1); the live job keeps "
        f"{_live_tolerance(live_late_s)}, as unlimited there would make live output wait "
        "for the oldest event",
    )


def scale_out(partition: int, share: float) -> Suggestion:
    """Spread a hot partition's load."""
    return Suggestion(
        SuggestionKind.SCALE_OUT,
        None,
        f"Partition {partition} carries {share:.0%} of the events: send with a finer partition "
        "key (e.g. the device id) so the load spreads, then raise Streaming Units with "
        "PARTITION BY PartitionId so partitions are processed in parallel",
    )


def cti_delay(seconds: float | None) -> Suggestion:
    """A larger CTI delay (StreamInsight ``AdvanceTimeGenerationSettings`` delay)."""
    if seconds is None:
        return Suggestion(
            SuggestionKind.CTI_DELAY,
            None,
            "Raise the CTI delay of AdvanceTimeGenerationSettings; orderdoc cti "
            "computes the smallest delay that avoids every violation",
        )
    return Suggestion(
        SuggestionKind.CTI_DELAY,
        float(seconds),
        f"AdvanceTimeGenerationSettings(frequency, TimeSpan.FromSeconds({seconds:g}), true)",
        form=SnippetForm.CODE,
    )


#: What explaining a capture needs: the capture and its TIMESTAMP BY column.
_CAPTURE_SETTINGS = (Setting.CAPTURE, Setting.TIMESTAMP_BY)


def _its_column(timestamp: str | None) -> str:
    """``its TIMESTAMP BY column (event_time)``, or without the name when it is unknown."""
    return "its TIMESTAMP BY column" + (f" ({timestamp})" if timestamp else "")


def measure_lateness(timestamp: str | None) -> Suggestion:
    """How to size a late-arrival tolerance when no record carries an example event."""
    return Suggestion(
        SuggestionKind.MEASURE_LATENESS,
        None,
        "Measure the lateness before changing Events that arrive late: capture the input "
        "(Event Hubs Capture, or a SELECT * INTO blob step) and explain it with the capture "
        f"and {_its_column(timestamp)}, which sizes the tolerance to the 99.9th percentile of "
        "the events' lateness; or aggregate the job's resource logs (diagnostic setting, "
        "category Execution), whose data-error records carry an example event",
        _CAPTURE_SETTINGS,
    )


def measure_disorder(timestamp: str | None) -> Suggestion:
    """How to size an out-of-order fix when the logs cannot (the tolerance is already as
    large as the late tolerance allows)."""
    return Suggestion(
        SuggestionKind.MEASURE_LATENESS,
        None,
        "The out-of-order tolerance is already as large as the late-arrival tolerance lets it "
        f"act: capture the input and explain it with the capture and {_its_column(timestamp)}, "
        "which measures how far out of order the events are and finds a sender column for "
        "TIMESTAMP BY ... OVER",
        _CAPTURE_SETTINGS,
    )


def inspect_records(kind: str, page: str) -> Suggestion:
    """What to read about a data-error kind orderdoc does not know."""
    return Suggestion(
        SuggestionKind.INSPECT_RECORDS,
        None,
        f"Read the job's log records of kind {kind} (their message and example event) and look "
        f"the kind up on ASA's data-errors page ({page})",
    )
