"""``explain --events CAPTURE --spark``: the capture's replay, and the recommender's settings,
run on Spark; the report is the one the local run prints."""

from __future__ import annotations

import argparse
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from diagnostics.cli.capture_args import csv_options_of
from diagnostics.cli.job_args import Resolved
from diagnostics.cli.spark_args import add_spark_arguments, progress_line, target_of
from diagnostics.errors import UsageError
from diagnostics.spark.session import spark_session

if TYPE_CHECKING:
    from diagnostics.explain import Replayed
    from diagnostics.whatif.evaluate import Evaluator


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``--spark`` with ``--master`` or ``--remote``, and ``--conf``."""
    add_spark_arguments(
        parser,
        "with --events: replay the capture as a Spark job and run the recommender's settings "
        "as Spark tasks; the capture read as without --spark (--separator, --decimal-comma, "
        "--capture-path-format), the same report",
    )


@contextmanager
def capture_engines(
    args: argparse.Namespace, resolved: Resolved, declared: Sequence[int] | None
) -> Iterator[tuple[Replayed | None, Evaluator | None]]:
    """With ``--spark``: the capture replayed on Spark and the Spark evaluator (their files
    in a temporary folder, removed at the end); without: ``(None, None)`` (run here)."""
    if not args.spark:
        yield None, None
        return
    if args.events is None:
        msg = "--spark replays the event capture on Spark: give --events CAPTURE"
        raise UsageError(msg)
    from diagnostics.spark.replayed import replayed_on_spark
    from diagnostics.spark.whatif import SparkEvaluator

    say = progress_line()
    with (
        spark_session(target_of(args, "orderdoc-explain")) as spark,
        tempfile.TemporaryDirectory(prefix="orderdoc-explain-") as work,
    ):
        replayed = replayed_on_spark(
            spark,
            args.events,
            resolved.policy,
            Path(work),
            declared=declared,
            arrival=args.arrival_col,
            partition=args.partition_col,
            named_by=resolved.named_by,
            progress=say,
            csv=csv_options_of(args),
            path_format=args.capture_path_format,
        )
        evaluator = SparkEvaluator(spark, Path(work), progress=say)
        try:
            yield replayed, evaluator
        finally:
            evaluator.close()
