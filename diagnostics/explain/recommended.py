"""With a capture, the findings' "do this" is the one recommendation
(:func:`diagnostics.whatif.recommend.recommend`): its tolerances replace the values each
finding sized on its own, an OVER or PARTITION BY it leaves out says why with both numbers,
and the report carries the recommended setting and its numbers, as ``--write-fix``, whatif
and the app show them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

import polars as pl

from diagnostics.durations import SECOND
from diagnostics.engine.columns import EventColumns
from diagnostics.engine.policy import OrderingPolicy
from diagnostics.explain import snippets
from diagnostics.explain.causes_time import P999_SENTENCE
from diagnostics.explain.model import Cause, Finding, Recommended, Suggestion, SuggestionKind
from diagnostics.whatif.choices import (
    OPTIONAL,
    Proposed,
    clauses,
    close_lines,
    left_out,
    numbers_words,
)
from diagnostics.whatif.choices import setting_words as words
from diagnostics.whatif.evaluate import Evaluator, evaluate_locally
from diagnostics.whatif.recommend import CURRENT, Recommendation, policy_of, recommend
from diagnostics.whatif.replays import SearchStore

#: What replaces a finding's own sizing of its tolerance in its explanation.
ONE_ANSWER = (
    "The suggested settings are the one recommendation for this capture (the recommended "
    "setting above): the best the capture allows under the stated rule, the same setting "
    "the corrected job definition, the what-if sweep and the app's pages give. "
)
#: The note beside an unlimited late tolerance recommended for history replayed through a
#: live job: the fix does not write it (diagnostics.jobdef.plan.NOT_FOR_THE_LIVE_JOB).
BACKFILL_ONLY = (
    "the unlimited late-arrival tolerance is for a separate job that replays the old data "
    "only: the live job keeps its own, as unlimited there would make live output wait for "
    "the oldest event (the old-data finding below; --write-fix does not write it)"
)
_SETTINGS = (
    SuggestionKind.LATE_ARRIVAL_TOLERANCE,
    SuggestionKind.OUT_OF_ORDER_TOLERANCE,
    SuggestionKind.TIMESTAMP_BY_OVER,
    SuggestionKind.PARTITION_BY,
)


def summary(rec: Recommendation, partitions: int) -> Recommended:
    """The recommendation as the report carries it."""
    row = rec.row
    return Recommended(
        setting=words(row),
        numbers=numbers_words(row),
        adjusted=int(row["adjusted"]),
        dropped=int(row["dropped"]),
        delay_p95_s=row["delay_p95_s"],
        late_seconds=None if row["late_arrival_s"] is None else int(row["late_arrival_s"]),
        ooo_seconds=int(row["out_of_order_s"]),
        over=tuple(k for k in row["over"].split(",") if k),
        partition_by=bool(row["partition_by"]),
        rule=rec.rule.text,
        notes=tuple(clauses(rec, partitions)),
        close=tuple(close_lines(rec)),
    )


def _proposed(finding: Finding) -> Proposed:
    over: tuple[str, ...] = ()
    for s in finding.suggestions:
        if s.kind is SuggestionKind.TIMESTAMP_BY_OVER and " OVER " in s.snippet:
            tail = s.snippet.split(" OVER ", 1)[1].split(" PARTITION BY")[0]
            over = tuple(k.strip() for k in tail.split(","))
    pby = any(s.kind is SuggestionKind.PARTITION_BY for s in finding.suggestions)
    return Proposed(over=over, partition_by=pby)


def _rounded(value: float | None) -> float | None:
    """Seconds to the millisecond, as the fix's before/after shows them."""
    return None if value is None else round(float(value), 3)


