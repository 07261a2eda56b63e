"""Which windows each event belongs to, by ASA's window rules, in polars (lazily).

Rules (ASA's "Windowing functions", "Tumbling window", "Hopping window", "Sliding window"
and "Session window" pages): a window holds the events with timestamp > its start and <= its
end, and its output's System.Timestamp is its end. Windows are aligned to time zero
(1970-01-01T00:00:00Z); ``Offset`` moves every boundary by the offset. Tumbling windows do
not overlap; hopping windows start every hop, so an event is in every window whose end is in
``[t, t + size)``; a sliding window is output at the moments its content changes, when an
event enters (its end at the event's time) or leaves (its end at the event's time + size).
A session window opens with its first event, takes the next event when it comes within the
timeout of the previous one, and closes at the last event + timeout, or at the first
maximum-duration check point (multiples of the maximum duration since time zero) that is at
least the maximum duration after its start, where the next window opens. With a partition
key, sessions are per key; without one, over all the step's events.

Input frames carry ``__id`` (event), ``__t`` (its time, Int64 ns), the group keys and, for a
session window with a partition key, ``__p``. Output: one row per (event, window) with
``__end`` (Int64 ns).
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from diagnostics.impact.model import Window, WindowKind

ID, TIME, END, PART = "__id", "__t", "__end", "__p"


def _ceil(expr: pl.Expr, size: int) -> pl.Expr:
    """The smallest multiple of ``size`` at or above ``expr`` (Int64, any sign)."""
    return -((-expr) // size) * size


def _tumbling(frame: pl.LazyFrame, window: Window) -> pl.LazyFrame:
    t = pl.col(TIME)
    return frame.with_columns((_ceil(t - window.offset, window.size) + window.offset).alias(END))


def _hopping(frame: pl.LazyFrame, window: Window) -> pl.LazyFrame:
    t = pl.col(TIME)
    first = _ceil(t - window.offset, window.hop) + window.offset
    count = -((-(t + window.size - first)) // window.hop)
    return (
        frame.with_columns(
            first.alias(END), pl.int_ranges(0, count.clip(lower_bound=0)).alias("__k")
        )
        .explode("__k")
        .drop_nulls("__k")
        .with_columns((pl.col(END) + pl.col("__k") * window.hop).alias(END))
        .drop("__k")
    )


def _sliding(frame: pl.LazyFrame, window: Window, keys: Sequence[str]) -> pl.LazyFrame:
    """Ends are every event time and every event time + size, per key; an event is in the
    windows ending in ``[t, t + size)``, found by position among its key's sorted ends."""
    keys = list(keys)
    ends = (
        pl.concat(
            [
                frame.select([*keys, pl.col(TIME).alias(END)]),
                frame.select([*keys, (pl.col(TIME) + window.size).alias(END)]),
            ]
        )
        .unique()
        .sort([*keys, END], nulls_last=True)
        .with_columns(pl.int_range(pl.len(), dtype=pl.Int64).alias("__pos"))
    )
    lo = ends.rename({END: TIME, "__pos": "__lo"})
    hi = ends.rename({END: "__hi_t", "__pos": "__hi"})
    placed = (
        frame.with_columns((pl.col(TIME) + window.size).alias("__hi_t"))
        .join(lo, on=[*keys, TIME], how="left", nulls_equal=True)
        .join(hi, on=[*keys, "__hi_t"], how="left", nulls_equal=True)
        .with_columns(pl.int_ranges("__lo", "__hi").alias("__pos"))
        .explode("__pos")
        .drop_nulls("__pos")
        .drop("__lo", "__hi", "__hi_t")
    )
    return placed.join(ends.select("__pos", END), on="__pos", how="left").drop("__pos")


def _session(frame: pl.LazyFrame, window: Window) -> pl.LazyFrame:
    part = [PART] if window.partition_key else []
    timeout, longest = window.size, window.max_duration
    t = pl.col(TIME)
    ordered = frame.sort([*part, TIME])
    gap = (t - t.shift(1).over(part)) if part else (t - t.shift(1))
    first_of_part = pl.col("__first_of_part")
    with_ids = ordered.with_columns(
        (pl.int_range(pl.len()).over(part) == 0).alias("__first_of_part")
        if part
        else (pl.int_range(pl.len()) == 0).alias("__first_of_part")
    ).with_columns(
        (first_of_part | (gap > timeout).fill_null(True)).cast(pl.Int64).cum_sum().alias("__gid")
    )
    start = t.min().over("__gid")
    check = _ceil(start + longest, longest)
    seg = pl.when(t <= check).then(0).otherwise(_ceil(t - check, longest) // longest)
    segmented = with_ids.with_columns(seg.alias("__seg"), check.alias("__check"))
    close = pl.col("__check") + pl.col("__seg") * longest
    last = t.max().over(["__gid", "__seg"])
    return segmented.with_columns(pl.min_horizontal(last + timeout, close).alias(END)).drop(
        "__first_of_part", "__gid", "__seg", "__check"
    )


def assign(frame: pl.LazyFrame, window: Window, keys: Sequence[str]) -> pl.LazyFrame:
    """One row per event and window it belongs to, with the window's end as ``__end``."""
    kind = window.kind
    if kind is WindowKind.TUMBLING:
        return _tumbling(frame, window)
    if kind is WindowKind.HOPPING:
        return _hopping(frame, window)
    if kind is WindowKind.SLIDING:
        return _sliding(frame, window, keys)
    return _session(frame, window)
