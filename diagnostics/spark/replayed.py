"""A capture replayed on Spark as the commands that read a replay take it: ``explain
--events --spark`` and ``demo --spark`` run :func:`replayed_on_spark` where they would run the
local replay, then read the ``outcomes/`` folder back with the one outcomes reader
(:func:`diagnostics.engine.outcomes_files.read_outcomes`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from diagnostics.captures.dialect import CsvOptions
from diagnostics.engine.outcomes_files import read_outcomes
from diagnostics.engine.policy import OrderingPolicy
from diagnostics.explain.capture import Replayed
from diagnostics.instrument import InstrumentOptions
from diagnostics.spark.replay import run_spark_replay
from diagnostics.spark.replay_splits import plan_replay
from diagnostics.spark.replay_uris import COPY_FOLDER, removed

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def replayed_on_spark(
    spark: SparkSession,
    path: str,
    policy: OrderingPolicy,
    out: Path,
    *,
    declared: Sequence[int] | None = None,
    arrival: str | None = None,
    partition: str | None = None,
    named_by: str | None = None,
    progress: Callable[[str], None] = lambda _message: None,
    instrument: InstrumentOptions | None = None,
    csv: CsvOptions | None = None,
    path_format: str | None = None,
) -> Replayed:
    """Replay the capture at ``path`` (any capture the local replay reads) on ``spark`` into
    ``out/outcomes/`` (given ``instrument``, also ``diagnostics.jsonl`` and
    ``metrics.parquet``) and read it back: the outcome frame, partitions and summary the
    local replay gives. ``csv`` and ``path_format``: how the capture is read (``--separator``,
    ``--decimal-comma``, ``--capture-path-format``), as the local reader takes them."""
    with removed(out / COPY_FOLDER) as copied:
        planned = plan_replay(
            path, path, arrival, partition, policy, named_by,
            spark=spark, csv=csv, path_format=path_format, copy_to=copied,
        )  # fmt: skip
        result = run_spark_replay(
            spark,
            path=path,
            arrival=arrival,
            partition=partition,
            policy=policy,
            declared=declared,
            out=out,
            named_by=named_by,
            progress=progress,
            instrument=instrument,
            csv=csv,
            path_format=path_format,
            planned=planned,
        )
    partitions = tuple(int(p) for p in result.summary["partitions"])
    return Replayed(read_outcomes(result.outcomes), partitions, result.summary)
