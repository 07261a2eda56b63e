"""Stages S4 and S5 of docs/spark-replay.md: the merged watermark of a job without PARTITION
BY, built from the partitions' change points of M (never from the events), and the release
times it gives (docs/semantics.md, "Watermarks, merge and output release").

W(τ) only changes where some partition's M rises, and between two such points it grows as
τ − late (the engine's ``merge_release`` finds that crossing), so the steps of W at the
change points alone give the local replay's release times. Processing time is cut into
ranges of arrival time; each range gets the partitions' M at its start (a prefix maximum of
per-range maxima, O(ranges × partitions) rows on the driver) and runs the engine's
``lowest_after`` and ``merge_steps`` over its change points in arrival order. Every accepted
event is then routed to the range whose W reaches its System.Timestamp and resolved there by
the engine's ``merge_release``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

import numpy as np
import polars as pl
import pyarrow as pa

from diagnostics.engine.release import (
    NEG,
    POS,
    MergeSteps,
    lowest_after,
    merge_release,
    merge_steps,
)
from diagnostics.spark.replay_rank import range_of
from diagnostics.spark.replay_tasks import batch_frames, ddl, key_runs

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

STEPS = pa.schema(
    [("r", pa.int64()), ("tau", pa.int64()), ("w", pa.int64()), ("unstarted", pa.bool_())]
)
ROUTED = pa.schema(
    [
        ("r", pa.int64()),
        ("kind", pa.int8()),  # 0: a step of W, 1: an accepted event
        ("key", pa.int64()),  # τ of a step, System.Timestamp of an event
        ("eid", pa.int64()),
        ("arr", pa.int64()),
        ("w", pa.int64()),
        ("unstarted", pa.bool_()),
    ]
)
RELEASED = pa.schema([("eid", pa.int64()), ("merged_release", pa.int64())])


@dataclass(frozen=True, slots=True)
class MergePlan:
    """What S4 and S5 tasks need: the partitions, the tolerances, each range's carry-in (M of
    every partition at its start) and, for S5, the last step of each range."""

    partitions: tuple[int, ...]
    late: int | None
    ooo: int
    carry: tuple[tuple[int, ...], ...]
    last_steps: tuple[tuple[int, int, bool], ...] = ()


class _RangeSteps:
    """The steps of W over one range's change points, fed in arrival order. The rows of the
    latest arrival time are held back until a later arrival comes, so that each arrival
    gives one step (the state after all of its change points), as the engine's batches do."""

    def __init__(self, plan: MergePlan, r: int) -> None:
        self.plan = plan
        self.r = r
        self.m = np.array(plan.carry[r], dtype=np.int64)
        self.held: pl.DataFrame | None = None
        self.index = {p: i for i, p in enumerate(plan.partitions)}

    def feed(self, rows: pl.DataFrame) -> pa.RecordBatch | None:
        rows = rows if self.held is None else pl.concat([self.held, rows])
        latest = rows["arr"].max()
        self.held = rows.filter(pl.col("arr") == latest)
        return self._steps(rows.filter(pl.col("arr") < latest))

    def close(self) -> pa.RecordBatch | None:
        rows, self.held = self.held, None
        return None if rows is None else self._steps(rows)

    def _steps(self, rows: pl.DataFrame) -> pa.RecordBatch | None:
        if rows.is_empty():
            return None
        arr = rows["arr"].to_numpy()
        part = np.array([self.index[int(p)] for p in rows["part"].to_list()], dtype=np.int64)
        after = rows["m_after"].to_numpy()
        lowest = lowest_after(part, np.full(len(arr), NEG, dtype=np.int64), after, self.m)
        steps = merge_steps(
            arr, lowest, m_before=self.m, tau_before=NEG, late=self.plan.late, ooo=self.plan.ooo
        )
        np.maximum.at(self.m, part, after)
        keep = slice(1, None)  # step 0 is the state before (S5 adds the initial one)
        n = len(steps.tau[keep])
        return pa.RecordBatch.from_pydict(
            {
                "r": pa.array(np.full(n, self.r, dtype=np.int64)),
                "tau": pa.array(steps.tau[keep]),
                "w": pa.array(steps.watermark[keep]),
                "unstarted": pa.array(steps.unstarted[keep]),
            },
            schema=STEPS,
        )


