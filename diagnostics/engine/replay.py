"""Whole-capture replay: sort by arrival, feed the incremental engine in batches, assemble.

This is a driver around :class:`~diagnostics.engine.engine.OrderingEngine`; it adds no
semantics of its own beyond the output order (docs/semantics.md, "Watermarks, merge and output release": release time, then System.Timestamp,
then arrival order).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace

import numpy as np
import polars as pl

from diagnostics.captures.names import Rename, rename_taken, renamed
from diagnostics.engine.columns import EventColumns
from diagnostics.engine.engine import OrderingEngine, StagedBatch
from diagnostics.engine.policy import OrderingPolicy
from diagnostics.engine.release import NEG
from diagnostics.errors import InputError, Setting
from diagnostics.scalars import as_int
from diagnostics.timestamps import ACCEPTED_FORMATS, to_utc

Progress = Callable[[int, int], None]


@dataclass(frozen=True, slots=True)
class ReplayResult:
    """A finished replay: ``outcomes`` has one row per input event, in input order.

    ``renames`` lists input columns renamed because an outcome column has their name;
    ``policy`` and ``columns`` then name them as ``outcomes`` does.
    """

    outcomes: pl.DataFrame
    policy: OrderingPolicy
    partitions: tuple[int, ...]
    columns: EventColumns
    renames: tuple[Rename, ...] = ()


def partitions_in(
    events: pl.DataFrame, columns: EventColumns, first_row: int = 0
) -> tuple[int, ...]:
    """The partition values present in ``events`` (``(0,)`` without a partition column);
    ``first_row``: the input row of ``events``' first row (error messages count from it)."""
    name = columns.partition
    if name is None or name not in events.columns:
        return (0,)
    values = events[name].cast(pl.Int64, strict=False)
    bad = values.is_null()
    if bad.any():
        i = int(bad.arg_true()[0])
        msg = (
            f"partition column '{name}', row {first_row + i + 1}: '{events[name][i]}' is not a "
            "partition number"
        )
        raise InputError(msg)
    low, high = as_int(values.min()), as_int(values.max())
    if high - low < 65_536:
        seen = np.flatnonzero(np.bincount(values.to_numpy() - low))
        return tuple(int(v) + low for v in seen)
    return tuple(int(v) for v in values.unique().sort())


#: The most partitions an input may declare: above what an Event Hub or IoT Hub can have, and
#: low enough that the per-partition state of a replay (and of what-if's settings) stays small.
MAX_PARTITIONS = 4_096


def partition_count_problem(count: int) -> str | None:
    """Why ``count`` cannot be an input's partition count (``None``: it can, 1 to
    :data:`MAX_PARTITIONS`)."""
    if count < 1:
        return f"partition count {count}: an input has at least one partition"
    if count > MAX_PARTITIONS:
        return (
            f"partition count {count}: at most {MAX_PARTITIONS:,} (more than an Event Hub or "
            "IoT Hub can have)"
        )
    return None


def declared_partitions(count: int) -> tuple[int, ...]:
    """Partitions 0..count-1, as an Event Hub with ``count`` partitions has (1 to
    :data:`MAX_PARTITIONS`)."""
    problem = partition_count_problem(count)
    if problem is not None:
        raise InputError(problem, Setting.PARTITIONS)
    return tuple(range(count))


def arrival_times(events: pl.DataFrame, columns: EventColumns, first_row: int = 0) -> pl.Series:
    """The capture's arrival times as ``Datetime("ns", "UTC")``; an :class:`InputError` names
    the missing column, an empty capture, or the first row whose arrival is not a time
    (``first_row``: the input row of ``events``' first row)."""
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
        value = events[columns.arrival][i]
        what = "is empty" if value is None else f"'{value}' is not a timestamp"
        msg = (
            f"arrival column '{columns.arrival}', row {first_row + i + 1}: {what} "
            f"(expected {ACCEPTED_FORMATS})"
        )
        raise InputError(msg)
    return arrival


