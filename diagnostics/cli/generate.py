"""``orderdoc generate SCENARIO --out FILE``: write a synthetic capture with one known cause."""

from __future__ import annotations

import argparse
import sys

import polars as pl

from diagnostics.cli.values import flag_duration, path_arg
from diagnostics.durations import MS
from diagnostics.errors import UsageError
from diagnostics.generate import CAUSES, GenerateConfig, Scenario, generate, write_capture
from diagnostics.generate.config import DEFAULT_START_MS
from diagnostics.generate.fleet import FLEET, FLEET_CAUSES, FleetConfig
from diagnostics.generate.fleet_files import check_fleet_out, write_fleet
from diagnostics.generate.output import output_format, write_capture_avro
from diagnostics.timestamps import to_utc


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``generate`` sub-command."""
    epilog = "scenarios:\n" + "\n".join(f"  {s.value}: {CAUSES[s]}" for s in Scenario)
    epilog += f"\n  {FLEET}: {FLEET_CAUSES}"
    parser = subparsers.add_parser(
        "generate",
        help="write a synthetic event capture with one known cause",
        description=(
            "Write a synthetic event capture (.parquet, .csv or .jsonl, optionally .gz), or "
            "with --format avro an Event Hubs Capture folder (one .avro file per partition and "
            "5 minutes, named as Capture names them)."
        ),
        epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "scenario",
        metavar="SCENARIO",
        choices=[*(s.value for s in Scenario), FLEET],
        help=f"one of: {', '.join(s.value for s in Scenario)}, {FLEET} (see below)",
    )
    parser.add_argument(
        "--out", required=True, type=path_arg, metavar="FILE|DIR", help="output file (avro: folder)"
    )
    parser.add_argument(
        "--format",
        choices=["parquet", "csv", "jsonl", "avro"],
        default=None,
        help="default: from the --out extension; avro writes an Event Hubs Capture folder",
    )
    parser.add_argument(
        "--events", type=int, default=100_000, metavar="N", help="number of events (default 100000)"
    )
    parser.add_argument(
        "--partitions",
        type=int,
        default=None,
        metavar="P",
        help="input partitions (default 4; fleet: 8)",
    )
    parser.add_argument(
        "--duration", default=None, help="span of arrival times (default 1h; fleet: 2h)"
    )
    parser.add_argument(
        "--logs",
        action="store_true",
        help="fleet only: also write two jobs' resource logs (replaying the capture) to DIR/logs",
    )
    parser.add_argument("--seed", type=int, default=0, metavar="S", help="random seed (default 0)")
    parser.add_argument(
        "--start", default=None, help="first moment, ISO-8601 UTC (default 2024-01-01T00:00:00Z)"
    )
    parser.set_defaults(func=run)


def _start_ms(text: str | None) -> int:
    if text is None:
        return DEFAULT_START_MS
    parsed = to_utc(pl.Series("start", [text]))
    if parsed.is_null().any():
        msg = f"--start {text!r}: not an ISO-8601 timestamp (e.g. 2024-01-01T00:00:00Z)"
        raise UsageError(msg)
    return int(parsed.dt.epoch("ms")[0])


def run_fleet(args: argparse.Namespace) -> int:
    """Write the production-shaped fleet folder; print one summary line."""
    if args.format not in (None, "avro"):
        msg = f"--format {args.format}: the fleet is written as an Event Hubs Capture folder"
        raise UsageError(msg)
    partitions = FleetConfig.partitions if args.partitions is None else args.partitions
    duration_ms = (
        flag_duration("--duration", args.duration) // MS
        if args.duration is not None
        else FleetConfig.duration_ms
    )
    config = FleetConfig(
        events=args.events,
        partitions=partitions,
        duration_ms=duration_ms,
        seed=args.seed,
        start_ms=_start_ms(args.start) if args.start is not None else FleetConfig.start_ms,
        silent_partition=FleetConfig.silent_partition if partitions > 5 else None,
    )
    out = check_fleet_out(args.out)
    written = write_fleet(out, config, logs=args.logs)
    logs = f", logs in {written.logs}" if written.logs is not None else ""
    sys.stdout.write(
        f"{written.capture}: {written.events} events in {written.files} Event Hubs Capture "
        f"files, {config.partitions} partitions, seed {config.seed}; job {written.job}{logs}\n"
    )
    return 0


def run(args: argparse.Namespace) -> int:
    """Generate and write the capture; print one summary line."""
    if args.scenario == FLEET:
        return run_fleet(args)
    if args.logs:
        msg = "--logs: only the fleet scenario writes logs"
        raise UsageError(msg)
    duration_ns = flag_duration("--duration", args.duration or "1h")
    config = GenerateConfig(
        events=args.events,
        partitions=4 if args.partitions is None else args.partitions,
        duration_ms=duration_ns // MS,
        seed=args.seed,
        start_ms=_start_ms(args.start),
    )
    if args.format is not None and args.format != "avro":
        kind, _ = output_format(args.out)
        if kind != args.format:
            msg = f"--format {args.format}: --out {args.out} names a {kind} file"
            raise UsageError(msg)
    frame = generate(args.scenario, config)
    files = ""
    if args.format == "avro":
        written = write_capture_avro(frame, args.out, eventhub=args.scenario.replace("_", "-"))
        files = f" in {len(written)} Event Hubs Capture files"
    else:
        write_capture(frame, args.out)
    sys.stdout.write(
        f"{args.out}: {frame.height} events{files}, scenario {args.scenario}, "
        f"{config.partitions} partitions, seed {config.seed}\n"
    )
    return 0
