"""One setting of a sweep, evaluated by the engine itself.

There is one implementation of the ordering semantics (``diagnostics.engine``); a sweep
only avoids repeating what does not depend on the setting. :func:`prepare` parses both
times, resolves the partitions and sorts the capture into arrival order once; each setting
is then a single-batch run of :class:`~diagnostics.engine.engine.OrderingEngine` on that
prepared frame (no re-parsing, no output files, no output ranks), and :func:`evaluate`
reduces its outcomes and releases to counts and release-delay percentiles.

Who runs the engine is injected: an :class:`Evaluator` takes a prepared capture and a batch
of settings and gives each one's :class:`Measures`. :func:`evaluate_locally` runs them here,
one after the other; ``whatif --spark`` passes the Spark evaluator
(:mod:`diagnostics.spark.whatif`: settings × partitions as Spark tasks), which gives the
same numbers. The search that chooses the settings stays in
:mod:`diagnostics.whatif.recommend` either way.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

import numpy as np
import polars as pl

from diagnostics.engine.columns import EventColumns
from diagnostics.engine.engine import OrderingEngine
from diagnostics.engine.policy import EARLY_WINDOW_NS, OrderingPolicy
from diagnostics.engine.replay import arrival_times, partitions_in
from diagnostics.errors import InputError, Setting
from diagnostics.timestamps import to_utc

T = TypeVar("T")


@dataclass(frozen=True)
class Prepared:
    """A capture parsed and sorted once: only the columns the engine reads, in arrival order
    (ties: input order), times already ``Datetime("ns", "UTC")``."""

    frame: pl.DataFrame
    partitions: tuple[int, ...]
    columns: EventColumns
    #: what is worked out once from it (its partitions apart: :func:`by_partition`), not
    #: part of its value
    memo: dict[str, object] = field(default_factory=dict, compare=False, repr=False)

    @property
    def size(self) -> int:
        """Number of events."""
        return self.frame.height


@dataclass(frozen=True)
class Kinds:
    """Events late, out of order, early, and late or out of order (each once), under one
    setting: what a fix's measurement counts besides :class:`Measures`."""

    late: int
    out_of_order: int
    early: int
    late_or_out_of_order: int

    def __add__(self, other: Kinds) -> Kinds:
        return Kinds(
            self.late + other.late,
            self.out_of_order + other.out_of_order,
            self.early + other.early,
            self.late_or_out_of_order + other.late_or_out_of_order,
        )

    @classmethod
    def of(cls, flags: pl.DataFrame) -> Kinds:
        """The counts of an outcome frame's (or a fix's flags') ``late``,
        ``out_of_order`` and ``early``."""
        late, ooo = flags["late"], flags["out_of_order"]
        return cls(
            late=int(late.sum()),
            out_of_order=int(ooo.sum()),
            early=int(flags["early"].sum()),
            late_or_out_of_order=int((late | ooo).sum()),
        )


@dataclass(frozen=True)
class Evaluation:
    """What one setting did to the capture."""

    events: int
    adjusted: int
    dropped: int
    never_released: int
    delays_s: np.ndarray  # release delay (release − arrival) of every released event, seconds
    kinds: Kinds | None = None


def prepare(
    events: pl.DataFrame,
    timestamp_by: str,
    over: Sequence[str] = (),
    *,
    columns: EventColumns | None = None,
    partitions: Sequence[int] | None = None,
    parsed: pl.Series | None = None,
) -> Prepared:
    """Parse and sort ``events`` once (errors name the column and row, like the engine's);
    ``parsed``: the TIMESTAMP BY column already read as the engine reads it
    (:func:`~diagnostics.timestamps.to_utc`), one value per event, when it was elsewhere."""
    columns = columns or EventColumns()
    arrival = arrival_times(events, columns)
    _check_named(events, timestamp_by, over)
    parts = tuple(partitions) if partitions is not None else partitions_in(events, columns)
    keep = [c for c in dict.fromkeys([columns.partition, *over]) if c and c in events.columns]
    frame = events.select(
        pl.int_range(pl.len(), dtype=pl.Int64).alias(columns.row), *keep
    ).with_columns(
        arrival.alias(columns.parsed_arrival),
        (to_utc(events[timestamp_by]) if parsed is None else parsed).alias(timestamp_by),
    )
    frame = frame.sort(columns.parsed_arrival, columns.row, maintain_order=True)
    return Prepared(frame.rechunk(), parts, columns)


