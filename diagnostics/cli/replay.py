"""``orderdoc replay EVENTS --out DIR``: replay a capture under a job's ordering policy."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import polars as pl

from diagnostics.captures.deferred import rows_with_deferred, still_deferred
from diagnostics.captures.footprint import (
    CaptureTooLargeError,
    available_memory,
    check_fits,
    estimate,
)
from diagnostics.captures.reader import Capture
from diagnostics.cli.capture_args import capture_from_args
from diagnostics.cli.diagnostics_args import add_arguments as add_diagnostics_arguments
from diagnostics.cli.diagnostics_args import given_flags as given_diagnostics_flags
from diagnostics.cli.diagnostics_args import options_from_args
from diagnostics.cli.engine_args import add_rules_arguments, check_rules_flags, chosen_rules
from diagnostics.cli.job_args import Resolved, add_job_arguments, resolve_policy
from diagnostics.cli.policy_args import (
    add_column_arguments,
    add_policy_arguments,
    application_time_flags,
    positive_int,
)
from diagnostics.cli.preflight import check_over_before_reading
from diagnostics.cli.progress import ProgressLine
from diagnostics.cli.replay_spark import add_arguments as add_spark_arguments
from diagnostics.cli.replay_spark import check_spark_flags, run_spark
from diagnostics.cli.values import out_folder
from diagnostics.engine.columns import OUTCOME_COLUMNS
from diagnostics.engine.outcomes_files import write_outcomes_file
from diagnostics.engine.replay import BATCH_EVENTS, ReplayResult, declared_partitions, replay
from diagnostics.engine.summary import format_summary, summarize
from diagnostics.engines.policy import Rules
from diagnostics.errors import InputError, Setting, UsageError
from diagnostics.instrument.outputs import DIAGNOSTICS_FILE, METRICS_FILE, write_outputs
from diagnostics.instrument.run import atomic_write


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``replay`` command."""
    parser = subparsers.add_parser(
        "replay",
        help="replay an event capture under ASA's time-handling rules",
        description=(
            "Replay an event capture (CSV, JSON Lines or Parquet, .gz accepted; an Event Hubs "
            "Capture .avro file or folder) under an Azure "
            "Stream Analytics ordering policy and write DIR/outcomes.parquet: every event with "
            "its System.Timestamp, flags, watermark and release time. StreamInsight's CTIs: "
            "'orderdoc cti' (the former 'replay --cti-*' flags still work until 0.2)."
        ),
    )
    parser.add_argument(
        "events", metavar="EVENTS", help="the event capture (a file, or a Capture folder)"
    )
    parser.add_argument("--out", required=True, metavar="DIR", help="output folder")
    add_column_arguments(parser)
    add_policy_arguments(parser)
    add_job_arguments(parser)
    add_rules_arguments(parser)
    add_diagnostics_arguments(parser)
    parser.add_argument(
        "--batch-size",
        type=positive_int,
        default=BATCH_EVENTS,
        metavar="N",
        help=f"events per engine batch (does not change the result); default {BATCH_EVENTS}",
    )
    parser.add_argument(
        "--outcomes-only",
        action="store_true",
        help="write only outcomes.parquet (skip diagnostics.jsonl and metrics.parquet)",
    )
    parser.add_argument(
        "--skip-memory-check",
        action="store_true",
        help=(
            "replay even when the capture's estimated memory need exceeds the memory this "
            "machine has available (by default the replay stops before reading it)"
        ),
    )
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    add_spark_arguments(parser)
    parser.set_defaults(func=run)


#: What the memory check suggests instead of the local replay.
INSTEAD = (
    "replay it on Spark with --spark, or a part of it, or pass --skip-memory-check to try anyway"
)


def check_memory(args: argparse.Namespace) -> None:
    """Stop before reading a capture that the machine's available memory cannot hold (one
    line with the estimate), unless ``--skip-memory-check``."""
    if args.skip_memory_check:
        return
    footprint = estimate(args.events, getattr(args, "capture_path_format", None))
    try:
        check_fits(footprint, available_memory())
    except CaptureTooLargeError as exc:
        msg = f"{exc}: {INSTEAD}"
        raise CaptureTooLargeError(msg) from exc


