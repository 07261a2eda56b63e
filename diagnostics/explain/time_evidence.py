"""What the time-handling detectors share: the job's tolerances (ASA's defaults when the
policy is not given), the severity of a count of events, and the evidence they report about a
kind's events (counts, shares, partitions, lateness quantiles).
"""

from __future__ import annotations

from typing import Any

from diagnostics.durations import SECOND
from diagnostics.explain import snippets
from diagnostics.explain.evidence import Evidence
from diagnostics.explain.kind_stats import KindStats, weighted_quantile
from diagnostics.explain.model import Suggestion
from diagnostics.kinds import Severity
from diagnostics.words import plural

#: ASA's default late tolerance, assumed when the job's policy is not given.
DEFAULT_LATE_S = 5
#: The lateness evidence of records without an example event.
NOT_MEASURED = (
    "not measured: no log record carries an example event (portal notifications and metrics "
    "give counts only)"
)


def severity_for(events: int, total: int | None, *, dropped: bool) -> Severity:
    """Critical when ≥ 10 % of events (≥ 1 % if dropped) are hit, else warning; info if none."""
    if events <= 0:
        return Severity.INFO
    if total:
        share = events / total
        if share >= 0.10 or (dropped and share >= 0.01):
            return Severity.CRITICAL
        return Severity.WARNING
    return Severity.CRITICAL if events >= 1_000 else Severity.WARNING


def share(events: int, total: int | None) -> float | None:
    return round(events / total, 4) if total else None


def late_s(evidence: Evidence) -> int | None:
    """The job's late tolerance in seconds (default 5 s when unknown; ``None`` = unlimited)."""
    if evidence.policy is None:
        return DEFAULT_LATE_S
    late = evidence.policy.late_arrival_ns
    return None if late is None else late // SECOND


def known_late_s(evidence: Evidence) -> int | None:
    """The job's late tolerance in seconds when it is given and finite, else ``None``."""
    return None if evidence.policy is None else late_s(evidence)


def ooo_s(evidence: Evidence) -> int:
    """The job's out-of-order tolerance in seconds (0, ASA's default, when unknown)."""
    return 0 if evidence.policy is None else evidence.policy.out_of_order_ns // SECOND


def dropping(evidence: Evidence) -> bool:
    return evidence.policy is not None and evidence.policy.action.value == "drop"


def lateness_evidence(stats: KindStats, sign: float = 1.0) -> dict[str, Any]:
    """The median, 95th and 99.9th percentiles and largest value of ``sign`` × lateness
    (``sign`` −1: how early, for early events), each taken on the values as the evidence
    states them, so that the 95th percentile of how early is of the earliest events; the
    kind's far-off application times (``KindStats.far_off``) are named apart, never in the
    figures."""
    values = sign * stats.lateness
    points = {
        name: weighted_quantile(values, stats.weights, q)
        for name, q in (("p50", 0.5), ("p95", 0.95), ("p99_9", 0.999))
    }
    out: dict[str, Any] = {
        f"{name}_seconds": None if v is None else round(v, 3) for name, v in points.items()
    }
    if values.size:
        out["max_seconds"] = round(float(values.max()), 3)
    if stats.exact:
        out["from"] = "exact (capture)"
    elif stats.lateness.size:
        out["from"] = "one example event per diagnostic record"
    else:
        out["from"] = NOT_MEASURED
    if stats.far_off:
        out["far_off"] = stats.far_off
    return out


def counted(stats: KindStats) -> str:
    """``"1 event"``, ``"at least 1,234 events"`` (some records named no count)."""
    return plural(stats.events, "event", minimum=bool(stats.unknown_counts))


def common(stats: KindStats, total: int | None) -> dict[str, Any]:
    return {
        "events": stats.events,
        **(
            {"events_are_a_minimum": True, "records_without_count": stats.unknown_counts}
            if stats.unknown_counts
            else {}
        ),
        **({"records": stats.records} if stats.records else {}),
        "share_of_events": share(stats.events, total),
        "partitions": {str(k): v for k, v in sorted(stats.partitions.items())},
        **({"events_per_minute": stats.per_minute} if stats.per_minute else {}),
        **({"top_keys": dict(list(stats.keys.items())[:5])} if stats.keys else {}),
    }


def over_suggestion(evidence: Evidence) -> Suggestion | None:
    good = [k for k in evidence.key_analysis if k.get("good")]
    if not good:
        return None
    policy = evidence.policy
    return snippets.timestamp_by_over(
        policy.timestamp_by if policy else None,
        (good[0]["column"],),
        multi_partition=len(evidence.partition_events) > 1,
    )
