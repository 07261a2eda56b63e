"""Watermark delay (``OutputWatermarkDelaySeconds``): τ − governing watermark(τ), per minute.

docs/semantics.md, "Watermarks, merge and output release": the per-minute metric is the maximum within the minute, per partition and for the
job. For one timeline with running maximum M(τ)::

    delay(τ) = 5 s + late                        before its first accepted event
    delay(τ) = min(τ − M(τ) + ooo, late)         from then on

Between arrivals the delay only grows, and it drops when M rises, so its maximum within a
minute is reached just before an arrival that raises M, or at the end of the minute (or of
the replay). Those are the only points evaluated, which makes the computation exact and
linear in the number of events.

A partition's delay is that of its own watermark; with ``TIMESTAMP BY ... OVER`` a
partition's watermark is the minimum over its substreams (a substream exists from its first
event), so its M is the minimum of the substreams' M. The job's delay is the maximum over
partitions (τ minus the minimum watermark), whether or not the job uses PARTITION BY.

**Decision** (unlimited late tolerance): an unstarted timeline's watermark is −∞; its delay is
reported as τ minus the replay's first arrival (how long the output has been held back),
not as infinity. Processing time runs from the first to the last arrival of the capture
unless ``until`` says otherwise. Minutes are those of ``diagnostics.minutes.minute_grid``
(minutes with arrivals and up to an hour after each): a longer idle gap is not sampled.
"""

from __future__ import annotations

import heapq
from typing import Literal

import numpy as np
import polars as pl

from diagnostics.durations import MINUTE
from diagnostics.engine.policy import UNSTARTED_ESTIMATE_NS
from diagnostics.engine.release import NEG
from diagnostics.engine.replay import ReplayResult
from diagnostics.minutes import minute_grid, minute_of
from diagnostics.scalars import as_int

_SCHEMA: dict[str, pl.DataType | type[pl.DataType]] = {
    "time": pl.Datetime("ns", "UTC"),
    "partition_id": pl.Int64,
}


def substream_minimum(arr: np.ndarray, tl: np.ndarray, ts: np.ndarray) -> np.ndarray:
    """M of a partition whose watermark is the minimum over substreams, after each event."""
    current: dict[int, int] = {}
    heap: list[tuple[int, int]] = []
    out = np.empty(len(arr), dtype=np.int64)
    for i in range(len(arr)):
        key, value = int(tl[i]), int(ts[i])
        if value > current.get(key, NEG):
            current[key] = value
            heapq.heappush(heap, (value, key))
        while heap and current[heap[0][1]] != heap[0][0]:
            heapq.heappop(heap)
        out[i] = heap[0][0]
    return out


def timeline_delays(
    arr: np.ndarray,
    m_after: np.ndarray,
    *,
    tau0: int,
    tau_end: int,
    grid: np.ndarray,
    late: int | None,
    ooo: int,
) -> tuple[np.ndarray, np.ndarray]:
    """Sample points (ns) and the delay (ns) there, for one timeline (a sample counts in the
    minute it falls in)."""

    def cap(values: np.ndarray) -> np.ndarray:
        return values if late is None else np.minimum(values, late)

    def unstarted(at: np.ndarray) -> np.ndarray:
        if late is None:
            return at - tau0
        return np.full(at.shape, UNSTARTED_ESTIMATE_NS + late, dtype=np.int64)

    def at_times(times: np.ndarray, side: Literal["left", "right"]) -> np.ndarray:
        if not len(arr):
            return unstarted(times)
        idx = np.searchsorted(arr, times, side=side) - 1
        m = np.where(idx >= 0, m_after[np.maximum(idx, 0)], NEG)
        return np.where(m > NEG, cap(times - m + ooo), unstarted(times))

    ends = grid + MINUTE
    ends = ends[(ends > tau0) & (ends <= tau_end)]
    points = [ends - 1, np.array([tau_end], dtype=np.int64)]
    values = [at_times(ends, "left"), at_times(np.array([tau_end], dtype=np.int64), "right")]
    if len(arr):
        # just before each distinct arrival, M is the value after the previous event; only
        # arrivals that raise M end a rise of the delay (at the others it keeps growing up
        # to a later point of the same minute: the next such arrival or the minute's end)
        change = np.flatnonzero(np.r_[True, arr[1:] != arr[:-1]])
        m = np.where(change > 0, m_after[np.maximum(change - 1, 0)], NEG)
        raises = m_after[np.r_[change[1:] - 1, len(arr) - 1]] > m
        change, m = change[raises], m[raises]
        inside = (arr[change] > tau0) & (arr[change] <= tau_end)
        change, m = change[inside], m[inside]
        a = arr[change]
        points.append(a - 1)
        values.append(np.where(m > NEG, cap(a - m + ooo), unstarted(a)))
    return np.concatenate(points), np.concatenate(values)


