"""Runs a capture through Spark Structured Streaming's own event-time machinery
(``withWatermark`` and a ``groupBy(window(...)).count()``) with the micro-batches cut the way
orderdoc's Spark rules assume, one after the other, instead of on the wall clock.

How the batches are made deterministic: a processing-time trigger of ``I`` starts a
micro-batch on each whole multiple of ``I`` (``ProcessingTimeExecutor``), taking every event
that arrived since the previous one; so the events are grouped by the first multiple of ``I``
at or after their arrival, and each group becomes one JSON file of a file source read with
``maxFilesPerTrigger=1`` (one file, one micro-batch). Groups on consecutive ticks form a *run*:
Spark runs them back to back. Between runs (at least one trigger with no new data) Spark runs a
batch without data when the watermark moved (``noDataMicroBatches``). So each run's files are
put in place at once (one folder renamed into the source's glob) and the queries then process
everything available (``processAllAvailable``), which includes that batch without data. Each
data batch's row count is checked against its file.

The query is the window count itself, ``groupBy(window(ts, w)).agg(count, collect_list(id))``
in update mode: a window's last update holds its final count and the ids of the events it
counted, so the events Spark dropped are the ids no window holds (the id rides along as the
record's payload; the late filter only looks at the window).
"""

from __future__ import annotations

import os
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.engines.real.captures import Capture, EngineResult


@dataclass(frozen=True, slots=True)
class SparkSettings:
    """The query's settings (ms): ``trigger_ms`` is the processing-time trigger interval."""

    window_ms: int
    watermark_delay_ms: int = 0
    trigger_ms: int = 1_000


def micro_batches(capture: Capture, trigger_ms: int) -> list[tuple[int, list[int]]]:
    """(trigger time, indexes of the events it takes) for each micro-batch with data."""
    batches: dict[int, list[int]] = {}
    for i, e in enumerate(capture.events):
        tick = -(-e.arrival_ms // trigger_ms) * trigger_ms if trigger_ms > 0 else e.arrival_ms
        batches.setdefault(tick, []).append(i)
    return sorted(batches.items())


def runs(batches: list[tuple[int, list[int]]], trigger_ms: int) -> list[list[list[int]]]:
    """The batches grouped into runs of consecutive triggers (no empty trigger between)."""
    out: list[list[list[int]]] = []
    previous: int | None = None
    for tick, members in batches:
        if previous is None or trigger_ms <= 0 or tick > previous + trigger_ms:
            out.append([])
        out[-1].append(members)
        previous = tick
    return out


def run_spark(spark: Any, capture: Capture, settings: SparkSettings, workdir: Path) -> EngineResult:
    """The capture through Spark (the ``spark`` session given); the result's details hold the
    query's progress per batch: (rows in, ``numRowsDroppedByWatermark``, watermark)."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import LongType, StringType, StructField, StructType

    name = f"counts_{uuid.uuid4().hex[:8]}"
    source = workdir / "source"
    stage = workdir / "stage"
    source.mkdir(parents=True)
    stage.mkdir()
    batches = micro_batches(capture, settings.trigger_ms)
    schema = StructType([StructField("id", StringType()), StructField("event_ms", LongType())])
    mtime = time.time() - len(batches) - 10
    planned: list[int] = []
    query: Any = None
    progress: dict[int, dict[str, Any]] = {}
    try:
        for r, run in enumerate(runs(batches, settings.trigger_ms)):
            folder = stage / f"run-{r:05d}"
            folder.mkdir()
            for members in run:
                path = folder / f"batch-{len(planned):06d}.json"
                path.write_text(
                    "".join(
                        f'{{"id": "{capture.events[i].id}", '
                        f'"event_ms": {capture.events[i].event_ms}}}\n'
                        for i in members
                    ),
                    encoding="utf-8",
                )
                mtime += 1  # the file source takes files in modification-time order
                os.utime(path, (mtime, mtime))
                planned.append(len(members))
            folder.rename(source / folder.name)  # the whole run appears at once
            if query is None:
                query = _start(spark, source, schema, settings, name, F)
            query.processAllAvailable()
            progress.update({int(p["batchId"]): p for p in query.recentProgress})
        rows = spark.sql(
            f"SELECT unix_millis(window.start) AS start, count, ids FROM {name}"
        ).collect()
    finally:
        if query is not None:
            query.stop()
    data = [p["numInputRows"] for _, p in sorted(progress.items()) if p["numInputRows"] > 0]
    if data != planned:
        msg = f"Spark cut the micro-batches {data}, not {planned} as planned"
        raise RuntimeError(msg)
    final: dict[int, Any] = {}
    for row in rows:  # update mode: a window's rows only grow; the last is the largest
        if row["start"] not in final or row["count"] > final[row["start"]]["count"]:
            final[row["start"]] = row
    kept = {i for row in final.values() for i in row["ids"]}
    return EngineResult(
        dropped=frozenset(e.id for e in capture.events if e.id not in kept),
        counts={int(start): int(final[start]["count"]) for start in sorted(final)},
        details={
            "batches": {
                batch: (
                    p["numInputRows"],
                    sum(op.get("numRowsDroppedByWatermark", 0) for op in p["stateOperators"]),
                    p.get("eventTime", {}).get("watermark"),
                )
                for batch, p in sorted(progress.items())
            }
        },
    )


def _start(
    spark: Any, source: Path, schema: Any, settings: SparkSettings, name: str, F: Any
) -> Any:
    """The window count on the files under ``source``'s run folders."""
    return (
        spark.readStream.schema(schema)
        .option("maxFilesPerTrigger", 1)
        .json(str(source / "*" / "*.json"))
        .withColumn("ts", F.expr("timestamp_millis(event_ms)"))
        .withWatermark("ts", f"{settings.watermark_delay_ms} milliseconds")
        .groupBy(F.window("ts", f"{settings.window_ms} milliseconds"))
        .agg(F.count("*").alias("count"), F.collect_list("id").alias("ids"))
        .writeStream.format("memory")
        .queryName(name)
        .outputMode("update")
        .option("checkpointLocation", str(source.parent / "checkpoint"))
        .start()
    )
