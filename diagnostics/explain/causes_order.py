"""Detectors for the timeline causes: events out of order beyond the out-of-order tolerance,
events without a usable timestamp (or OVER key), and StreamInsight CTI violations. Each reads
:class:`Evidence` and returns a :class:`Finding` or ``None``; none reads a clock or a file.
Recommended tolerances are sized as :mod:`diagnostics.explain.causes_time` says.
"""

from __future__ import annotations

from typing import Any

from diagnostics.explain import snippets
from diagnostics.explain.causes_time import suggested_late_s
from diagnostics.explain.evidence import Evidence
from diagnostics.explain.kind_stats import KindStats
from diagnostics.explain.model import Cause, Finding, Impact, Suggestion
from diagnostics.explain.sources import CTI, EVENT_ORDERING, RULES, TIMESTAMP_BY
from diagnostics.explain.time_evidence import (
    DEFAULT_LATE_S,
    common,
    counted,
    dropping,
    late_s,
    lateness_evidence,
    ooo_s,
    over_suggestion,
    severity_for,
    share,
)
from diagnostics.kinds import ErrorKind
from diagnostics.words import plural, verb


def out_of_order(evidence: Evidence) -> Finding | None:
    """Out-of-order events beyond the out-of-order tolerance."""
    stats = evidence.stats(ErrorKind.OUT_OF_ORDER)
    if stats is None:
        return None
    late = evidence.count(ErrorKind.LATE)
    current_late = late_s(evidence)
    suggestions: list[Suggestion] = []
    over = over_suggestion(evidence)
    if over is not None:
        suggestions.append(over)
    measured = stats.exact and bool(stats.lateness.size)
    if measured:
        value = snippets.whole_seconds(stats.quantile(0.999) or 0.0)
    else:  # the late tolerance as the late arrivals' finding sets it (one value for both)
        value = current_late if current_late is not None else DEFAULT_LATE_S
        raised = suggested_late_s(evidence)
        if raised is not None:
            value = raised if current_late is None else max(current_late, raised)
    if measured or ooo_s(evidence) < value:
        suggestions.append(snippets.ooo_tolerance(value))
    else:  # already as large as the late tolerance allows: only a capture can say more
        suggestions.append(
            snippets.measure_disorder(evidence.policy.timestamp_by if evidence.policy else None)
        )
    if current_late is not None and value > current_late:
        suggestions.append(snippets.late_tolerance(value))
    added = value
    if not measured and current_late is not None and value > current_late:
        # the late tolerance is raised with it: the delay the late arrivals' finding says
        added = value - current_late
    evidence_out: dict[str, Any] = {**common(stats, evidence.total_events)}
    if stats.exact and stats.lateness.size:
        evidence_out["disorder"] = lateness_evidence(stats)
    evidence_out["current_out_of_order_tolerance_seconds"] = ooo_s(evidence)
    evidence_out["late_events_alongside"] = late
    evidence_out["over_key_analysis"] = evidence.key_analysis[:5]
    following = _share_following_late(evidence, stats)
    consequence = following is not None and following >= 0.5
    evidence_out["share_following_late_events"] = following
    impact: Impact = {
        "events_affected": stats.events,
        "delay_seconds": 0.0,
        "fix_adds_release_delay_seconds": 0 if over is not None else added,
    }
    if consequence:
        impact["consequence_of"] = Cause.LATE_ARRIVALS.value
    return Finding(
        cause=Cause.OUT_OF_ORDER,
        severity=severity_for(stats.events, evidence.total_events, dropped=dropping(evidence)),
        title=f"{counted(stats)} {verb(stats.events, 'was', 'were')} out of order beyond "
        "the out-of-order tolerance",
        explanation=(
            "An event whose (late-adjusted) time is earlier than the largest time already "
            "accepted on its timeline minus the out-of-order tolerance is an OutOfOrderEvent, "
            f"adjusted to that bound or dropped ({EVENT_ORDERING}). A timeline is a partition; "
            "with TIMESTAMP BY ... OVER key it is one key's substream, so senders whose clocks "
            f"disagree no longer put each other out of order ({TIMESTAMP_BY})."
            + (
                " Most of these follow late events: a late event adjusted to arrival − "
                "tolerance lands behind punctual senders of its partition, so fixing the late "
                "arrivals fixes these too."
                if consequence
                else ""
            )
            + (
                ""
                if stats.exact
                else " From logs alone the disorder is not measured: the suggested tolerance "
                "is the late tolerance (as the late arrivals' finding sets it, when there is one), "
                "the most an out-of-order tolerance can do."
            )
        ),
        evidence=evidence_out,
        impact=impact,
        suggestions=tuple(suggestions),
        confidence=(0.9 if over is not None else 0.75) * (0.7 if consequence else 1.0),
    )


