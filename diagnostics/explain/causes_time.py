"""Detectors for the time-handling causes: late, historical, early, out of order, invalid
timestamps, a too-loose tolerance and CTI violations. Each reads :class:`Evidence` and returns
a :class:`Finding` or ``None``; none reads a clock or a file.

Recommended tolerances (docs/explain.md): the weighted p99.9 of the observed lateness (or
disorder) of the events the rule flags, rounded up to a whole second. With a capture this is
exact, so the value covers ≥ 99.9 % of them and is ≤ 2 × p99.9 whenever p99.9 ≥ 1 s; from
logs alone it is the largest example lateness (one example per record), a lower bound.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from diagnostics.durations import SECOND
from diagnostics.explain import snippets
from diagnostics.explain.evidence import Evidence, KindStats
from diagnostics.explain.model import Cause, Finding, Impact, Suggestion
from diagnostics.explain.readable import plural, verb
from diagnostics.explain.sources import CTI, EVENT_ORDERING, RULES, TIME_HANDLING, TIMESTAMP_BY
from diagnostics.kinds import ErrorKind, Severity

#: Lateness beyond a day is not a sender delay but old data pushed through a live job.
HISTORICAL_S = 86_400.0
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


def _share(events: int, total: int | None) -> float | None:
    return round(events / total, 4) if total else None


def _late_s(evidence: Evidence) -> int | None:
    """The job's late tolerance in seconds (default 5 s when unknown; ``None`` = unlimited)."""
    if evidence.policy is None:
        return DEFAULT_LATE_S
    late = evidence.policy.late_arrival_ns
    return None if late is None else late // SECOND


def _known_late_s(evidence: Evidence) -> int | None:
    """The job's late tolerance in seconds when it is given and finite, else ``None``."""
    return None if evidence.policy is None else _late_s(evidence)


def _ooo_s(evidence: Evidence) -> int:
    """The job's out-of-order tolerance in seconds (0, ASA's default, when unknown)."""
    return 0 if evidence.policy is None else evidence.policy.out_of_order_ns // SECOND


def _dropping(evidence: Evidence) -> bool:
    return evidence.policy is not None and evidence.policy.action.value == "drop"


def _lateness_evidence(stats: KindStats, sign: float = 1.0) -> dict[str, Any]:
    points = {
        name: stats.quantile(q) for name, q in (("p50", 0.5), ("p95", 0.95), ("p99_9", 0.999))
    }
    out: dict[str, Any] = {
        f"{name}_seconds": None if v is None else round(sign * v, 3) for name, v in points.items()
    }
    if stats.lateness.size:
        out["max_seconds"] = round(float(max(sign * stats.lateness)), 3)
    if stats.exact:
        out["from"] = "exact (capture)"
    elif stats.lateness.size:
        out["from"] = "one example event per diagnostic record"
    else:
        out["from"] = NOT_MEASURED
    return out


def _counted(stats: KindStats) -> str:
    """``"1 event"``, ``"at least 1,234 events"`` (some records named no count)."""
    return plural(stats.events, "event", minimum=bool(stats.unknown_counts))


def _common(stats: KindStats, total: int | None) -> dict[str, Any]:
    return {
        "events": stats.events,
        **(
            {"events_are_a_minimum": True, "records_without_count": stats.unknown_counts}
            if stats.unknown_counts
            else {}
        ),
        **({"records": stats.records} if stats.records else {}),
        "share_of_events": _share(stats.events, total),
        "partitions": {str(k): v for k, v in sorted(stats.partitions.items())},
        **({"events_per_minute": stats.per_minute} if stats.per_minute else {}),
        **({"top_keys": dict(list(stats.keys.items())[:5])} if stats.keys else {}),
    }


def _historical_share(stats: KindStats) -> float:
    if not stats.lateness.size or not stats.weights.sum():
        return 0.0
    return float(stats.weights[stats.lateness > HISTORICAL_S].sum() / stats.weights.sum())


