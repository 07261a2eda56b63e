"""One watcher pass in Spark: parse what a plan reads, add it to the tables, re-derive the rest.

Layout of ``STATE/agg`` (the tables of ``orderdoc aggregate``, same schemas):

* ``data_errors``, ``quarantine`` and ``job_events`` grow by pass: pass ``N`` writes its new rows to
  ``STATE/staging/N`` and then moves the Parquet files into the table folders under names
  starting with ``pNNNNNNNN-``. Redoing pass ``N`` after a crash first deletes every file of
  that prefix, so a pass adds its rows exactly once however often it is interrupted. A file
  read again from the start (see :mod:`diagnostics.watch.manifest`) has its rows of earlier
  passes removed first (each Parquet file rewritten atomically without them).
* jobs are resolved as the one-shot job resolves them, over every pass's rows and the engine
  metrics (:mod:`diagnostics.watch.jobs`): a pass writes its rows resolved over what is known
  then, and the files of earlier passes are rewritten only when a later pass changes how
  their jobs are shown (a better casing, a second resource group with the same job name).
* ``job_events`` rows are stored as read and joined to the settled jobs after every pass
  (:func:`settle_events`, :func:`diagnostics.logs.jobs.join_jobs`, as the one-shot job joins them);
* ``error_rollup``, ``partition_idle``, ``metrics`` and ``summary.json`` are derived from the
  stored rows after every pass by the functions of the one-shot job
  (:mod:`diagnostics.spark.job`), written beside the table and swapped in by renames.

So after any sequence of passes the tables equal a one-shot aggregate of the same final files.
Parsing runs in Spark tasks (``mapInArrow``); the moves and renames run in the watcher's
process (the driver, or the Spark Connect client), which needs the state folder on a file
system it shares with the executors.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Iterable, Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pyspark import StorageLevel
from pyspark.sql import DataFrame, Observation, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import LongType, StringType, StructField, StructType

from diagnostics.aggregates import TableName, files_summary, table_files
from diagnostics.aggregates.folder import remove_table
from diagnostics.aggregates.spark import spark_schema, write_frame
from diagnostics.logs.batches import BATCH_ROWS, parse_file
from diagnostics.logs.jobs import join_jobs, resolve_jobs
from diagnostics.logs.normalise import normalise
from diagnostics.logs.reader import read_line
from diagnostics.logs.records import to_arrow
from diagnostics.spark import job, schemas
from diagnostics.spark.session import is_connect
from diagnostics.watch.files import read_range, write_atomic, write_parquet_atomic
from diagnostics.watch.jobs import (
    NAMED,
    JobStore,
    Pair,
    PassJobs,
    adopt_unrecorded,
    is_named,
    known_pairs,
    settle,
    tag,
)
from diagnostics.watch.manifest import Manifest, Plan, Read, ReadMode

APPENDED = (TableName.DATA_ERRORS, TableName.QUARANTINE, TableName.JOB_EVENTS)
#: The file in a metrics cache folder that tells which file, of what size and time, it holds.
SOURCE = "_source.json"
_BOM = b"\xef\xbb\xbf"

READS = StructType(
    [
        StructField("path", StringType(), False),
        StructField("start", LongType(), False),
        StructField("end", LongType(), False),
        StructField("first_line", LongType(), False),
        StructField("mode", StringType(), False),
    ]
)


def parse_lines(data: bytes, name: str, first_line: int) -> Iterator[pa.RecordBatch]:
    """Batches of the records of complete JSON Lines ``data``, numbered from ``first_line``."""
    chunk: list = []
    for number, line in enumerate(data.split(b"\n"), start=first_line):
        chunk.extend(read_line(line, name, number, normalise))
        if len(chunk) >= BATCH_ROWS:
            yield to_arrow(chunk)
            chunk = []
    if chunk:
        yield to_arrow(chunk)


def parse_read(read: Read) -> Iterator[pa.RecordBatch]:
    """The parsed records of one planned read (schema :data:`PARSED_SCHEMA`); nothing when
    the file was deleted since the pass was planned (the rows of its earlier passes stay)."""
    try:
        data = read_range(read.path, read.start, read.end)
    except FileNotFoundError:
        return
    if read.mode is ReadMode.WHOLE:
        yield from parse_file(data, read.path)
        return
    if read.start == 0 and data.startswith(_BOM):
        data = data[len(_BOM) :]
    yield from parse_lines(data, read.path, read.first_line)


def parse_read_batches(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """``mapInArrow`` body: planned reads (:data:`READS`) in, parsed records out."""
    for batch in batches:
        for row in batch.to_pylist():
            read = Read(
                row["path"], row["start"], row["end"], row["first_line"], ReadMode(row["mode"])
            )
            yield from parse_read(read)


def drop_pass(agg: Path, number: int) -> None:
    """Delete every table file pass ``number`` added (before it is redone)."""
    prefix = tag(number)
    for table in APPENDED:
        for path in table_files(agg, table):
            if path.name.startswith(prefix):
                path.unlink()


def drop_file_rows(agg: Path, source_file: str, number: int) -> None:
    """Remove the rows of ``source_file`` from the files of passes before ``number``."""
    prefix = tag(number)
    for table in APPENDED:
        for path in table_files(agg, table):
            if path.name.startswith(prefix):
                continue
            column = pq.read_table(path, columns=["source_file"])["source_file"]
            if not pc.any(pc.equal(column, source_file)).as_py():
                continue
            with pq.ParquetFile(path) as file:
                table_data = file.read()
            kept = table_data.filter(
                pc.invert(pc.fill_null(pc.equal(table_data["source_file"], source_file), False))
            )
            write_parquet_atomic(path, kept)


def _move_staged(staged: Path, agg: Path, table: TableName, number: int, marker: str = "") -> None:
    """Move the Parquet files Spark wrote under ``staged`` into the table, tagged by pass
    (and ``marker``). Files of no rows (Spark writes one for an empty frame) are left out,
    but for one when the table has no file yet: an empty table exists, as in a one-shot
    aggregate."""
    paths = sorted(staged.rglob("*.parquet"))
    empty = [p for p in paths if pq.read_metadata(p).num_rows == 0]
    if len(empty) == len(paths) and paths and not table_files(agg, table):
        empty = empty[1:]
    for path in paths:
        if path in empty:
            continue
        relative = path.relative_to(staged)
        target = agg / table.value / relative.parent / f"{tag(number)}{marker}{relative.name}"
        target.parent.mkdir(parents=True, exist_ok=True)
        path.replace(target)


def _parallelism(spark: SparkSession) -> int:
    """How many tasks run at once: the context's default parallelism, or over Spark Connect
    (no context on the client) the shuffle partitions."""
    if is_connect(spark):
        return int(str(spark.conf.get("spark.sql.shuffle.partitions")))
    return int(spark.sparkContext.defaultParallelism)


def source_pairs(errors: DataFrame) -> dict[str, frozenset[Pair]]:
    """The (job_id, job) pairs of ``errors``' rows per source file (a handful)."""
    found: dict[str, set[Pair]] = {}
    for row in job.pair_rows(errors, "source_file"):
        found.setdefault(row["source_file"], set()).add((row["job_id"], row["job"]))
    return {source: frozenset(pairs) for source, pairs in found.items()}


