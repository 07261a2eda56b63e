"""Explanations and recommendations: why events were adjusted, dropped or delayed, and the
exact change to make (``orderdoc explain``; docs/explain.md).

Public API (the app builds on these names)::

    report = explain(agg_dir, events=frame, policy=policy, columns=columns)
    report.findings[0].cause, report.to_dict()  # {"findings": [...]}
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from diagnostics.durations import format_duration
from diagnostics.engine.columns import EventColumns
from diagnostics.engine.policy import OrderingPolicy
from diagnostics.errors import Setting, UsageError
from diagnostics.explain.assumed import policy_for, same_job, tolerance_lines
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
from diagnostics.whatif.replays import Replays

if TYPE_CHECKING:
    from diagnostics.whatif.recommend import Recommendation

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
    policy_job: str | None = None,
    replays: Replays | None = None,
    held_null: Callable[[], pl.Series | None] | None = None,
) -> Report:
    """Findings from an aggregate folder and/or a capture, most important first.

    With ``events`` the capture is replayed under ``policy`` (which needs ``timestamp_by``)
    and its exact facts replace the logs' estimates; idle notices and CTI records still come
    from the logs. At least one source is needed. ``job`` restricts the aggregate tables to
    one job (an aggregate folder may hold several). ``policy_job``: the job ``policy`` is
    the policy of (the job a job definition names): the logs of that job are read with it,
    the folder's other jobs with ASA's defaults, assumed (``None``: ``policy`` is every
    job's; see :mod:`diagnostics.explain.assumed`). ``replayed``: the capture's replay made
    elsewhere (``explain --events --spark``); ``evaluator``: who runs the engine on the
    recommender's settings (default: here); ``replays``: the capture's replays and the
    recommender's measurements kept for the rest of the command (a fix written after,
    :mod:`diagnostics.whatif.replays`; ``events`` is then ``replays.apply(policy)``'s);
    ``held_null()``: which events hold the TIMESTAMP BY field as null, not without it
    (``Capture.null_values``).
    """
    if agg_dir is None and events is None:
        msg = "explain needs an aggregate folder or an event capture"
        raise UsageError(msg, Setting.CAPTURE)
    evidence: Evidence | None = None
    if agg_dir is not None and job is not None:
        _check_job(Path(agg_dir), job)
    if agg_dir is not None and job is None:
        names = jobs_in(Path(agg_dir)) if Path(agg_dir).is_dir() else []
        if len(names) > 1 and events is None:  # findings per job (and records naming none)
            return _per_job(Path(agg_dir), names, policy, policy_job)
        if len(names) > 1:  # a capture is one job's input: the logs of that job go with it
            job = _capture_job(Path(agg_dir), names, policy_job)
    read_with = policy
    if agg_dir is not None and events is None:
        name = job if job is not None else _only_job(Path(agg_dir))
        read_with = _checked_policy(Path(agg_dir), name, policy, policy_job, asked=job is not None)
        evidence = from_agg_dir(Path(agg_dir), read_with, job)
        if job is None:
            evidence = replace(evidence, job=name)
    elif agg_dir is not None:
        evidence = from_agg_dir(Path(agg_dir), policy, job)
    searched = None
    if events is not None:
        captured, searched = _capture_and_search(
            events, policy, columns, partitions, replayed, replays, held_null, evaluator
        )
        evidence = captured if evidence is None else merge(evidence, captured)
    assert evidence is not None
    findings = diagnose(evidence)
    recommended = None
    if events is not None and policy is not None and searched is not None:
        from diagnostics.explain.recommended import with_recommendation

        findings, recommended = with_recommendation(
            findings, events, policy, searched, columns=columns, partitions=partitions
        )
    chosen = evidence.senders
    return Report(
        findings=findings,
        sources=evidence.sources,
        policy=describe(policy),
        recommended=recommended,
        tolerances=() if events is not None else _single_lines(evidence.job, read_with, policy_job),
        senders=None if chosen is None else Senders(chosen.column, chosen.reason),
    )


def _single_lines(
    job: str | None, policy: OrderingPolicy | None, policy_job: str | None
) -> tuple[str, ...]:
    """:func:`tolerance_lines` for one job, and a note when its job definition names it
    otherwise (a folder of one job is read with the definition it is given)."""
    lines = tolerance_lines([job], policy, None)
    if policy is not None and policy_job is not None and job and not same_job(job, policy_job):
        lines += (
            f"the job definition names job {policy_job}, the logs job {job}: read with the "
            "definition's policy all the same",
        )
    return lines


def _only_job(agg_dir: Path) -> str | None:
    """The one job of a folder (``None``: its records name none)."""
    names = jobs_in(agg_dir) if agg_dir.is_dir() else []
    return names[0] if len(names) == 1 else None


def _checked_policy(
    agg_dir: Path,
    job: str | None,
    policy: OrderingPolicy | None,
    policy_job: str | None,
    *,
    asked: bool,
) -> OrderingPolicy | None:
    """The policy to read ``job``'s logs with. The job a definition names, a folder of one
    job (a renamed or copied job) and a job ``asked`` for by name (``--job``) are read with
    it (the report notes a name that differs); otherwise :func:`policy_for`."""
    if policy is None or policy_job is None or job is None or same_job(job, policy_job):
        return policy
    names = jobs_in(agg_dir) if agg_dir.is_dir() else []
    if asked or len(names) <= 1:
        return policy
    return policy_for(job, policy, policy_job)


def _capture_job(agg_dir: Path, names: list[str], policy_job: str | None) -> str:
    """The job of a folder of several whose logs go with a capture: the one the job
    definition names; without one, a :class:`UsageError` asking for ``--job``."""
    for name in names:
        if same_job(name, policy_job):
            return name
    listed = ", ".join(names[:MAX_LISTED])
    named = (
        f"the job definition names {policy_job!r}, which is not one of them" if policy_job else ""
    )
    msg = (
        f"the aggregate folder {agg_dir} holds several jobs ({listed}) and a capture is one "
        f"job's input{'; ' + named if named else ''}: name the job whose logs go with the "
        "capture"
    )
    raise UsageError(msg, Setting.JOB)


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


def _per_job(
    agg_dir: Path, names: list[str], policy: OrderingPolicy | None, policy_job: str | None
) -> Report:
    """One diagnosis per job of a shared aggregate folder, ranked together; each job read
    with its own policy (a job definition applies to the job it names only)."""
    if policy_job is not None and not any(same_job(n, policy_job) for n in names):
        listed = ", ".join(names[:MAX_LISTED])
        msg = (
            f"the job definition names job {policy_job!r}, which is not in the aggregate "
            f"folder {agg_dir} (its jobs: {listed}); give the definition of one of them, or "
            "name the job to read with it"
        )
        raise UsageError(msg, Setting.JOB)
    findings = []
    sources: dict[str, None] = {}
    jobs: list[str | None] = []
    for name in [*names, ""]:  # "": the records that name no job
        own = policy_for(name or None, policy, policy_job)
        if not name and policy_job is not None:
            own = None  # the records that name no job are not the named job's (assumed.py)
        evidence = from_agg_dir(agg_dir, own, name)
        if not name and not (evidence.kinds or evidence.idle or evidence.total_events):
            continue
        jobs.append(name or None)
        sources.update(dict.fromkeys(evidence.sources))
        found = diagnose(replace(evidence, job=name or None))
        if not name:  # say so, beside the findings that name their job
            found = [replace(f, title=f"{NO_JOB}: {f.title}") for f in found]
        findings += found
    return Report(
        findings=rank(findings),
        sources=tuple(sources),
        policy=describe(policy),
        tolerances=tolerance_lines(jobs, policy, policy_job),
    )


def _capture_and_search(
    events: pl.DataFrame,
    policy: OrderingPolicy | None,
    columns: EventColumns | None,
    partitions: Sequence[int] | None,
    replayed: Replayed | None,
    replays: Replays | None,
    held_null: Callable[[], pl.Series | None] | None,
    evaluator: Evaluator | None,
) -> tuple[Evidence, Recommendation | None]:
    """The capture's evidence, and the recommender's answer for it (``None`` without
    TIMESTAMP BY). The search needs none of the evidence, so the evidence is worked out in
    a thread of its own meanwhile (:func:`~diagnostics.explain.recommended.with_recommendation`
    puts the two together). An error of the evidence is raised first, as when one followed
    the other."""

    def evidence() -> Evidence:
        return from_capture(
            events,
            policy or OrderingPolicy(),
            columns=columns,
            partitions=partitions,
            replayed=replayed,
            replays=replays,
            held_null=held_null,
        )

    if policy is None or policy.timestamp_by is None:
        return evidence(), None
    from diagnostics.explain.recommended import search

    if replays is not None:  # the time read once, here, for the evidence and the search
        replays.search.parsed(events, policy.timestamp_by)
    pool = ThreadPoolExecutor(1, thread_name_prefix="orderdoc-evidence")
    found = pool.submit(evidence)
    try:
        answer = search(
            events,
            policy,
            columns=columns,
            partitions=partitions,
            evaluator=evaluator,
            store=None if replays is None else replays.search,
        )
    except Exception:
        found.result()  # the evidence's own error, if it has one, first
        raise
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)  # Ctrl-C: the evidence not waited for
        raise
    finally:
        pool.shutdown(wait=False)
    return found.result(), answer
