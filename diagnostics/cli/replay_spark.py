"""``orderdoc replay CAPTURE --spark``: the replay as a Spark job (docs/spark-replay.md).

Every input the local replay reads (CSV, JSON Lines, Parquet files, folders and globs, ``.gz``,
Event Hubs Capture folders), writing ``DIR/outcomes/`` (a Parquet dataset),
``diagnostics.jsonl`` and ``metrics.parquet`` (not with ``--outcomes-only``) and the summary;
what it does not replay yet is refused with one line before Spark starts. Runs on the
embedded Spark, a master (``--master``) or a Spark Connect server (``--remote``: the capture
and ``--out`` on storage this machine and the cluster both see). A capture named by a URI
(``abfss://``, ``wasbs://``, ``s3a://``, ``hdfs://``, ``dbfs:/``, ``file://``) is listed and
copied by Spark into ``--out`` first (:mod:`diagnostics.spark.replay_uris`).
"""

from __future__ import annotations

import argparse
import json
import sys

from diagnostics.cli.capture_args import csv_options_of, with_flag
from diagnostics.cli.diagnostics_args import options_from_args
from diagnostics.cli.job_args import Resolved
from diagnostics.cli.spark_args import (
    add_spark_arguments,
    progress_line,
    target_of,
)
from diagnostics.cli.spark_args import check_spark_flags as check_target_flags
from diagnostics.cli.values import out_folder
from diagnostics.engine.replay import declared_partitions
from diagnostics.engine.summary import format_summary
from diagnostics.errors import InputError, SettingError
from diagnostics.spark.replay_uris import COPY_FOLDER, removed
from diagnostics.spark.session import spark_session


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``--spark``, ``--master`` or ``--remote``, and ``--conf``."""
    add_spark_arguments(
        parser,
        "replay as a Spark job, for captures larger than this machine's memory "
        "writes DIR/outcomes/ (a Parquet dataset)",
    )


def check_spark_flags(args: argparse.Namespace) -> None:
    """``--master``/``--remote``/``--conf`` only with ``--spark``."""
    check_target_flags(args)


def run_spark(args: argparse.Namespace, resolved: Resolved) -> int:
    """Replay on Spark, write ``DIR/outcomes/``, print the summary."""
    from diagnostics.spark.replay import run_spark_replay
    from diagnostics.spark.replay_splits import plan_replay
    from diagnostics.spark.session import check_reachable

    declared = declared_partitions(resolved.partitions) if resolved.partitions else None
    arrival = getattr(args, "arrival_col", None)
    partition = getattr(args, "partition_col", None)
    path_format = getattr(args, "capture_path_format", None)
    csv = csv_options_of(args)
    target = target_of(args, "orderdoc-replay")
    if target.remote is not None:
        check_reachable(target.remote)  # one line now, before anything is written
    out = out_folder(args.out, create=True)
    say = progress_line()
    copied = out / COPY_FOLDER  # a capture at a URI, copied by Spark (removed at the end)
    with spark_session(target) as spark, removed(copied):
        try:  # reading errors as the local replay gives them (no prefix; the flag named)
            planned = plan_replay(
                args.events, args.events, arrival, partition, resolved.policy,
                resolved.named_by, spark=spark, csv=csv, path_format=path_format,
                copy_to=copied,
            )  # fmt: skip
        except SettingError as exc:
            raise with_flag(exc) from exc
        try:
            result = run_spark_replay(
                spark,
                path=args.events,
                arrival=arrival,
                partition=partition,
                policy=resolved.policy,
                declared=declared,
                out=out,
                named_by=resolved.named_by,
                progress=say,
                instrument=None if args.outcomes_only else options_from_args(args, resolved.job),
                planned=planned,
            )
        except InputError as exc:
            msg = f"{args.events}: {exc}"
            raise InputError(msg) from exc
    summary = {"input": result.capture.to_dict(), **result.summary}
    if args.json:
        json.dump(summary, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    lines = [*result.capture.describe(), format_summary(summary)]
    if resolved.job is not None:
        lines.insert(0, f"policy: {resolved.describe()}")
    sys.stdout.write("\n".join(lines) + "\n")
    written = [f"{result.outcomes}/", *(str(path) for path in result.diagnostics)]
    sys.stdout.write(f"wrote {', '.join(written)}\n")
    return 0
