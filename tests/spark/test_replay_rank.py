"""Positions and percentile values of the Spark replay's bucketed sort (S6, S9;
diagnostics/spark/replay_rank.py) equal a plain sort's, whatever the sampled cuts: heavy
ties, a skewed key, more buckets than rows, a wrong estimate of the rows, no rows."""

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
    ("spread", 8, 10**9),  # an estimate far over the rows: the sample is empty
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


def test_no_rows_are_still_bucketed_never_one_unpartitioned_window(spark):
    """S6 over a capture none of whose events is released: no position, and the numbering's
    plan moves no rows to a single partition (Spark would warn on the console)."""
    # rows filtered away when the query runs, as S6 filters the unreleased ones
    df = spark.range(50).selectExpr("id AS eid", "id AS key").filter("key < 0")
    ranked = with_position(df, ("key", "eid"), "pos", 8, 1000)
    assert ranked.count() == 0
    executed = ranked._jdf.queryExecution().executedPlan().toString()
    assert "SinglePartition" not in executed, executed
