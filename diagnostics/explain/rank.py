"""Running every detector and ordering the findings by importance.

Order: severity (critical first), then impact score (events adjusted or dropped plus seconds
of release delay added), events, delay, confidence, cause name and finally the finding's JSON
(a total, deterministic order). A finding that is a consequence of another present finding
of the same job (``impact["consequence_of"]``) is placed right after it, once.
"""

from __future__ import annotations

import json
from dataclasses import replace

from diagnostics.explain import causes_data as data
from diagnostics.explain import causes_order as order
from diagnostics.explain import causes_partitions as parts
from diagnostics.explain import causes_time as times
from diagnostics.explain.assumed import ASSUMED_KEY, TOLERANCE_KEYS
from diagnostics.explain.evidence import Evidence
from diagnostics.explain.fleet_causes import fleet_findings
from diagnostics.explain.model import Cause, Finding

DETECTORS = (
    times.historical_replay,
    times.late_arrivals,
    times.early_arrivals,
    order.out_of_order,
    order.invalid_timestamps,
    times.tolerance_too_loose,
    order.cti_violations,
    parts.idle_partition,
    parts.hot_partition,
    data.input_data_errors,
    data.output_data_errors,
    data.unknown_data_errors,
    data.watermark_delay,
)


def _key(f: Finding) -> tuple:
    """Severity, impact score, events, delay, confidence, then the finding's JSON (total)."""
    events = float(f.impact.get("events_affected", 0))
    delay = float(f.impact.get("delay_seconds", 0.0))
    text = json.dumps(f.to_dict(), sort_keys=True, default=str)
    return (-f.severity.rank, -f.score, -events, -delay, -f.confidence, f.cause.value, text)


def _order(findings: list[Finding]) -> list[Finding]:
    return sorted(findings, key=_key)


def rank(findings: list[Finding]) -> list[Finding]:
    """``findings`` most important first; a finding whose ``impact["consequence_of"]`` names
    the cause of another present finding of the same job comes right after that finding
    (each finding exactly once: a folder of several jobs has several late-arrival findings,
    and each out-of-order finding follows its own job's)."""
    present = {(f.job, f.cause.value) for f in findings}

    def root_of(f: Finding) -> tuple[str | None, object] | None:
        key = (f.job, f.impact.get("consequence_of"))
        return key if key in present else None

    follows = [f for f in findings if root_of(f) is not None]
    roots = _order([f for f in findings if root_of(f) is None])
    ordered: list[Finding] = []
    for root in roots:
        ordered.append(root)
        ordered += _order([f for f in follows if root_of(f) == (root.job, root.cause.value)])
    placed = {id(f) for f in ordered}
    return ordered + _order([f for f in follows if id(f) not in placed])


def _idle_follows_skew(found: list[Finding]) -> list[Finding]:
    """Idle notices on the cold partitions of a skewed input follow from the skew."""
    hot = next((f for f in found if f.cause is Cause.HOT_PARTITION), None)
    if hot is None:
        return found
    out = []
    for f in found:
        idle = f.evidence.get("idle_partitions", []) if f.cause is Cause.IDLE_PARTITION else []
        if idle and hot.evidence["hot_partition"] not in idle:
            f = replace(
                f,
                impact={**f.impact, "consequence_of": Cause.HOT_PARTITION.value},
                explanation=f.explanation + " These partitions get few events because one "
                "partition gets most of them: the skew is the root cause.",
            )
        out.append(f)
    return out


#: The sender groups' causes whose late events put others out of order.
_LATE_GROUPS = (Cause.BATCHING_SENDERS, Cause.SLOW_CLOCKS)


def _follows_groups(found: list[Finding]) -> list[Finding]:
    """Out-of-order events that follow late events follow the sender group with the most late
    events when no late-arrivals finding is left (every late sender is in a group)."""
    causes = {f.cause for f in found}
    groups = [f for f in found if f.cause in _LATE_GROUPS]
    if Cause.LATE_ARRIVALS in causes or not groups:
        return found
    root = max(groups, key=lambda f: f.impact.get("events_affected", 0)).cause.value
    late = Cause.LATE_ARRIVALS.value
    return [
        replace(f, impact={**f.impact, "consequence_of": root})
        if f.impact.get("consequence_of") == late
        else f
        for f in found
    ]


def diagnose(evidence: Evidence) -> list[Finding]:
    """Every finding the evidence supports, ranked; a healthy job gets one info finding."""
    found = [f for f in (detect(evidence) for detect in DETECTORS) if f]
    found = _idle_follows_skew(_follows_groups(found + fleet_findings(evidence)))
    verdict = parts.healthy(evidence, found)
    findings = [*found, *([verdict] if verdict else [])]
    if evidence.policy is None:  # the tolerances shown are ASA's defaults: say so
        findings = [_assumed(f) for f in findings]
    return rank([replace(f, job=evidence.job) for f in findings])


def _assumed(finding: Finding) -> Finding:
    """``finding`` with its tolerances marked as assumed (:mod:`diagnostics.explain.assumed`)
    when its evidence shows one."""
    if not TOLERANCE_KEYS & set(finding.evidence):
        return finding
    return replace(finding, evidence={**finding.evidence, ASSUMED_KEY: True})