def _check_named(events: pl.DataFrame, timestamp_by: str, over: Sequence[str]) -> None:
    named = ((timestamp_by, Setting.TIMESTAMP_BY), *((c, Setting.OVER) for c in over))
    for name, setting in named:
        if name not in events.columns:
            what = "TIMESTAMP BY column" if setting is Setting.TIMESTAMP_BY else "OVER column"
            msg = f"{what} '{name}' is missing (columns: {', '.join(events.columns)})"
            raise InputError(msg, setting)


def with_over(
    base: Prepared, events: pl.DataFrame, timestamp_by: str, over: Sequence[str]
) -> Prepared:
    """``prepare(events, timestamp_by, over)`` from ``base``, ``prepare(events,
    timestamp_by)``: the OVER columns taken from ``events`` in ``base``'s order, with no
    parsing or sorting again (the same frame, column for column)."""
    columns = base.columns
    _check_named(events, timestamp_by, over)
    keep = [c for c in dict.fromkeys([columns.partition, *over]) if c and c in events.columns]
    if timestamp_by in keep:  # the time is also a key: as prepare lays it out
        return prepare(events, timestamp_by, over, columns=columns, partitions=base.partitions)
    present = set(base.frame.columns)
    rows = base.frame[columns.row]
    added = [events[c].gather(rows) for c in keep if c not in present]
    frame = base.frame.with_columns(added).select(
        columns.row, *keep, columns.parsed_arrival, timestamp_by
    )
    return Prepared(frame, base.partitions, columns)


@dataclass(frozen=True)
class Unsaveable:
    """Events no ordering setting can keep, counted apart from the recommender's budget:
    ``early`` more than ASA's fixed 5-minute early window ahead of their arrival (fix: the
    senders' clocks), ``invalid`` without a valid application time (fix: the senders'
    timestamps). docs/semantics.md, "The rules, as implemented"."""

    early: int = 0
    invalid: int = 0

    @property
    def total(self) -> int:
        """Both kinds."""
        return self.early + self.invalid


