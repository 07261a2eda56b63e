"""Detectors for a fleet's causes, one finding per group of senders
(:mod:`diagnostics.explain.sender_groups`): a batching gateway, slow clocks, fast clocks. Each
names the senders (and the gateway column, when one names them all) and has its own fix; the
late and early arrivals' findings keep the senders in no group
(:meth:`~diagnostics.explain.evidence.Evidence.rest`).
"""

from __future__ import annotations

import math
from typing import Any

from diagnostics.explain import snippets
from diagnostics.explain.evidence import Evidence
from diagnostics.explain.model import Cause, Finding, Impact, Suggestion, SuggestionKind
from diagnostics.explain.sender_groups import GroupKind, SenderGroup, compact
from diagnostics.explain.sources import EVENT_ORDERING, TIME_HANDLING, TIMESTAMP_BY
from diagnostics.explain.time_evidence import dropping, late_s, severity_for, share
from diagnostics.words import listed, plural, verb


def who(group: SenderGroup) -> str:
    """``20 senders (deviceId dev-040..dev-059)``."""
    return f"{plural(len(group.senders), 'sender')} ({group.column} {compact(group.senders)})"


def _gateway_words(group: SenderGroup) -> str:
    """``, all those of gatewayId gw-02,`` (the group is every sender of those values), or
    nothing."""
    if group.gateway is None:
        return ""
    column, values = group.gateway
    return f", all those of {column} {listed(list(values))},"


def _evidence(group: SenderGroup, evidence: Evidence) -> dict[str, Any]:
    out: dict[str, Any] = {
        "sender_column": group.column,
        "senders": list(group.senders),
    }
    if group.gateway is not None:
        out["gateway"] = {group.gateway[0]: list(group.gateway[1])}
    out |= {
        "events": group.events,
        "share_of_events": share(group.events, evidence.total_events),
        "late_events": group.late,
        "early_events": group.early,
        "out_of_order_events": group.out_of_order,
    }
    if group.period_s is not None:
        out["upload_period_seconds"] = group.period_s
        if group.bursts is not None:
            out["uploads_seen"] = group.bursts
    else:
        out["clock_offset_seconds"] = group.offset_s
        out["spread_seconds"] = group.spread_s
    out["typical_sender_lateness_seconds"] = group.typical_s
    if group.lateness:
        key = "early_by" if group.kind is GroupKind.FAST_CLOCKS else "lateness"
        out[key] = {**group.lateness, "from": "exact (capture)"}
    out["partitions"] = {str(p): n for p, n in sorted(group.partitions.items())}
    return out


def _impact(group: SenderGroup, evidence: Evidence, value: int | None) -> Impact:
    impact: Impact = {"events_affected": group.affected, "delay_seconds": 0.0}
    if group.kind is GroupKind.FAST_CLOCKS:
        impact["dropped"] = group.early
    elif dropping(evidence):
        impact["dropped"] = group.late
    if value is not None:
        current = late_s(evidence)
        impact["fix_adds_release_delay_seconds"] = 0 if current is None else max(value - current, 0)
    return impact


#: The cause of each kind of group.
_CAUSES = {
    GroupKind.BATCHING: Cause.BATCHING_SENDERS,
    GroupKind.SLOW_CLOCKS: Cause.SLOW_CLOCKS,
    GroupKind.FAST_CLOCKS: Cause.FAST_CLOCKS,
}


def _finding(
    group: SenderGroup,
    evidence: Evidence,
    value: int | None,
    suggestions: tuple[Suggestion, ...],
    *,
    title: str,
    explanation: str,
) -> Finding:
    """A group's finding: its severity, evidence and impact from the group, ``value``: the
    late tolerance it suggests (``None``: none)."""
    fast = group.kind is GroupKind.FAST_CLOCKS
    return Finding(
        cause=_CAUSES[group.kind],
        severity=severity_for(
            group.affected, evidence.total_events, dropped=fast or dropping(evidence)
        ),
        title=title,
        explanation=explanation,
        evidence=_evidence(group, evidence),
        impact=_impact(group, evidence, value),
        suggestions=suggestions,
        confidence=0.9 if fast else 0.85,
    )


def _late_words(evidence: Evidence) -> str:
    current = late_s(evidence)
    return "the late-arrival tolerance" + ("" if current is None else f" ({current} s)")


