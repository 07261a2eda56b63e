"""One benchmark run of the aggregation with one engine, in its own process (2 threads each).

    .venv/bin/python bench/aggregate_peers.py ENGINE OUT FILE...   (ENGINE: spark|polars|duckdb)

Prints one JSON line: ``startup_s`` (Spark: JVM and session start-up, else 0), ``job_s`` (read,
parse, aggregate and write every table), and the ``summary`` (for cross-checking engines).

* ``spark``: the real job (:func:`diagnostics.spark.job.run_aggregate`) on ``local[2]``;
* ``polars``: native polars (``scan_ndjson`` with an explicit schema, regex extraction), then
  the same rollup and idle-episode code as the reference (:mod:`diagnostics.logs.aggregate`);
* ``duckdb``: native DuckDB SQL (``read_json`` with explicit columns, ``threads=2``).

The peers read JSON Lines with object ``properties`` only (what the generator writes): they
do the happy path of the same aggregation, without per-line quarantine.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

LATE = r"application timestamp '([^']+)' and arrival time '([^']+)'"
EARLY = r"arrival time '([^']+)' is earlier than input event application timestamp '([^']+)'"
IDLE = r"Input Partition \[(\d+)\] does not have additional data for more than \[(\d+)\]"
JOB = r"/STREAMINGJOBS/([^/]+)"
LEGACY = {"InputEventLateBeyondThreshold": "LateInputEvent", "InputEventEarlyBeyondThreshold": "EarlyInputEvent"}  # fmt: skip


def tree_cpu_seconds(root: int) -> float:
    """CPU seconds (user + system) of process ``root`` and its live descendants, from /proc."""
    parents: dict[int, int] = {}
    times: dict[int, float] = {}
    tick = os.sysconf("SC_CLK_TCK")
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(entry.name)] = int(fields[1])
        times[int(entry.name)] = (int(fields[11]) + int(fields[12])) / tick
    tree, frontier = {root}, [root]
    while frontier:
        parent = frontier.pop()
        children = [pid for pid, ppid in parents.items() if ppid == parent and pid not in tree]
        tree.update(children)
        frontier.extend(children)
    return sum(times.get(pid, 0.0) for pid in tree)


CPU: dict[str, float] = {}


def run_spark(files: list[str], out: Path) -> tuple[float, float, dict]:
    from diagnostics.logs.inputs import InputFiles
    from diagnostics.spark.job import run_aggregate
    from diagnostics.spark.session import SparkTarget, build_session

    start = time.perf_counter()
    conf = (("spark.ui.enabled", "false"), ("spark.driver.memory", "3g"))
    master = os.environ.get("BENCH_SPARK_MASTER", "local[2]")  # local[1] for the speed-up
    spark = build_session(SparkTarget(master=master, conf=conf))
    spark.range(1).count()
    startup = time.perf_counter() - start
    start = time.perf_counter()
    result = run_aggregate(spark, InputFiles(tuple(files), (), ()), out)
    job = time.perf_counter() - start
    # JVM + Python workers (reused, so alive) + this driver process, start-up included
    proc = getattr(spark.sparkContext._gateway, "proc", None)  # the JVM pyspark launched
    if proc is not None:
        CPU["tree_cpu_s"] = tree_cpu_seconds(proc.pid) + sum(os.times()[:2])
    spark.stop()
    return startup, job, result.summary


def run_polars(files: list[str], out: Path) -> tuple[float, float, dict]:
    import polars as pl

    from diagnostics.logs.aggregate import idle_episodes, rollup, summarise

    start = time.perf_counter()
    props = pl.Struct(
        dict.fromkeys(("Source", "Type", "DataErrorType", "BriefMessage", "Message", "FromTimestamp", "ToTimestamp"), pl.String) | {"EventCount": pl.Int64}
    )  # fmt: skip
    schema = {"time": pl.String, "resourceId": pl.String, "level": pl.String, "properties": props}
    raw = pl.scan_ndjson(
        files, schema=schema, include_file_paths="source_file", row_index_name="row"
    )

    def ts(expr: pl.Expr) -> pl.Expr:
        return expr.str.strip_suffix("Z").str.to_datetime(
            "%Y-%m-%dT%H:%M:%S%.f", time_unit="us", time_zone="UTC", strict=False
        )

    p = pl.col("properties")
    brief = p.struct.field("BriefMessage")
    message = p.struct.field("Message").fill_null("")
    app = pl.coalesce(ts(brief.str.extract(LATE, 1)), ts(brief.str.extract(EARLY, 2)))
    arr = pl.coalesce(ts(brief.str.extract(LATE, 2)), ts(brief.str.extract(EARLY, 1)))
    kind = pl.coalesce(p.struct.field("DataErrorType"), p.struct.field("Type"))
    idle = kind == "InputPartitionNotProgressing"
    errors = raw.select(
        pl.col("resourceId").str.extract(JOB, 1).alias("job"),
        p.struct.field("Source").alias("source"),
        message.str.extract(IDLE, 1).cast(pl.Int64).alias("partition_id"),
        kind.replace(LEGACY).alias("kind"),
        pl.when(idle).then(1).otherwise(p.struct.field("EventCount")).alias("event_count"),
        (idle | p.struct.field("EventCount").is_not_null()).alias("count_known"),
        ts(pl.col("time")).alias("record_time"),
        ts(p.struct.field("FromTimestamp")).alias("from_time"),
        ts(p.struct.field("ToTimestamp")).alias("to_time"),
        app.alias("example_application_time"),
        arr.alias("example_arrival_time"),
        ((arr - app).dt.total_microseconds() / 1e6).alias("lateness_seconds"),
        message.str.extract(IDLE, 2).cast(pl.Int64).alias("idle_minutes"),
        pl.col("level"),
        pl.lit(None, pl.String).alias("correlation_id"),
        pl.col("source_file"),
        (pl.col("row") + 1).cast(pl.Int64).alias("source_line"),
    ).with_columns(pl.col("record_time").dt.date().alias("date"))
    data_errors = errors.collect()
    out.mkdir(parents=True, exist_ok=True)
    data_errors.write_parquet(out / "data_errors", partition_by="date")
    rollup(data_errors).write_parquet(out / "error_rollup", partition_by="date")
    idle_episodes(data_errors).write_parquet(out / "partition_idle", partition_by="date")
    parsed = data_errors.with_columns(pl.lit(None, pl.String).alias("reason"))
    summary = summarise(parsed, data_errors)
    return 0.0, time.perf_counter() - start, summary


def lit(text: str) -> str:
    """A SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