def harmonise(
    findings: Sequence[Finding],
    rec: Recommendation,
    timestamp_by: str | None,
    partitions: int,
    source: str = "input",
) -> list[Finding]:
    """Each finding's setting suggestions as the recommendation has them: its own kinds
    first, in its order, then the recommendation's other changes; a tolerance the
    recommendation leaves as the job has it is not suggested."""
    row = rec.row
    current = rec.base
    late = None if row["late_arrival_s"] is None else int(row["late_arrival_s"])
    ooo = int(row["out_of_order_s"])
    over = tuple(k for k in row["over"].split(",") if k)
    now = rec.table.filter(pl.col("tried_as") == CURRENT)
    delay_now = _rounded(now["delay_p95_s"][0]) if now.height else None
    delay_fix = _rounded(row["delay_p95_s"])
    out = []
    for finding in findings:
        if finding.cause is Cause.HISTORICAL_REPLAY or not any(
            s.kind in _SETTINGS for s in finding.suggestions
        ):
            out.append(finding)  # history's tolerance is for a separate backfill job
            continue
        why = left_out(rec, _proposed(finding))
        suggestions: list[Suggestion] = []
        late_changes = current.late_arrival_ns != (None if late is None else late * SECOND)
        ooo_changes = current.out_of_order_ns != ooo * SECOND
        over_clause = snippets.timestamp_by_over(
            timestamp_by, over, multi_partition=partitions > 1, source=source
        )
        for s in finding.suggestions:
            if s.kind is SuggestionKind.LATE_ARRIVAL_TOLERANCE and late_changes:
                suggestions.append(replace(snippets.late_tolerance(late), settings=s.settings))
            elif s.kind is SuggestionKind.OUT_OF_ORDER_TOLERANCE and ooo_changes:
                suggestions.append(replace(snippets.ooo_tolerance(ooo), settings=s.settings))
            elif s.kind in (
                SuggestionKind.LATE_ARRIVAL_TOLERANCE,
                SuggestionKind.OUT_OF_ORDER_TOLERANCE,
            ):
                continue  # the job has it already
            elif s.kind in (SuggestionKind.TIMESTAMP_BY_OVER, SuggestionKind.PARTITION_BY) and over:
                # one FROM clause: OVER's carries the PARTITION BY it needs
                if over_clause not in suggestions:
                    suggestions.append(over_clause)
            elif s.kind is SuggestionKind.TIMESTAMP_BY_OVER:
                continue  # said in ``why``
            elif s.kind is SuggestionKind.PARTITION_BY and not row["partition_by"]:
                continue
            elif s.kind is SuggestionKind.PARTITION_BY:
                suggestions.append(snippets.partition_by(source, timestamp_by))
            else:
                suggestions.append(s)
        kinds = {s.kind for s in finding.suggestions}
        if late_changes and SuggestionKind.LATE_ARRIVAL_TOLERANCE not in kinds:
            suggestions.append(snippets.late_tolerance(late))
        if ooo_changes and SuggestionKind.OUT_OF_ORDER_TOLERANCE not in kinds:
            suggestions.append(snippets.ooo_tolerance(ooo))
        if over and over_clause not in suggestions:
            suggestions.append(over_clause)
        elif row["partition_by"] and not over and SuggestionKind.PARTITION_BY not in kinds:
            suggestions.append(snippets.partition_by(source, timestamp_by))
        impact: dict[str, object] = {}
        for k, v in finding.impact.items():  # the fix's measured delay where the guess was
            if k == "fix_adds_release_delay_seconds":
                impact["fix_release_delay_p95_seconds"] = delay_fix
                impact["release_delay_p95_now_seconds"] = delay_now
            else:
                impact[k] = v
        impact.setdefault("fix_release_delay_p95_seconds", delay_fix)
        impact.setdefault("release_delay_p95_now_seconds", delay_now)
        evidence = dict(finding.evidence)
        lateness = evidence.get("lateness")
        if isinstance(lateness, Mapping) and "share_covered_by_suggestion" in lateness:
            # the finding's own p99.9 is no longer the suggestion: its share is not said
            evidence["lateness"] = {
                k: v for k, v in lateness.items() if k != "share_covered_by_suggestion"
            }
        out.append(
            replace(
                finding,
                explanation=finding.explanation.replace(P999_SENTENCE, ONE_ANSWER),
                evidence=evidence,
                suggestions=tuple(suggestions),
                left_out=tuple(why),
                impact=impact,  # type: ignore[arg-type]
            )
        )
    return out


def with_recommendation(
    findings: list[Finding],
    events: pl.DataFrame,
    policy: OrderingPolicy,
    rec: Recommendation,
    *,
    columns: EventColumns | None,
    partitions: Sequence[int] | None,
) -> tuple[list[Finding], Recommended | None]:
    """The findings with the one recommendation's settings (``rec``: the recommender's
    answer for ``events`` under ``policy``, :func:`search`), and the recommendation."""
    if policy.timestamp_by is None:
        return findings, None
    count = _partitions(events, columns, partitions)
    said = summary(rec, count)
    if not any(s.kind in _SETTINGS for f in findings for s in f.suggestions):
        # the same answer whatif gives, said as optional: no finding asks for it
        return findings, (None if policy_of(rec.row, rec.base) == rec.base else _optional(said))
    if said.late_seconds is None and any(f.cause is Cause.HISTORICAL_REPLAY for f in findings):
        said = replace(said, notes=(*said.notes, BACKFILL_ONLY))
    return harmonise(findings, rec, policy.timestamp_by, count), said


def search(
    events: pl.DataFrame,
    policy: OrderingPolicy,
    *,
    columns: EventColumns | None,
    partitions: Sequence[int] | None,
    evaluator: Evaluator | None = None,
    store: SearchStore | None = None,
) -> Recommendation:
    """The one recommender's answer for ``events`` under the job's ``policy`` (it needs no
    finding: :func:`with_recommendation` puts the two together)."""
    return recommend(
        events,
        policy,
        columns=columns,
        partitions=partitions,
        evaluator=evaluator or evaluate_locally,
        store=store,
    )


def _optional(said: Recommended) -> Recommended:
    return replace(said, notes=(OPTIONAL, *said.notes))


def _partitions(
    events: pl.DataFrame, columns: EventColumns | None, partitions: Sequence[int] | None
) -> int:
    from diagnostics.engine.replay import partitions_in

    return len(partitions) if partitions else len(partitions_in(events, columns or EventColumns()))