def historical_replay(evidence: Evidence) -> Finding | None:
    """Most late events are more than a day late: history replayed through a live job."""
    stats = evidence.stats(ErrorKind.LATE)
    if stats is None or _historical_share(stats) < 0.5:
        return None
    events = round(stats.events * _historical_share(stats))
    days = (stats.quantile(0.5) or 0.0) / 86_400
    return Finding(
        cause=Cause.HISTORICAL_REPLAY,
        severity=Severity.CRITICAL,
        title="Old data replayed through a live job: events are about "
        f"{plural(round(days), 'day')} late",
        explanation=(
            "An event whose application time is earlier than its arrival time minus the late "
            "arrival tolerance is a LateInputEvent and is adjusted to arrival − tolerance or "
            f"dropped ({EVENT_ORDERING}). These events are days late, beyond ASA's largest finite "
            "tolerance of 20 days: this is a backfill of history, not slow senders, and "
            "no tolerance on the live job both keeps them and keeps live output timely."
        ),
        evidence={**_common(stats, evidence.total_events), "lateness": _lateness_evidence(stats)},
        impact={
            "events_affected": events,
            "delay_seconds": 0.0,
            "effect": "their System.Timestamp is moved by days (Adjust) or they are lost (Drop)",
        },
        suggestions=(
            snippets.separate_replay_job(_known_late_s(evidence)),
            snippets.backfill_late_tolerance(_known_late_s(evidence)),
        ),
        confidence=0.9 if stats.exact else 0.8,
    )


def _over_suggestion(evidence: Evidence) -> Suggestion | None:
    good = [k for k in evidence.key_analysis if k.get("good")]
    if not good:
        return None
    policy = evidence.policy
    return snippets.timestamp_by_over(
        policy.timestamp_by if policy else None,
        (good[0]["column"],),
        multi_partition=len(evidence.partition_events) > 1,
    )


def late_arrivals(evidence: Evidence) -> Finding | None:
    """Events later than the late tolerance, when most of them are not historical."""
    stats = evidence.stats(ErrorKind.LATE)
    if stats is None or _historical_share(stats) >= 0.5:
        return None
    current = _late_s(evidence)
    basis = (
        stats.quantile(0.999)
        if stats.exact
        else (float(stats.lateness.max()) if stats.lateness.size else None)
    )
    suggestions: list[Suggestion] = []
    value: int | None = None
    if basis is not None:
        value = snippets.whole_seconds(basis)
        suggestions.append(snippets.late_tolerance(value))
        over = _over_suggestion(evidence)
        if over is not None:
            suggestions.append(over)
        if _ooo_s(evidence) < value:
            suggestions.append(snippets.ooo_tolerance(value))
    else:  # no example event: the lateness is unknown, so is the tolerance that covers it
        suggestions.append(
            snippets.measure_lateness(evidence.policy.timestamp_by if evidence.policy else None)
        )
    ooo = evidence.count(ErrorKind.OUT_OF_ORDER)
    lateness = _lateness_evidence(stats)
    impact: Impact = {"events_affected": stats.events, "delay_seconds": 0.0}
    if value is not None:  # unlimited now: lowering it to the suggestion adds no delay
        impact["fix_adds_output_delay_seconds"] = 0 if current is None else max(value - current, 0)
    if value is not None and stats.lateness.size:
        lateness["share_covered_by_suggestion"] = round(stats.covered(value) or 0.0, 4)
    return Finding(
        cause=Cause.LATE_ARRIVALS,
        severity=severity_for(stats.events, evidence.total_events, dropped=_dropping(evidence)),
        title=f"{_counted(stats)} arrived later than the late-arrival tolerance"
        + (f" ({current} s)" if current is not None else ""),
        explanation=(
            "An event whose application time is earlier than arrival time − late arrival "
            "tolerance is a LateInputEvent: Adjust moves its System.Timestamp to arrival − "
            f"tolerance, Drop discards it ({EVENT_ORDERING}). "
            + (
                "The suggested tolerance is the observed lateness's p99.9 rounded up to a second. "
                if value is not None
                else "These records carry no example event, so how late the events were is "
                "not known and no tolerance can be sized from them: measure it first (below). "
            )
            + "Raising only the late tolerance "
            "lets these events in behind punctual senders, where they become out of order, so "
            "the out-of-order tolerance is raised with it (the effective out-of-order tolerance "
            "is the smaller of the two), or, better where a sender column is in order within "
            "itself, each sender gets its own timeline with OVER (no out-of-order adjustment, "
            f"and punctual senders are not held back; {TIMESTAMP_BY}). The late tolerance "
            "makes a silent timeline wait that much longer: the impact below shows the output "
            "delay the fix adds without OVER, and orderdoc whatif weighs it against the events "
            "kept."
        ),
        evidence={
            **_common(stats, evidence.total_events),
            "lateness": lateness,
            "current_late_tolerance_seconds": current,
            "out_of_order_events_alongside": ooo,
        },
        impact=impact,
        suggestions=tuple(suggestions),
        confidence=0.9 if stats.exact else 0.7,
    )


