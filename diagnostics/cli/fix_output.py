"""``orderdoc explain --write-fix DIR``: the corrected job written and checked."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from diagnostics.captures.reader import Capture
from diagnostics.cli.job_args import Resolved
from diagnostics.errors import UsageError
from diagnostics.explain.model import Report
from diagnostics.whatif.results import ResultsQuery
from diagnostics.whatif.rule import Optimise, Rule
from diagnostics.words import plural

if TYPE_CHECKING:
    from diagnostics.whatif.replays import Replays

#: FIX.md's words, on the command line, for measuring a fix made from logs.
MEASURE_HINT = "run `orderdoc explain --events CAPTURE --job-definition ... --write-fix DIR`"


def _say(message: str) -> None:
    sys.stderr.write(message + "\n")


def write_and_check(
    args: argparse.Namespace,
    resolved: Resolved,
    report: Report,
    capture: Capture | None,
    partitions: Sequence[int] | None,
    replays: Replays | None = None,
) -> str:
    """Write the fix into ``--write-fix`` and return the summary to print; with a capture
    and a query whose windows are replayed (``--query`` or the definition's), also the
    windows of the job's results the written fix makes right (FIX.md says it too).
    ``replays``: explain's (its replays, measured settings and results compared are not
    made again)."""
    from diagnostics.cli.impact_args import results_query
    from diagnostics.cli.whatif import rule_of
    from diagnostics.jobdef.roundtrip import fix_and_verify, summary
    from diagnostics.whatif.recommend import RecommendConfig
    from diagnostics.whatif.replays import Replays

    assert resolved.job is not None
    results = results_query(args, resolved) if capture is not None else None
    if results is None and args.optimise == "results":
        msg = "--optimise results needs --events CAPTURE and a query whose windows are replayed"
        raise UsageError(msg)
    if capture is not None and replays is None:
        replays = Replays(capture, partitions=partitions)
    rule = rule_of(args)
    config = RecommendConfig(rule=rule, results=weighed_by(rule, results))
    trip = fix_and_verify(
        resolved.job,
        report.findings,
        args.write_fix,
        current=resolved.policy,
        events=replays,
        parameters=args.parameters,
        say=_say,
        measure_hint=MEASURE_HINT,
        config=config,
    )
    text = summary(trip)
    if capture is not None and results is not None and trip.replayed.policy.application_time:
        assert replays is not None
        text += _results_made_right(trip, resolved, replays, results)
    return text


def weighed_by(rule: Rule, results: ResultsQuery | None) -> ResultsQuery | None:
    """The query the recommender weighs each measured setting by: only when the rule
    chooses by the results (``--optimise results``); otherwise those columns of the
    search's table are shown nowhere the fix writes, so the replays are not made."""
    return results if rule.optimise is Optimise.RESULTS else None


def _results_made_right(trip, resolved, replays, results) -> str:  # type: ignore[no-untyped-def]
    """The windows changed by the ordering under the job as it is and under the written
    definition (replayed), in a line for the terminal and a section of FIX.md."""
    from dataclasses import replace

    from diagnostics.whatif.results import P95_ERROR, WINDOWS_CHANGED, WINDOWS_OFF, results_of

    _say("fix: replaying the query's windows under the job as it is and as written")
    measured = []
    for policy in (
        resolved.policy,
        replace(trip.replayed.policy, early_policy=resolved.policy.early_policy),
    ):
        measured.append(results_of(replays, policy, results))
    before, after = measured
    right = max(0, int(before[WINDOWS_CHANGED]) - int(after[WINDOWS_CHANGED]))
    line = (
        f"windows of the query's results changed by the ordering: {before[WINDOWS_CHANGED]} "
        f"-> {after[WINDOWS_CHANGED]} (the fix makes {plural(right, 'window')} right); interior "
        f"windows off by more than 5 %: {before[WINDOWS_OFF]} -> {after[WINDOWS_OFF]}; p95 "
        f"relative error of the interior windows {100 * before[P95_ERROR]:.1f}% -> "
        f"{100 * after[P95_ERROR]:.1f}%"
    )
    fix_md = trip.written.get("fix")
    if fix_md is not None:
        with fix_md.open("a", encoding="utf-8") as out:
            out.write(
                "\n## The job's results\n\n"
                "The query's windowed aggregates replayed on the capture as the job emits them "
                "and as they would be had every event arrived on time (`orderdoc impact`, "
                "docs/impact.md), under the job as it is and under the written definition. "
                "Interior windows are those away from the data's edges (its first and last "
                "windows, a silent partition, events dropped as early), where the tolerances "
                "decide what happens:\n\n"
                "| | as it is | as written |\n|---|---|---|\n"
                f"| windows changed by the ordering | {before[WINDOWS_CHANGED]} | {after[WINDOWS_CHANGED]} |\n"
                f"| interior windows off by more than 5 % | {before[WINDOWS_OFF]} | {after[WINDOWS_OFF]} |\n"
                f"| relative error of the interior windows, 95th percentile | {100 * before[P95_ERROR]:.1f}% | {100 * after[P95_ERROR]:.1f}% |\n"
            )
    return f"  {line}\n"
