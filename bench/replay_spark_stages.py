"""Where ``orderdoc replay --spark`` spends its time: every Spark job of one run, with its
wall time, tasks and the line of the replay code that started it.

    SPARK_LOCAL_IP=127.0.0.1 python bench/replay_spark_stages.py [--events 1000000]
        [--master local[2]] [--shuffle-partitions N]

Runs :func:`diagnostics.spark.replay.run_spark_replay` in this process on the bench capture of
``bench/replay_spark_bench.py`` (TIMESTAMP BY event_time, late 5 s, out of order 1 s, Adjust,
PARTITION BY unless ``--merged``), then reads the jobs from Spark's own status API (the UI's
REST endpoint on 127.0.0.1) and prints one JSON line per job, the replay's progress marks and
the totals. Jobs are what a stage of docs/spark-replay.md costs: a stage that runs as several
jobs (a sort samples its input first; an RDD index counts first) shows several lines.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
import urllib.request
from datetime import datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))


def _seconds(text: str) -> float:
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%f%Z").timestamp()


def jobs_of(ui: str, app: str) -> list[dict]:
    """Every finished job of the application, oldest first (Spark's status API)."""
    with urllib.request.urlopen(f"{ui}/api/v1/applications/{app}/jobs", timeout=600) as reply:
        jobs = json.load(reply)
    rows = []
    for job in sorted(jobs, key=lambda j: j["jobId"]):
        start, end = job.get("submissionTime"), job.get("completionTime")
        wall = _seconds(end) - _seconds(start) if start and end else None
        rows.append(
            {
                "job": job["jobId"],
                "at": job["name"],
                "wall_s": None if wall is None else round(wall, 2),
                "tasks": job["numTasks"],
                "skipped_tasks": job["numSkippedTasks"],
                "started": None if start is None else _seconds(start),
            }
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--partitions", type=int, default=8)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--shuffle-partitions", type=int, default=None)
    parser.add_argument("--merged", action="store_true", help="without PARTITION BY")
    parser.add_argument("--data", type=Path, default=HERE / "data")
    args = parser.parse_args()
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")

    from replay_spark_bench import generate

    from diagnostics.engine.policy import OrderingPolicy
    from diagnostics.spark.replay import run_spark_replay
    from diagnostics.spark.session import SparkTarget, build_session

    capture = generate(
        args.data / f"spark_events_{args.events}.parquet", args.events, args.partitions, 7
    )
    conf = [("spark.ui.enabled", "true"), ("spark.ui.port", "0"), ("spark.driver.memory", "4g")]
    if args.shuffle_partitions:
        conf.append(("spark.sql.shuffle.partitions", str(args.shuffle_partitions)))
    started = time.monotonic()
    spark = build_session(
        SparkTarget(master=args.master, app_name="orderdoc-replay-stages", conf=tuple(conf))
    )
    print(json.dumps({"mark": "session", "s": round(time.monotonic() - started, 2)}), flush=True)
    policy = OrderingPolicy(
        timestamp_by="event_time",
        late_arrival_ns=5 * 10**9,
        out_of_order_ns=10**9,
        partition_by=not args.merged,
    )

    def mark(message: str) -> None:
        row = {"mark": message, "s": round(time.monotonic() - started, 2)}
        print(json.dumps(row), flush=True)

    with tempfile.TemporaryDirectory(dir=args.data) as out:
        begun = time.monotonic()
        result = run_spark_replay(
            spark, path=str(capture), arrival=None, partition=None, policy=policy,
            declared=None, out=Path(out), progress=mark,
        )  # fmt: skip
        total = time.monotonic() - begun
    mark("done")
    sc = spark.sparkContext
    jobs = jobs_of(sc.uiWebUrl or "", sc.applicationId)
    first = jobs[0]["started"] if jobs and jobs[0]["started"] is not None else 0.0
    for job in jobs:
        job["started"] = None if job["started"] is None else round(job["started"] - first, 2)
        print(json.dumps(job))
    in_jobs = sum(j["wall_s"] or 0 for j in jobs)
    print(
        json.dumps(
            {
                "events": result.summary["counts"]["events"],
                "replay_wall_s": round(total, 1),
                "jobs": len(jobs),
                "sum_job_wall_s": round(in_jobs, 1),
                "load": round(os.getloadavg()[0], 1),
            }
        )
    )
    spark.stop()


if __name__ == "__main__":
    main()
