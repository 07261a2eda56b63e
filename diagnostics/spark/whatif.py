"""``whatif --spark``: the recommender's settings evaluated as Spark tasks, settings ×
partitions (docs/spark-replay.md, "What-if, explain and demo on Spark").

:class:`SparkEvaluator` is an :class:`~diagnostics.whatif.evaluate.Evaluator`: the search
(:mod:`diagnostics.whatif.recommend`) hands it each round's settings together, and it gives
back the numbers :func:`~diagnostics.whatif.evaluate.evaluate_locally` gives.

- The capture prepared for one OVER key set (the narrow columns the engine reads, in
  processing order: :func:`~diagnostics.whatif.evaluate.prepare`) is written once, one
  Parquet file per input partition, into a work folder the executors share; every task
  reads the files it needs from there.
- A batch of settings becomes a DataFrame of tasks: (setting, partition) when the setting
  releases each partition on its own (``PARTITION BY PartitionId``, or one partition), else
  (setting, every partition): without ``PARTITION BY`` the merged watermark needs them all.
- Each task runs :func:`~diagnostics.whatif.evaluate.evaluate` (the engine, nothing else)
  on its events and emits its counts and the release delay of each released event.
- Counts are summed per setting; the delay percentiles are picked from a sort per setting
  (numpy's ``method="higher"`` ranks, :func:`~diagnostics.whatif.evaluate.delay_ranks`), so
  only O(settings) rows reach the driver.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl
import pyarrow as pa

from diagnostics.engine.columns import EventColumns
from diagnostics.engine.policy import OrderingPolicy
from diagnostics.whatif.evaluate import (
    Measures,
    Prepared,
    delay_ranks,
    evaluate,
    evaluate_locally,
    refused_partition,
    split_by_partition,
)
from diagnostics.words import plural

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

#: A task that reads every partition (a setting without PARTITION BY on several partitions).
EVERY = -1
#: What each task emits: one counts row (``kind`` 0), then one row per released event (1).
OUT_DDL = (
    "setting int, kind int, events long, adjusted long, dropped long, "
    "never_released long, released long, delay double"
)
#: The counts a task emits, summed per setting.
COUNTS = ("events", "adjusted", "dropped", "never_released", "released")
_CHUNK = 65_536


@dataclass(frozen=True)
class Units:
    """A prepared capture on the shared disk: one file per partition that has events."""

    folder: str
    partitions: tuple[int, ...]
    columns: EventColumns
    files: tuple[tuple[int, str], ...]  # (partition, file)


@dataclass(frozen=True)
class Batch:
    """The settings of one batch and where their events are (shipped to every task)."""

    units: Units
    policies: tuple[OrderingPolicy, ...]


def write_units(prepared: Prepared, folder: Path) -> Units:
    """Write ``prepared``'s frame into ``folder``, one Parquet file per partition with
    events (its rows in processing order: :func:`~diagnostics.whatif.evaluate.
    split_by_partition`, the local evaluator's split), or one file for a single partition."""
    folder.mkdir(parents=True, exist_ok=True)
    files: list[tuple[int, str]] = []
    units = split_by_partition(prepared)
    if units is None:
        files.append((prepared.partitions[0], str(folder / "unit-all.parquet")))
        prepared.frame.write_parquet(files[0][1])
    else:
        for unit in units:
            files.append((unit.partitions[0], str(folder / f"unit-{unit.partitions[0]}.parquet")))
            unit.frame.write_parquet(files[-1][1])
    return Units(str(folder), prepared.partitions, prepared.columns, tuple(files))


def read_unit(units: Units, unit: int) -> Prepared:
    """The events of one partition (``unit``), or of every one (:data:`EVERY`, in
    processing order again), as the engine reads them."""
    if unit != EVERY:
        path = dict(units.files)[unit]
        return Prepared(pl.read_parquet(path), (unit,), units.columns)
    frames = [pl.read_parquet(path) for _, path in units.files]
    cols = units.columns
    frame = pl.concat(frames, how="vertical").sort(cols.parsed_arrival, cols.row)
    return Prepared(frame.rechunk(), units.partitions, units.columns)


def tasks_of(units: Units, policies: Sequence[OrderingPolicy]) -> list[tuple[int, int]]:
    """(setting, unit) pairs: a setting's partitions one by one when each releases on its
    own, else one task over every partition."""
    tasks: list[tuple[int, int]] = []
    for i, policy in enumerate(policies):
        own = policy.partition_by or len(units.partitions) == 1
        if own:
            tasks += [(i, part) for part, _ in units.files]
        elif units.files:
            tasks.append((i, EVERY))
    return tasks


def run_tasks(batch: Batch, rows: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """The task side: for each (setting, unit) row, the engine on that unit's events."""
    for record in rows:
        for setting, unit in zip(
            record.column("setting").to_pylist(), record.column("unit").to_pylist(), strict=True
        ):
            result = evaluate(read_unit(batch.units, int(unit)), batch.policies[int(setting)])
            released = int(result.delays_s.size)
            yield pa.RecordBatch.from_pydict(
                {
                    "setting": pa.array([setting], pa.int32()),
                    "kind": pa.array([0], pa.int32()),
                    "events": pa.array([result.events], pa.int64()),
                    "adjusted": pa.array([result.adjusted], pa.int64()),
                    "dropped": pa.array([result.dropped], pa.int64()),
                    "never_released": pa.array([result.never_released], pa.int64()),
                    "released": pa.array([released], pa.int64()),
                    "delay": pa.array([None], pa.float64()),
                }
            )
            for start in range(0, released, _CHUNK):
                delays = result.delays_s[start : start + _CHUNK]
                n = delays.size
                yield pa.RecordBatch.from_pydict(
                    {
                        "setting": pa.array([setting] * n, pa.int32()),
                        "kind": pa.array([1] * n, pa.int32()),
                        "events": pa.nulls(n, pa.int64()),
                        "adjusted": pa.nulls(n, pa.int64()),
                        "dropped": pa.nulls(n, pa.int64()),
                        "never_released": pa.nulls(n, pa.int64()),
                        "released": pa.nulls(n, pa.int64()),
                        "delay": pa.array(delays, pa.float64()),
                    }
                )


class SparkEvaluator:
    """Evaluates batches of settings on ``spark``; the prepared captures go to ``workdir``
    (a folder the executors see at the same path; removed by :meth:`close`)."""

    def __init__(
        self,
        spark: SparkSession,
        workdir: Path | None = None,
        progress: Callable[[str], None] = lambda _message: None,
    ) -> None:
        self.spark = spark
        self.folder = Path(tempfile.mkdtemp(prefix="orderdoc-whatif-", dir=workdir))
        self.progress = progress
        self._written: dict[int, tuple[Prepared, Units]] = {}
        self.batches = 0
        self.tasks = 0

    def close(self) -> None:
        """Remove the written captures."""
        shutil.rmtree(self.folder, ignore_errors=True)

    def units(self, prepared: Prepared) -> Units:
        """``prepared`` on the shared disk (written on first use)."""
        key = id(prepared)
        if key not in self._written:
            folder = self.folder / f"prepared-{len(self._written)}"
            self._written[key] = (prepared, write_units(prepared, folder))
        return self._written[key][1]

    def __call__(self, prepared: Prepared, policies: Sequence[OrderingPolicy]) -> list[Measures]:
        if not policies:
            return []
        if refused_partition(prepared):
            return evaluate_locally(prepared, policies)  # raises the engine's one-line error
        units = self.units(prepared)
        tasks = tasks_of(units, policies)
        self.batches += 1
        self.tasks += len(tasks)
        self.progress(
            f"evaluating {plural(len(policies), 'setting')} as {plural(len(tasks), 'Spark task')}"
        )
        return self._measure(Batch(units, tuple(policies)), tasks, prepared.size)

    def _measure(self, batch: Batch, tasks: list[tuple[int, int]], size: int) -> list[Measures]:
        from pyspark.sql import Window
        from pyspark.sql import functions as F

        slots = int(self.spark.conf.get("spark.sql.shuffle.partitions") or "2")
        frame = self.spark.createDataFrame(tasks, "setting int, unit int")
        out = frame.repartition(max(min(len(tasks), slots), 1)).mapInArrow(
            partial(run_tasks, batch), OUT_DDL
        )
        out = out.persist()
        try:
            totals = (
                out.filter(F.col("kind") == 0)
                .groupBy("setting")
                .agg(*(F.sum(c).alias(c) for c in COUNTS))
                .collect()
            )
            sums = {int(r["setting"]): {c: int(r[c]) for c in COUNTS} for r in totals}
            wanted = [
                (s, rank)
                for s, r in sums.items()
                for rank in dict.fromkeys(delay_ranks(int(r["released"])))
            ]
            picked: dict[tuple[int, int], float] = {}
            if wanted:
                order = Window.partitionBy("setting").orderBy("delay")
                ranked = out.filter(F.col("kind") == 1).select(
                    "setting", "delay", (F.row_number().over(order) - 1).alias("rank")
                )
                ranks = self.spark.createDataFrame(wanted, "setting int, rank int")
                for r in ranked.join(F.broadcast(ranks), ["setting", "rank"]).collect():
                    picked[(int(r["setting"]), int(r["rank"]))] = float(r["delay"])
        finally:
            out.unpersist()
        return [_measures(i, sums.get(i), picked, size) for i in range(len(batch.policies))]


def _measures(
    setting: int, sums: dict[str, int] | None, picked: dict[tuple[int, int], float], size: int
) -> Measures:
    """One setting's numbers from its summed counts and picked delays."""
    if sums is None:  # a capture without events: no task ran
        return Measures(size, 0, 0, 0, None, None, None)
    ranks = delay_ranks(sums["released"])
    points: list[float | None] = [picked[(setting, r)] for r in ranks] or [None, None, None]
    return Measures(
        events=sums["events"],
        adjusted=sums["adjusted"],
        dropped=sums["dropped"],
        never_released=sums["never_released"],
        delay_p50_s=points[0],
        delay_p95_s=points[1],
        delay_max_s=points[2],
    )
