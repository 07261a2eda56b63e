"""Which column would make a good ``TIMESTAMP BY ... OVER`` key.

The candidates are the sender columns (:func:`diagnostics.whatif.senders.choose_senders`).
For each candidate column, in arrival order per partition, an event's *disorder* is how far
its time (late-adjusted, as rule 4 checks it) is behind the largest one seen before it: on
the partition (across keys, what ASA checks today) and within its (partition, key) substream
(what OVER would check). A good key has small disorder within each key and large disorder across keys: at
most 10 % of the out-of-order events remain within keys, and at least one is removed.

Invariant: early and invalid events are excluded (they never move a watermark; docs/semantics.md, "The rules, as implemented").
"""

from __future__ import annotations

from typing import Any

import polars as pl

from diagnostics.scalars import as_float

#: A key leaving at most this share of the out-of-order events is a good OVER key.
GOOD_SHARE = 0.10


def disorder(work: pl.DataFrame, by: list[str]) -> pl.Series:
    """Seconds each event is behind the running maximum before it, per ``by`` group.

    ``work`` is sorted by arrival; its ``t`` column holds application time (ns, null for
    excluded events). The result is 0 for in-order events and null for excluded ones.
    """
    prev = pl.col("t").cum_max().forward_fill().shift(1).over(by)
    behind = ((prev - pl.col("t")).clip(lower_bound=0).fill_null(0) / 1e9).cast(pl.Float64)
    value = pl.when(pl.col("t").is_null()).then(None).otherwise(behind)
    return work.select(value.alias("d")).to_series()


def analyse_keys(
    work: pl.DataFrame, candidates: list[str], ooo_s: float
) -> tuple[pl.Series, list[dict[str, Any]]]:
    """The partition-level disorder and, per candidate, how much OVER it would remove.

    Returns (disorder across keys, rows sorted best first). A row: ``column``,
    ``distinct_keys``, ``out_of_order_across_keys``, ``out_of_order_within_keys``,
    ``removed_share``, ``p99_across_s``, ``p99_within_s``, ``good``.
    """
    across = disorder(work, ["partition"])
    n_across = int((across > ooo_s).sum())
    rows: list[dict[str, Any]] = []
    for column in candidates:
        within = disorder(work, ["partition", column])
        n_within = int((within > ooo_s).sum())
        removed = 1 - n_within / n_across if n_across else 0.0
        rows.append(
            {
                "column": column,
                "distinct_keys": int(work[column].n_unique()),
                "out_of_order_across_keys": n_across,
                "out_of_order_within_keys": n_within,
                "removed_share": round(removed, 4),
                "p99_across_s": _p99(across),
                "p99_within_s": _p99(within),
                "good": n_across > 0 and n_within <= GOOD_SHARE * n_across,
            }
        )
    rows.sort(key=lambda r: (-r["removed_share"], r["distinct_keys"], r["column"]))
    return across, rows


def _p99(values: pl.Series) -> float | None:
    positive = values.drop_nulls()
    if positive.is_empty():
        return None
    return round(as_float(positive.quantile(0.99, "higher")), 3)