def policy_as_replayed(policy: OrderingPolicy, renames: Sequence[Rename]) -> OrderingPolicy:
    """``policy`` naming its columns as the outcomes do, once ``renames`` (input columns named
    like outcome columns, kept as ``input_<name>``) are applied."""
    if not renames:
        return policy
    ts = None if policy.timestamp_by is None else renamed(policy.timestamp_by, renames)
    return replace(policy, timestamp_by=ts, over=tuple(renamed(c, renames) for c in policy.over))


#: Events per engine batch by default: the result does not depend on it; a quarter of a
#: million keeps the batch's working columns small (a 2M-event replay peaks 0.2 GB lower than
#: with a million) at no measurable CPU cost (docs/performance.md, "Reading an Event Hubs
#: Capture").
BATCH_EVENTS = 250_000


def replay(
    events: pl.DataFrame,
    policy: OrderingPolicy,
    *,
    partitions: Sequence[int] | None = None,
    columns: EventColumns | None = None,
    batch_size: int = BATCH_EVENTS,
    progress: Progress | None = None,
) -> ReplayResult:
    """Replay ``events`` under ``policy``; see :class:`OrderingEngine` for the invariants.

    Events are processed in arrival order (ties: input order), fed in batches of
    ``batch_size``; the result does not depend on ``batch_size``.
    """
    columns = columns or EventColumns()
    events, renames = rename_taken(events)
    if renames:  # input columns named like outcome columns are kept as input_<name>
        part = None if columns.partition is None else renamed(columns.partition, renames)
        columns = replace(columns, arrival=renamed(columns.arrival, renames), partition=part)
        policy = policy_as_replayed(policy, renames)
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
    frames: list[Future[pl.DataFrame]] = []
    collected = _Releases(total)

    step = max(1, batch_size)
    # Three-stage pipeline (numpy and polars release the GIL): batch k+1 is classified here
    # while batch k's releases are resolved in one worker thread, and batch k-1's releases
    # are ranked and its outcome columns built in another; each stage keeps the batch order.
    with (
        ThreadPoolExecutor(max_workers=1, thread_name_prefix="orderdoc-release") as pool,
        ThreadPoolExecutor(max_workers=1, thread_name_prefix="orderdoc-rank") as ranker,
    ):
        committing: Future[pl.DataFrame] | None = None
        ranking: list[Future[None]] = []
        for start in range(0, max(total, 1), step):
            staged = engine.stage(work.slice(start, step))
            frames.append(ranker.submit(_outcomes_of, staged))
            if committing is not None:
                ranking.append(ranker.submit(collected.take, committing.result()))
            committing = pool.submit(collected.commit, engine, staged)
            if progress is not None:
                progress(min(start + step, total), total)
        if committing is not None:
            ranking.append(ranker.submit(collected.take, committing.result()))
        ranking.append(ranker.submit(collected.take, engine.close()))
        for done in ranking:
            done.result()
    del work  # the slim copy is no longer needed: keep the peak memory down
    feed = pl.concat([built.result() for built in frames], rechunk=False)
    frames.clear()
    feed = feed.with_columns(collected.release_times(), collected.output_rank())
    if total and not bool(np.all(perm[1:] > perm[:-1])):
        inverse = np.empty_like(perm)
        inverse[perm] = np.arange(total)
        feed = _gathered(feed, pl.Series(inverse))
    outcomes = pl.concat(
        [events, feed.with_columns(pl.int_range(total, dtype=pl.Int64).alias("event_id"))],
        how="horizontal",
    )
    return ReplayResult(outcomes, policy, parts, columns, renames)


def _gathered(frame: pl.DataFrame, rows: pl.Series) -> pl.DataFrame:
    """``frame``'s ``rows``, two columns at a time (polars releases the GIL: one on each
    core): each column is let go once gathered, so the frame is never held twice (the
    replay's peak memory)."""
    names = frame.columns
    columns: list[pl.Series] = []
    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="orderdoc-gather") as pool:
        for at in range(0, len(names), 2):
            pair = names[at : at + 2]
            columns += pool.map(lambda name, held=frame: held.get_column(name).gather(rows), pair)
            frame = frame.drop(pair)
    return pl.DataFrame(columns)


