"""The floor under ``orderdoc replay --spark``: what the data movement its design needs costs
on Spark with no replay logic at all, against the local replay (issue 21, point 6's "≤ 3×").

    SPARK_LOCAL_IP=127.0.0.1 python bench/replay_spark_floor.py [--events 10000000]
        [--master local[2]] [--runs 2]

On the bench capture of ``bench/replay_spark_bench.py`` (generated there first), one Spark
session (driver memory 4 GB, as the bench's runs) runs four queries, each a prefix of the next
and each ended by Spark's ``noop`` sink (nothing written), but the last, which writes Parquet
as S7 does:

1. ``read``: the columns the engines need and an event id, by Spark's own Parquet reader
   (S1 reads each slice in a Python task, with orderdoc's readers, and caches the rows: more);
2. ``+ per partition``: a shuffle by partition, Spark's sort by (partition, arrival, event)
   and a Python task that hands its Arrow batches back unchanged: where S3 runs the engines
   (docs/spark-replay.md, S3);
3. ``+ output rank``: a global sort of every event by its release (here its arrival) and
   partition and event, kept as a column, as S6's rank needs (S6 also counts its buckets);
4. ``+ event order``: a shuffle by slice and a sort by event before the Python task that
   writes the part files, as S7 does.

The replay does all of that and more (the engines, the checks, caches, the ranks' buckets);
the local replay (``orderdoc replay``, same flags, timed as a process) does none of it. The
shuffle task count follows the replay's rule (one task per 250,000 events, at least 2). Prints
one JSON line per query and run (wall seconds), then the local replay's wall time and the
ratio of each query's best time to it.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

PER_TASK = 250_000


def identity(batches):  # type: ignore[no-untyped-def]
    """A Python task that returns its Arrow batches unchanged."""
    yield from batches


def queries(spark, capture: str, events: int, out: str) -> dict:  # type: ignore[no-untyped-def]
    """The four queries (name -> a function running one), each a prefix of the next."""
    from pyspark.sql import functions as F

    tasks = max(2, events // PER_TASK)
    read = (
        spark.read.parquet(capture)
        .select("partition_id", "arrival_time", "event_time")
        .withColumn("eid", F.monotonically_increasing_id())
    )
    schema = read.schema
    per_partition = (
        read.repartition(tasks, "partition_id")
        .sortWithinPartitions("partition_id", "arrival_time", "eid")
        .mapInArrow(identity, schema)
    )
    # the order kept as a column (a stand-in for S6's rank, which also counts each bucket):
    # without one, Spark drops a sort that a later shuffle undoes
    ranked = per_partition.orderBy("arrival_time", "partition_id", "eid").withColumn(
        "rank", F.monotonically_increasing_id()
    )
    ordered = (
        ranked.withColumn("slice", (F.col("eid") / 1_000_000).cast("long"))
        .repartition(tasks, "slice")
        .sortWithinPartitions("eid")
        .mapInArrow(identity, ranked.schema.add("slice", "long"))
    )

    def noop(frame):  # type: ignore[no-untyped-def]
        return lambda: frame.write.format("noop").mode("overwrite").save()

    return {
        "read": noop(read),
        "+ per partition": noop(per_partition),
        "+ output rank": noop(ranked),
        "+ event order": lambda: ordered.write.mode("overwrite").parquet(out),
    }


def local_replay(capture: Path) -> float:
    """Wall seconds of ``orderdoc replay`` (local) with the bench's flags."""
    from replay_spark_bench import local_run

    with tempfile.TemporaryDirectory() as tmp:
        return local_run(capture, Path(tmp))["wall"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=10_000_000)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--runs", type=int, default=2)
    args = parser.parse_args()

    from replay_spark_bench import ROOT, generate

    from diagnostics.spark.replay import RUN_CONF
    from diagnostics.spark.session import SparkTarget, build_session

    data = ROOT / "bench" / "data"
    capture = generate(data / f"spark_events_{args.events}.parquet", args.events, 8, 7)
    conf = (
        ("spark.driver.memory", "4g"),
        ("spark.ui.enabled", "false"),
        # the capture's nanosecond times as numbers (Spark reads no nanosecond timestamps)
        ("spark.sql.legacy.parquet.nanosAsLong", "true"),
        *RUN_CONF,  # the replay's Arrow batches (65,536 rows) and cache settings
    )
    spark = build_session(SparkTarget(master=args.master, app_name="floor", conf=conf))
    spark.range(1000).write.format("noop").mode("overwrite").save()  # the session warmed up
    best: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        plan = queries(spark, str(capture), args.events, str(Path(tmp) / "out"))
        for run in range(args.runs):
            for name, query in plan.items():
                start = time.monotonic()
                query()
                wall = time.monotonic() - start
                best[name] = min(wall, best.get(name, wall))
                print(json.dumps({"query": name, "run": run, "wall_s": round(wall, 1)}), flush=True)
    spark.stop()
    local = min(local_replay(capture) for _ in range(args.runs))
    print(json.dumps({"local_replay_wall_s": round(local, 1), "events": args.events}))
    for name, wall in best.items():
        print(json.dumps({"query": name, "best_wall_s": round(wall, 1),
                          "ratio_to_local": round(wall / local, 2)}))  # fmt: skip


if __name__ == "__main__":
    main()
