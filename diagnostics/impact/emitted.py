"""When the job emits each window, from the replay's release times.

A window is output once the watermark has passed its end: the release time of the first
event at or after the end (by System.Timestamp) is when that happened. Without PARTITION BY
every partition is released by one merged watermark, so that first event is looked for among
all events; with PARTITION BY PartitionId (and OVER substreams) each timeline has its own
watermark, so it is looked for in every timeline the window's events come from and the
window is out when the last of them has passed its end.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from diagnostics.impact.windows import END, ID

RELEASE = "__release"


def _released(outcomes: pl.DataFrame, by: list[str]) -> pl.LazyFrame:
    """Released events by System.Timestamp, each with the earliest release at or after it."""
    released = (
        outcomes.lazy()
        .filter(pl.col("system_timestamp").is_not_null() & pl.col("release_time").is_not_null())
        .select(
            *(pl.col(c) for c in by),
            pl.col("system_timestamp").dt.epoch("ns").alias("__at_sys"),
            pl.col("release_time").dt.epoch("ns").alias(RELEASE),
        )
        .sort([*by, "__at_sys"])
    )
    later_min = pl.col(RELEASE).reverse().cum_min().reverse()
    return released.with_columns(later_min.over(by) if by else later_min)


def emitted_at(
    outcomes: pl.DataFrame, pairs: pl.LazyFrame, on: Sequence[str], *, per_timeline: bool
) -> pl.LazyFrame:
    """``on`` (keys and window end) with ``__release``: when each emitted window is out
    (null when the replay never releases anything at or after its end)."""
    on = list(on)
    if not per_timeline:
        windows = pairs.select(on).unique().sort(END)
        found = windows.join_asof(
            _released(outcomes, []), left_on=END, right_on="__at_sys", strategy="forward"
        )
        return found.select(*on, RELEASE)
    timelines = outcomes.lazy().select(pl.col("event_id").alias(ID), "timeline")
    windows = (
        pairs.join(timelines, on=ID, how="left")
        .select(*on, "timeline")
        .unique()
        .drop_nulls("timeline")
        .sort(END)
    )
    found = windows.join_asof(
        _released(outcomes, ["timeline"]),
        left_on=END,
        right_on="__at_sys",
        by="timeline",
        strategy="forward",
        check_sortedness=False,  # sorted by the end within each timeline, as required
    )
    # out once every timeline has passed the end; never, if one of them never does
    return found.group_by(on).agg(
        pl.when(pl.col(RELEASE).null_count() == 0).then(pl.col(RELEASE).max()).alias(RELEASE)
    )
