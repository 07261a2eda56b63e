"""Detectors for the arrival-time causes: history replayed through a live job, late and
early arrivals, and a late tolerance too loose for the lateness observed. Each reads
:class:`Evidence` and returns a :class:`Finding` or ``None``; none reads a clock or a file.
The timeline causes (out of order, invalid timestamps, CTI violations) are in
:mod:`diagnostics.explain.causes_order`.

Recommended tolerances (docs/explain.md): the weighted p99.9 of the observed lateness (or
disorder) of the events the rule flags, rounded up to a whole second. With a capture this is
exact, so the value covers ≥ 99.9 % of them and is ≤ 2 × p99.9 whenever p99.9 ≥ 1 s; from
logs alone it is an estimate: the largest example lateness (one example event per record, not
every event) plus :data:`ESTIMATE_MARGIN`, said as one, with its basis.
"""

from __future__ import annotations

import numpy as np

from diagnostics.explain import snippets
from diagnostics.explain.assumed import ASSUMED_SUFFIX
from diagnostics.explain.evidence import Evidence
from diagnostics.explain.kind_stats import KindStats
from diagnostics.explain.model import Cause, Finding, Impact, Suggestion
from diagnostics.explain.sources import EVENT_ORDERING, TIME_HANDLING, TIMESTAMP_BY
from diagnostics.explain.time_evidence import (
    common,
    counted,
    dropping,
    known_late_s,
    late_s,
    lateness_evidence,
    ooo_s,
    over_suggestion,
    severity_for,
)
from diagnostics.kinds import ErrorKind, Severity
from diagnostics.words import plural, verb

#: Lateness beyond a day is not a sender delay but old data pushed through a live job.
HISTORICAL_S = 86_400.0


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
            "tolerance of 20 days 23:59:59: this is a backfill of history, not slow senders, and "
            "no tolerance on the live job both keeps them and keeps live output timely."
        ),
        evidence={**common(stats, evidence.total_events), "lateness": lateness_evidence(stats)},
        impact={
            "events_affected": events,
            "delay_seconds": 0.0,
            "effect": "their System.Timestamp is moved by days (Adjust) or they are lost (Drop)",
        },
        suggestions=(
            snippets.separate_replay_job(known_late_s(evidence)),
            snippets.backfill_late_tolerance(known_late_s(evidence)),
        ),
        confidence=0.9 if stats.exact else 0.8,
    )


#: How a capture's tolerance is sized when the finding sizes it on its own (the one
#: recommendation replaces it, and this sentence, when it runs: diagnostics.explain.recommended).
P999_SENTENCE = "The suggested tolerance is the observed lateness's p99.9 rounded up to a second. "
#: From logs alone, the margin added to the largest example lateness (the records carry one
#: example event each, so later events than the examples may have been counted).
ESTIMATE_MARGIN = 0.25


def _sized(stats: KindStats) -> int | None:
    """The late tolerance sized from the late events: the p99.9 with a capture, from logs
    the largest example plus :data:`ESTIMATE_MARGIN`; ``None`` without an example."""
    if stats.exact:
        basis = stats.quantile(0.999)
    elif stats.lateness.size:
        basis = float(stats.lateness.max()) * (1 + ESTIMATE_MARGIN)
    else:
        basis = None
    return None if basis is None else snippets.whole_seconds(basis)


def suggested_late_s(evidence: Evidence) -> int | None:
    """The late tolerance :func:`late_arrivals` suggests (``None``: it suggests none), so
    that a finding sized from the late tolerance says the same value."""
    stats = evidence.rest(ErrorKind.LATE)
    if stats is None or _historical_share(stats) >= 0.5:
        return None
    return _sized(stats)


