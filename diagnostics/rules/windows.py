"""Windowed aggregates and condition runs, computed on per-minute buckets with polars.

Input: one row per group id ``gid`` and bucket ``e`` (epoch minutes at which the bucket's rows
*enter* the window, i.e. their minute + 1), with partial aggregates (``n``, ``s``, ``nx``,
``sa``, ``sb`` are sums; ``mx`` a max; ``mn`` a min). The window at instant ``p`` holds the
buckets with ``p - window < e <= p``; the value only changes where a bucket enters (``e``) or
leaves (``e + window``), so those are the only instants computed.

Output: the runs — maximal intervals ``[s, e)`` of instants where the condition held — with the
value at each run's last instant. Invariant: the rows of the result are ordered by ``gid``
then ``s``; ``e`` is null when the condition still held at the last instant ``<= now``.
"""

from __future__ import annotations

import polars as pl

from diagnostics.rules.model import Aggregate, AggregateFn, Comparison

#: How each partial combines over a window.
COMBINERS = {
    "n": "sum",
    "s": "sum",
    "nx": "sum",
    "sa": "sum",
    "sb": "sum",
    "mx": "max",
    "mn": "min",
}


def value_expr(agg: Aggregate, window_seconds: float | None) -> pl.Expr:
    """The measured value from the windowed partials (null when the window has no value)."""
    per = window_seconds or 1.0
    fn = agg.fn
    if fn is AggregateFn.COUNT:
        return pl.col("n").fill_null(0).cast(pl.Float64)
    if fn is AggregateFn.SUM:
        return pl.col("s").fill_null(0).cast(pl.Float64)
    if fn is AggregateFn.MAX:
        return pl.col("mx").cast(pl.Float64)
    if fn is AggregateFn.MIN:
        return pl.col("mn").cast(pl.Float64)
    if fn is AggregateFn.AVG:
        nx = pl.col("nx").fill_null(0)
        return pl.when(nx > 0).then(pl.col("s").cast(pl.Float64) / nx).otherwise(None)
    if fn is AggregateFn.RATE:
        name = "s" if agg.columns else "n"
        return pl.col(name).fill_null(0).cast(pl.Float64) / per
    sb = pl.col("sb").fill_null(0)
    return pl.when(sb != 0).then(pl.col("sa").cast(pl.Float64) / sb).otherwise(None)


def condition(value: pl.Expr, op: Comparison, threshold: float) -> pl.Expr:
    """``value op threshold``; false where the value is null."""
    result = {
        Comparison.GT: value > threshold,
        Comparison.GE: value >= threshold,
        Comparison.LT: value < threshold,
        Comparison.LE: value <= threshold,
        Comparison.EQ: value == threshold,
        Comparison.NE: value != threshold,
    }[op]
    return result.fill_null(False)


def condition_runs(
    buckets: pl.DataFrame,
    *,
    window: int,
    agg: Aggregate,
    op: Comparison,
    threshold: float,
    now: int,
) -> pl.DataFrame:
    """Runs of the condition per group: columns ``gid``, ``s``, ``e``, ``v``.

    ``buckets`` has ``gid`` (Int64), ``e`` (Int64 minutes) and the partial columns; ``window``
    and ``now`` are in minutes.
    """
    partials = [c for c in buckets.columns if c in COMBINERS]
    leave = buckets.select(
        "gid",
        (pl.col("e") + window).alias("e"),
        *[pl.lit(None).cast(buckets[c].dtype).alias(c) for c in partials],
    )
    both = pl.concat([buckets.select("gid", "e", *partials), leave])
    both = both.with_columns(k=pl.col("gid") * (1 << 32) + pl.col("e")).sort("k")
    rolled = both.with_columns(
        getattr(pl.col(c), f"rolling_{COMBINERS[c]}_by")(
            "e", window_size=f"{window}i", closed="right"
        ).over("gid")
        for c in partials
    )
    last_of_instant = pl.col("k") != pl.col("k").shift(-1)
    points = rolled.filter(last_of_instant.fill_null(True))
    seconds = window * 60.0
    points = points.select(
        "gid",
        pl.col("e").alias("p"),
        value_expr(agg, seconds).alias("v"),
    ).with_columns(cond=condition(pl.col("v"), op, threshold))
    same_group_prev = pl.col("gid") == pl.col("gid").shift(1)
    same_group_next = pl.col("gid") == pl.col("gid").shift(-1)
    points = points.with_columns(
        next_p=pl.when(same_group_next.fill_null(False) & (pl.col("p").shift(-1) <= now)).then(
            pl.col("p").shift(-1)
        ),
        start=pl.col("cond")
        & ~(pl.col("cond").shift(1).fill_null(False) & same_group_prev.fill_null(False)),
    ).filter(pl.col("p") <= now)
    points = points.with_columns(run=pl.col("start").cast(pl.Int64).cum_sum())
    return (
        points.filter(pl.col("cond"))
        .group_by("run", maintain_order=True)
        .agg(
            pl.col("gid").first(),
            pl.col("p").first().alias("s"),
            pl.col("next_p").last().alias("e"),
            pl.col("v").last(),
        )
        .select("gid", "s", "e", "v")
    )
