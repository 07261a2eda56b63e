"""``orderdoc explain AGG_DIR [--events CAPTURE --timestamp-by COL ...]``: why events were
adjusted, dropped or delayed, and the exact change to make (docs/explain.md)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from diagnostics.aggregates import require_aggregate
from diagnostics.cli.engine_args import add_rules_arguments, check_rules_flags, chosen_rules
from diagnostics.cli.explain_spark import add_arguments as add_spark_arguments
from diagnostics.cli.explain_spark import capture_engines
from diagnostics.cli.impact_args import add_optimise_argument, add_query_argument
from diagnostics.cli.job_args import Resolved, add_job_arguments, resolve_policy
from diagnostics.cli.policy_args import (
    add_column_arguments,
    add_policy_arguments,
    application_time_flags,
)
from diagnostics.cli.spark_args import check_spark_flags
from diagnostics.cli.values import out_folder
from diagnostics.engine.policy import OrderingPolicy
from diagnostics.engine.replay import BATCH_EVENTS
from diagnostics.errors import Setting, UsageError

if TYPE_CHECKING:
    import polars as pl

    from diagnostics.captures.reader import Capture


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``explain`` command."""
    parser = subparsers.add_parser(
        "explain",
        help="explain the causes of adjusted, dropped or delayed events and what to change",
        description=(
            "Read an aggregate folder (orderdoc aggregate) and/or an event capture and print "
            "findings, most important first: cause, severity, the rule it follows from, "
            "evidence, impact and the exact setting or query text to change. Give the job's "
            "current policy flags so that suggestions are relative to it."
        ),
    )
    parser.add_argument("agg_dir", nargs="?", metavar="AGG_DIR", help="aggregate folder")
    parser.add_argument("--events", metavar="CAPTURE", help="event capture for exact evidence")
    parser.add_argument("--job", metavar="NAME", help="only this job of the aggregate folder")
    add_column_arguments(parser)
    add_policy_arguments(parser)
    add_job_arguments(parser)
    add_query_argument(parser)
    add_optimise_argument(parser)
    parser.add_argument(
        "--write-fix",
        metavar="DIR",
        help="with --job-definition: write the corrected definition (same shape), query.asaql, "
        "query.diff, apply.sh (az commands) and FIX.md (before/after, measured on --events)",
    )
    parser.add_argument(
        "--format", choices=["text", "json", "markdown"], default="text", help="default text"
    )
    parser.add_argument("--out", metavar="FILE", help="also write the report to FILE")
    add_rules_arguments(parser)
    add_spark_arguments(parser)
    parser.set_defaults(func=run, batch_size=BATCH_EVENTS)


#: Flags that describe a replay of the capture: without ``--events`` nothing uses them.
REPLAY_ONLY = {
    "--partitions": "declares the capture's partitions",
    "--no-early-policy": "is a what-if of a replay",
}


def logs_policy(args: argparse.Namespace, resolved: Resolved) -> OrderingPolicy | None:
    """The policy the logs are read against (no capture): the job's, when its TIMESTAMP BY
    column or the tolerance flags are given (the logs are what the job did, so the column
    need not be known); ``None`` (ASA's defaults, said so in the findings) otherwise.
    Flags with no meaning for logs are a :class:`UsageError`."""
    given_replay = {
        "--partitions": args.partitions is not None,
        "--no-early-policy": bool(args.no_early_policy),
    }
    stray = [flag for flag in REPLAY_ONLY if given_replay[flag]]
    if stray:
        why = " and ".join(f"{flag} {REPLAY_ONLY[flag]}" for flag in stray)
        msg = f"{why}, so {'they need' if len(stray) > 1 else 'it needs'} --events CAPTURE"
        raise UsageError(msg)
    if resolved.policy.application_time:
        return resolved.policy
    given = application_time_flags(args) + (["--partition-by"] if args.partition_by else [])
    if not given:
        return None
    if resolved.job is not None:
        msg = (
            f"{', '.join(given)}: the query of {resolved.job.describe_source()} reads the "
            "input on arrival time (no TIMESTAMP BY), so no ordering policy applies; give "
            "--timestamp-by COL or remove them"
        )
        raise UsageError(msg)
    return resolved.policy


def definition_job(args: argparse.Namespace, resolved: Resolved) -> str | None:
    """The job the ``--job-definition`` is the definition of: the job it names, else the
    ``--job`` given; a definition naming no job with a folder of several jobs and no
    ``--job`` is a :class:`UsageError` (a definition is one job's)."""
    if resolved.job is None:
        return None
    name = resolved.job.definition.name or args.job
    if name is None and args.agg_dir is not None and Path(args.agg_dir).is_dir():
        from diagnostics.explain.evidence import jobs_in

        if len(jobs_in(Path(args.agg_dir))) > 1:
            msg = (
                f"{resolved.job.describe_source()} names no job and the aggregate folder "
                "holds several: name the job it is the definition of"
            )
            raise UsageError(msg, Setting.JOB)
    return name