def write_reads(
    spark: SparkSession,
    plan: Plan,
    agg: Path,
    staging: Path,
    jobs: JobStore,
    known: Iterable[Pair] = (),
) -> int:
    """Parse the plan's reads and add their rows to data_errors and quarantine, the jobs
    resolved over the rows' pairs and ``known`` (the other passes' and the metrics'), and
    record the pass's pairs in ``jobs``; the number of records read. Rows whose records
    named only their job go to files of their own (:data:`NAMED`)."""
    rows = [(r.path, r.start, r.end, r.first_line, r.mode.value) for r in plan.reads]
    tasks = max(1, min(len(rows), _parallelism(spark)))
    parsed = (
        spark.createDataFrame(rows, READS)
        .repartition(tasks)
        .mapInArrow(parse_read_batches, schemas.PARSED)
        .persist(StorageLevel.DISK_ONLY)
    )
    seen: list[Observation] = []
    count = F.count(F.lit(1)).alias("records")

    def observed(frame: DataFrame) -> DataFrame:
        seen.append(Observation(f"records{len(seen)}"))
        return frame.observe(seen[-1], count)

    named = F.col("job_id").isNull() & F.col("job").isNotNull()
    try:
        shutil.rmtree(staging, ignore_errors=True)
        errors = parsed.transform(job.data_errors)
        sources = source_pairs(errors)
        pairs = {pair for found in sources.values() for pair in found}
        mapping = resolve_jobs({*known, *pairs})
        settled = job.with_jobs(job.mapping_frame(spark, mapping))
        own = errors.filter(~named).transform(settled).transform(observed)
        write_frame(own, staging, TableName.DATA_ERRORS)
        if any(is_named(pair) for pair in pairs):
            by_name = errors.filter(named).transform(settled).transform(observed)
            write_frame(by_name, staging / "named", TableName.DATA_ERRORS)
        bad = parsed.transform(job.quarantined).transform(observed)
        write_frame(bad, staging, TableName.QUARANTINE)
        events = parsed.transform(job.lifecycle_events).transform(observed)
        write_frame(events, staging, TableName.JOB_EVENTS)
    finally:
        parsed.unpersist()
    jobs.save(PassJobs(plan.number, sources, {pair: mapping[pair] for pair in pairs}))
    for table in APPENDED:
        _move_staged(staging / table.value, agg, table, plan.number)
    named_rows = staging / "named" / TableName.DATA_ERRORS.value
    _move_staged(named_rows, agg, TableName.DATA_ERRORS, plan.number, NAMED)
    shutil.rmtree(staging, ignore_errors=True)
    return sum(int(observation.get["records"]) for observation in seen)


