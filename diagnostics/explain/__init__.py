"""Explanations and recommendations: why events were adjusted, dropped or delayed, and the
exact change to make (``orderdoc explain``; docs/explain.md).

Public API (the app builds on these names)::

    report = explain(agg_dir, events=frame, policy=policy, columns=columns)
    report.findings[0].cause, report.to_dict()  # {"findings": [...]}
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import polars as pl

from diagnostics.durations import format_duration
from diagnostics.engine.columns import EventColumns
from diagnostics.engine.policy import OrderingPolicy
from diagnostics.errors import Setting, UsageError
from diagnostics.explain.capture import Replayed, from_capture
from diagnostics.explain.evidence import Evidence, from_agg_dir, jobs_in, merge
from diagnostics.explain.model import (
    Cause,
    Finding,
    Impact,
    Report,
    Senders,
    Suggestion,
    SuggestionKind,
)
from diagnostics.explain.rank import diagnose, rank
from diagnostics.explain.render import render
from diagnostics.whatif.evaluate import Evaluator

__all__ = [
    "Cause",
    "Evidence",
    "Finding",
    "Impact",
    "Replayed",
    "Report",
    "Senders",
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
    replayed: Replayed | None = None,
    evaluator: Evaluator | None = None,
) -> Report:
    """Findings from an aggregate folder and/or a capture, most important first.

    With ``events`` the capture is replayed under ``policy`` (which needs ``timestamp_by``)
    and its exact facts replace the logs' estimates; idle notices and CTI records still come
    from the logs. At least one source is needed. ``job`` restricts the aggregate tables to
    one job (an aggregate folder may hold several). ``replayed``: the capture's replay made
    elsewhere (``explain --events --spark``); ``evaluator``: who runs the engine on the
    recommender's settings (default: here).
    """
    if agg_dir is None and events is None:
        msg = "explain needs an aggregate folder or an event capture"
        raise UsageError(msg, Setting.CAPTURE)
    evidence: Evidence | None = None
    if agg_dir is not None and job is not None:
        _check_job(Path(agg_dir), job)
    if agg_dir is not None and job is None and events is None:
        names = jobs_in(Path(agg_dir))
        if len(names) > 1:  # findings per job (records naming no job form their own group)
            return _per_job(Path(agg_dir), names, policy)
        job_name = names[0] if names else None
        evidence = replace(from_agg_dir(Path(agg_dir), policy), job=job_name)
    elif agg_dir is not None:
        evidence = from_agg_dir(Path(agg_dir), policy, job)
    if events is not None:
        captured = from_capture(
            events,
            policy or OrderingPolicy(),
            columns=columns,
            partitions=partitions,
            replayed=replayed,
        )
        evidence = captured if evidence is None else merge(evidence, captured)
    assert evidence is not None
    findings = diagnose(evidence)
    recommended = None
    if events is not None and policy is not None and policy.timestamp_by is not None:
        from diagnostics.explain.recommended import with_recommendation

        findings, recommended = with_recommendation(
            findings, events, policy, columns=columns, partitions=partitions, evaluator=evaluator
        )
    chosen = evidence.senders
    return Report(
        findings=findings,
        sources=evidence.sources,
        policy=describe(policy),
        recommended=recommended,
        senders=None if chosen is None else Senders(chosen.column, chosen.reason),
    )


def describe(policy: OrderingPolicy | None) -> str | None:
    """The policy line of a report. A policy without a TIMESTAMP BY column is the job's
    tolerances given for reading its logs (the logs are what the job did, on application
    time, so the column need not be known)."""
    if policy is None:
        return None
    if policy.application_time:
        return policy.describe()
    parts = [
        f"late {format_duration(policy.late_arrival_ns)}",
        f"out-of-order {format_duration(policy.out_of_order_ns)}",
        policy.action.value,
        *(["PARTITION BY PartitionId"] if policy.partition_by else []),
    ]
    return f"{', '.join(parts)} (as given, to read the logs; TIMESTAMP BY column not given)"


#: Job names an error lists at most.
MAX_LISTED = 10


def _check_job(agg_dir: Path, job: str) -> None:
    """``job`` must be one of the folder's jobs (names compare ignoring case)."""
    if not agg_dir.is_dir():
        return  # from_agg_dir says the folder is missing
    names = jobs_in(agg_dir)
    if any(name.upper() == job.upper() for name in names):
        return
    listed = ", ".join(names[:MAX_LISTED]) + (
        f" and {len(names) - MAX_LISTED} more" if len(names) > MAX_LISTED else ""
    )
    known = f"its jobs: {listed}" if names else "its records name no job"
    msg = f"{Setting.JOB} {job!r} is not in the aggregate folder {agg_dir}; {known}"
    raise UsageError(msg, Setting.JOB)


#: The title prefix of findings on records that name no job (portal notifications, ...) in
#: an aggregate folder of several jobs.
NO_JOB = "Records that name no job (e.g. portal notifications)"


def _per_job(agg_dir: Path, names: list[str], policy: OrderingPolicy | None) -> Report:
    """One diagnosis per job of a shared aggregate folder, ranked together."""
    findings = []
    sources: dict[str, None] = {}
    for name in [*names, ""]:  # "": the records that name no job
        evidence = from_agg_dir(agg_dir, policy, name)
        if not name and not (evidence.kinds or evidence.idle or evidence.total_events):
            continue
        sources.update(dict.fromkeys(evidence.sources))
        found = diagnose(replace(evidence, job=name or None))
        if not name:  # say so, beside the findings that name their job
            found = [replace(f, title=f"{NO_JOB}: {f.title}") for f in found]
        findings += found
    return Report(
        findings=rank(findings),
        sources=tuple(sources),
        policy=describe(policy),
    )
