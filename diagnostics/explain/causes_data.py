"""Detectors for data errors that are not about time: events whose payload could not be read
(``InputDeserializerError.*``) and result rows that did not fit the output
(``OutputDataConversionError.*``), and the watermark delay seen in Azure Monitor metrics.

These are never ordering problems: a payload error loses the event before any time rule
sees it, an output error loses a result after the query ran, and no tolerance changes either.
Pure functions of :class:`Evidence`.
"""

from __future__ import annotations

from diagnostics.durations import SECOND
from diagnostics.explain import snippets
from diagnostics.explain.assumed import seconds_assumed
from diagnostics.explain.evidence import Evidence
from diagnostics.explain.kind_stats import KindStats
from diagnostics.explain.model import Cause, Finding, Suggestion, SuggestionKind
from diagnostics.explain.time_evidence import DEFAULT_LATE_S
from diagnostics.kinds import KindFamily, Severity, kind_family
from diagnostics.words import noun, plural, verb

#: ASA's page on data errors: every kind, with its meaning and fix.
DATA_ERRORS_PAGE = "https://learn.microsoft.com/azure/stream-analytics/data-errors"
#: Watermark delay beyond the late tolerance that is still normal processing (seconds).
GRACE_S = 60.0
#: ASA's page on the job metrics (watermark delay, backlogged input events).
METRICS_PAGE = "https://learn.microsoft.com/azure/stream-analytics/stream-analytics-job-metrics"


def _family(evidence: Evidence, family: KindFamily) -> dict[str, KindStats]:
    return {
        name: stats
        for name, stats in sorted(evidence.kinds.items())
        if kind_family(name) is family and stats.events
    }


def _sources(kinds: dict[str, KindStats]) -> dict[str, int]:
    totals: dict[str, int] = {}
    for stats in kinds.values():
        for source, events in stats.sources.items():
            totals[source] = totals.get(source, 0) + events
    return dict(sorted(totals.items(), key=lambda item: (-item[1], item[0])))


def _columns(kinds: dict[str, KindStats]) -> dict[str, int]:
    totals: dict[str, int] = {}
    for stats in kinds.values():
        for column, events in stats.columns.items():
            totals[column] = totals.get(column, 0) + events
    return dict(sorted(totals.items(), key=lambda item: (-item[1], item[0])))


def _column_text(kinds: dict[str, KindStats]) -> str:
    columns = list(_columns(kinds))[:3]
    if not columns:
        return ""
    return f" (column{'s' if len(columns) > 1 else ''} {', '.join(repr(c) for c in columns)})"


def _events(kinds: dict[str, KindStats]) -> tuple[int, str, bool]:
    """The events, in words ("at least N" when some records named no count), and whether N
    is only a minimum."""
    events = sum(stats.events for stats in kinds.values())
    minimum = any(stats.unknown_counts for stats in kinds.values())
    return events, (f"at least {events:,}" if minimum else f"{events:,}"), minimum


def _evidence(kinds: dict[str, KindStats]) -> dict[str, object]:
    return {
        "events_by_kind": {name: stats.events for name, stats in kinds.items()},
        "records_without_count": {
            name: stats.unknown_counts for name, stats in kinds.items() if stats.unknown_counts
        },
        "events_by_source": _sources(kinds),
        "events_by_column": _columns(kinds),
        "asa_page": DATA_ERRORS_PAGE,
    }


def _names(sources: dict[str, int], what: str) -> str:
    if not sources:
        return f"the {what}"
    names = [f"'{name}'" for name in list(sources)[:3]]
    if len(sources) == 1:
        return f"the {what} {names[0]}"
    more = f" and {len(sources) - 3:,} more" if len(sources) > 3 else ""
    listed = ", ".join(names[:-1]) + (f", {names[-1]}" if more else f" and {names[-1]}")
    return f"the {what}s {listed}{more}"


