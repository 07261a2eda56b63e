"""Whole-capture replay: sort by arrival, feed the incremental engine in batches, assemble.

This is a driver around :class:`~diagnostics.engine.engine.OrderingEngine`; it adds no
semantics of its own beyond the output order (spec §4: release time, then System.Timestamp,
then arrival order).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import polars as pl

from diagnostics.engine.columns import EventColumns
from diagnostics.engine.engine import OrderingEngine
from diagnostics.engine.policy import OrderingPolicy
from diagnostics.errors import InputError
from diagnostics.timestamps import to_utc

Progress = Callable[[int, int], None]


@dataclass(frozen=True, slots=True)
class ReplayResult:
    """A finished replay: ``outcomes`` has one row per input event, in input order."""

    outcomes: pl.DataFrame
    policy: OrderingPolicy
    partitions: tuple[int, ...]
    columns: EventColumns


def partitions_in(events: pl.DataFrame, columns: EventColumns) -> tuple[int, ...]:
    """The partition values present in ``events`` (``(0,)`` without a partition column)."""
    name = columns.partition
    if name is None or name not in events.columns:
        return (0,)
    values = events[name].cast(pl.Int64, strict=False)
    bad = values.is_null()
    if bad.any():
        i = int(bad.arg_true()[0])
        msg = (
            f"partition column '{name}', row {i + 1}: '{events[name][i]}' is not a partition number"
        )
        raise InputError(msg)
    low, high = values.min(), values.max()
    if high - low < 65_536:  # type: ignore[operator]
        seen = np.flatnonzero(np.bincount(values.to_numpy() - low))  # type: ignore[operator]
        return tuple(int(v) + int(low) for v in seen)  # type: ignore[arg-type]
    return tuple(int(v) for v in values.unique().sort())


def declared_partitions(count: int) -> tuple[int, ...]:
    """Partitions 0..count-1, as an Event Hub with ``count`` partitions has."""
    if count < 1:
        msg = f"--partitions {count}: an input has at least one partition"
        raise InputError(msg)
    return tuple(range(count))


def arrival_times(events: pl.DataFrame, columns: EventColumns) -> pl.Series:
    """The capture's arrival times as ``Datetime("ns", "UTC")``; an :class:`InputError` names
    the missing column, an empty capture, or the first row whose arrival is not a time."""
    if columns.arrival not in events.columns:
        msg = (
            f"arrival column '{columns.arrival}' is missing (columns: {', '.join(events.columns)})"
        )
        raise InputError(msg)
    if events.height == 0:
        msg = "the capture holds no events"
        raise InputError(msg)
    arrival = to_utc(events[columns.arrival])
    bad = arrival.is_null()
    if bad.any():
        i = int(bad.arg_true()[0])
        msg = f"arrival column '{columns.arrival}', row {i + 1}: '{events[columns.arrival][i]}' is not a timestamp"
        raise InputError(msg)
    return arrival


def replay(
    events: pl.DataFrame,
    policy: OrderingPolicy,
    *,
    partitions: Sequence[int] | None = None,
    columns: EventColumns | None = None,
    batch_size: int = 1_000_000,
    progress: Progress | None = None,
) -> ReplayResult:
    """Replay ``events`` under ``policy``; see :class:`OrderingEngine` for the invariants.

    Events are processed in arrival order (ties: input order), fed in batches of
    ``batch_size``; the result does not depend on ``batch_size``.
    """
    columns = columns or EventColumns()
    arrival = arrival_times(events, columns)
    parts = tuple(partitions) if partitions is not None else partitions_in(events, columns)
    total = events.height
    arrival_ns = arrival.dt.epoch("ns").to_numpy()
    perm = np.argsort(arrival_ns, kind="stable")
    needed = [columns.arrival, columns.partition, policy.timestamp_by, *policy.over]
    slim = [c for c in dict.fromkeys(needed) if c is not None and c in events.columns]
    work = events.select(slim).with_columns(
        pl.int_range(total, dtype=pl.Int64).alias(columns.row),
        arrival.alias(columns.parsed_arrival),
    )
    if total and not bool(np.all(perm[1:] > perm[:-1])):
        work = work[perm]
    engine = OrderingEngine(policy, parts, columns)
    frames: list[pl.DataFrame] = []
    release = np.full(total, -1, dtype=np.int64)
    has_release = np.zeros(total, dtype=bool)

    def take(releases: pl.DataFrame) -> None:
        ids = releases["event_id"].to_numpy()
        times = releases["release_time"]
        known = times.is_not_null().to_numpy()
        release[ids[known]] = times.dt.epoch("ns").to_numpy()[known]
        has_release[ids[known]] = True

    step = max(1, batch_size)
    # Two-stage pipeline: batch k+1 is classified while batch k's releases are resolved in a
    # worker thread (numpy and polars release the GIL), in order.
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="orderdoc-release") as pool:
        committing: Future[pl.DataFrame] | None = None
        for start in range(0, max(total, 1), step):
            staged = engine.stage(work.slice(start, step))
            frames.append(staged.outcomes)
            if committing is not None:
                take(committing.result())
            committing = pool.submit(engine.commit, staged)
            if progress is not None:
                progress(min(start + step, total), total)
        if committing is not None:
            take(committing.result())
    take(engine.close())
    del work  # the slim copy is no longer needed: keep the peak memory down
    feed = pl.concat(frames, rechunk=False)
    frames.clear()
    released = pl.Series("release_time", np.where(has_release, release, 0))
    released = released.cast(pl.Datetime("ns")).dt.replace_time_zone("UTC")
    feed = feed.with_columns(
        released.set(pl.Series(~has_release), None).alias("release_time"),
        _output_rank(release, has_release, feed["system_timestamp"]),
    )
    if total and not bool(np.all(perm[1:] > perm[:-1])):
        inverse = np.empty_like(perm)
        inverse[perm] = np.arange(total)
        feed = feed[inverse]
    outcomes = pl.concat(
        [events, feed.with_columns(pl.int_range(total, dtype=pl.Int64).alias("event_id"))],
        how="horizontal",
    )
    return ReplayResult(outcomes, policy, parts, columns)


def _output_rank(
    release: np.ndarray, has_release: np.ndarray, system_timestamp: pl.Series
) -> pl.Series:
    """Output position of each released event (arrays in feed = arrival order): by release
    time, then System.Timestamp, then arrival order (spec §4)."""
    released = np.flatnonzero(has_release)
    sys_ns = system_timestamp.dt.epoch("ns").to_numpy()[released]
    order = np.lexsort((released, sys_ns, release[released]))
    rank = np.full(len(release), -1, dtype=np.int64)
    rank[released[order]] = np.arange(len(released))
    series = pl.Series("output_rank", rank)
    return series.set(series < 0, None)
