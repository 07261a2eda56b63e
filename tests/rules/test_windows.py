"""Windowed values and condition runs agree with a minute-by-minute naive evaluation."""

from __future__ import annotations

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diagnostics.rules.model import Aggregate, AggregateFn, Comparison
from diagnostics.rules.windows import condition_runs

OPS = {
    Comparison.GT: lambda a, b: a > b,
    Comparison.GE: lambda a, b: a >= b,
    Comparison.LT: lambda a, b: a < b,
    Comparison.LE: lambda a, b: a <= b,
    Comparison.EQ: lambda a, b: a == b,
    Comparison.NE: lambda a, b: a != b,
}


def naive_runs(
    buckets: dict[int, list[float]],
    fn: AggregateFn,
    window: int,
    op: Comparison,
    threshold: float,
    now: int,
) -> list[tuple[int, int | None, float | None]]:
    """Runs (start, end, value) evaluating every minute from the first bucket to ``now``."""
    first = min(buckets)
    runs: list[tuple[int, int | None, float | None]] = []
    current: list = []
    for p in range(first, now + 1):
        values = [v for e, vs in buckets.items() if p - window < e <= p for v in vs]
        if fn is AggregateFn.SUM:
            value: float | None = float(sum(values))
        elif fn is AggregateFn.COUNT:
            value = float(len(values))
        elif fn is AggregateFn.MAX:
            value = float(max(values)) if values else None
        else:  # AVG
            value = sum(values) / len(values) if values else None
        holds = value is not None and OPS[op](value, threshold)
        if holds and not current:
            current = [p, None, value]
        elif holds:
            current[2] = value
        elif current:
            current[1] = p
            runs.append(tuple(current))
            current = []
    if current:
        runs.append(tuple(current))
    return runs


def frame(buckets: dict[int, list[float]], fn: AggregateFn) -> pl.DataFrame:
    rows = []
    for e, values in sorted(buckets.items()):
        if fn is AggregateFn.SUM:
            rows.append({"gid": 1, "e": e, "s": float(sum(values))})
        elif fn is AggregateFn.COUNT:
            rows.append({"gid": 1, "e": e, "n": float(len(values))})
        elif fn is AggregateFn.MAX:
            rows.append({"gid": 1, "e": e, "mx": float(max(values))})
        else:
            rows.append({"gid": 1, "e": e, "s": float(sum(values)), "nx": float(len(values))})
    return pl.DataFrame(rows)


@settings(max_examples=150, deadline=None)
@given(
    buckets=st.dictionaries(
        st.integers(1000, 1040),
        st.lists(st.integers(0, 6), min_size=1, max_size=3),
        min_size=1,
        max_size=25,
    ),
    fn=st.sampled_from([AggregateFn.SUM, AggregateFn.COUNT, AggregateFn.MAX, AggregateFn.AVG]),
    window=st.integers(1, 7),
    op=st.sampled_from(list(Comparison)),
    threshold=st.integers(0, 12),
    horizon=st.integers(0, 50),
)
def test_runs_match_minute_by_minute_evaluation(
    buckets: dict[int, list[int]],
    fn: AggregateFn,
    window: int,
    op: Comparison,
    threshold: int,
    horizon: int,
) -> None:
    values = {e: [float(v) for v in vs] for e, vs in buckets.items()}
    now = min(values) + horizon
    agg = Aggregate(fn, () if fn is AggregateFn.COUNT else ("event_count",))
    got = condition_runs(
        frame(values, fn), window=window, agg=agg, op=op, threshold=float(threshold), now=now
    )
    expected = naive_runs(values, fn, window, op, float(threshold), now)
    assert [(s, e, v) for _, s, e, v in got.iter_rows()] == expected


def test_groups_do_not_leak_into_each_other() -> None:
    buckets = pl.DataFrame({"gid": [1, 1, 2], "e": [10, 11, 12], "s": [5.0, 5.0, 1.0]})
    runs = condition_runs(
        buckets,
        window=2,
        agg=Aggregate(AggregateFn.SUM, ("x",)),
        op=Comparison.GT,
        threshold=4.0,
        now=30,
    )
    # group 1: values 5 (10), 10 (11), 5 (12), 0 (13) -> run [10, 13); group 2 never above 4
    assert runs.rows() == [(1, 10, 13, 5.0)]