def input_data_errors(evidence: Evidence) -> Finding | None:
    """Events ASA could not deserialize: a bad payload or a wrong input format, before ordering."""
    kinds = _family(evidence, KindFamily.INPUT_DATA)
    if not kinds:
        return None
    events, text, minimum = _events(kinds)
    sources = _sources(kinds)
    where = _names(sources, "input")
    detail = ", ".join(name.split(".", 1)[-1] for name in kinds)
    return Finding(
        cause=Cause.INPUT_DATA_ERRORS,
        severity=Severity.CRITICAL,
        title=f"{text} {noun(events, 'event')} of {where} could not be read "
        f"({detail}) and {verb(events, 'was', 'were')} lost",
        explanation=(
            "ASA reports an InputDeserializerError when an event's bytes do not match the "
            "input's serialization format (JSON, CSV, Avro), encoding or compression, or a "
            "field does not convert to the type the query expects. Such an event is dropped "
            "when it is read, before any time rule applies: this is a bad payload or a schema "
            "mismatch, not an ordering problem, and no tolerance setting changes it."
        ),
        evidence=_evidence(kinds),
        impact={
            "events_affected": events,
            "minimum": minimum,
            "lost": True,
            "delay_seconds": 0.0,
            "effect": "the events are lost before the query sees them",
        },
        suggestions=(
            Suggestion(
                SuggestionKind.FIX_INPUT_DATA,
                None,
                f"Check {where}{_column_text(kinds)}: its Event serialization format, Encoding and Event compression "
                "type must match what the senders write; fix the senders that write other "
                "payloads, or cast fields with TRY_CAST in the query (see "
                f"{DATA_ERRORS_PAGE})",
            ),
        ),
        confidence=0.9,
        job=evidence.job,
    )


def output_data_errors(evidence: Evidence) -> Finding | None:
    """Result rows that did not fit the output's schema: lost after the query."""
    kinds = _family(evidence, KindFamily.OUTPUT_DATA)
    if not kinds:
        return None
    events, text, minimum = _events(kinds)
    sources = _sources(kinds)
    where = _names(sources, "output")
    detail = ", ".join(name.split(".", 1)[-1] for name in kinds)
    return Finding(
        cause=Cause.OUTPUT_DATA_ERRORS,
        severity=Severity.CRITICAL,
        title=f"{text} result row{'' if events == 1 and not minimum else 's'} did not fit "
        f"{where} ({detail})",
        explanation=(
            "ASA reports an OutputDataConversionError when a row the query produced cannot be "
            "written: a column the output's table requires is missing, a value does not "
            "convert to the column's type, or it is too long. The input events were read and "
            "ordered correctly: this is a mismatch between the query's SELECT and the output's "
            "schema, not an ordering problem."
        ),
        evidence=_evidence(kinds),
        impact={
            "events_affected": events,
            "minimum": minimum,
            "lost": True,
            "delay_seconds": 0.0,
            "effect": "the rows are dropped or the output stops, as the job's output error "
            "policy says",
        },
        suggestions=(
            Suggestion(
                SuggestionKind.FIX_OUTPUT_SCHEMA,
                None,
                f"Make the SELECT into {where} give every column of the output's schema"
                f"{_column_text(kinds)}, with "
                "its name and type (CAST the values; trim long strings), or change the table; "
                f"see {DATA_ERRORS_PAGE}",
            ),
        ),
        confidence=0.9,
        job=evidence.job,
    )


def unknown_data_errors(evidence: Evidence) -> Finding | None:
    """Data-error kinds orderdoc does not know: counted and named, never dropped silently."""
    kinds = _family(evidence, KindFamily.OTHER)
    if not kinds:
        return None
    events, text, minimum = _events(kinds)
    listed = ", ".join(
        f"{name} ({plural(stats.events, 'event', minimum=bool(stats.unknown_counts))})"
        for name, stats in kinds.items()
    )
    first = next(iter(kinds))
    return Finding(
        cause=Cause.UNKNOWN_DATA_ERRORS,
        severity=Severity.WARNING,
        title=f"{text} {noun(events, 'event')} of a data-error kind orderdoc "
        f"does not know: {listed}",
        explanation=(
            "The job's logs report data errors of a kind that is not among those orderdoc "
            "explains (the time rules' kinds, InputDeserializerError.*, "
            "OutputDataConversionError.* and the older codes on ASA's data-errors page). "
            "They are counted as the logs give them; what happened to the events, and why, "
            "is not known to orderdoc: the records' messages and ASA's page say."
        ),
        evidence=_evidence(kinds),
        impact={
            "events_affected": events,
            "minimum": minimum,
            "fate_unknown": True,
            "delay_seconds": 0.0,
        },
        suggestions=(snippets.inspect_records(first, DATA_ERRORS_PAGE),),
        confidence=0.5,
        job=evidence.job,
    )