def run_duckdb(files: list[str], out: Path) -> tuple[float, float, dict]:
    import duckdb

    start = time.perf_counter()
    con = duckdb.connect()
    con.execute("SET threads = 2; SET TimeZone = 'UTC'")
    props = ("STRUCT(Source VARCHAR, Type VARCHAR, DataErrorType VARCHAR, BriefMessage VARCHAR, "
             "Message VARCHAR, FromTimestamp VARCHAR, ToTimestamp VARCHAR, EventCount BIGINT)")  # fmt: skip
    columns = {"time": "VARCHAR", "resourceId": "VARCHAR", "level": "VARCHAR", "properties": props}
    ts = "(try_strptime(left({}, 26), '%Y-%m-%dT%H:%M:%S.%f') AT TIME ZONE 'UTC')"
    con.execute(f"""
        CREATE TEMP TABLE data_errors AS
        WITH raw AS (
          SELECT *, filename AS source_file,
                 coalesce(properties.DataErrorType, properties.Type) AS k,
                 properties.BriefMessage AS b, coalesce(properties.Message, '') AS msg_text
          FROM read_json(?, format = 'newline_delimited', columns = {columns!r}, filename = true, hive_partitioning = false)
        ), times AS (
          SELECT *,
            {ts.format(f"coalesce(nullif(regexp_extract(b, {lit(LATE)}, 1), ''), nullif(regexp_extract(b, {lit(EARLY)}, 2), ''))")} AS app,
            {ts.format(f"coalesce(nullif(regexp_extract(b, {lit(LATE)}, 2), ''), nullif(regexp_extract(b, {lit(EARLY)}, 1), ''))")} AS arr
          FROM raw
        )
        SELECT regexp_extract(resourceId, {lit(JOB)}, 1) AS job,
               properties.Source AS source,
               TRY_CAST(nullif(regexp_extract(msg_text, {lit(IDLE)}, 1), '') AS BIGINT) AS partition_id,
               CASE k WHEN 'InputEventLateBeyondThreshold' THEN 'LateInputEvent'
                      WHEN 'InputEventEarlyBeyondThreshold' THEN 'EarlyInputEvent' ELSE k END AS kind,
               CASE WHEN k = 'InputPartitionNotProgressing' THEN 1 ELSE properties.EventCount END AS event_count,
               (k = 'InputPartitionNotProgressing' OR properties.EventCount IS NOT NULL) AS count_known,
               {ts.format("time")} AS record_time,
               {ts.format("properties.FromTimestamp")} AS from_time,
               {ts.format("properties.ToTimestamp")} AS to_time,
               app AS example_application_time, arr AS example_arrival_time,
               epoch_us(arr) / 1e6 - epoch_us(app) / 1e6 AS lateness_seconds,
               TRY_CAST(nullif(regexp_extract(msg_text, {lit(IDLE)}, 2), '') AS BIGINT) AS idle_minutes,
               level, NULL::VARCHAR AS correlation_id, source_file,
               CAST(record_time AS DATE) AS date
        FROM times
    """, [files])  # fmt: skip
    con.execute("""
        CREATE TEMP TABLE error_rollup AS
        SELECT job, kind, partition_id, date_trunc('minute', coalesce(from_time, record_time)) AS minute,
               sum(event_count)::BIGINT AS event_count, count(*)::BIGINT AS records,
               count_if(NOT count_known)::BIGINT AS records_without_count,
               max(lateness_seconds) AS max_lateness_seconds, CAST(minute AS DATE) AS date
        FROM data_errors GROUP BY ALL;
        CREATE TEMP TABLE partition_idle AS
        WITH n AS (
          SELECT *, coalesce(idle_minutes, 0) AS mins,
                 lag(record_time) OVER w AS prev_t, lag(coalesce(idle_minutes, 0)) OVER w AS prev_m
          FROM data_errors WHERE kind = 'InputPartitionNotProgressing'
          WINDOW w AS (PARTITION BY job, source, partition_id ORDER BY record_time, source_file)
        ), e AS (
          SELECT *, sum(CASE WHEN prev_t IS NULL OR mins < prev_m
                              OR record_time - prev_t > to_minutes(mins + 1) THEN 1 ELSE 0 END)
                    OVER (PARTITION BY job, source, partition_id ORDER BY record_time, source_file
                          ROWS UNBOUNDED PRECEDING) AS episode
          FROM n
        )
        SELECT job, source, partition_id,
               min(record_time) - to_minutes(arg_min(mins, record_time)) AS start,
               max(record_time) AS "end", count(*)::BIGINT AS notices,
               max(idle_minutes)::BIGINT AS max_idle_minutes, CAST(start AS DATE) AS date
        FROM e GROUP BY job, source, partition_id, episode;
    """)  # fmt: skip
    out.mkdir(parents=True, exist_ok=True)
    for table in ("data_errors", "error_rollup", "partition_idle"):
        con.execute(
            f"COPY {table} TO '{out / table}' (FORMAT parquet, PARTITION_BY (date), OVERWRITE_OR_IGNORE)"
        )
    total = con.execute("SELECT count(*) FROM data_errors").fetchone()[0]
    kinds = dict(
        con.execute(
            "SELECT kind, sum(event_count)::BIGINT FROM data_errors GROUP BY kind ORDER BY kind"
        ).fetchall()
    )
    idle = [
        r[0]
        for r in con.execute(
            "SELECT DISTINCT partition_id FROM data_errors WHERE kind = 'InputPartitionNotProgressing' AND partition_id IS NOT NULL ORDER BY 1"
        ).fetchall()
    ]
    jobs = [
        r[0]
        for r in con.execute(
            "SELECT DISTINCT job FROM data_errors WHERE job IS NOT NULL ORDER BY 1"
        ).fetchall()
    ]
    summary = {"records_total": total, "records_parsed": total, "records_quarantined": 0,
               "events_by_kind": kinds, "idle_partitions": idle, "jobs": jobs}  # fmt: skip
    return 0.0, time.perf_counter() - start, summary


def main() -> None:
    engine, out, *files = sys.argv[1:]
    runner = {
        "spark": run_spark,
        "polars": run_polars,
        "duckdb": run_duckdb,
    }[engine]
    startup, job, summary = runner(files, Path(out))
    keep = ("records_total", "records_quarantined", "events_by_kind", "idle_partitions", "jobs")
    result = {"engine": engine, "startup_s": startup, "job_s": job, "threads": 2,
              "pid": os.getpid(), "summary": {k: summary[k] for k in keep}} | CPU  # fmt: skip
    print(json.dumps(result))


if __name__ == "__main__":
    main()
