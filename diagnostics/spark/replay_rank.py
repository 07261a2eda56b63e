"""Positions in a distributed sort without the RDD API (docs/spark-replay.md, S6 and S9): the
output rank of every released event, and the release delays at the summary's percentile ranks.

Both cut the sort key into buckets at the quantiles of a sample (about
:data:`SAMPLE_PER_BUCKET` rows a bucket reach the driver: O(buckets)), count each bucket
(O(buckets) rows to the driver) and give every bucket its offset, the prefix sum of the
counts before it. A row's position is its bucket's offset plus
its row number inside the bucket, numbered by a window over the bucket (Spark's sort, in the
JVM, spilling). Everything is a DataFrame operation, so it runs on Spark Connect too, and no
row passes through Python.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

#: Buckets per task: enough that a skewed bucket is a small part of a task's work.
BUCKETS_PER_TASK = 4
#: Rows sampled per bucket for the cuts. The cuts only balance the buckets (the counts and
#: the positions are exact whatever they are); a sample is a fraction of the cost of Spark's
#: ``approxQuantile`` at the precision that balance needs (10M rows: 0.6 s against 4.6 s).
SAMPLE_PER_BUCKET = 128
#: The sample's seed: the same cuts for the same capture.
_SEED = 21
_BUCKET = "__bucket"
#: Rows below which a stage that can be cut anywhere (S4/S5's ranges, S6/S9's buckets) gets
#: no further task: each task has a fixed cost (scheduling, a Python worker's batch set-up).
ROWS_PER_TASK = 250_000


def spread(tasks: int, rows: int) -> int:
    """How many tasks a stage over ``rows`` rows that can be cut anywhere gets: one per
    :data:`ROWS_PER_TASK` rows, at least one, at most ``tasks``."""
    return max(1, min(tasks, -(-rows // ROWS_PER_TASK)))


def range_of(column: Column, bounds: Sequence[int]) -> Column:
    """The range index of each value: how many ``bounds`` are below it (``bounds`` sorted,
    distinct), as a balanced tree of comparisons (depth log2 of the bounds)."""
    from pyspark.sql import functions as F

    def tree(lo: int, hi: int) -> Column:
        if lo == hi:
            return F.lit(lo)
        mid = (lo + hi) // 2
        return F.when(column <= F.lit(bounds[mid]), tree(lo, mid)).otherwise(tree(mid + 1, hi))

    return tree(0, len(bounds)).cast("long")


def sample_cuts(frame: DataFrame, key: str, buckets: int, rows: int) -> list[int]:
    """At most ``buckets - 1`` sorted, distinct cuts of ``key`` (a non-null long) into about
    equal buckets, from a sample of about :data:`SAMPLE_PER_BUCKET` rows a bucket of the
    ``rows`` rows (an estimate is enough: it sets the sample's fraction)."""
    if buckets <= 1 or rows <= 0:
        return []
    fraction = min(1.0, SAMPLE_PER_BUCKET * buckets / rows)
    picked = frame.sample(fraction=fraction, seed=_SEED).select(key).collect()
    if not picked:  # the estimate overstated the rows (S6: most events never released): few
        picked = frame.select(key).limit(SAMPLE_PER_BUCKET * buckets).collect()
    values = np.sort(np.array([int(row[0]) for row in picked], dtype=np.int64))
    if not len(values):
        return []
    at = (np.arange(1, buckets) * len(values)) // buckets
    return sorted({int(v) for v in values[at]})


def _bucketed(frame: DataFrame, key: str, buckets: int, rows: int) -> tuple[DataFrame, list[int]]:
    """``frame`` with its bucket (by ``key``, not null) and each bucket's count, in order."""
    from pyspark.sql import functions as F

    # never no cut, even for no rows: a constant bucket would make Spark run the window in
    # one task, unpartitioned, and warn on the console at every query
    cuts = sample_cuts(frame, key, buckets, rows) or [0]
    tagged = frame.withColumn(_BUCKET, range_of(F.col(key), cuts))
    counted = {int(r[_BUCKET]): int(r["n"]) for r in tagged.groupBy(_BUCKET).agg(
        F.count(F.lit(1)).alias("n")).collect()}  # fmt: skip
    return tagged, [counted.get(b, 0) for b in range(len(cuts) + 1)]


def with_position(
    frame: DataFrame, keys: Sequence[str], name: str, buckets: int, rows: int
) -> DataFrame:
    """``frame`` with column ``name``: each row's 0-based position in the order of ``keys``
    (the first a non-null long; together unique, so the order is total); ``rows``: about
    how many rows ``frame`` has (it sizes the sample of the cuts)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    tagged, counts = _bucketed(frame, keys[0], buckets, rows)
    offsets = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(int).tolist()
    mapping = F.create_map(*[F.lit(v) for b, o in enumerate(offsets) for v in (b, o)])
    window = Window.partitionBy(_BUCKET).orderBy(*keys)
    position = F.row_number().over(window) - F.lit(1) + F.element_at(mapping, F.col(_BUCKET))
    return tagged.withColumn(name, position.cast("long")).drop(_BUCKET)


def values_at(
    frame: DataFrame, key: str, ranks: Sequence[int], buckets: int, rows: int
) -> list[int]:
    """The values of ``key`` (a non-null long) at ``ranks`` of its ascending order; only the
    buckets holding those ranks are numbered, and only the picked values reach the driver."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    if not ranks:
        return []
    tagged, counts = _bucketed(frame, key, buckets, rows)
    ends = np.cumsum(counts)
    wanted: dict[tuple[int, int], int] = {}
    for rank in ranks:
        bucket = int(np.searchsorted(ends, rank, side="right"))
        wanted[(bucket, rank - int(ends[bucket] - counts[bucket]))] = rank
    chosen = sorted({b for b, _ in wanted})
    window = Window.partitionBy(_BUCKET).orderBy(key)
    local = F.row_number().over(window) - F.lit(1)
    picked = (
        tagged.filter(F.col(_BUCKET).isin(chosen))
        .withColumn("__local", local)
        .filter(F.col("__local").isin(sorted({i for _, i in wanted})))
        .select(_BUCKET, "__local", key)
        .collect()
    )
    found = {(int(r[_BUCKET]), int(r["__local"])): int(r[key]) for r in picked}
    by_rank = {rank: found[pair] for pair, rank in wanted.items()}
    return [by_rank[rank] for rank in ranks]
