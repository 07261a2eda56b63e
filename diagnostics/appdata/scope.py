"""The app's job scope: which job of a loaded folder every page shows, and in what order the
jobs are offered.

A folder of several jobs (a shared log folder) is shown one job at a time, chosen once in the
sidebar for every page, so that the Overview, Findings, Lateness and Partitions pages all show
the same job, with the numbers ``orderdoc explain AGG --job NAME`` and
``orderdoc aggregate`` give for it. The jobs are offered with the jobs that have findings
first (the worst first: severity, then events affected), so the app opens on the job with the
problem; :data:`ALL_JOBS`, last, shows the whole folder. A folder of one job (or a capture)
has no choice to make.

Quarantined records name no job (they could not be read): the quarantine and the records'
counts are the folder's whatever the scope. Alerts are the scope's when their group names the
job, and the folder's otherwise (the quarantined-records alert).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from diagnostics.appdata import jobfix
from diagnostics.errors import OrderdocError
from diagnostics.explain import assumed
from diagnostics.explain.assumed import same_job
from diagnostics.explain.model import Cause, Report
from diagnostics.kinds import Severity
from diagnostics.rules import AlertState

#: The scope of the whole folder, offered after the jobs.
ALL_JOBS = "All jobs"


def _rank(report: Report) -> tuple[int, float]:
    """How much a job's report asks for attention: its worst finding's severity (a healthy
    verdict counts as none) and the events its findings affect."""
    problems = [f for f in report.findings if f.cause is not Cause.HEALTHY]
    worst = max((f.severity.rank for f in problems), default=Severity.INFO.rank - 1)
    events = sum(float(f.impact.get("events_affected", 0) or 0) for f in problems)
    return worst, events


def job_order(reports: Mapping[str, Report]) -> list[str]:
    """The jobs of ``reports`` (one report per job), the jobs with findings first: by the
    worst severity, then by events affected, then by name (ignoring case)."""
    return sorted(
        reports,
        key=lambda job: (-_rank(reports[job])[0], -_rank(reports[job])[1], job.upper(), job),
    )


def choices(order: Sequence[str]) -> list[str]:
    """What the sidebar offers: the jobs in ``order``, then :data:`ALL_JOBS` when there are
    several; nothing to choose for one job or none."""
    return [*order, ALL_JOBS] if len(order) > 1 else []


def job_of(choice: str | None) -> str | None:
    """The job a sidebar choice scopes the pages to (``None``: the whole folder)."""
    return None if choice in (None, ALL_JOBS) else choice


def job_in_group(group: str | None) -> str | None:
    """The job an alert's group names (``job=FLEET-TELEMETRY, kind=...``), or ``None``."""
    for part in (group or "").split(", "):
        key, _, value = part.partition("=")
        if key == "job" and value:
            return value
    return None


def alerts_of(alerts: pl.DataFrame, job: str | None) -> pl.DataFrame:
    """The alerts of ``job`` (every alert when ``None``): those whose group names the job,
    and those that name no job (the folder's, e.g. quarantined records)."""
    if job is None or alerts.is_empty():
        return alerts
    keep = [
        (named := job_in_group(group)) is None or same_job(named, job)
        for group in alerts["group"].to_list()
    ]
    return alerts.filter(pl.Series(keep, dtype=pl.Boolean))


def alert_counts(alerts: pl.DataFrame) -> tuple[int, int]:
    """The firing and the resolved alerts of an alerts frame (``state``)."""
    if alerts.is_empty():
        return 0, 0
    states = alerts["state"]
    return int((states == AlertState.FIRING.value).sum()), int(
        (states == AlertState.RESOLVED.value).sum()
    )


@dataclass(frozen=True)
class Tolerances:
    """The late-arrival tolerance a page draws for a job: its job definition's, or ASA's
    default, assumed (``words`` says which, in the app's words)."""

    late_s: float
    assumed: bool
    words: str


#: The largest tolerance a page's input takes (ASA's maximum, 20 days 23:59:59).
MAX_TOLERANCE_S = 1_814_399.0


def job_tolerances(agg_dir: Path, job: str | None) -> Tolerances:
    """The late-arrival tolerance of ``job`` (``None``: the folder's job): the saved job
    definition's when it is that job's (:func:`definition_job`), else ASA's default,
    marked as assumed with how to give the real one (:mod:`diagnostics.explain.assumed`)."""
    kept = jobfix.saved(agg_dir)
    policy = None
    if kept is not None:
        try:
            definition = kept.policy()
        except OrderdocError:
            definition = None  # the Findings page's fix section says why
        named = None if definition is None else jobfix.definition_job(agg_dir, definition)
        if named is not None and (job is None or assumed.same_job(job, named)):
            policy = definition
    if policy is None:
        late = float(assumed.DEFAULT_LATE_S)
        return Tolerances(late, True, assumed.seconds_assumed(late, assumed.HOW_TO_GIVE_APP))
    ns = policy.policy.late_arrival_ns
    if ns is None:
        return Tolerances(MAX_TOLERANCE_S, False, "unlimited, from the job definition")
    late = ns / 1e9
    return Tolerances(late, False, f"{late:g} s, from the job definition")