def _delay_cause(
    worst: float, backlog: int | None, late_s: float | None, known: bool
) -> tuple[str, Severity, SuggestionKind, str] | None:
    """Why the output waits ``worst`` seconds: (reason, severity, suggestion kind, fix)."""
    if backlog:
        return (
            f"input events were backlogged (up to {backlog:,} in a minute): the job cannot "
            "keep up with its input, and output waits for it",
            Severity.CRITICAL,
            SuggestionKind.SCALE_OUT,
            "Scale the job up (more streaming units) or out (PARTITION BY PartitionId so "
            "partitions are processed in parallel), and check the query for costly steps",
        )
    if late_s is None or worst <= late_s + GRACE_S:
        return None  # the watermark waits for late events as configured: nothing wrong
    if known:
        return (
            f"the delay exceeds the late-arrival tolerance ({late_s:g} s) without backlog: "
            "an input partition that stops sending holds the watermark back",
            Severity.WARNING,
            SuggestionKind.FEED_ALL_PARTITIONS,
            "Find the silent partitions (InputPartitionNotProgressing in the logs) and make "
            "every partition send, or use PARTITION BY PartitionId",
        )
    return (
        f"the delay exceeds the late-arrival tolerance, {seconds_assumed(late_s)}, without "
        "backlog: either the job's tolerance is longer or an input partition stopped "
        "sending",
        Severity.WARNING,
        SuggestionKind.LATE_ARRIVAL_TOLERANCE,
        "Compare the delay with Event ordering > Events that arrive late; if it is longer, "
        "find the silent partitions (InputPartitionNotProgressing in the logs)",
    )


def watermark_delay(evidence: Evidence) -> Finding | None:
    """The output watermark delay from the metrics, set against backlog and tolerance: for a
    job known by its metrics only (no data-error logs), or whose input is backlogged."""
    delay = evidence.watermark_delay
    if not delay or delay.get("max", 0.0) <= 0.0 or "metrics" not in evidence.sources:
        return None
    if evidence.log_records and not evidence.backlog_max:
        return None  # the logs' findings (idle partitions, late events) explain the delay
    worst = float(delay["max"])
    policy = evidence.policy
    if policy is None:
        late_s: float | None = float(DEFAULT_LATE_S)
    else:
        late_s = None if policy.late_arrival_ns is None else policy.late_arrival_ns / SECOND
    cause = _delay_cause(worst, evidence.backlog_max, late_s, known=policy is not None)
    if cause is None:
        return None
    reason, severity, kind, fix = cause
    return Finding(
        cause=Cause.WATERMARK_DELAY,
        severity=severity,
        title=f"Output waits up to {worst:,.0f} s behind the input (watermark delay)",
        explanation=(
            "The watermark delay metric is how far the job's output time lags behind the "
            f"wall clock. Here {reason}."
        ),
        evidence={
            "watermark_delay_seconds": delay,
            "backlogged_input_events_max": evidence.backlog_max,
            "late_arrival_tolerance_seconds": late_s if policy is not None else None,
            "asa_page": METRICS_PAGE,
        },
        impact={"events_affected": 0, "delay_seconds": worst},
        suggestions=(Suggestion(kind, None, fix),),
        confidence=0.7 if policy is not None or evidence.backlog_max is not None else 0.5,
        job=evidence.job,
    )