def step_batches(plan: MergePlan, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """S4: change points (``r``, ``part``, ``arr``, ``m_after``) sorted by (r, arr, eid) in,
    the steps of W out."""
    current: _RangeSteps | None = None
    for r, rows in key_runs(batch_frames(batches), "r"):
        if current is None or current.r != r:
            if current is not None and (done := current.close()) is not None:
                yield done
            current = _RangeSteps(plan, r)
        if (out := current.feed(rows)) is not None:
            yield out
    if current is not None and (done := current.close()) is not None:
        yield done


def release_batches(plan: MergePlan, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """S5: per range its steps (kind 0, by τ) then its events (kind 1, by System.Timestamp)
    in; each event's release time under the merged watermark out (null: never)."""
    steps: list[pl.DataFrame] = []
    current: int | None = None
    table: MergeSteps | None = None
    for r, rows in key_runs(batch_frames(batches), "r"):
        if r != current:
            current, steps, table = r, [], None
        kinds = rows["kind"].to_numpy()
        steps.append(rows.filter(pl.col("kind") == 0))
        events = rows.filter(pl.col("kind") == 1)
        if events.is_empty():
            continue
        if table is None or not bool(np.all(kinds == 1)):
            table = _table(plan, r, pl.concat(steps))
        release = merge_release(
            events["key"].to_numpy(), events["arr"].to_numpy(), table, late=plan.late, closing=True
        )
        yield pa.RecordBatch.from_pydict(
            {
                "eid": events["eid"].to_arrow(),
                "merged_release": pa.array(release, pa.int64(), mask=release >= POS),
            },
            schema=RELEASED,
        )


def _table(plan: MergePlan, r: int, steps: pl.DataFrame) -> MergeSteps:
    """Range ``r``'s steps, after the last step of the range before it (the crossing of an
    event whose first reaching step opens the range needs the state before)."""
    tau, w, unstarted = (
        steps["key"].to_numpy(),
        steps["w"].to_numpy(),
        steps["unstarted"].to_numpy(),
    )
    if r > 0:
        last = plan.last_steps[r - 1]
        tau, w = np.r_[last[0], tau], np.r_[last[1], w]
        unstarted = np.r_[last[2], unstarted]
    else:  # before the first arrival, as the engine starts: no partition has started
        start = merge_steps(
            np.empty(0, dtype=np.int64),
            np.empty(0, dtype=np.int64),
            m_before=np.full(len(plan.partitions), NEG, dtype=np.int64),
            tau_before=NEG,
            late=plan.late,
            ooo=plan.ooo,
        )
        tau, w = np.r_[start.tau, tau], np.r_[start.watermark, w]
        unstarted = np.r_[start.unstarted, unstarted]
    return MergeSteps(tau.astype(np.int64), w.astype(np.int64), unstarted.astype(bool))


def merged_releases(
    events: DataFrame,
    *,
    partitions: tuple[int, ...],
    late: int | None,
    ooo: int,
    ranges: int,
) -> DataFrame | None:
    """S4 and S5 over S3's rows (``rise``, ``m_after``, System.Timestamp, arrival): each
    accepted event's ``merged_release`` (ns, null: never); ``None`` without accepted events."""
    from pyspark.sql import functions as F

    points = events.filter(F.col("rise")).select(
        "part", F.col("arrival").alias("arr"), "eid", "m_after"
    )
    probabilities = [i / ranges for i in range(1, ranges)]
    cuts = sorted({int(v) for v in points.approxQuantile("arr", probabilities, 0.001)})
    points = points.withColumn("r", range_of(F.col("arr"), cuts)).persist()
    try:
        maxima = points.groupBy("r", "part").agg(F.max("m_after").alias("m")).collect()
        if not maxima:
            return None
        count = len(cuts) + 1
        index = {p: i for i, p in enumerate(partitions)}
        carry = np.full((count + 1, len(partitions)), NEG, dtype=np.int64)
        for row in maxima:
            carry[int(row["r"]) + 1, index[int(row["part"])]] = int(row["m"])
        carry = np.maximum.accumulate(carry, axis=0)
        plan = MergePlan(
            partitions, late, ooo, tuple(tuple(int(v) for v in c) for c in carry[:count])
        )
        steps = (
            points.repartition(count, "r")
            .sortWithinPartitions("r", "arr", "eid")
            .mapInArrow(partial(step_batches, plan), ddl(STEPS))
        ).persist()
    finally:
        points.unpersist()
    try:
        last = steps.groupBy("r").agg(
            F.max("w").alias("top"), F.max_by(F.struct("tau", "w", "unstarted"), "tau").alias("s")
        )
        summary = sorted(last.collect(), key=lambda row: int(row["r"]))
        # ranges without change points were dropped: renumber the others 0, 1, ...
        renumber = {int(row["r"]): i for i, row in enumerate(summary)}
        tops = [int(row["top"]) for row in summary]
        plan = MergePlan(
            partitions, late, ooo, plan.carry,
            tuple((int(row["s"]["tau"]), int(row["s"]["w"]), bool(row["s"]["unstarted"])) for row in summary),
        )  # fmt: skip
        mapping = F.create_map(*[F.lit(v) for pair in renumber.items() for v in pair])
        routed_steps = steps.select(
            F.element_at(mapping, F.col("r")).cast("long").alias("r"),
            F.lit(0).cast("byte").alias("kind"),
            F.col("tau").alias("key"),
            F.lit(None).cast("long").alias("eid"),
            F.lit(None).cast("long").alias("arr"),
            "w",
            "unstarted",
        )
        accepted = events.filter(~F.col("dropped"))
        last_range = len(tops) - 1
        routed_events = accepted.select(
            F.least(range_of(F.col("system_timestamp"), tops), F.lit(last_range)).alias("r"),
            F.lit(1).cast("byte").alias("kind"),
            F.col("system_timestamp").alias("key"),
            "eid",
            F.col("arrival").alias("arr"),
            F.lit(None).cast("long").alias("w"),
            F.lit(None).cast("boolean").alias("unstarted"),
        )
        routed = routed_steps.unionByName(routed_events).repartition(len(tops), "r")
        routed = routed.sortWithinPartitions("r", "kind", "key", "eid")
        released = routed.mapInArrow(partial(release_batches, plan), ddl(RELEASED))
        return released.localCheckpoint()
    finally:
        steps.unpersist()