def watermark_delay_per_minute(result: ReplayResult, *, until: int | None = None) -> pl.DataFrame:
    """Per minute: ``time`` (minute start), ``partition_id`` (null = the job) and
    ``OutputWatermarkDelaySeconds`` (maximum within the minute), sorted by time, partition.

    ``until`` (ns) extends processing time beyond the capture's last arrival.
    """
    out = result.outcomes
    if out.is_empty():
        return pl.DataFrame(schema={**_SCHEMA, "OutputWatermarkDelaySeconds": pl.Float64})
    policy = result.policy
    late, ooo = policy.effective_late_ns, policy.effective_ooo_ns
    arrivals = out["arrival"]
    tau0 = as_int(arrivals.dt.epoch("ns").min())
    tau_end = max(as_int(arrivals.dt.epoch("ns").max()), until or 0)
    grid = minute_grid(np.r_[minute_of(arrivals.dt.epoch("ns").to_numpy()), minute_of(tau_end)])
    # Per partition, its accepted events in processing order (arrival, then input order);
    # one partition at a time (a filter per partition) keeps the peak memory low.
    columns = [
        pl.col("arrival").dt.epoch("ns").alias("a"),
        pl.col("system_timestamp").dt.epoch("ns").alias("t"),
    ]
    if policy.over:
        columns.append(pl.col("timeline").fill_null(-1).alias("tl"))
    accepted = out.lazy().filter(~pl.col("dropped"))
    frames = []
    for p in result.partitions:
        mine = accepted.filter(pl.col("partition") == p).select(columns).collect()
        arr = mine["a"].to_numpy()
        order = None
        if not bool(np.all(arr[1:] >= arr[:-1])):
            order = np.argsort(arr, kind="stable")
            arr = arr[order]
        mine_ts = mine["t"].to_numpy()
        mine_ts = mine_ts if order is None else mine_ts[order]
        if policy.over:
            timelines = mine["tl"].to_numpy()
            timelines = timelines if order is None else timelines[order]
            m_after = substream_minimum(arr, timelines, mine_ts)
        else:
            m_after = np.maximum.accumulate(mine_ts) if len(mine_ts) else mine_ts
        times, delays = timeline_delays(
            arr, m_after, tau0=tau0, tau_end=tau_end, grid=grid, late=late, ooo=ooo
        )
        per_minute = (
            pl.DataFrame({"m": minute_of(times), "d": delays}).group_by("m").agg(pl.col("d").max())
        )
        frames.append(per_minute.with_columns(pl.lit(p, dtype=pl.Int64).alias("partition_id")))
    return delay_table(pl.concat(frames))


def delay_table(per_partition: pl.DataFrame) -> pl.DataFrame:
    """The table of :func:`watermark_delay_per_minute` from each partition's delay maximum
    per minute (columns ``m``: minute start ns, ``partition_id``, ``d``: ns; one row per
    partition and minute of the grid): the job's row is the maximum over partitions."""
    per_partition = per_partition.select("m", "partition_id", "d")
    job = (
        per_partition.group_by("m")
        .agg(pl.col("d").max())
        .with_columns(pl.lit(None, dtype=pl.Int64).alias("partition_id"))
    )
    table = pl.concat([per_partition, job.select(per_partition.columns)])
    return table.select(
        pl.col("m").cast(pl.Datetime("ns")).dt.replace_time_zone("UTC").alias("time"),
        "partition_id",
        (pl.col("d") / 1e9).alias("OutputWatermarkDelaySeconds"),
    ).sort("time", "partition_id", nulls_last=False)
