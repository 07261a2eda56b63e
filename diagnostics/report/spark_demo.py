"""``orderdoc demo --spark``: the demo's replay, aggregation and recommender searches on Spark.

The capture as the reader read it is written beside ``capture.csv`` as ``capture.parquet``
(the Spark replay reads Parquet captures so far) and replayed on Spark into
``replay/outcomes/`` (a Parquet dataset, read back with the one outcomes reader),
``replay/diagnostics.jsonl`` and ``replay/metrics.parquet``; explain and what-if take that
replay and run their settings as Spark tasks.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from diagnostics.captures.reader import Capture
from diagnostics.engine.replay import declared_partitions
from diagnostics.explain.capture import Replayed
from diagnostics.instrument import InstrumentOptions
from diagnostics.spark.replayed import replayed_on_spark

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from diagnostics.engine.policy import OrderingPolicy

#: The capture as read, for the Spark replay (beside ``capture.csv``).
PARQUET_CAPTURE = "capture.parquet"


def replay_on_spark(
    spark: SparkSession,
    read: Capture,
    policy: OrderingPolicy,
    partitions: int,
    folder: Path,
    replay_dir: Path,
    instrument: InstrumentOptions,
    say: Callable[[str], None],
) -> Replayed:
    """``read`` written as ``folder/capture.parquet`` and replayed on ``spark`` into
    ``replay_dir`` (``outcomes/``, and the diagnostics and metrics ``instrument`` shapes)."""
    path = folder / PARQUET_CAPTURE
    read.events.write_parquet(path)
    return replayed_on_spark(
        spark,
        str(path),
        policy,
        replay_dir,
        declared=declared_partitions(partitions),
        arrival=read.columns.arrival,
        partition=read.columns.partition,
        progress=lambda message: say(f"  spark: {message}"),
        instrument=instrument,
    )
