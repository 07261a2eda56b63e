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
from diagnostics.generate.output import output_format, write_capture_avro
from diagnostics.timestamps import to_utc


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``generate`` sub-command."""
    epilog = "scenarios:\n" + "\n".join(f"  {s.value}: {CAUSES[s]}" for s in Scenario)
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
        choices=[s.value for s in Scenario],
        help=f"one of: {', '.join(s.value for s in Scenario)} (see below)",
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
        "--partitions", type=int, default=4, metavar="P", help="input partitions (default 4)"
    )
    parser.add_argument("--duration", default="1h", help="span of arrival times (default 1h)")
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


def run(args: argparse.Namespace) -> int:
    """Generate and write the capture; print one summary line."""
    duration_ns = flag_duration("--duration", args.duration)
    config = GenerateConfig(
        events=args.events,
        partitions=args.partitions,
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