def rows_of(buckets: dict[int, list[float]], fn: AggregateFn):  # type: ignore[no-untyped-def]
    """Row-level arrays (one row per value) for the dense path."""
    import numpy as np

    e = np.array([k for k, vs in sorted(buckets.items()) for _ in vs], dtype=np.int64)
    v = np.array([x for _, vs in sorted(buckets.items()) for x in vs], dtype=np.float64)
    parts = {
        AggregateFn.SUM: {"s": v},
        AggregateFn.COUNT: {"n": None},
        AggregateFn.AVG: {"s": v, "nx": np.ones_like(v)},
    }[fn]
    return e, parts


@settings(max_examples=150, deadline=None)
@given(
    groups=st.lists(
        st.dictionaries(
            st.integers(1000, 1040),
            st.lists(st.integers(0, 6), min_size=1, max_size=3),
            min_size=1,
            max_size=20,
        ),
        min_size=1,
        max_size=3,
    ),
    fn=st.sampled_from([AggregateFn.SUM, AggregateFn.COUNT, AggregateFn.AVG]),
    window=st.integers(1, 7),
    op=st.sampled_from(list(Comparison)),
    threshold=st.integers(0, 12),
    horizon=st.integers(0, 60),
)
def test_dense_grid_matches_minute_by_minute_evaluation(
    groups: list[dict[int, list[int]]],
    fn: AggregateFn,
    window: int,
    op: Comparison,
    threshold: int,
    horizon: int,
) -> None:
    import numpy as np

    from diagnostics.rules.dense import dense_runs

    values = [{e: [float(v) for v in vs] for e, vs in g.items()} for g in groups]
    now = 1000 + horizon
    gids, es, parts_list = [], [], []
    for gid, g in enumerate(values):
        e, parts = rows_of(g, fn)
        gids.append(np.full(e.size, gid, dtype=np.int32))
        es.append(e)
        parts_list.append(parts)
    parts = {
        k: (None if parts_list[0][k] is None else np.concatenate([p[k] for p in parts_list]))
        for k in parts_list[0]
    }
    # shuffle the rows: the dense path must not depend on input order
    order = np.random.default_rng(0).permutation(sum(x.size for x in es))
    gid = np.concatenate(gids)[order]
    e = np.concatenate(es)[order]
    parts = {k: (None if v is None else v[order]) for k, v in parts.items()}
    agg = Aggregate(fn, () if fn is AggregateFn.COUNT else ("event_count",))
    got = dense_runs(
        gid,
        e,
        parts,
        n_groups=len(values),
        window=window,
        agg=agg,
        op=op,
        threshold=float(threshold),
        now=now,
    )
    expected = []
    for index, g in enumerate(values):
        visible = {k: v for k, v in g.items() if k <= now}
        if visible:
            expected += [
                (index, *run) for run in naive_runs(visible, fn, window, op, float(threshold), now)
            ]
    assert got == expected


def test_dense_blocks_in_parallel_match_one_block(monkeypatch: pytest.MonkeyPatch) -> None:
    import numpy as np

    from diagnostics.rules import dense

    rng = np.random.default_rng(3)
    n = 5_000
    gid = rng.integers(0, 40, n).astype(np.int32)
    e = rng.integers(0, 400, n).astype(np.int64)
    s = rng.poisson(2, n).astype(np.float64)
    agg = Aggregate(AggregateFn.SUM, ("event_count",))
    args = {
        "n_groups": 40,
        "window": 5,
        "agg": agg,
        "op": Comparison.GT,
        "threshold": 8.0,
        "now": 420,
    }
    whole = dense.dense_runs(gid, e, {"s": s}, **args)
    monkeypatch.setattr(dense, "BLOCK_CELLS", 1_000)  # two groups a block, 20 blocks
    monkeypatch.setattr(dense, "WORKERS", 3)
    assert dense.dense_runs(gid, e, {"s": s}, **args) == whole
    buckets = (
        pl.DataFrame({"gid": gid.astype(np.int64), "e": e, "s": s})
        .group_by("gid", "e")
        .agg(pl.col("s").sum())
    )
    sparse = condition_runs(buckets, window=5, agg=agg, op=Comparison.GT, threshold=8.0, now=420)
    assert [(g, a, b, v) for g, a, b, v in sparse.iter_rows()] == whole
    assert len(whole) > 100