def _outcomes_of(staged: StagedBatch) -> pl.DataFrame:
    return staged.outcomes


class _Releases:
    """Release times and output ranks of a replay's events, by feed (= arrival order) position.

    Output order (docs/semantics.md, "Watermarks, merge and output release") is release time, then System.Timestamp, then arrival order. It is
    ranked commit by commit, in a worker thread: every release a commit makes known is at
    or before that batch's last arrival, and every later one strictly after it (see
    :mod:`diagnostics.engine.release`), so the ranks of one commit follow those of the
    previous ones. Should a commit ever break that order, the ranks are recomputed over all
    events at the end (the result is the same either way).
    """

    def __init__(self, total: int) -> None:
        self.release = np.zeros(total, dtype=np.int64)
        self.known = np.zeros(total, dtype=bool)
        self.rank = np.full(total, -1, dtype=np.int64)
        self.sys = np.zeros(total, dtype=np.int64)
        self.ranked = 0
        self.latest: int | None = None
        self.in_order = True

    def commit(self, engine: OrderingEngine, staged: StagedBatch) -> pl.DataFrame:
        """Commit ``staged`` (in the worker thread): the releases, for :meth:`take`."""
        self.sys[staged.ids] = staged.t
        return engine.commit(staged)

    def take(self, releases: pl.DataFrame) -> None:
        """Record released events (``event_id``, ``release_time``; null: never released)."""
        times = releases["release_time"]
        known = times.is_not_null().to_numpy()
        ids = releases["event_id"].to_numpy()[known]
        if not len(ids):
            return
        release = times.dt.epoch("ns").to_numpy()[known]
        self.release[ids] = release
        self.known[ids] = True
        if self.latest is not None and int(release.min()) <= self.latest:
            self.in_order = False
        self.latest = max(int(release.max()), self.latest if self.latest is not None else NEG)
        order = _release_order(ids, self.sys[ids], release)
        self.rank[ids[order]] = np.arange(self.ranked, self.ranked + len(ids))
        self.ranked += len(ids)

    def release_times(self) -> pl.Series:
        """``release_time`` (UTC, null where never released), by feed position."""
        series = pl.Series("release_time", np.where(self.known, self.release, 0))
        series = series.cast(pl.Datetime("ns")).dt.replace_time_zone("UTC")
        return series.set(pl.Series(~self.known), None)

    def output_rank(self) -> pl.Series:
        """``output_rank`` by feed position (null where never released)."""
        rank = self.rank
        if not self.in_order:
            released = np.flatnonzero(self.known)
            order = np.lexsort((released, self.sys[released], self.release[released]))
            rank = np.full(len(self.known), -1, dtype=np.int64)
            rank[released[order]] = np.arange(len(released))
        series = pl.Series("output_rank", rank)
        return series.set(series < 0, None)


def _release_order(ids: np.ndarray, sys_ns: np.ndarray, release: np.ndarray) -> np.ndarray:
    """The permutation that sorts events by (release, System.Timestamp, id).

    Usually release times rise with System.Timestamp, so the events are already in order
    (the engine hands the merge rule's releases over by System.Timestamp) or one sort by
    System.Timestamp (ids, ascending, break its ties) is the answer; both are checked, and a
    three-key sort is the fallback.
    """
    if len(ids) < 2:
        return np.arange(len(ids))
    if bool(np.all(sys_ns[1:] > sys_ns[:-1])) and bool(np.all(release[1:] >= release[:-1])):
        return np.arange(len(ids))
    if bool(np.all(ids[1:] > ids[:-1])):
        order = np.argsort(sys_ns)
        by_sys = sys_ns[order]
        if not bool(np.all(by_sys[1:] > by_sys[:-1])):
            order = np.argsort(sys_ns, kind="stable")  # equal timestamps: ids stay in order
        by_release = release[order]
        if bool(np.all(by_release[1:] >= by_release[:-1])):
            return order
    return np.lexsort((ids, sys_ns, release))
