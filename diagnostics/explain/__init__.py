"""Explanations and recommendations: why events were adjusted, dropped or delayed, and the
exact change to make (``orderdoc explain``; docs/explain.md).

Public API (the app builds on these names)::

    report = explain(agg_dir, events=frame, policy=policy, columns=columns)
    report.findings[0].cause, report.to_dict()  # {"findings": [...]}
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import polars as pl

from diagnostics.engine.columns import EventColumns
from diagnostics.engine.policy import OrderingPolicy
from diagnostics.errors import Setting, UsageError
from diagnostics.explain.capture import from_capture
from diagnostics.explain.evidence import Evidence, from_agg_dir, merge
from diagnostics.explain.model import Cause, Finding, Report, Suggestion, SuggestionKind
from diagnostics.explain.rank import diagnose, rank
from diagnostics.explain.render import render

__all__ = [
    "Cause",
    "Evidence",
    "Finding",
    "Report",
    "Suggestion",
    "SuggestionKind",
    "diagnose",
    "explain",
    "rank",
    "render",
]


def explain(
    agg_dir: Path | None,
    *,
    events: pl.DataFrame | None = None,
    policy: OrderingPolicy | None = None,
    columns: EventColumns | None = None,
    partitions: Sequence[int] | None = None,
    job: str | None = None,
) -> Report:
    """Findings from an aggregate folder and/or a capture, most important first.

    With ``events`` the capture is replayed under ``policy`` (which needs ``timestamp_by``)
    and its exact facts replace the logs' estimates; idle notices and CTI records still come
    from the logs. At least one source is needed. ``job`` restricts the aggregate tables to
    one job (an aggregate folder may hold several).
    """
    if agg_dir is None and events is None:
        msg = "explain needs an aggregate folder or an event capture"
        raise UsageError(msg, Setting.CAPTURE)
    evidence: Evidence | None = None
    if agg_dir is not None:
        evidence = from_agg_dir(Path(agg_dir), policy, job)
    if events is not None:
        captured = from_capture(
            events, policy or OrderingPolicy(), columns=columns, partitions=partitions
        )
        evidence = captured if evidence is None else merge(evidence, captured)
    assert evidence is not None
    return Report(
        findings=diagnose(evidence),
        sources=evidence.sources,
        policy=policy.describe() if policy else None,
    )
