"""Positions and percentile values of the Spark replay's bucketed sort (S6, S9;
diagnostics/spark/replay_rank.py) equal a plain sort's, whatever the sampled cuts: heavy
ties, a skewed key, more buckets than rows, a wrong estimate of the rows."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from diagnostics.spark.replay_rank import sample_cuts, values_at, with_position

pytestmark = pytest.mark.spark

CASES = {
    "ties": lambda rng, n: rng.integers(0, 5, n),
    "skewed": lambda rng, n: np.where(rng.random(n) < 0.9, 7, rng.integers(0, 10**12, n)),
    "spread": lambda rng, n: rng.integers(-(10**15), 10**15, n),
}


@pytest.mark.parametrize(("name", "buckets", "estimate"), [
    ("ties", 8, 3000), ("skewed", 16, 300), ("spread", 64, 30), ("spread", 1, 3000),
])  # fmt: skip
def test_positions_and_values_equal_a_plain_sort(spark, name, buckets, estimate):
    rng = np.random.default_rng(len(name) * 100 + buckets)
    n = 3000
    frame = pl.DataFrame(
        {"eid": np.arange(n, dtype=np.int64), "key": CASES[name](rng, n).astype(np.int64)}
    )
    expected = frame.sort("key", "eid").with_row_index("pos").select("eid", "pos")
    df = spark.createDataFrame(frame.to_arrow())
    got = with_position(df, ("key", "eid"), "pos", buckets, estimate).select("eid", "pos")
    got_frame = pl.from_arrow(got.toArrow()).sort("eid")
    assert got_frame["pos"].to_list() == expected.sort("eid")["pos"].to_list()
    ranks = [0, n // 2, n - 1, (95 * (n - 1) + 99) // 100]
    values = np.sort(frame["key"].to_numpy())
    assert values_at(df, "key", ranks, buckets, estimate) == [int(values[r]) for r in ranks]


def test_cuts_are_sorted_distinct_and_few(spark):
    df = spark.createDataFrame(pl.DataFrame({"key": np.arange(10_000, dtype=np.int64)}).to_arrow())
    cuts = sample_cuts(df, "key", 10, 10_000)
    assert cuts == sorted(set(cuts))
    assert 1 <= len(cuts) <= 9
    # about equal buckets: each cut within a bucket's width of its quantile
    assert all(abs(c - 1000 * (i + 1)) < 1000 for i, c in enumerate(cuts))
    assert sample_cuts(df, "key", 1, 10_000) == []
