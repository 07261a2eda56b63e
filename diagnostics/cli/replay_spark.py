"""``orderdoc replay CAPTURE --spark``: the replay as a Spark job (docs/spark-replay.md).

So far for Parquet capture files of jobs without TIMESTAMP BY ... OVER, writing ``DIR/outcomes/`` (a Parquet dataset) and the
summary; what it does not replay yet is refused with one line before Spark starts.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from diagnostics.cli.job_args import Resolved
from diagnostics.cli.values import out_folder
from diagnostics.engine.replay import declared_partitions
from diagnostics.engine.summary import format_summary
from diagnostics.errors import InputError, UsageError


def _conf(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        msg = f"--conf: {text!r} is not KEY=VALUE"
        raise argparse.ArgumentTypeError(msg)
    return key.strip(), value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``--spark``, ``--master`` and ``--conf``."""
    parser.add_argument(
        "--spark",
        action="store_true",
        help=(
            "replay as a Spark job, for captures larger than this machine's memory "
            "(so far: a Parquet file, no TIMESTAMP BY ... OVER, with --outcomes-only); "
            "writes DIR/outcomes/ (a Parquet dataset)"
        ),
    )
    parser.add_argument("--master", help="with --spark: Spark master URL (default: local[*])")
    parser.add_argument(
        "--conf", action="append", type=_conf, default=[], metavar="KEY=VALUE",
        help="with --spark: extra Spark setting (repeatable)",
    )  # fmt: skip


def check_spark_flags(args: argparse.Namespace) -> None:
    """``--master``/``--conf`` only with ``--spark``; ``--spark`` only with ``--outcomes-only``."""
    if not args.spark:
        stray = [
            flag for flag, given in (("--master", args.master), ("--conf", args.conf)) if given
        ]
        if stray:
            msg = f"{', '.join(stray)}: Spark settings, which only --spark uses; add --spark"
            raise UsageError(msg)
        return
    if not args.outcomes_only:
        msg = (
            "--spark writes the outcomes and the summary so far, not diagnostics.jsonl or "
            "metrics.parquet: add --outcomes-only, or replay without --spark"
        )
        raise UsageError(msg)


def run_spark(args: argparse.Namespace, resolved: Resolved) -> int:
    """Replay on Spark, write ``DIR/outcomes/``, print the summary."""
    from diagnostics.spark.replay import run_spark_replay, unsupported
    from diagnostics.spark.session import (
        SparkTarget,
        build_session,
        require_java,
        session_active,
    )

    declared = declared_partitions(resolved.partitions) if resolved.partitions else None
    problem = unsupported(args.events, resolved.policy)
    if problem is not None:
        raise UsageError(problem)
    out = out_folder(args.out, create=True)
    target = SparkTarget(master=args.master, app_name="orderdoc-replay", conf=tuple(args.conf))
    require_java(target)
    started = time.monotonic()

    def say(message: str) -> None:
        sys.stderr.write(f"[{time.monotonic() - started:7.1f}s] {message}\n")

    owned = not session_active()
    spark = build_session(target)
    try:
        result = run_spark_replay(
            spark,
            path=args.events,
            arrival=getattr(args, "arrival_col", None),
            partition=getattr(args, "partition_col", None),
            policy=resolved.policy,
            declared=declared,
            out=out,
            named_by=resolved.named_by,
            progress=say,
        )
    except InputError as exc:
        msg = f"{args.events}: {exc}"
        raise InputError(msg) from exc
    finally:
        if owned:
            spark.stop()
    summary = {"input": result.capture.to_dict(), **result.summary}
    if args.json:
        json.dump(summary, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    lines = [*result.capture.describe(), format_summary(summary)]
    if resolved.job is not None:
        lines.insert(0, f"policy: {resolved.describe()}")
    sys.stdout.write("\n".join(lines) + "\n")
    sys.stdout.write(f"wrote {result.outcomes}/\n")
    return 0