def batching(group: SenderGroup, evidence: Evidence) -> Finding:
    """A gateway that uploads its senders' readings in batches: a sawtooth of lateness."""
    period = group.period_s or 0.0
    p999 = group.lateness.get("p99_9_seconds") or period
    value = max(math.ceil(period), snippets.whole_seconds(p999))
    policy = evidence.policy
    gateway = (
        f"{group.gateway[0]} {listed(list(group.gateway[1]))}"
        if group.gateway
        else "the gateway or client of these senders"
    )
    flush = Suggestion(
        SuggestionKind.FLUSH_MORE_OFTEN,
        None,
        f"Make {gateway} upload more often: each reading waits up to {period:g} s for the "
        "next upload, and that wait is its lateness (a shorter period needs a smaller "
        "late-arrival tolerance)",
    )
    # the settings first (a tolerance of at least the period, OVER the device key), then
    # the change at the senders
    suggestions: tuple[Suggestion, ...] = (
        snippets.late_tolerance(value),
        snippets.timestamp_by_over(
            policy.timestamp_by if policy else None,
            (group.column,),
            multi_partition=len(evidence.partition_events) > 1,
        ),
        flush,
    )
    return _finding(
        group,
        evidence,
        value,
        suggestions,
        title=f"{who(group)}{_gateway_words(group)} upload in batches every {period:g} s: "
        f"{plural(group.late, 'event')} arrived later than {_late_words(evidence)}",
        explanation=(
            f"The arrivals of these senders come in bursts every {period:g} s, and their "
            f"lateness is a sawtooth from about 0 to {period:g} s: each reading waits in a "
            "gateway or client until the next upload. An event whose application time is "
            "earlier than arrival time − late arrival tolerance is a LateInputEvent, adjusted "
            f"to arrival − tolerance or dropped ({EVENT_ORDERING}); adjusted, it lands behind "
            "punctual senders of its partition and puts them out of order. The fix: give each "
            f"sender its own timeline with OVER {group.column} ({TIMESTAMP_BY}) and a "
            f"late-arrival tolerance of at least the period ({value} s), or upload more often."
        ),
    )


def slow_clocks(group: SenderGroup, evidence: Evidence) -> Finding:
    """Senders whose clocks run behind by a constant: late by that much, every event."""
    offset = group.offset_s
    p999 = group.lateness.get("p99_9_seconds") or offset
    value = snippets.whole_seconds(p999)
    clocks = Suggestion(
        SuggestionKind.FIX_SENDER_CLOCKS,
        None,
        f"Synchronise the clocks of {who(group)} with NTP: they run about {offset:.0f} s "
        "behind, so every event of theirs arrives that much late",
    )
    return _finding(
        group,
        evidence,
        value,
        (clocks, snippets.late_tolerance(value)),
        title=f"The clocks of {who(group)}{_gateway_words(group)} run about {offset:.0f} s "
        f"behind: {plural(group.late, 'event')} arrived later than {_late_words(evidence)}",
        explanation=(
            f"These senders' events arrive about {offset:.0f} s after their application time, "
            f"every one (spread {group.spread_s:g} s), while the typical sender's arrive "
            f"{group.typical_s:g} s after it: their clocks are behind, by a constant. An event "
            "whose application time is earlier than arrival time − late arrival tolerance is "
            f"a LateInputEvent, adjusted or dropped ({EVENT_ORDERING}). The fix: synchronise "
            f"their clocks (NTP), or a late-arrival tolerance that covers them ({value} s)."
        ),
    )


def fast_clocks(group: SenderGroup, evidence: Evidence) -> Finding:
    """Senders whose clocks run ahead by a constant beyond the 5-minute early window."""
    ahead = -group.offset_s
    clocks = Suggestion(
        SuggestionKind.FIX_SENDER_CLOCKS,
        None,
        f"Synchronise the clocks of {who(group)} with NTP: they run about {ahead:.0f} s "
        "ahead; ASA's 5-minute early-arrival window is fixed, so no tolerance setting keeps "
        "these events",
    )
    return _finding(
        group,
        evidence,
        None,
        (clocks,),
        title=f"The clocks of {who(group)}{_gateway_words(group)} run about {ahead:.0f} s "
        f"ahead: {plural(group.early, 'event')} {verb(group.early, 'was', 'were')} dropped "
        "as early",
        explanation=(
            f"These senders' events carry application times about {ahead:.0f} s after they "
            f"arrive, every one (spread {group.spread_s:g} s): their clocks are ahead, by a "
            "constant. An event whose application time is more than 5 minutes after its "
            f"arrival time is an EarlyInputEvent and is dropped; the early window is fixed in "
            f"ASA ({TIME_HANDLING}), so no tolerance keeps them. The fix: synchronise their "
            "clocks (NTP)."
        ),
    )


_DETECT = {
    GroupKind.BATCHING: batching,
    GroupKind.SLOW_CLOCKS: slow_clocks,
    GroupKind.FAST_CLOCKS: fast_clocks,
}


def fleet_findings(evidence: Evidence) -> list[Finding]:
    """One finding per sender group that costs events (late, or early for fast clocks)."""
    return [
        _DETECT[group.kind](group, evidence)
        for group in evidence.sender_groups
        if group.affected > 0
    ]
