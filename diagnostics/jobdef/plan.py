"""From findings to one corrected policy, measured on the capture when there is one.

The findings' suggestions that a job definition can carry (tolerances, ``TIMESTAMP BY ...
OVER``, ``PARTITION BY PartitionId``) are combined into a few candidate policies; with a
capture each candidate is replayed by the engine and the one leaving the fewest late,
out-of-order and held-back events (then: the smallest release delay) wins. Suggestions no
setting can carry (fix a sender's clock, feed an idle partition) become advice.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

import polars as pl

from diagnostics.captures.reader import Capture
from diagnostics.durations import SECOND, format_duration
from diagnostics.engine.columns import EventColumns
from diagnostics.engine.policy import OrderingPolicy
from diagnostics.engine.replay import partitions_in
from diagnostics.errors import OrderdocError
from diagnostics.explain.model import Cause, Finding, Suggestion, SuggestionKind
from diagnostics.jobdef.fix import Fix, Outcome, build_query
from diagnostics.jobdef.job import JobPolicy
from diagnostics.jobdef.query import parse_query
from diagnostics.whatif.choices import (
    OPTIONAL,
    Proposed,
    close_lines,
    explain_choice,
    numbers_words,
    setting_words,
)
from diagnostics.whatif.evaluate import delay_points
from diagnostics.whatif.recommend import (
    PROPOSED,
    Recommendation,
    RecommendConfig,
    policy_of,
    recommend,
)
from diagnostics.whatif.replays import Replays

_SETTINGS = {
    SuggestionKind.LATE_ARRIVAL_TOLERANCE,
    SuggestionKind.OUT_OF_ORDER_TOLERANCE,
    SuggestionKind.TIMESTAMP_BY_OVER,
    SuggestionKind.PARTITION_BY,
}
#: Causes whose setting suggestions are not for the live job: history replayed through it is
#: kept only by an unlimited late tolerance, which makes live output wait as long as the
#: oldest event (the finding's advice: replay the backfill in a separate job). The written
#: fix leaves the live job's tolerance as it is and FIX.md says what it would have cost.
NOT_FOR_THE_LIVE_JOB = frozenset({Cause.HISTORICAL_REPLAY})
#: An event is held back by another partition when it leaves more than this after its own
#: partition's watermark passed it: 5 s, what merging partitions costs under ASA's default
#: late-arrival tolerance, so that a healthy job with default settings holds nothing back.
HELD_BACK_SLACK_NS = 5 * SECOND


#: Events to replay: a frame (with ``columns`` naming arrival and partition) or a capture,
#: which also maps the policy's column names to its own (renamed or nested columns).
Events = pl.DataFrame | Capture


def replays_of(
    events: Events | Replays,
    columns: EventColumns | None = None,
    partitions: Sequence[int] | None = None,
) -> Replays:
    """``events`` as a :class:`Replays` (each replay and measurement made once)."""
    if isinstance(events, Replays):
        return events
    return Replays(events, columns=columns, partitions=partitions)


def measure(
    events: Events | Replays,
    policy: OrderingPolicy,
    *,
    columns: EventColumns | None = None,
    partitions: Sequence[int] | None = None,
) -> Outcome:
    """Replay ``events`` under ``policy``: late, out-of-order, early and dropped events, the
    95th percentile of the release delay, and the events held back by other partitions (left
    more than 5 s after their own partition's watermark passed them). ``events`` as
    :class:`Replays`: measured once per policy."""
    replays = replays_of(events, columns, partitions)
    mapped = replays.apply(policy)[1]
    return replays.once(("fix outcome", mapped), lambda: _measured(replays, mapped))


def _measured(replays: Replays, policy: OrderingPolicy) -> Outcome:
    known = replays.search.measures.get(policy)
    if policy.partition_by and known is not None and known.kinds is not None:
        # measured already (the recommender's search): with PARTITION BY no event is held
        # back by another partition, so its counts are the whole outcome
        kinds = known.kinds
        return Outcome(
            late=kinds.late,
            out_of_order=kinds.out_of_order,
            early=kinds.early,
            dropped=known.dropped,
            delay_p95_s=round(known.delay_p95_s or 0.0, 3),
            late_or_out_of_order=kinds.late_or_out_of_order,
        )
    out = replays.flags(policy)
    held = 0
    if not policy.partition_by and policy.application_time:
        own = replays.flags(replace(policy, partition_by=True))
        gap = (out["release_time"] - own["release_time"]).dt.total_nanoseconds()
        never = out["release_time"].is_null() & own["release_time"].is_not_null()
        held = int(((gap > HELD_BACK_SLACK_NS).fill_null(False) | never).sum())
    delay = (out["release_time"] - out["arrival"]).dt.total_nanoseconds().drop_nulls()
    p95 = delay_points(delay.to_numpy() / SECOND)["p95"] or 0.0
    return Outcome(
        late=int(out["late"].sum()),
        out_of_order=int(out["out_of_order"].sum()),
        early=int(out["early"].sum()),
        dropped=int(out["dropped"].sum()),
        delay_p95_s=round(p95, 3),
        held_back=held,
        late_or_out_of_order=int((out["late"] | out["out_of_order"]).sum()),
    )


def _wanted(
    findings: Sequence[Finding],
) -> tuple[dict[str, object], list[str], list[str], list[tuple[Finding, Suggestion]]]:
    """What the findings ask for: ``late``/``ooo`` seconds, ``over`` keys, ``partition_by``;
    the reasons, the advice no setting carries, and the setting suggestions withheld from
    the live job (:data:`NOT_FOR_THE_LIVE_JOB`)."""
    wanted: dict[str, object] = {}
    reasons: list[str] = []
    advice: list[str] = []
    withheld: list[tuple[Finding, Suggestion]] = []
    for finding in findings:
        live = finding.cause not in NOT_FOR_THE_LIVE_JOB
        for s in finding.suggestions:
            if s.kind not in _SETTINGS:
                if s.snippet not in advice:
                    advice.append(s.snippet)
                continue
            if not live:
                withheld.append((finding, s))
                continue
            if s.kind is SuggestionKind.LATE_ARRIVAL_TOLERANCE and "late" not in wanted:
                wanted["late"] = s.value_seconds
            elif s.kind is SuggestionKind.OUT_OF_ORDER_TOLERANCE and "ooo" not in wanted:
                wanted["ooo"] = s.value_seconds
            elif s.kind is SuggestionKind.TIMESTAMP_BY_OVER and "over" not in wanted:
                refs = parse_query(s.snippet).sources
                if refs and refs[0].over:
                    wanted["over"] = refs[0].over
            elif s.kind is SuggestionKind.PARTITION_BY:
                wanted["partition_by"] = True
        if live and any(s.kind in _SETTINGS for s in finding.suggestions):
            reasons.append(finding.title)
    return wanted, reasons, advice, withheld


def _withheld_notes(
    withheld: Sequence[tuple[Finding, Suggestion]],
    current: OrderingPolicy,
    before: Outcome | None,
    measure_with: Callable[[OrderingPolicy], Outcome] | None,
) -> list[str]:
    """Why a withheld late tolerance is not written, with what it would cost on the capture."""
    notes: list[str] = []
    for finding, s in withheld:
        if s.kind is not SuggestionKind.LATE_ARRIVAL_TOLERANCE:
            continue
        late = None if s.value_seconds is None else int(s.value_seconds) * SECOND
        shown = (
            "an unlimited late-arrival tolerance"
            if late is None
            else (f"a late-arrival tolerance of {format_duration(late)}")
        )
        text = (
            f"not written: {shown} on the live job (finding: {finding.title}); it would keep "
            "the old events but make live output wait for them"
        )
        if measure_with is not None and before is not None and current.application_time:
            o = measure_with(replace(current, late_arrival_ns=late))
            text += (
                f"; measured on the capture: late events {before.late} -> {o.late}, events "
                f"held back more than 5 s {before.held_back} -> {o.held_back}, release delay "
                f"p95 {before.delay_p95_s:g} s -> {o.delay_p95_s:g} s"
            )
        notes.append(text + "; replay the backfill in a separate job instead")
    return notes


def _candidates(current: OrderingPolicy, wanted: dict[str, object]) -> list[OrderingPolicy]:
    base = current
    if "late" in wanted:
        late = wanted["late"]
        base = replace(base, late_arrival_ns=None if late is None else int(late) * SECOND)  # type: ignore[call-overload]
    # Most complete first: without a capture the first one is taken.
    options: list[OrderingPolicy] = []
    if "over" in wanted:
        options.append(replace(base, over=tuple(wanted["over"]), partition_by=True))  # type: ignore[arg-type]
    if "ooo" in wanted:
        options.append(replace(base, out_of_order_ns=int(wanted["ooo"]) * SECOND))  # type: ignore[call-overload]
    options.append(base)
    if wanted.get("partition_by"):
        options = [replace(p, partition_by=True) for p in options]
    unique: list[OrderingPolicy] = []
    for p in options:
        if p not in unique and p != current:
            unique.append(p)
    return unique


def _steps(current: OrderingPolicy, chosen: OrderingPolicy) -> list[tuple[str, OrderingPolicy]]:
    """The changes from ``current`` to ``chosen`` applied one after the other, in words
    (PARTITION BY before OVER: ASA needs it for OVER on a multi-partition input)."""
    steps: list[tuple[str, OrderingPolicy]] = []
    policy = current
    if chosen.late_arrival_ns != policy.late_arrival_ns:
        policy = replace(policy, late_arrival_ns=chosen.late_arrival_ns)
        late = chosen.late_arrival_ns
        shown = "unlimited" if late is None else format_duration(late)
        steps.append((f"Events that arrive late: {shown}", policy))
    if chosen.out_of_order_ns != policy.out_of_order_ns:
        policy = replace(policy, out_of_order_ns=chosen.out_of_order_ns)
        steps.append((f"Out of order events: {format_duration(chosen.out_of_order_ns)}", policy))
    if chosen.action != policy.action:
        policy = replace(policy, action=chosen.action)
        steps.append((f"Handle other events: {chosen.action.value.capitalize()}", policy))
    if chosen.partition_by != policy.partition_by:
        policy = replace(policy, partition_by=chosen.partition_by)
        steps.append(("PARTITION BY PartitionId", policy))
    if chosen.over != policy.over:
        policy = replace(policy, over=chosen.over)
        steps.append((f"TIMESTAMP BY ... OVER {', '.join(chosen.over)}", policy))
    if chosen.timestamp_by != policy.timestamp_by:
        steps.append((f"TIMESTAMP BY {chosen.timestamp_by}", chosen))
    return steps


def _partition_count(replays: Replays) -> int:
    if replays.partitions:
        return len(replays.partitions)
    frame = replays.apply(OrderingPolicy())[0]
    return len(partitions_in(frame, replays.columns))


def _recommend(
    replays: Replays,
    current: OrderingPolicy,
    candidates: Sequence[OrderingPolicy],
    config: RecommendConfig | None = None,
) -> Recommendation:
    """The recommender on the capture, with the findings' own proposals measured beside
    (``config``: the recommender's; default its own)."""
    frame, mapped = replays.apply(current)
    also = []
    for candidate in candidates:
        try:
            also.append((replays.apply(candidate)[1], PROPOSED))
        except OrderdocError:
            continue  # a proposal naming a column the capture lacks is not measured
    return recommend(
        frame,
        mapped,
        columns=replays.columns,
        partitions=replays.partitions,
        also=also,
        config=config,
        store=replays.search,
        evaluator=replays.evaluate,  # the fix's steps read the flags of these runs
    )


def _live(
    rec: Recommendation,
    current: OrderingPolicy,
    withheld: Sequence[tuple[Finding, Suggestion]],
) -> OrderingPolicy:
    """The recommended setting in the job's own column names; when a finding's tolerance is
    withheld from the live job (history replayed through it), the best finite one."""
    row = rec.row
    if row["late_arrival_s"] is None and current.late_arrival_ns is not None and withheld:
        finite = rec.table.filter(pl.col("late_arrival_s").is_not_null())
        index = rec.rule.choose(finite)
        row = row if index is None else finite.row(index, named=True)
    chosen = policy_of(row, rec.base)
    return replace(chosen, timestamp_by=current.timestamp_by, early_policy=current.early_policy)


def plan_fix(
    job: JobPolicy,
    findings: Sequence[Finding],
    *,
    current: OrderingPolicy | None = None,
    events: Events | Replays | None = None,
    columns: EventColumns | None = None,
    partitions: Sequence[int] | None = None,
    say: Callable[[str], None] | None = None,
    config: RecommendConfig | None = None,
) -> Fix:
    """The corrected job for ``findings`` (``current``: the policy in force, default the
    definition's). With ``events``, candidates are replayed and the best one is kept, with
    the before/after counts; ``say`` hears which replay runs; ``config``: the recommender's
    (its rule, and a query to weigh settings by results). ``events`` as :class:`Replays`
    (``explain``'s, say): the replays and settings it measured already are not made again."""
    current = current or job.policy
    replays = None if events is None else replays_of(events, columns, partitions)
    wanted, reasons, advice, withheld = _wanted(findings)
    candidates = _candidates(current, wanted) if current.application_time else []
    notes: list[str] = []
    if not current.application_time and wanted:
        notes.append("the job runs on arrival time (no TIMESTAMP BY): no tolerance applies")
    stamps = sorted(
        {
            r.timestamp_text
            for r in job.reads
            if r.timestamp_text is not None and r.timestamp_by != current.timestamp_by
        }
    )
    if current.timestamp_by and stamps:
        notes.append(
            f"the capture is replayed with its column {current.timestamp_by} as the event "
            f"time, in place of the query's TIMESTAMP BY {' / '.join(stamps)}"
        )
    chosen = candidates[0] if candidates else current
    before = after = None
    recommendation = None
    choice: list[str] = []
    close: list[str] = []
    if replays is not None and current.application_time:
        if say:
            say("fix: replaying the capture under the job as it is")
        before = measure(replays, current)
        if wanted:
            if say:
                say("fix: searching the best setting the capture allows")
            recommendation = _recommend(replays, current, candidates, config)
            chosen = _live(recommendation, current, withheld)
            if chosen != current:
                after = measure(replays, chosen)
            else:
                after = before
                notes.append(
                    "the job as it is is already the best setting the capture allows under the "
                    "recommendation rule; it is left as it is"
                )
            proposed = Proposed(
                over=tuple(wanted.get("over", ())),  # type: ignore[arg-type]
                partition_by=bool(wanted.get("partition_by")),
            )
            parts = _partition_count(replays)
            query = job.query.text if job.query else None
            choice = explain_choice(recommendation, proposed, parts, query)
            close = close_lines(recommendation)
        else:
            # no finding asks for a change: the one recommendation is said, not written
            recommendation = _recommend(replays, current, [], config)
            if policy_of(recommendation.row, recommendation.base) != recommendation.base:
                notes.append(
                    f"the recommended setting for this capture is "
                    f"{setting_words(recommendation.row)} "
                    f"({numbers_words(recommendation.row)}); {OPTIONAL}"
                )
            after = before
    if chosen == current:
        reasons = []

    def measure_with(policy: OrderingPolicy) -> Outcome:
        assert replays is not None
        if say:
            say(f"fix: replaying the withheld setting: {policy.describe()}")
        return measure(replays, policy)

    notes += _withheld_notes(
        withheld, current, before, measure_with if replays is not None else None
    )
    query = build_query(job, chosen)
    if query is not None and job.reads_disagree and chosen.timestamp_by:
        notes.append(
            f"the query read {job.input.name} with different TIMESTAMP BY clauses; the "
            f"corrected query reads it with TIMESTAMP BY {chosen.timestamp_by} in every step"
        )
    steps: list[tuple[str, Outcome]] = []
    if replays is not None and chosen != current:
        for change, policy in _steps(current, chosen):
            if say:
                say(f"fix: replaying with {change}")
            steps.append((change, measure(replays, policy)))
    return Fix(
        job=job,
        policy=chosen,
        choice=tuple(choice),
        close=tuple(close),
        rule=None if recommendation is None else recommendation.rule.text,
        recommended=None
        if recommendation is None
        else f"{setting_words(recommendation.row)}: {numbers_words(recommendation.row)}",
        query=query,
        reasons=tuple(reasons),
        advice=tuple(advice),
        before=before,
        after=after,
        notes=tuple(notes),
        steps=tuple(steps),
        current=current if current != job.policy else None,
    )
