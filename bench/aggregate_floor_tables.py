"""The Spark job against its floor *with the same table writes*, in one session.

    python bench/aggregate_floor_tables.py --gb 0.27 [--master local[2]] [--repeat 2]

Two frames over the first files of ``bench/data/asa-logs`` up to ``--gb``, each written as
the job's tables (data_errors, quarantine, error_rollup, partition_idle) by the job's own
steps (:mod:`diagnostics.spark.job`) into a scratch folder, after a warm-up, interleaved:

* ``floor``: Spark's own JSON reader with an explicit schema, the happy path only (job from
  ``resourceId``, kind, counts, partition, the three times; no example times, no column
  names, no line numbers, no checks, nothing quarantined) cast to the parsed schema;
* ``job``: :func:`diagnostics.spark.job.run_aggregate`, the real job (native reader in the
  tasks, the Python parser for what it cannot decide), summary included;
* ``duckdb``: the DuckDB peer (``aggregate_peers.py duckdb``, native SQL, 2 threads, the same
  tables and summary) in a process of its own, so all three come from one run on the same
  files; its time is the job's (imports and start-up excluded, as for Spark).

Prints one JSON line per run: wall seconds, CPU seconds (the JVM tree and this driver; the
DuckDB process's own), the 1-minute load before it, and at the end the medians with the
ratios job / floor and job / DuckDB.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from aggregate_bench import DATA, pick
from aggregate_floor import SCHEMA
from aggregate_peers import tree_cpu_seconds
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from diagnostics.aggregates import TableName
from diagnostics.aggregates.spark import write_frame
from diagnostics.logs.inputs import InputFiles
from diagnostics.spark import job, schemas
from diagnostics.spark.session import SparkTarget, build_session


def floor_parsed(spark: SparkSession, files: list[str]) -> DataFrame:
    """Spark's JSON reader, cast to the parsed-record schema (happy path only)."""
    p = F.col("properties")
    ts = "yyyy-MM-dd'T'HH:mm:ss.SSSSSSSX"
    given = {
        "job": F.upper(F.regexp_extract("resourceId", r"/STREAMINGJOBS/([^/]+)", 1)),
        "source": p["Source"],
        "partition_id": p["PartitionId"],
        "kind": F.coalesce(p["DataErrorType"], p["Type"]),
        "event_count": p["EventCount"],
        "count_known": p["EventCount"].isNotNull(),
        "record_time": F.to_timestamp("time", ts),
        "from_time": F.to_timestamp(p["FromTimestamp"], ts),
        "to_time": F.to_timestamp(p["ToTimestamp"], ts),
        "level": F.col("level"),
        "correlation_id": F.col("correlationId"),
        "source_file": F.input_file_name(),
        "source_line": F.lit(0),
    }
    return (
        spark.read.schema(SCHEMA)
        .json(files)
        .select(
            *(given.get(f.name, F.lit(None)).cast(f.dataType).alias(f.name) for f in schemas.PARSED)
        )
    )


def write_tables(parsed: DataFrame, out: Path) -> None:
    """The job's four tables from ``parsed``, by the job's own steps."""
    errors = parsed.transform(job.data_errors)
    write_frame(errors, out, TableName.DATA_ERRORS)
    write_frame(parsed.transform(job.quarantined), out, TableName.QUARANTINE)
    write_frame(errors.transform(job.rollup), out, TableName.ERROR_ROLLUP)
    write_frame(errors.transform(job.idle_episodes), out, TableName.PARTITION_IDLE)


def run_duckdb(files: list[str], out: Path) -> tuple[float, float]:
    """The DuckDB peer in its own process: (job seconds, process CPU seconds)."""
    peers = Path(__file__).with_name("aggregate_peers.py")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(
        [sys.executable, str(peers), "duckdb", str(out), *files],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(peers.parent)},
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return float(json.loads(done.stdout.strip().splitlines()[-1])["job_s"]), cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gb", type=float, default=1.0)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    files, size = pick(sorted(DATA.rglob("*.json")), args.gb)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    conf = (("spark.ui.enabled", "false"), ("spark.driver.memory", "3g"))
    spark = build_session(SparkTarget(master=args.master, conf=conf))
    jvm = spark.sparkContext._gateway.proc.pid  # type: ignore[attr-defined]
    scratch = Path(tempfile.mkdtemp(prefix="floor-tables-"))
    inputs = InputFiles(tuple(files), (), ())
    runs = {
        "floor": lambda out: write_tables(floor_parsed(spark, files), out),
        "job": lambda out: job.run_aggregate(spark, inputs, out),
    }
    for run in runs.values():  # warm-up: JIT, Python workers
        run(scratch / "warm")
    seconds: dict[str, list[float]] = {name: [] for name in (*runs, "duckdb")}
    for index in range(args.repeat):
        for name in seconds:
            out = scratch / f"{name}{index}"
            load = os.getloadavg()[0]
            if name == "duckdb":
                took, cpu_s = run_duckdb(files, out)
            else:
                wall, cpu = time.perf_counter(), tree_cpu_seconds(jvm) + sum(os.times()[:2])
                runs[name](out)
                took = time.perf_counter() - wall
                cpu_s = tree_cpu_seconds(jvm) + sum(os.times()[:2]) - cpu
            seconds[name].append(took)
            print(json.dumps({"run": name, "master": args.master, "gb": args.gb, "bytes": size,
                              "wall_s": round(took, 2), "cpu_s": round(cpu_s, 2),
                              "load_before": round(load, 2)}), flush=True)  # fmt: skip
            shutil.rmtree(out, ignore_errors=True)
    med = {name: statistics.median(values) for name, values in seconds.items()}
    print(json.dumps({"master": args.master, "median_s": med,
                      "job_over_floor": round(med["job"] / med["floor"], 2),
                      "job_over_duckdb": round(med["job"] / med["duckdb"], 2),
                      "floor_over_duckdb": round(med["floor"] / med["duckdb"], 2)}))  # fmt: skip
    spark.stop()
    shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