def _share_following_late(evidence: Evidence, stats: KindStats) -> float | None:
    """Share of the out-of-order events caused by late adjustment: exact with a capture (events
    flagged both late and out of order); from logs, the share in minutes that also had late
    events (batches of late events arrive together). ``None`` without late events."""
    late = evidence.stats(ErrorKind.LATE)
    if late is None or not stats.events:
        return None
    if evidence.late_ooo_overlap is not None:
        return round(evidence.late_ooo_overlap / stats.events, 4)
    together = sum(n for minute, n in stats.by_minute.items() if minute in late.by_minute)
    return round(together / stats.events, 4)


def invalid_timestamps(evidence: Evidence) -> Finding | None:
    """Events without a usable timestamp (or OVER key)."""
    bad = evidence.count(ErrorKind.INVALID_TIMESTAMP) + evidence.count(ErrorKind.INVALID_KEY)
    if not bad:
        return None
    parts: dict[str, int] = {}
    for kind in (ErrorKind.INVALID_TIMESTAMP, ErrorKind.INVALID_KEY):
        stats = evidence.stats(kind)
        for p, n in (stats.partitions if stats else {}).items():
            parts[str(p)] = parts.get(str(p), 0) + n
    column = evidence.policy.timestamp_by if evidence.policy else None
    stats = evidence.stats(ErrorKind.INVALID_TIMESTAMP)
    breakdown = dict(stats.breakdown) if stats is not None and stats.breakdown else {}
    sender = breakdown.pop("sender_column", None)
    return Finding(
        cause=Cause.INVALID_TIMESTAMPS,
        severity=severity_for(bad, evidence.total_events, dropped=True),
        title=f"{plural(bad, 'event')} had no usable timestamp or key and "
        f"{verb(bad, 'was', 'were')} dropped",
        explanation=(
            "An event whose TIMESTAMP BY value is missing or unparsable is dropped with "
            "InvalidInputTimeStamp; with OVER, a missing key gives InvalidInputTimeStampKey "
            f"({RULES}). A body the input cannot read at all is not among them: ASA's "
            "deserializer rejects it first (InputDeserializerError)."
        ),
        evidence={
            "invalid_timestamp": evidence.count(ErrorKind.INVALID_TIMESTAMP),
            **{
                name: {**part, "sender_column": sender}
                for name, part in breakdown.items()
                if isinstance(part, dict) and part.get("events")
            },
            "invalid_key": evidence.count(ErrorKind.INVALID_KEY),
            "share_of_events": share(bad, evidence.total_events),
            "partitions": parts,
        },
        impact={"events_affected": bad, "delay_seconds": 0.0, "dropped": bad},
        suggestions=(snippets.fix_payload(column, _who_writes(breakdown, sender)),),
        confidence=0.95,
    )


def _who_writes(breakdown: dict[str, Any], sender: object) -> str:
    """``dev-078 writes values such as '6/3/2024 9:20:01 AM'``: the senders of unparsable
    values and what they write (empty when not known)."""
    part = breakdown.get("unparsable")
    if not isinstance(part, dict) or not part.get("examples"):
        return ""
    senders = list(part.get("senders") or {})
    who = f"{sender} {', '.join(senders)}" if sender and senders else "some senders"
    example = ", ".join(f"'{v}'" for v in part["examples"][:2])
    return f"{who} {'writes' if len(senders) == 1 else 'write'} values such as {example}"


def cti_violations(evidence: Evidence) -> Finding | None:
    """StreamInsight CTI violations (CtiViolation records)."""
    stats = evidence.stats(ErrorKind.CTI_VIOLATION)
    if stats is None:
        return None
    lag = float(stats.lateness.max()) if stats.lateness.size else None
    return Finding(
        cause=Cause.CTI_VIOLATIONS,
        severity=severity_for(stats.events, evidence.total_events, dropped=True),
        title=f"{counted(stats)} started before the latest CTI (CTI violations)",
        explanation=(
            "A CTI at c commits everything before c; an event starting before the latest CTI "
            f"is dropped or adjusted to the CTI by the AdvanceTimePolicy ({CTI}). A larger CTI "
            "delay (latest start − delay) leaves room for stragglers."
        ),
        evidence=common(stats, evidence.total_events),
        impact={"events_affected": stats.events, "delay_seconds": 0.0},
        suggestions=(
            snippets.cti_delay(None if lag is None else float(snippets.whole_seconds(lag))),
        ),
        confidence=0.7,
    )
