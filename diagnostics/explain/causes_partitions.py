"""Detectors for partition-level causes (idle partitions, a hot partition) and the verdict
for a healthy job. Pure functions of :class:`Evidence`."""

from __future__ import annotations

from datetime import datetime

from diagnostics.explain import snippets
from diagnostics.explain.assumed import DEFAULT_LATE_S, seconds_assumed
from diagnostics.explain.evidence import Evidence
from diagnostics.explain.model import Cause, Finding
from diagnostics.explain.sources import EVENT_ORDER, EVENT_ORDERING, RULES, TIME_HANDLING
from diagnostics.idle_minutes import idle_minutes
from diagnostics.kinds import Severity
from diagnostics.words import noun, plural

#: A partition is hot with at least this multiple of its fair share (1/n) of the events,
#: and at least half of them; with two partitions the bar is (1 + 1/2) / 2 = 75 %.
HOT_FACTOR = 2.0


def idle_partition(evidence: Evidence) -> Finding | None:
    """Partitions that stopped sending (InputPartitionNotProgressing episodes)."""
    if not evidence.idle:
        return None
    parts = sorted({e["partition_id"] for e in evidence.idle if e["partition_id"] is not None})
    minutes = sum(
        idle_minutes(
            (e["partition_id"], _time(e["start"]), _time(e["end"])) for e in evidence.idle
        ).values()
    )
    policy = evidence.policy
    if policy is None:  # the text's delay is the job's late tolerance: ASA's default, assumed
        delay_seconds = float(DEFAULT_LATE_S)
        delay = f"the late-arrival tolerance: {seconds_assumed(DEFAULT_LATE_S)}"
    elif policy.late_arrival_ns is None:
        delay_seconds = float(minutes * 60)
        delay = "unlimited: output waits until the partition sends again"
    else:
        delay_seconds = policy.late_arrival_ns / 1e9
        delay = f"the late-arrival tolerance: {delay_seconds:g} s"
    merged = policy is None or not policy.partition_by
    suggestions = [snippets.feed_partitions(parts)]
    if merged:
        suggestions.append(snippets.partition_by())
    return Finding(
        cause=Cause.IDLE_PARTITION,
        severity=Severity.WARNING,
        title=f"Input {noun(len(parts), 'partition')} "
        f"{', '.join(map(str, parts)) or '?'} stopped sending "
        f"({plural(round(minutes), 'idle minute')})",
        explanation=(
            "Without PARTITION BY PartitionId, output at time t waits until every partition's "
            f"watermark reaches t (see {EVENT_ORDER}). A silent partition advances only by "
            "processing time − late tolerance, so it holds the whole job back by the late "
            "tolerance, and forever if the tolerance is unlimited; ASA reports it as "
            f"InputPartitionNotProgressing ({EVENT_ORDERING}). This is a sender problem, not "
            "lateness."
        ),
        evidence={
            "idle_partitions": parts,
            "episodes": evidence.idle[:20],
            "idle_minutes_total": round(minutes, 1),
            "watermark_delay_seconds": evidence.watermark_delay,
            "events_per_partition": {str(k): v for k, v in evidence.partition_events.items()},
        },
        impact={
            "events_affected": 0,
            "delay_seconds": delay_seconds,
            "delay": delay,
            "effect": "the merged watermark is held back while the partition is silent",
        },
        suggestions=tuple(suggestions),
        # ASA's own notices name the partition; a capture's silence may be the capture's
        confidence=0.85 if evidence.idle_source == "logs" else 0.7,
    )


def _time(text: str | None) -> datetime | None:
    return None if text is None else datetime.fromisoformat(text)


def hot_partition(evidence: Evidence) -> Finding | None:
    """One partition carries far more than its share of the events."""
    counts = evidence.partition_events
    total = sum(counts.values())
    if len(counts) < 2 or not total:
        return None
    hot, n = max(counts.items(), key=lambda item: (item[1], -item[0]))
    share = n / total
    fair = 1 / len(counts)
    if share < max(0.5, min(HOT_FACTOR * fair, (1 + fair) / 2)):
        return None
    return Finding(
        cause=Cause.HOT_PARTITION,
        severity=Severity.WARNING,
        title=f"Partition {hot} receives {share:.0%} of the events (fair share {fair:.0%})",
        explanation=(
            f"Each input partition is processed in arrival order on its own timeline ({RULES}); "
            "one partition with most of the events bounds the job's throughput and, without "
            "PARTITION BY PartitionId, every other partition's output waits on it "
            f"({EVENT_ORDER}). This "
            "is a skewed partition key, not an ordering problem: no tolerance change helps."
        ),
        evidence={
            "events_per_partition": {str(k): v for k, v in sorted(counts.items())},
            "hot_partition": hot,
            "share": round(share, 4),
            "fair_share": round(fair, 4),
        },
        impact={"events_affected": 0, "delay_seconds": 0.0, "events_on_hot_partition": n},
        suggestions=(snippets.scale_out(hot, share),),
        confidence=0.8,
    )


def healthy(evidence: Evidence, others: list[Finding]) -> Finding | None:
    """The verdict when nothing is wrong: an info finding saying what was checked. When log
    records could not be read (quarantined), a warning that says so: what they held is not
    judged, and when no record was read at all nothing was."""
    if any(f.severity is not Severity.INFO for f in others):
        return None
    unread = evidence.records_quarantined
    read = evidence.records_total - unread
    checked = (
        "No events were adjusted or dropped by the late, early, out-of-order or timestamp "
        f"rules ({RULES}), no partition went idle and the load is spread over the "
        f"partitions. The release delay is the late tolerance the watermark waits for "
        f"({TIME_HANDLING})."
    )
    title, explanation = "No ordering problem found", checked
    if unread:
        explanation = (
            f"{plural(unread, 'log record')} could not be read and {noun(unread, 'was', 'were')} "
            "quarantined: the aggregate folder's quarantine table gives each one's file, line "
            'and reason (docs/schemas.md, "Aggregate folder"). What they hold is not judged '
            "here; fix or re-export those files and aggregate them again."
        )
        if read > 0:
            title = f"No ordering problem found in the {plural(read, 'log record')} read"
            explanation += f" In the records read: {checked[0].lower()}{checked[1:]}"
        else:
            title = f"Nothing judged: none of the {plural(unread, 'log record')} could be read"
    return Finding(
        cause=Cause.HEALTHY,
        severity=Severity.WARNING if unread else Severity.INFO,
        title=title,
        explanation=explanation,
        evidence={
            "events": evidence.total_events,
            "events_per_partition": {
                str(k): v for k, v in sorted(evidence.partition_events.items())
            },
            "watermark_delay_seconds": evidence.watermark_delay,
            "release_delay_seconds": evidence.release_delay,
            "sources": list(evidence.sources),
            **({"log_records_read": read, "log_records_quarantined": unread} if unread else {}),
        },
        impact={"events_affected": 0, "delay_seconds": 0.0},
        suggestions=(),
        confidence=0.8 if evidence.total_events else 0.5,
    )