def unsaveable_masks(
    prepared: Prepared, timestamp_by: str, *, early_policy: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """(early, invalid) per event of ``prepared``, in its (processing) order: the events no
    setting can keep (an early event has a valid time)."""
    app = prepared.frame[timestamp_by].dt.epoch("ns")
    invalid = app.is_null().to_numpy()
    if not early_policy:
        return np.zeros_like(invalid), invalid
    arrival = prepared.frame[prepared.columns.parsed_arrival].dt.epoch("ns")
    early = ((app - arrival) > EARLY_WINDOW_NS).fill_null(value=False).to_numpy()
    return early, invalid


def unsaveable(prepared: Prepared, timestamp_by: str, *, early_policy: bool = True) -> Unsaveable:
    """How many events of ``prepared`` no setting can keep (:class:`Unsaveable`)."""
    early, invalid = unsaveable_masks(prepared, timestamp_by, early_policy=early_policy)
    return Unsaveable(early=int(early.sum()), invalid=int(invalid.sum()))


#: The release-delay percentiles every table shows (an event's own delay: the "higher" method).
PERCENTILES = (("p50", 0.50), ("p95", 0.95), ("max", 1.0))


def delay_points(delays_s: np.ndarray) -> dict[str, float | None]:
    """p50, p95 and max of release delays in seconds (``None`` without a released event):
    the one definition of the p95 release delay that whatif, the fix and the app show."""
    if not delays_s.size:
        return {name: None for name, _ in PERCENTILES}
    points = np.quantile(delays_s, [q for _, q in PERCENTILES], method="higher")
    return {name: float(points[i]) for i, (name, _) in enumerate(PERCENTILES)}


def delay_ranks(n: int) -> list[int]:
    """For ``n`` sorted release delays, the position of each of :data:`PERCENTILES` (numpy's
    ``quantile(..., method="higher")``), so an evaluator that sorts the delays elsewhere picks
    the values :func:`delay_points` gives."""
    if n <= 0:
        return []
    return [min(math.ceil((n - 1) * q), n - 1) for _, q in PERCENTILES]


@dataclass(frozen=True)
class Measures:
    """One setting's numbers as every what-if table shows them (delays in seconds, ``None``
    without a released event)."""

    events: int
    adjusted: int
    dropped: int
    never_released: int
    delay_p50_s: float | None
    delay_p95_s: float | None
    delay_max_s: float | None
    #: the run's late, out-of-order and early counts, when it was made here (a fix reads
    #: them for a setting with PARTITION BY); not part of the table's numbers
    kinds: Kinds | None = field(default=None, compare=False)

    @classmethod
    def of(cls, result: Evaluation) -> Measures:
        """The numbers of one engine run."""
        points = delay_points(result.delays_s)
        return cls(
            events=result.events,
            adjusted=result.adjusted,
            dropped=result.dropped,
            never_released=result.never_released,
            delay_p50_s=points["p50"],
            delay_p95_s=points["p95"],
            delay_max_s=points["max"],
            kinds=result.kinds,
        )

    @classmethod
    def of_flags(cls, flags: pl.DataFrame) -> Measures:
        """The numbers of one engine run from its outcome flags (``late``,
        ``out_of_order``, ``dropped``, ``arrival``, ``release_time``: a fix's measurement,
        :data:`diagnostics.whatif.replays.FLAGS`): the same as :meth:`of` the run (an event
        is adjusted when late or out of order and not dropped, as its status says)."""
        dropped = flags["dropped"]
        released = flags["release_time"].is_not_null()
        delay_ns = (flags["release_time"] - flags["arrival"]).dt.total_nanoseconds()
        return cls.of(
            Evaluation(
                events=flags.height,
                adjusted=int(((flags["late"] | flags["out_of_order"]) & ~dropped).sum()),
                dropped=int(dropped.sum()),
                never_released=flags.height - int(dropped.sum()) - int(released.sum()),
                delays_s=delay_ns.filter(released).to_numpy() / 1e9,
                kinds=Kinds.of(flags),
            )
        )


class Evaluator(Protocol):
    """Runs the engine on ``prepared`` under each of ``policies``; one :class:`Measures` per
    policy, in their order."""

    def __call__(
        self, prepared: Prepared, policies: Sequence[OrderingPolicy]
    ) -> list[Measures]: ...


#: Partitions the local evaluator runs the engine on at once (a setting that releases each
#: partition on its own): each run holds its partition's working arrays only.
PARTITION_WORKERS = 2


def evaluate_locally(prepared: Prepared, policies: Sequence[OrderingPolicy]) -> list[Measures]:
    """The :class:`Evaluator` of this process: each policy in turn, by :func:`evaluate` on
    the whole capture, or, when the policy releases each partition on its own (``PARTITION
    BY PartitionId``), partition by partition on up to :data:`PARTITION_WORKERS` threads
    (the engine lets go of Python's lock in numpy and polars), the counts summed and the
    release delays pooled: the same numbers (``tests/whatif/test_evaluate.py``), as the
    Spark evaluator's tasks give them (:mod:`diagnostics.spark.whatif`)."""
    units = by_partition(prepared) if any(p.partition_by for p in policies) else None
    return [
        Measures.of(
            evaluate(prepared, policy)
            if units is None or not policy.partition_by
            else pooled(units, policy)
        )
        for policy in policies
    ]


def by_partition(prepared: Prepared) -> list[Prepared] | None:
    """``prepared`` as one prepared capture per partition that has events (each in
    processing order), or ``None`` when it is one partition or some event's partition is
    not among its own (the engine then refuses the whole, with its error). Worked out once
    per prepared capture (a search evaluates each of its settings on it)."""
    if "by_partition" not in prepared.memo:
        prepared.memo["by_partition"] = split_by_partition(prepared)
    return prepared.memo["by_partition"]  # type: ignore[return-value]


def refused_partition(prepared: Prepared) -> bool:
    """Whether some event has no partition number or one not among ``prepared.partitions``
    (the engine refuses the capture with one error naming the row; no split may leave the
    event out): the one rule for the local evaluator and the Spark evaluator's tasks."""
    name = prepared.columns.partition
    if name is None or name not in prepared.frame.columns:
        return False
    values = prepared.frame[name].cast(pl.Int64, strict=False)
    return bool(values.null_count()) or not bool(values.is_in(list(prepared.partitions)).all())


def split_by_partition(prepared: Prepared) -> list[Prepared] | None:
    """:func:`by_partition` worked out (not kept)."""
    name = prepared.columns.partition
    if len(prepared.partitions) < 2 or name is None or name not in prepared.frame.columns:
        return None
    if refused_partition(prepared):
        return None  # the whole run raises the engine's error
    values = prepared.frame[name].cast(pl.Int64)
    units = [
        Prepared(prepared.frame.filter(values == part), (part,), prepared.columns)
        for part in prepared.partitions
    ]
    return [unit for unit in units if unit.size]


def each_unit(units: Sequence[Prepared], work: Callable[[Prepared], T]) -> list[T]:
    """``work`` on each partition's capture, up to :data:`PARTITION_WORKERS` at once."""
    workers = min(PARTITION_WORKERS, os.cpu_count() or 1, len(units))
    if workers < 2:
        return [work(unit) for unit in units]
    pool = ThreadPoolExecutor(workers, thread_name_prefix="orderdoc-partition")
    try:
        results = list(pool.map(work, units))
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)  # Ctrl-C: no partition waited for
        raise
    pool.shutdown()
    return results


