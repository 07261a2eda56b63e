"""Timelines: the units that own a watermark (docs/semantics.md, "Times"). One per partition, or, with
``TIMESTAMP BY ... OVER key``, one per (partition, key) substream, opened on first sight.

Per timeline the engine keeps M (the largest accepted System.Timestamp, ``NEG`` before its
first accepted event) and the arrival of that first accepted event (``POS`` before it).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

from diagnostics.engine.release import NEG, POS
from diagnostics.errors import InputError


class Timelines:
    """The timelines seen so far and their state, indexed by timeline id."""

    def __init__(self) -> None:
        self.partition_of: list[int] = []
        self.m = np.empty(0, dtype=np.int64)
        self.first_arrival = np.empty(0, dtype=np.int64)
        self._keys: pl.DataFrame | None = None  # OVER keys seen so far, with their ids

    def __len__(self) -> int:
        return len(self.partition_of)

    def open(self, part_indexes: Sequence[int]) -> None:
        """Open one timeline per entry (its partition index); ids follow in that order."""
        self.partition_of.extend(int(p) for p in part_indexes)
        self.m = np.r_[self.m, np.full(len(part_indexes), NEG, dtype=np.int64)]
        self.first_arrival = np.r_[
            self.first_arrival, np.full(len(part_indexes), POS, dtype=np.int64)
        ]

    def ids(
        self, batch: pl.DataFrame, over: tuple[str, ...], pidx: pl.Series, arr: pl.Series
    ) -> pl.Series:
        """Each row's timeline id (``__tl``): the partition index without OVER; with OVER the
        (partition, key) substream, -1 where a key is missing. New substreams are opened in
        processing order (arrival, then input order), so ids never depend on batching."""
        if not over:
            return pidx.alias("__tl")
        missing = [c for c in over if c not in batch.columns]
        if missing:
            msg = f"OVER column '{missing[0]}' is missing (columns: {', '.join(batch.columns)})"
            raise InputError(msg)
        names = [f"__k{i}" for i in range(len(over))]
        keys = batch.select(
            *(pl.col(c).cast(pl.String).alias(n) for c, n in zip(over, names, strict=True)),
            pidx.alias("__p"),
        )
        valid = keys.with_columns(arr.alias("__a"), pl.int_range(pl.len()).alias("__i")).filter(
            pl.all_horizontal(pl.col(n).is_not_null() for n in names)
        )
        if not bool((arr.diff().drop_nulls() >= 0).all()):
            valid = valid.sort("__a", "__i", maintain_order=True)
        first_seen = valid.unique(subset=["__p", *names], keep="first", maintain_order=True)
        first_seen = first_seen.select("__p", *names)
        known = self._keys
        if known is None:
            fresh = first_seen
        else:
            fresh = first_seen.join(known, on=["__p", *names], how="anti", maintain_order="left")
        start = len(self)
        fresh = fresh.with_columns(
            pl.int_range(start, start + fresh.height, dtype=pl.Int64).alias("__tl")
        )
        self.open(fresh["__p"].to_list())
        self._keys = fresh if known is None else pl.concat([known, fresh])
        joined = keys.join(
            self._keys, on=["__p", *names], how="left", nulls_equal=False, maintain_order="left"
        )
        return joined["__tl"].fill_null(-1)
