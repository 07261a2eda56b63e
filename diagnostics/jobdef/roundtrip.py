"""The whole round trip: plan the fix, write it, read the written definition back and replay
the capture under it, so that the before/after a user is shown is that of the files written."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from diagnostics.engine.columns import EventColumns
from diagnostics.engine.policy import OrderingPolicy
from diagnostics.explain.model import Finding
from diagnostics.jobdef.definition import read_job_definition
from diagnostics.jobdef.fix import Fix, Outcome
from diagnostics.jobdef.fixfiles import MEASURE_HINT, write_fix
from diagnostics.jobdef.job import JobPolicy, job_policy
from diagnostics.jobdef.plan import Events, measure, plan_fix, replays_of
from diagnostics.whatif.recommend import RecommendConfig
from diagnostics.whatif.replays import Replays


@dataclass(frozen=True, slots=True)
class RoundTrip:
    """A written fix: the plan, the files, and the capture replayed under the written job."""

    fix: Fix
    written: dict[str, Path]
    replayed: JobPolicy
    after: Outcome | None


def fix_and_verify(
    job: JobPolicy,
    findings: Sequence[Finding],
    out_dir: Path | str,
    *,
    current: OrderingPolicy | None = None,
    events: Events | Replays | None = None,
    columns: EventColumns | None = None,
    partitions: Sequence[int] | None = None,
    parameters: Path | str | None = None,
    say: Callable[[str], None] | None = None,
    measure_hint: str = MEASURE_HINT,
    config: RecommendConfig | None = None,
) -> RoundTrip:
    """Plan, write into ``out_dir``, read back, replay (with ``events``); ``say`` hears
    which replay runs; ``measure_hint``: FIX.md's words for measuring without a capture;
    ``config``: the recommender's; ``events`` as :class:`Replays`: each replay made once
    (with what ``explain`` made before)."""
    current = current or job.policy
    replays = None if events is None else replays_of(events, columns, partitions)
    fix = plan_fix(
        job,
        findings,
        current=current,
        events=replays,
        say=say,
        config=config,
    )
    written = write_fix(fix, out_dir, measure_hint=measure_hint)
    back = read_job_definition(written["definition"], parameters)
    # A TIMESTAMP BY column given by the caller (not the query's) is given again.
    given = job.timestamp_given or current.timestamp_by != job.policy.timestamp_by
    again = job_policy(back, job.input.name, timestamp_by=current.timestamp_by if given else None)
    after = None
    if replays is not None and again.policy.application_time:
        if say:
            say("fix: replaying the capture under the written definition")
        policy = replace(again.policy, early_policy=current.early_policy)
        after = measure(replays, policy)
    return RoundTrip(fix=fix, written=written, replayed=again, after=after)


def summary(trip: RoundTrip) -> str:
    """What was written and the measured before/after, for the terminal."""
    fix = trip.fix
    lines = ["", f"fix for {fix.job.describe_source()}:"]
    if not fix.changes_anything:
        lines.append("  nothing to change in the job's settings or query")
    else:
        lines.append(f"  before: {fix.before_policy.describe()}")
        lines.append(f"  after:  {trip.replayed.policy.describe()}")
    before, after = fix.before, trip.after
    if before is not None and after is not None:
        lines.append(
            f"  replayed under the written definition: late {before.late} -> {after.late}, "
            f"out of order {before.out_of_order} -> {after.out_of_order}, held back by "
            f"another partition {before.held_back} -> {after.held_back}, dropped "
            f"{before.dropped} -> {after.dropped}, release delay p95 {before.delay_p95_s:g} s "
            f"-> {after.delay_p95_s:g} s"
        )
    lines += [f"  note: {n}" for n in fix.notes]
    lines += [f"  wrote {path}" for path in trip.written.values()]
    return "\n".join(lines) + "\n"