def run_replay(
    args: argparse.Namespace, capture: Capture | None = None, resolved: Resolved | None = None
) -> ReplayResult:
    """Read the capture and replay it as the flags (and ``--job-definition``) say."""
    resolved = resolved or resolve_policy(args)
    capture = capture or capture_from_args(args)
    events, policy = capture.apply(resolved.policy, named_by=resolved.named_by)
    partitions = declared_partitions(resolved.partitions) if resolved.partitions else None
    progress = ProgressLine("replay")
    try:
        return replay(
            events,
            policy,
            partitions=partitions,
            columns=capture.columns,
            batch_size=args.batch_size,
            progress=progress,
        )
    except InputError as exc:
        msg = f"{args.events}: {exc}"
        raise InputError(msg) from exc
    finally:
        progress.finish()


def check_flags(args: argparse.Namespace, resolved: Resolved) -> None:
    """Reject flags that would change nothing: diagnostics flags with ``--outcomes-only``,
    tolerance flags on arrival time (one line naming the flags and why)."""
    if args.outcomes_only:
        stray = given_diagnostics_flags(args)
        if stray:
            msg = (
                f"{', '.join(stray)}: shape diagnostics.jsonl and metrics.parquet, which "
                "--outcomes-only does not write; remove them or --outcomes-only"
            )
            raise UsageError(msg)
    if resolved.policy.application_time:
        return
    stray = application_time_flags(args)
    if not stray:
        return
    where = (
        "without --timestamp-by the replay runs on arrival time"
        if resolved.job is None
        else f"the query of {resolved.job.describe_source()} reads the input on arrival time "
        "(no TIMESTAMP BY)"
    )
    msg = (
        f"{', '.join(stray)}: {where}, where no tolerance or early-arrival rule applies; "
        "give --timestamp-by COL or remove them"
    )
    raise UsageError(msg)


def write_outcomes(
    result: ReplayResult, capture: Capture | None = None
) -> Callable[[Path], object]:
    """Writes the outcome frame (Parquet) to the path it is given, the capture's deferred
    passthrough columns joined back in place."""
    deferred = None if capture is None else still_deferred(capture.deferred, result.outcomes)
    inputs = result.outcomes.width - len(OUTCOME_COLUMNS)
    return lambda path: write_outcomes_file(path, result.outcomes, deferred, inputs)


def example_rows(
    result: ReplayResult, capture: Capture
) -> Callable[[Sequence[int]], pl.DataFrame] | None:
    """The outcome rows of some events with the capture's deferred columns (``None``: the
    outcomes hold every input column)."""
    inputs = result.outcomes.width - len(OUTCOME_COLUMNS)
    return rows_with_deferred(result.outcomes, capture.deferred, inputs)


def run(args: argparse.Namespace) -> int:
    """Replay, write ``outcomes.parquet``, print the summary."""
    check_rules_flags(args)
    if chosen_rules(args) is not Rules.ASA:
        from diagnostics.cli.replay_rules import run as run_rules

        return run_rules(args)
    resolved = resolve_policy(args)
    check_flags(args, resolved)
    check_spark_flags(args)
    check_over_before_reading(args, resolved.policy, resolved.partitions)
    if args.spark:
        return run_spark(args, resolved)
    check_memory(args)
    out = out_folder(args.out, create=True)
    capture = capture_from_args(args, defer=True)
    result = run_replay(args, capture, resolved)
    written = ["outcomes.parquet"]
    # The summary first: its far-off senders read input columns, and the diagnostics' work
    # reuses the memory it frees (a lower peak). Then outcomes.parquet is written in a
    # worker thread (polars releases the GIL) while the diagnostics are computed in this one
    # (their example events read by pyarrow: polars' threads are the writer's).
    more = capture.more_inputs(result.outcomes.columns)
    summary = {"input": capture.to_dict(), **summarize(result, more)}
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="orderdoc-write") as pool:
        writing = pool.submit(
            atomic_write, out / "outcomes.parquet", write_outcomes(result, capture)
        )
        if not args.outcomes_only:
            write_outputs(
                result, out, options_from_args(args, resolved.job), example_rows(result, capture)
            )
            written += [DIAGNOSTICS_FILE, METRICS_FILE]
        try:
            writing.result()
        except OSError as exc:
            msg = (
                f"output folder {out}: outcomes.parquet could not be written: {exc.strerror or exc}"
            )
            raise UsageError(msg, Setting.OUTPUT) from exc
    if args.json:
        json.dump(summary, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        lines = [*capture.describe(), format_summary(summary)]
        if resolved.job is not None:
            lines.insert(0, f"policy: {resolved.describe()}")
        sys.stdout.write("\n".join(lines) + "\n")
        sys.stdout.write(f"wrote {', '.join(str(out / name) for name in written)}\n")
    return 0
