"""Stage S2 of docs/spark-replay.md: the substreams of ``TIMESTAMP BY ... OVER``, numbered as
the local engine numbers them (``diagnostics.engine.timelines``: in processing order, by the
first event of each (partition, key): its arrival, then its input position).

Each event's key values are read from its slice (as strings, the engine's own comparison of
keys); the first event of each substream is a ``groupBy`` (O(substreams) rows, cached), their
order a distributed sort of those rows (:func:`diagnostics.spark.replay_rank.with_position`:
buckets cut at a sample's quantiles, numbered per bucket, offset by the counts before; never
one task, so Spark has no window without a partition to warn about); the ids join back to
the events. An event whose key is missing gets
``sub`` -1: stage S3 runs those of a partition through one engine, which flags them
``invalid_key`` as the local engine does.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from functools import partial
from typing import TYPE_CHECKING

import polars as pl
import pyarrow as pa

from diagnostics.errors import InputError, Setting
from diagnostics.spark.replay_rank import BUCKETS_PER_TASK, spread, with_position
from diagnostics.spark.replay_splits import ReplayPlan, read_slice

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


def key_names(count: int) -> list[str]:
    """The key columns of :func:`read_keys`: ``k0``, ``k1``, ..."""
    return [f"k{i}" for i in range(count)]


def key_schema(count: int) -> pa.Schema:
    """``eid`` and the key columns, as strings."""
    return pa.schema([("eid", pa.int64()), *((name, pa.string()) for name in key_names(count))])


def key_batches(
    plan: ReplayPlan, names: Sequence[str], batches: Iterator[pa.RecordBatch]
) -> Iterator[pa.RecordBatch]:
    """For each split id in ``batches`` (column ``id``): its events' ``eid`` and the values of
    the columns ``names`` (named as the capture, the policy applied, names them), cast to
    strings as the engine casts OVER keys."""
    schema = key_schema(len(names))
    for batch in batches:
        for split in batch.column("id").to_pylist():
            events, _, _ = read_slice(plan, int(split))
            first = plan.slices[int(split)].offset
            frame = events.select(
                pl.int_range(first, first + events.height, dtype=pl.Int64).alias("eid"),
                *(
                    pl.col(name).cast(pl.String).alias(key)
                    for name, key in zip(names, key_names(len(names)), strict=True)
                ),
            )
            yield pa.RecordBatch.from_arrays(
                [
                    frame[c].to_arrow().cast(f.type)
                    for c, f in zip(schema.names, schema, strict=True)
                ],
                schema=schema,
            )


def read_keys(spark: SparkSession, plan: ReplayPlan, names: Sequence[str]) -> DataFrame:
    """Each event's ``eid`` and its values of ``names`` (``k0``, ...): one task per slice."""
    from diagnostics.spark.replay_tasks import ddl

    count = len(plan.slices)
    ids = spark.range(0, count, 1, max(count, 1))
    return ids.mapInArrow(partial(key_batches, plan, tuple(names)), ddl(key_schema(len(names))))


def over_problem(plan: ReplayPlan, partitions: Sequence[int]) -> InputError | None:
    """The local engine's error when OVER runs on several partitions without PARTITION BY."""
    problem = plan.policy.partition_problem(len(partitions))
    return None if problem is None else InputError(problem, Setting.PARTITION_BY)


@contextmanager
def with_substreams(
    spark: SparkSession, narrow: DataFrame, plan: ReplayPlan, over: Sequence[str], tasks: int
) -> Iterator[DataFrame]:
    """S2: ``narrow`` with ``sub``, each event's substream id (-1: a key is missing);
    ``over`` names the OVER columns as the capture, the policy applied, names them. Without
    OVER, ``sub`` is 0 (the timelines are the partitions).

    A context: the substreams' first events stay cached until it ends, so use the frame (an
    action that fills a cache of its own) inside it. Their sample, their count and the
    numbering then read them once, not the capture's keys again each."""
    from pyspark.sql import functions as F

    if not over:
        yield narrow.withColumn("sub", F.lit(0).cast("long"))
        return

    keys = key_names(len(over))
    events = narrow.join(read_keys(spark, plan, over), "eid")
    present = F.lit(True)
    for key in keys:
        present = present & F.col(key).isNotNull()
    first = F.min(F.struct("arr", "eid")).alias("first")
    firsts = (
        events.filter(present)
        .groupBy("part", *keys)
        .agg(first)
        .select("part", *keys, F.col("first.arr").alias("farr"), F.col("first.eid").alias("feid"))
        .persist()
    )
    try:
        count = firsts.count()
        if count == 0:  # every key missing: no substream to number
            yield events.withColumn("sub", F.lit(-1).cast("long")).drop(*keys)
            return
        # their processing order: (first arrival, first input position) is unique
        buckets = spread(tasks, count) * BUCKETS_PER_TASK
        ids = with_position(firsts, ("farr", "feid"), "sub", buckets, count)
        numbered = events.join(ids.select("part", *keys, "sub"), ["part", *keys], "left")
        sub = F.coalesce(F.col("sub"), F.lit(-1).cast("long"))
        yield numbered.withColumn("sub", sub).drop(*keys)
    finally:
        firsts.unpersist()