def early_arrivals(evidence: Evidence) -> Finding | None:
    """Events more than 5 minutes ahead of their arrival: sender clocks run fast."""
    stats = evidence.stats(ErrorKind.EARLY)
    if stats is None:
        return None
    offset = stats.quantile(0.5)
    keys = list(stats.keys)[:5]
    return Finding(
        cause=Cause.EARLY_ARRIVALS,
        severity=severity_for(stats.events, evidence.total_events, dropped=True),
        title=f"{_counted(stats)} {verb(stats.events, 'was', 'were')} dropped for arriving "
        "more than 5 minutes early",
        explanation=(
            "An event whose application time is more than 5 minutes after its arrival time is "
            "an EarlyInputEvent and is dropped (the early window is fixed in ASA; "
            f"{TIME_HANDLING}). An event cannot really arrive before it happens: the sender's "
            "clock is ahead."
        ),
        evidence={
            **_common(stats, evidence.total_events),
            "early_by": _lateness_evidence(stats, sign=-1.0),
        },
        impact={"events_affected": stats.events, "delay_seconds": 0.0, "dropped": stats.events},
        suggestions=(snippets.fix_clocks(keys, None if offset is None else -offset),),
        confidence=0.9 if stats.exact else 0.8,
    )


def out_of_order(evidence: Evidence) -> Finding | None:
    """Out-of-order events beyond the out-of-order tolerance."""
    stats = evidence.stats(ErrorKind.OUT_OF_ORDER)
    if stats is None:
        return None
    late = evidence.count(ErrorKind.LATE)
    current_late = _late_s(evidence)
    suggestions: list[Suggestion] = []
    over = _over_suggestion(evidence)
    if over is not None:
        suggestions.append(over)
    measured = stats.exact and bool(stats.lateness.size)
    if measured:
        value = snippets.whole_seconds(stats.quantile(0.999) or 0.0)
    else:
        value = current_late if current_late is not None else DEFAULT_LATE_S
    if measured or _ooo_s(evidence) < value:
        suggestions.append(snippets.ooo_tolerance(value))
    else:  # already as large as the late tolerance allows: only a capture can say more
        suggestions.append(
            snippets.measure_disorder(evidence.policy.timestamp_by if evidence.policy else None)
        )
    if current_late is not None and value > current_late:
        suggestions.append(snippets.late_tolerance(value))
    evidence_out: dict[str, Any] = {**_common(stats, evidence.total_events)}
    if stats.exact and stats.lateness.size:
        evidence_out["disorder"] = _lateness_evidence(stats)
    evidence_out["current_out_of_order_tolerance_seconds"] = _ooo_s(evidence)
    evidence_out["late_events_alongside"] = late
    evidence_out["over_key_analysis"] = evidence.key_analysis[:5]
    following = _share_following_late(evidence, stats)
    consequence = following is not None and following >= 0.5
    evidence_out["share_following_late_events"] = following
    impact: Impact = {
        "events_affected": stats.events,
        "delay_seconds": 0.0,
        "fix_adds_output_delay_seconds": 0 if over is not None else value,
    }
    if consequence:
        impact["consequence_of"] = Cause.LATE_ARRIVALS.value
    return Finding(
        cause=Cause.OUT_OF_ORDER,
        severity=severity_for(stats.events, evidence.total_events, dropped=_dropping(evidence)),
        title=f"{_counted(stats)} {verb(stats.events, 'was', 'were')} out of order beyond "
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
                "is the late tolerance, the most an out-of-order tolerance can do."
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
    return Finding(
        cause=Cause.INVALID_TIMESTAMPS,
        severity=severity_for(bad, evidence.total_events, dropped=True),
        title=f"{plural(bad, 'event')} had no usable timestamp or key and "
        f"{verb(bad, 'was', 'were')} dropped",
        explanation=(
            "An event whose TIMESTAMP BY value is missing or unparsable is dropped with "
            "InvalidInputTimeStamp; with OVER, a missing key gives InvalidInputTimeStampKey "
            f"({RULES})."
        ),
        evidence={
            "invalid_timestamp": evidence.count(ErrorKind.INVALID_TIMESTAMP),
            "invalid_key": evidence.count(ErrorKind.INVALID_KEY),
            "share_of_events": _share(bad, evidence.total_events),
            "partitions": parts,
        },
        impact={"events_affected": bad, "delay_seconds": 0.0, "dropped": bad},
        suggestions=(snippets.fix_payload(column),),
        confidence=0.95,
    )


def tolerance_too_loose(evidence: Evidence) -> Finding | None:
    """A large late tolerance that adds output delay and catches almost nothing."""
    current = _late_s(evidence) if evidence.policy is not None else None
    lateness = evidence.arrival_lateness
    if current is None or current < 60 or lateness is None or not lateness.size:
        return None
    p999 = float(sorted_quantile(lateness, 0.999))
    value = snippets.whole_seconds(max(p999, 1.0))
    if current < 4 * value or current - value < 30:
        return None
    caught = int(((lateness > value) & (lateness <= current)).sum())
    return Finding(
        cause=Cause.TOLERANCE_TOO_LOOSE,
        severity=Severity.WARNING,
        title=f"The late-arrival tolerance ({current} s) adds output delay but catches almost nothing",
        explanation=(
            "A timeline's watermark is max(largest time − out-of-order tolerance, processing "
            f"time − late tolerance) ({TIME_HANDLING}): a partition that waits for stragglers "
            f"holds "
            "output back by up to the late tolerance. 99.9 % of the events arrived within "
            f"{value} s of their application time, so the rest of the tolerance only delays."
        ),
        evidence={
            "current_late_tolerance_seconds": current,
            "lateness_p99_9_seconds": round(p999, 3),
            "lateness_max_seconds": round(float(lateness.max()), 3),
            "events_between_suggestion_and_current": caught,
            "output_delay_seconds": evidence.output_delay,
        },
        impact={
            "events_affected": 0,
            "delay_seconds": float(current - value),
            "events_caught": caught,
        },
        suggestions=(snippets.late_tolerance(value),),
        confidence=0.8,
    )


def sorted_quantile(values: np.ndarray, q: float) -> float:
    """The ``q`` quantile (higher method) of a numpy array."""
    return float(np.quantile(values, q, method="higher"))


def cti_violations(evidence: Evidence) -> Finding | None:
    """StreamInsight CTI violations (CtiViolation records)."""
    stats = evidence.stats(ErrorKind.CTI_VIOLATION)
    if stats is None:
        return None
    lag = float(stats.lateness.max()) if stats.lateness.size else None
    return Finding(
        cause=Cause.CTI_VIOLATIONS,
        severity=severity_for(stats.events, evidence.total_events, dropped=True),
        title=f"{_counted(stats)} started before the latest CTI (CTI violations)",
        explanation=(
            "A CTI at c commits everything before c; an event starting before the latest CTI "
            f"is dropped or adjusted to the CTI by the AdvanceTimePolicy ({CTI}). A larger CTI "
            "delay (latest start − delay) leaves room for stragglers."
        ),
        evidence=_common(stats, evidence.total_events),
        impact={"events_affected": stats.events, "delay_seconds": 0.0},
        suggestions=(
            snippets.cti_delay(None if lag is None else float(snippets.whole_seconds(lag))),
        ),
        confidence=0.7,
    )