def pooled(units: Sequence[Prepared], policy: OrderingPolicy) -> Evaluation:
    """:func:`evaluate` of each partition's capture under ``policy`` (one that releases
    each partition on its own), put together: the counts summed, the delays pooled."""
    results = each_unit(units, lambda unit: evaluate(unit, policy))
    return Evaluation(
        events=sum(r.events for r in results),
        adjusted=sum(r.adjusted for r in results),
        dropped=sum(r.dropped for r in results),
        never_released=sum(r.never_released for r in results),
        delays_s=np.concatenate([r.delays_s for r in results]) if results else np.empty(0),
        kinds=sum((r.kinds for r in results if r.kinds is not None), Kinds(0, 0, 0, 0)),
    )


def run(prepared: Prepared, policy: OrderingPolicy) -> tuple[pl.DataFrame, np.ndarray]:
    """Run the engine on the prepared capture under ``policy`` (one batch, then close): its
    outcome columns in processing order, and each event's release time (ns, -1: never)."""
    engine = OrderingEngine(policy, prepared.partitions, prepared.columns)
    staged = engine.stage(prepared.frame)
    releases = pl.concat([engine.commit(staged), engine.close()])
    release = np.full(prepared.size, -1, dtype=np.int64)
    known = releases.filter(pl.col("release_time").is_not_null())
    release[known["event_id"].to_numpy()] = known["release_time"].dt.epoch("ns").to_numpy()
    return staged.outcomes, release


def evaluate(prepared: Prepared, policy: OrderingPolicy) -> Evaluation:
    """Run the engine on the prepared capture under ``policy`` (one batch, then close)."""
    out, release = run(prepared, policy)
    arrival = out["arrival"].dt.epoch("ns").to_numpy()
    released = release >= 0
    dropped = int(out["dropped"].sum())
    return Evaluation(
        events=prepared.size,
        adjusted=int((out["status"] == "adjusted").sum()),
        dropped=dropped,
        never_released=prepared.size - dropped - int(released.sum()),
        delays_s=(release[released] - arrival[released]) / 1e9,
        kinds=Kinds.of(out),
    )
