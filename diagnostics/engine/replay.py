"""Whole-capture replay: sort by arrival, feed the incremental engine in batches, assemble.

This is a driver around :class:`~diagnostics.engine.engine.OrderingEngine`; it adds no
semantics of its own beyond the output order (spec §4: release time, then System.Timestamp,
then arrival order).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
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
    return tuple(int(v) for v in values.unique().sort())


def declared_partitions(count: int) -> tuple[int, ...]:
    """Partitions 0..count-1, as an Event Hub with ``count`` partitions has."""
    if count < 1:
        msg = f"--partitions {count}: an input has at least one partition"
        raise InputError(msg)
    return tuple(range(count))


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
    if columns.arrival not in events.columns:
        msg = (
            f"arrival column '{columns.arrival}' is missing (columns: {', '.join(events.columns)})"
        )
        raise InputError(msg)
    parts = tuple(partitions) if partitions is not None else partitions_in(events, columns)
    arrival = to_utc(events[columns.arrival])
    bad = arrival.is_null()
    if bad.any():
        i = int(bad.arg_true()[0])
        msg = f"arrival column '{columns.arrival}', row {i + 1}: '{events[columns.arrival][i]}' is not a timestamp"
        raise InputError(msg)
    total = events.height
    work = events.with_columns(
        pl.int_range(total, dtype=pl.Int64).alias(columns.row),
        arrival.alias(columns.parsed_arrival),
    ).sort(columns.parsed_arrival, columns.row, maintain_order=True)
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
    for start in range(0, max(total, 1), step):
        result = engine.process(work.slice(start, step))
        frames.append(result.events)
        take(result.releases)
        if progress is not None:
            progress(min(start + step, total), total)
    take(engine.close())
    released = (
        pl.Series("release_time", release).cast(pl.Datetime("ns")).dt.replace_time_zone("UTC")
    )
    outcomes = pl.concat(frames).with_columns(
        released.set(pl.Series(~has_release), None).alias("release_time")
    )
    outcomes = outcomes.with_columns(_output_rank(outcomes)).drop("event_id")
    outcomes = outcomes.sort(columns.row).rename({columns.row: "event_id"})
    ordered = list(events.columns) + [c for c in outcomes.columns if c not in events.columns]
    ordered = [c for c in ordered if c != columns.parsed_arrival]
    return ReplayResult(outcomes.select(ordered), policy, parts, columns)


def _output_rank(outcomes: pl.DataFrame) -> pl.Series:
    """Output position of each released event: release time, System.Timestamp, arrival order."""
    keyed = outcomes.select(
        pl.col("release_time").dt.epoch("ns").alias("r"),
        pl.col("system_timestamp").dt.epoch("ns").alias("s"),
        pl.col("event_id").alias("e"),
    )
    order = keyed.with_row_index("i").filter(pl.col("r").is_not_null()).sort("r", "s", "e")
    rank = np.full(outcomes.height, -1, dtype=np.int64)
    rank[order["i"].to_numpy()] = np.arange(order.height)
    series = pl.Series("output_rank", rank)
    return series.set(series < 0, None)
