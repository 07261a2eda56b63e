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

import polars as pl

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
