"""``orderdoc replay EVENTS --out DIR``: replay a capture under a job's ordering policy."""

from __future__ import annotations

import argparse
import json
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from diagnostics.cli.job_args import Resolved, add_job_arguments, resolve_policy
from diagnostics.cli.policy_args import (
    add_column_arguments,
    add_policy_arguments,
    columns_from_args,
    positive_int,
)
from diagnostics.cli.progress import ProgressLine
from diagnostics.cti import cli as cti_cli
from diagnostics.engine.events_io import read_events
from diagnostics.engine.replay import ReplayResult, declared_partitions, replay
from diagnostics.engine.summary import format_summary, summarize
from diagnostics.errors import InputError
from diagnostics.instrument import cli as instrument_cli


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``replay`` command."""
    parser = subparsers.add_parser(
        "replay",
        help="replay an event capture under ASA's time-handling rules",
        description=(
            "Replay an event capture (CSV, JSON Lines or Parquet, .gz accepted) under an Azure "
            "Stream Analytics ordering policy and write DIR/outcomes.parquet: every event with "
            "its System.Timestamp, flags, watermark and release time."
        ),
    )
    parser.add_argument("events", metavar="EVENTS", help="the event capture")
    parser.add_argument("--out", required=True, metavar="DIR", help="output folder")
    add_column_arguments(parser)
    add_policy_arguments(parser)
    add_job_arguments(parser)
    instrument_cli.add_arguments(parser)
    cti_cli.add_arguments(parser)
    parser.add_argument(
        "--batch-size",
        type=positive_int,
        default=1_000_000,
        metavar="N",
        help="events per engine batch (does not change the result); default 1000000",
    )
    parser.add_argument(
        "--outcomes-only",
        action="store_true",
        help="write only outcomes.parquet (skip diagnostics.jsonl and metrics.parquet)",
    )
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    parser.set_defaults(func=run)


def run_replay(args: argparse.Namespace, resolved: Resolved | None = None) -> ReplayResult:
    """Read the capture and replay it as the flags (and ``--job-definition``) say."""
    resolved = resolved or resolve_policy(args)
    events = read_events(args.events)
    columns = columns_from_args(args)
    partitions = declared_partitions(resolved.partitions) if resolved.partitions else None
    progress = ProgressLine("replay")
    try:
        return replay(
            events,
            resolved.policy,
            partitions=partitions,
            columns=columns,
            batch_size=args.batch_size,
            progress=progress,
        )
    except InputError as exc:
        msg = f"{args.events}: {exc}"
        raise InputError(msg) from exc
    finally:
        progress.finish()


def prepare_out(path: str) -> Path:
    """Create the output folder (an existing file there is an error)."""
    out = Path(path)
    if out.exists() and not out.is_dir():
        msg = f"--out {path}: exists and is not a folder"
        raise InputError(msg)
    out.mkdir(parents=True, exist_ok=True)
    return out


def run(args: argparse.Namespace) -> int:
    """Replay, write ``outcomes.parquet``, print the summary."""
    if cti_cli.wants_cti(args):
        return cti_cli.run(args)
    out = prepare_out(args.out)
    resolved = resolve_policy(args)
    result = run_replay(args, resolved)
    written = ["outcomes.parquet"]
    # outcomes.parquet is written in a worker thread (polars releases the GIL) while the
    # diagnostics and the summary are computed from the same frame in this one.
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="orderdoc-write") as pool:
        writing = pool.submit(
            result.outcomes.write_parquet, out / "outcomes.parquet", compression="snappy"
        )
        if not args.outcomes_only:
            instrument_cli.write_outputs(args, result, out)
            written += [instrument_cli.DIAGNOSTICS_FILE, instrument_cli.METRICS_FILE]
        summary = summarize(result)
        writing.result()
    if args.json:
        json.dump(summary, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        if resolved.job is not None:
            sys.stdout.write(f"policy: {resolved.describe()}\n")
        sys.stdout.write(format_summary(summary) + "\n")
        sys.stdout.write(f"wrote {', '.join(str(out / name) for name in written)}\n")
    return 0