def run(args: argparse.Namespace) -> int:
    """Gather the evidence, diagnose, print (and write) the report."""
    from diagnostics.cli.capture_args import capture_from_args
    from diagnostics.cli.flags import with_flags
    from diagnostics.cli.preflight import check_over_before_reading
    from diagnostics.engine.replay import declared_partitions
    from diagnostics.engines.policy import Rules
    from diagnostics.errors import InputError
    from diagnostics.explain import explain, render

    check_spark_flags(args, chosen_rules(args))
    check_rules_flags(args)
    if chosen_rules(args) is not Rules.ASA:
        from diagnostics.cli.engine_advice import run_explain

        return run_explain(args)
    if args.agg_dir is None and args.events is None:
        msg = "give an AGG_DIR, --events CAPTURE, or both"
        raise UsageError(msg)
    if args.spark and args.events is None:
        msg = "--spark replays the event capture on Spark: give --events CAPTURE"
        raise UsageError(msg)
    if args.events is None:
        capture_flags = {
            "--arrival-col": args.arrival_col,
            "--partition-col": args.partition_col,
            "--capture-path-format": args.capture_path_format,
        }
        stray = [flag for flag, value in capture_flags.items() if value is not None]
        if args.query:
            stray.append("--query")
        if stray:
            msg = f"{', '.join(stray)}: read the capture, so they need --events CAPTURE"
            raise UsageError(msg)
    if args.optimise != "events" and not args.write_fix:
        msg = "--optimise chooses the setting --write-fix DIR writes; give --write-fix DIR"
        raise UsageError(msg)
    if args.write_fix and not args.job_definition:
        msg = "--write-fix DIR needs --job-definition FILE (the job to correct)"
        raise UsageError(msg)
    if args.write_fix is not None:  # before the findings are worked out and printed
        out_folder(args.write_fix, flag="--write-fix")
    resolved = resolve_policy(args)
    has_time = resolved.policy.application_time
    if args.events is not None and not has_time:
        msg = (
            "--events needs --timestamp-by COL (the job's TIMESTAMP BY column)"
            if resolved.job is None
            else f"--events: the query of {resolved.job.describe_source()} has no TIMESTAMP "
            "BY for it, so no tolerance applies; give --timestamp-by COL to replay it on "
            "application time"
        )
        raise UsageError(msg)
    if args.agg_dir is not None:  # the flags are checked; an empty folder is not "healthy"
        require_aggregate(args.agg_dir)
    policy_job = definition_job(args, resolved)  # before the capture is read
    policy = resolved.policy if args.events is not None else logs_policy(args, resolved)
    if args.events is not None:
        check_over_before_reading(args, resolved.policy, resolved.partitions)
    capture = capture_from_args(args) if args.events else None
    for line in capture.warnings if capture is not None else ():
        sys.stderr.write(f"warning: {line}\n")
    partitions = declared_partitions(resolved.partitions) if resolved.partitions else None
    # the capture's replays and the recommender's measurements, kept for the results section
    # and --write-fix (on Spark the replay and the settings are measured there)
    replays = None
    if capture is not None and not args.spark:
        from diagnostics.whatif.replays import Replays

        replays = Replays(capture, partitions=partitions)
    events = None
    if capture is not None and policy is not None:
        events, policy = (replays or capture).apply(policy, named_by=resolved.named_by)
    try:
        with capture_engines(args, resolved, partitions) as (replayed, evaluator):
            report = explain(
                Path(args.agg_dir) if args.agg_dir else None,
                events=events,
                policy=policy,
                columns=capture.columns if capture is not None else None,
                partitions=partitions,
                job=args.job,
                replayed=replayed,
                evaluator=evaluator,
                policy_job=policy_job,
                replays=replays,
                held_null=_held_null(capture, policy),
            )
    except InputError as exc:
        where = args.events if args.events else args.agg_dir
        msg = f"{where}: {exc}" if where and str(where) not in str(exc) else str(exc)
        raise InputError(msg) from exc
    if resolved.job is not None:
        from diagnostics.jobdef.job import name_the_input

        findings = name_the_input(report.findings, resolved.job.input.name)
        report = replace(report, findings=findings, policy=resolved.describe())
    text = render(with_flags(report), args.format)
    if capture is not None and (args.query or resolved.job is not None):
        from diagnostics.cli.impact import explain_section

        text = explain_section(args, resolved, capture, text, args.format, replays)
    sys.stdout.write(text)
    if args.write_fix:
        from diagnostics.cli.fix_output import write_and_check

        summary = write_and_check(args, resolved, report, capture, partitions, replays)
        (sys.stderr if args.format == "json" else sys.stdout).write(summary)
    if args.out:
        try:
            Path(args.out).write_text(text, encoding="utf-8")
        except OSError as exc:
            msg = f"--out {args.out}: cannot write ({exc.strerror})"
            raise UsageError(msg) from exc
    return 0


def _held_null(
    capture: Capture | None, policy: OrderingPolicy | None
) -> Callable[[], pl.Series | None] | None:
    """Which events of ``capture`` hold the TIMESTAMP BY field as null (read when asked)."""
    if capture is None or policy is None or policy.timestamp_by is None:
        return None
    column = policy.timestamp_by
    return lambda: capture.null_values(column)