def late_arrivals(evidence: Evidence) -> Finding | None:
    """Events later than the late tolerance, when most of them are not historical (those of
    the senders in no group, when the capture shows groups)."""
    stats = evidence.rest(ErrorKind.LATE)
    if stats is None or _historical_share(stats) >= 0.5:
        return None
    current = late_s(evidence)
    value = _sized(stats)
    suggestions: list[Suggestion] = []
    if value is not None:
        suggestions.append(snippets.late_tolerance(value))
        over = over_suggestion(evidence)
        if over is not None:
            suggestions.append(over)
        if ooo_s(evidence) < value:
            suggestions.append(snippets.ooo_tolerance(value))
    else:  # no example event: the lateness is unknown, so is the tolerance that covers it
        suggestions.append(
            snippets.measure_lateness(evidence.policy.timestamp_by if evidence.policy else None)
        )
    ooo = evidence.count(ErrorKind.OUT_OF_ORDER)
    lateness = lateness_evidence(stats)
    impact: Impact = {"events_affected": stats.events, "delay_seconds": 0.0}
    if value is not None:  # unlimited now: lowering it to the suggestion adds no delay
        impact["fix_adds_release_delay_seconds"] = 0 if current is None else max(value - current, 0)
    if value is not None and stats.lateness.size and stats.exact:
        lateness["share_covered_by_suggestion"] = round(stats.covered(value) or 0.0, 4)
    elif value is not None and stats.lateness.size:
        lateness["estimate"] = (
            f"from {plural(stats.lateness.size, 'example event')}, the largest plus "
            f"{ESTIMATE_MARGIN:.0%}; a capture of the input gives the exact value"
        )
    return Finding(
        cause=Cause.LATE_ARRIVALS,
        severity=severity_for(stats.events, evidence.total_events, dropped=dropping(evidence)),
        title=f"{counted(stats)} arrived later than the late-arrival tolerance"
        + (
            f" ({current} s{ASSUMED_SUFFIX if evidence.policy is None else ''})"
            if current is not None
            else ""
        ),
        explanation=(
            "An event whose application time is earlier than arrival time − late arrival "
            "tolerance is a LateInputEvent: Adjust moves its System.Timestamp to arrival − "
            f"tolerance, Drop discards it ({EVENT_ORDERING}). "
            + (
                P999_SENTENCE
                if value is not None and stats.exact
                else f"The suggested tolerance is an estimate: {estimate_words(stats.lateness.size)}. "
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
            "makes a silent timeline wait that much longer: the impact below shows the release "
            "delay the fix adds without OVER, and a what-if sweep of the capture weighs it "
            "against the events kept."
        ),
        evidence={
            **common(stats, evidence.total_events),
            "lateness": lateness,
            "current_late_tolerance_seconds": current,
            "out_of_order_events_alongside": ooo,
        },
        impact=impact,
        suggestions=tuple(suggestions),
        confidence=0.9 if stats.exact else 0.7,
    )


def early_arrivals(evidence: Evidence) -> Finding | None:
    """Events more than 5 minutes ahead of their arrival: sender clocks run fast (those of
    the senders in no group, when the capture shows groups)."""
    stats = evidence.rest(ErrorKind.EARLY)
    if stats is None:
        return None
    offset = stats.quantile(0.5)
    keys = list(stats.keys)[:5]
    return Finding(
        cause=Cause.EARLY_ARRIVALS,
        severity=severity_for(stats.events, evidence.total_events, dropped=True),
        title=f"{counted(stats)} {verb(stats.events, 'was', 'were')} dropped for arriving "
        "more than 5 minutes early",
        explanation=(
            "An event whose application time is more than 5 minutes after its arrival time is "
            "an EarlyInputEvent and is dropped (the early window is fixed in ASA; "
            f"{TIME_HANDLING}). An event cannot really arrive before it happens: the sender's "
            "clock is ahead."
        ),
        evidence={
            **common(stats, evidence.total_events),
            "early_by": lateness_evidence(stats, sign=-1.0),
        },
        impact={"events_affected": stats.events, "delay_seconds": 0.0, "dropped": stats.events},
        suggestions=(snippets.fix_clocks(keys, None if offset is None else -offset),),
        confidence=0.9 if stats.exact else 0.8,
    )


def tolerance_too_loose(evidence: Evidence) -> Finding | None:
    """A large late tolerance that adds release delay and catches almost nothing."""
    current = late_s(evidence) if evidence.policy is not None else None
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
        title=f"The late-arrival tolerance ({current} s) adds release delay but catches almost nothing",
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
            "release_delay_seconds": evidence.release_delay,
        },
        impact={
            "events_affected": 0,
            "delay_seconds": float(current - value),
            "events_caught": caught,
        },
        suggestions=(snippets.late_tolerance(value),),
        confidence=0.8,
    )


def estimate_words(examples: int) -> str:
    """How a tolerance is estimated from logs alone, with its basis."""
    return (
        f"from {plural(examples, 'example event')} in the log records (one per record, not every "
        f"event): the largest example lateness plus a {ESTIMATE_MARGIN:.0%} margin, rounded up "
        "to a second; a capture of the input gives the exact value"
    )


def sorted_quantile(values: np.ndarray, q: float) -> float:
    """The ``q`` quantile (higher method) of a numpy array."""
    return float(np.quantile(values, q, method="higher"))
