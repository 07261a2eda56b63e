"""Which tolerances each job's findings are read with, and the one wording of an assumed one.

ASA's logs never state a job's late-arrival and out-of-order tolerances. The explainer reads
a job's logs with the tolerances the user gives (a job definition, or the tolerance flags),
and otherwise with ASA's defaults (late arrival 5 s, out of order 0 s, Adjust), which it
then marks as assumed everywhere a value is shown, with how to give the real ones: on the
command line :data:`HOW_TO_GIVE`, in the app :data:`HOW_TO_GIVE_APP` (the app swaps one for
the other, :func:`in_app_words`).

A job definition is one job's: it applies to the job it names, matched by name ignoring
case as Azure compares job names (:func:`policy_for`); the folder's other jobs keep ASA's
defaults, assumed, and the report says which job got which (:func:`tolerance_lines`).
"""

from __future__ import annotations

from collections.abc import Sequence

from diagnostics.durations import SECOND
from diagnostics.engine.policy import OrderingPolicy

_ASA = OrderingPolicy()  # ASA's defaults (the engine's, docs/semantics.md)
#: ASA's default tolerances in seconds, and as the report states them.
DEFAULT_LATE_S = (_ASA.late_arrival_ns or 0) // SECOND
DEFAULT_OOO_S = _ASA.out_of_order_ns // SECOND
DEFAULTS = (
    f"late arrival {DEFAULT_LATE_S} s, out of order {DEFAULT_OOO_S} s, "
    f"{_ASA.action.value.capitalize()}"
)
#: The mark of a tolerance the explainer assumed (ASA's default) instead of being given it.
ASSUMED = "ASA's default, assumed"
#: What follows an assumed tolerance's value in a title: ``(5 s, ASA's default, assumed)``.
ASSUMED_SUFFIX = f", {ASSUMED}"
#: How to give the real tolerances, on the command line.
HOW_TO_GIVE = "pass --job-definition, or --late-arrival and --out-of-order"
#: How to give them in the app.
HOW_TO_GIVE_APP = (
    'upload the job\'s definition with the logs on the Load page (the "Job definition" field)'
)
#: The evidence key that marks a finding's tolerances as assumed (a JSON flag).
ASSUMED_KEY = "tolerances_assumed"
#: Evidence keys that hold the job's tolerances (shown with the mark when assumed).
TOLERANCE_KEYS = frozenset(
    {
        "current_late_tolerance_seconds",
        "current_out_of_order_tolerance_seconds",
        "late_arrival_tolerance_seconds",
    }
)


def assumed_note(how: str = HOW_TO_GIVE) -> str:
    """``ASA's default, assumed (the job's own was not given: pass ...)``."""
    return f"{ASSUMED} (the job's own was not given: {how})"


def seconds_assumed(seconds: float, how: str = HOW_TO_GIVE) -> str:
    """A tolerance the explainer assumed: ``5 s (ASA's default, assumed ...)``."""
    return f"{seconds:g} s ({ASSUMED}; the job's own was not given: {how})"


def in_app_words(text: str) -> str:
    """``text`` with the command line's way of giving the tolerances as the app's."""
    return text.replace(HOW_TO_GIVE, HOW_TO_GIVE_APP)


def same_job(a: str | None, b: str | None) -> bool:
    """True when two job names name one job (Azure compares them ignoring case)."""
    return a is not None and b is not None and a.casefold() == b.casefold()


def policy_for(
    job: str | None, policy: OrderingPolicy | None, policy_job: str | None
) -> OrderingPolicy | None:
    """The policy to read ``job``'s logs with: ``policy`` when it is every job's
    (``policy_job`` None) or this job's (the same name; records that name no job count as
    the job of a definition when they are all there is), else ``None`` (ASA's defaults,
    assumed)."""
    if policy is None or policy_job is None or job is None:
        return policy
    return policy if same_job(job, policy_job) else None


def tolerance_lines(
    jobs: Sequence[str | None],
    policy: OrderingPolicy | None,
    policy_job: str | None,
    how: str = HOW_TO_GIVE,
) -> tuple[str, ...]:
    """What the report says about the tolerances each of ``jobs`` (``None``: the records
    that name no job) was read with: which job a job definition applies to when there are
    several, and every job read with ASA's defaults (assumed), with how to give the real
    ones. Empty when every job was read with tolerances that were given. The records that
    name no job are never a named job's."""
    named = [j for j in jobs if j]
    lines: list[str] = []
    if policy is not None and policy_job is not None and len(jobs) > 1:
        own = [j for j in named if same_job(j, policy_job)]
        if own:
            lines.append(f"job {own[0]}: the policy above, from its job definition")
    if policy is not None and policy_job is None and len(named) > 1:
        lines.append(f"the tolerances given apply to every job: {', '.join(named)}")
    for job in jobs:
        if policy is not None and (policy_job is None or same_job(job, policy_job)):
            continue
        if policy is not None and policy_job is not None and job is None and len(jobs) == 1:
            continue  # a folder whose records name no job: the definition is its job's
        who = f"job {job}" if job else "the job" if len(jobs) == 1 else "records that name no job"
        lines.append(f"{who}: tolerances not given, ASA's defaults assumed ({DEFAULTS}); {how}")
    return tuple(lines)