def read_table(spark: SparkSession, agg: Path, table: TableName) -> DataFrame:
    """A stored table (empty when it has no file yet)."""
    schema = spark_schema(table)
    if not table_files(agg, table):
        return spark.createDataFrame([], schema)
    folder = str(agg / table.value)
    return spark.read.schema(schema).option("basePath", folder).parquet(folder)


def _swap(frame: DataFrame | None, agg: Path, table: TableName) -> None:
    """Write a derived table beside the folder and swap it in by renames (or remove it)."""
    if frame is None:
        remove_table(agg, table)
        return
    fresh, old = agg / ".new" / table.value, agg / ".old" / table.value
    shutil.rmtree(fresh, ignore_errors=True)
    shutil.rmtree(old, ignore_errors=True)
    write_frame(frame, fresh.parent, table)
    old.parent.mkdir(exist_ok=True)
    final = agg / table.value
    if final.exists():
        final.rename(old)
    fresh.rename(final)
    shutil.rmtree(old, ignore_errors=True)


def _cache_folder(cache: Path, path: str) -> Path:
    return cache / hashlib.sha256(path.encode()).hexdigest()[:24]


def cache_metrics(spark: SparkSession, cache: Path, paths: Iterable[str]) -> None:
    """Keep the parsed rows of each engine metrics file in ``cache`` (``STATE/metrics``), one
    folder per file with the size and modification time it was parsed at
    (``_source.json``): a file is parsed again only when those change, and a file that was
    deleted (rotated away) keeps the rows it had, as a deleted log file keeps its rows in
    data_errors. Each folder is replaced by a rename, so a crash leaves the old or the new."""
    for path in paths:
        folder = _cache_folder(cache, path)
        try:
            stat = os.stat(path)
        except FileNotFoundError:
            continue  # deleted: what was read stays
        stamp = {"path": path, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}
        try:
            if json.loads((folder / SOURCE).read_text(encoding="utf-8")) == stamp:
                continue
        except (OSError, ValueError):
            pass
        fresh, old = cache / ".new" / folder.name, cache / ".old" / folder.name
        shutil.rmtree(fresh, ignore_errors=True)
        shutil.rmtree(old, ignore_errors=True)
        rows = job.read_files(spark, [path]).transform(job.parse_metrics)
        rows.write.mode("overwrite").parquet(str(fresh))
        write_atomic(fresh / SOURCE, json.dumps(stamp).encode())
        old.parent.mkdir(parents=True, exist_ok=True)
        if folder.exists():
            folder.rename(old)
        fresh.rename(folder)
        shutil.rmtree(old, ignore_errors=True)


def cached_metrics(spark: SparkSession, cache: Path, paths: Iterable[str]) -> DataFrame | None:
    """The cached rows of the metrics files ``paths`` (schema :data:`schemas.METRICS`), or
    ``None`` when there are none."""
    folders = [str(f) for f in (_cache_folder(cache, p) for p in paths) if (f / SOURCE).is_file()]
    if not folders:
        return None
    return spark.read.schema(schemas.METRICS).parquet(*folders)


