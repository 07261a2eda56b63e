"""Stage breakdown of ``orderdoc aggregate`` (Spark ``local[2]``) on the benchmark data.

    flock /tmp/bench.lock .venv/bin/python bench/aggregate_stages.py --gb 1.0

Times each step the job reports through its ``progress`` callback (parse/stage, each table
write, the summary), after a separate JVM and session start-up, and prints one JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

from aggregate_bench import DATA, pick
from aggregate_peers import tree_cpu_seconds

from diagnostics.logs.inputs import InputFiles
from diagnostics.spark.job import run_aggregate
from diagnostics.spark.session import SparkTarget, build_session


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gb", type=float, default=1.0)
    parser.add_argument("--out", type=Path, default=DATA.parent / "out-stages")
    parser.add_argument("--conf", action="append", default=[], help="KEY=VALUE, repeatable")
    args = parser.parse_args()
    files, size = pick(sorted(DATA.rglob("*.json")), args.gb)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    conf = (("spark.ui.enabled", "false"), ("spark.driver.memory", "3g"))
    conf += tuple(tuple(item.split("=", 1)) for item in args.conf)  # type: ignore[misc]
    load = os.getloadavg()[0]
    started = time.perf_counter()
    spark = build_session(SparkTarget(master="local[2]", conf=conf))
    spark.range(1).count()
    stages: dict[str, float] = {"startup": round(time.perf_counter() - started, 2)}
    jvm = spark.sparkContext._gateway.proc.pid  # type: ignore[attr-defined]

    def cpu() -> float:  # the JVM, its Python workers and this driver
        return tree_cpu_seconds(jvm) + sum(os.times()[:2])

    marks: list[tuple[str, float, float]] = []

    def progress(message: str) -> None:
        words = message.split()
        name = " ".join(words[:2]) if words[0] == "writing" else words[0]
        marks.append((name, time.perf_counter(), cpu()))

    begin, begin_cpu = time.perf_counter(), cpu()
    result = run_aggregate(spark, InputFiles(tuple(files), (), ()), args.out, progress)
    end = ("end", time.perf_counter(), cpu())
    cpu_s: dict[str, float] = {}
    for (name, at, at_cpu), (_, until, until_cpu) in zip(marks, [*marks[1:], end], strict=True):
        stages[name] = round(until - at, 2)
        cpu_s[name] = round(until_cpu - at_cpu, 2)
    stages["job"] = round(end[1] - begin, 2)
    cpu_s["job"] = round(end[2] - begin_cpu, 2)
    spark.stop()
    print(json.dumps({"gb": args.gb, "bytes": size, "files": len(files), "load_before": load,
                      "records": result.summary["records_total"], "wall_s": stages, "cpu_s": cpu_s,
                      "load_after": os.getloadavg()[0]}))  # fmt: skip


if __name__ == "__main__":
    main()
