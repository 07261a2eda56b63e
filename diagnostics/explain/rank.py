"""Running every detector and ordering the findings by importance.

Order: severity (critical first), then impact score (events adjusted or dropped plus seconds
of output delay added), then confidence, then cause name (a total, deterministic order).
"""

from __future__ import annotations

from diagnostics.explain import causes_partitions as parts
from diagnostics.explain import causes_time as times
from diagnostics.explain.evidence import Evidence
from diagnostics.explain.model import Finding

DETECTORS = (
    times.historical_replay,
    times.late_arrivals,
    times.early_arrivals,
    times.out_of_order,
    times.invalid_timestamps,
    times.tolerance_too_loose,
    times.cti_violations,
    parts.idle_partition,
    parts.hot_partition,
)


def rank(findings: list[Finding]) -> list[Finding]:
    """``findings`` most important first."""
    return sorted(
        findings,
        key=lambda f: (-f.severity.rank, -f.score, -f.confidence, f.cause.value),
    )


def diagnose(evidence: Evidence) -> list[Finding]:
    """Every finding the evidence supports, ranked; a healthy job gets one info finding."""
    found = [f for f in (detect(evidence) for detect in DETECTORS) if f is not None]
    verdict = parts.healthy(evidence, found)
    return rank([*found, *([verdict] if verdict else [])])