def metrics_pairs(rows: DataFrame | None) -> set[Pair]:
    """The (job_id, job) pairs of the cached engine metrics rows (a handful)."""
    return set() if rows is None else job.distinct_pairs(rows)


def settle_events(agg: Path, mapping: dict[Pair, Pair]) -> int:
    """Rewrite the job_events files (atomically) so that each row is under the job its pair
    joins among the settled ``mapping`` (:func:`~diagnostics.logs.jobs.join_jobs`); the
    number of job events stored."""
    files = table_files(agg, TableName.JOB_EVENTS)
    tables = {path: pq.read_table(path) for path in files}
    pairs = {
        pair
        for table in tables.values()
        for pair in zip(table["job_id"].to_pylist(), table["job"].to_pylist(), strict=True)
    }
    joined = join_jobs(pairs, mapping)
    for path, table in tables.items():
        rows = list(zip(table["job_id"].to_pylist(), table["job"].to_pylist(), strict=True))
        wanted = [joined[row] for row in rows]
        if wanted == rows:
            continue
        for position, column in enumerate(("job_id", "job")):
            at = table.schema.get_field_index(column)
            values = pa.array([pair[position] for pair in wanted], pa.string())
            table = table.set_column(at, table.schema.field(at), values)
        write_parquet_atomic(path, table)
    return sum(table.num_rows for table in tables.values())


def derive(
    spark: SparkSession, agg: Path, manifest: Manifest, metrics_cache: Path | None = None
) -> dict:
    """Settle the jobs of the stored rows (:func:`diagnostics.watch.jobs.settle`), then
    re-derive error_rollup, partition_idle, metrics and ``summary.json``; the summary.
    The metrics table comes from the parsed rows kept per metrics file in ``metrics_cache``
    (default ``STATE/metrics`` beside ``agg``; :func:`cache_metrics`)."""
    cache = agg.parent / "metrics" if metrics_cache is None else metrics_cache
    rows = None
    if manifest.metrics:
        cache_metrics(spark, cache, manifest.metrics)
        rows = cached_metrics(spark, cache, manifest.metrics)
    mapping = settle(agg, JobStore(agg.parent / "jobs"), metrics_pairs(rows))
    settled = job.with_jobs(job.mapping_frame(spark, mapping))
    errors = read_table(spark, agg, TableName.DATA_ERRORS)
    _swap(errors.transform(job.rollup), agg, TableName.ERROR_ROLLUP)
    _swap(errors.transform(job.idle_episodes), agg, TableName.PARTITION_IDLE)
    metrics = None if rows is None else rows.transform(settled).transform(job.metrics_table)
    _swap(metrics, agg, TableName.METRICS)
    seen = errors.agg(*(v.alias(k) for k, v in job.error_metrics().items())).collect()[0]
    quarantined = sum(  # from the Parquet footers: no Spark job
        pq.read_metadata(path).num_rows for path in table_files(agg, TableName.QUARANTINE)
    )
    lifecycle = settle_events(agg, mapping)
    events = read_table(spark, agg, TableName.JOB_EVENTS) if lifecycle else None
    summary = job.summarise(errors, seen.asDict(), quarantined, metrics, events, lifecycle)
    summary.update(files_summary(len(manifest.files) + len(manifest.metrics), manifest.skipped))
    text = json.dumps(summary, indent=2, default=str) + "\n"
    write_atomic(agg / "summary.json", text.encode())
    return summary


def run_plan(spark: SparkSession, plan: Plan, root: Path) -> int:
    """Carry out ``plan`` on the tables under ``root/agg`` (idempotent: safe to redo after a
    crash at any point); the number of records read. The caller commits the manifest."""
    agg = root / "agg"
    agg.mkdir(parents=True, exist_ok=True)
    jobs = JobStore(root / "jobs")
    drop_pass(agg, plan.number)
    jobs.drop(plan.number)
    for path in plan.replaced:
        drop_file_rows(agg, path, plan.number)
    jobs.forget(plan.replaced, plan.number)
    if not plan.reads:
        return 0
    # the new rows are written resolved over every pair known now (settle does the rest)
    cache = root / "metrics"
    cache_metrics(spark, cache, plan.after.metrics)
    adopt_unrecorded(agg, jobs)
    known = known_pairs(jobs, besides=plan.number)
    known |= metrics_pairs(cached_metrics(spark, cache, plan.after.metrics))
    return write_reads(spark, plan, agg, root / "staging" / str(plan.number), jobs, known)
