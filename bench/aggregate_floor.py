"""Where the floor is: parse-only probes of the benchmark data on Spark ``local[2]``.

    flock /tmp/bench.lock .venv/bin/python bench/aggregate_floor.py --gb 1.0

Each probe reads the first files of ``bench/data/asa-logs`` up to ``--gb`` and sends the rows
to Spark's ``noop`` sink (no table written), after a warm-up job, in one session:

* ``json_reader``: the JVM's own JSON Lines reader with an explicit schema (no validation
  beyond the schema, no line numbers, no quarantine reasons): the native floor;
* ``lines_from_json``: whole files split into numbered lines, then ``from_json`` (line
  numbers, still no checks);
* ``python_parser``: the job's parse step (file paths in, the Python parser in the workers,
  parsed and quarantined records out, :data:`diagnostics.spark.schemas.PARSED`).

Also ``python_single``: the Python parser in this process on one core (µs per record, no
Spark). Prints one JSON line per probe: wall seconds, CPU seconds of the JVM, its Python
workers and this driver, and the 1-minute load average before the probe.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

from aggregate_bench import DATA, pick
from aggregate_peers import tree_cpu_seconds
from pyspark.sql import functions as F
from pyspark.sql.types import StringType, StructField, StructType

from diagnostics.logs.batches import parse_file
from diagnostics.spark import job
from diagnostics.spark.session import SparkTarget, build_session

_PROPS = ("Source", "Type", "DataErrorType", "BriefMessage", "Message", "ExampleEvents",
          "FromTimestamp", "ToTimestamp", "EventCount", "PartitionId")  # fmt: skip
SCHEMA = StructType(
    [StructField(name, StringType()) for name in ("time", "resourceId", "level", "correlationId")]
    + [StructField("properties", StructType([StructField(n, StringType()) for n in _PROPS]))]
)


def python_single(files: list[str], limit: int = 12) -> dict:
    """The Python parser on one core, no Spark: µs of CPU per record (warm, first file skipped)."""
    list(parse_file(Path(files[0]).read_bytes(), files[0]))
    records, started = 0, time.process_time()
    for path in files[1 : limit + 1]:
        records += sum(b.num_rows for b in parse_file(Path(path).read_bytes(), path))
    cpu = time.process_time() - started
    return {"probe": "python_single", "records": records, "cpu_s": round(cpu, 2),
            "us_per_record": round(cpu / records * 1e6, 1)}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gb", type=float, default=1.0)
    args = parser.parse_args()
    files, size = pick(sorted(DATA.rglob("*.json")), args.gb)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    conf = (("spark.ui.enabled", "false"), ("spark.driver.memory", "3g"))
    spark = build_session(SparkTarget(master="local[2]", conf=conf))
    jvm = spark.sparkContext._gateway.proc.pid  # type: ignore[attr-defined]

    def probe(name: str, frame) -> None:
        load = os.getloadavg()[0]
        wall, cpu = time.perf_counter(), tree_cpu_seconds(jvm) + sum(os.times()[:2])
        frame.write.format("noop").mode("overwrite").save()
        print(json.dumps({"probe": name, "gb": args.gb, "bytes": size, "files": len(files),
                          "wall_s": round(time.perf_counter() - wall, 2),
                          "cpu_s": round(tree_cpu_seconds(jvm) + sum(os.times()[:2]) - cpu, 2),
                          "load_before": round(load, 2)}), flush=True)  # fmt: skip

    spark.read.schema(SCHEMA).json(files[:8]).write.format("noop").mode("overwrite").save()
    job.list_files(spark, files[:8]).transform(job.parse_records).write.format("noop").mode(
        "overwrite"
    ).save()  # warm-up: JIT, Python workers
    probe("json_reader", spark.read.schema(SCHEMA).json(files))
    lines = spark.read.text(files, wholetext=True).select(
        F.input_file_name().alias("file"), F.posexplode(F.split("value", "\n")).alias("n", "line")
    )
    probe("lines_from_json", lines.select("file", "n", F.from_json("line", SCHEMA).alias("r")))
    probe("python_parser", job.list_files(spark, files).transform(job.parse_records))
    spark.stop()
    print(json.dumps(python_single(files) | {"load_before": round(os.getloadavg()[0], 2)}))


if __name__ == "__main__":
    main()
