"""Stage S0 of the replay on Spark (docs/spark-replay.md): the capture's files cut into
slices, each with its first event's position in the input (the local replay's
``event_id``), and the reading of one slice that S1 and S7 share.

The capture is found as the local reader finds it (``diagnostics.captures.reader``): several
Parquet files (a folder or a glob) or one, read by row groups (their footers give the row
counts: no data is read on the driver); a CSV, JSON Lines or ``.gz`` file, one slice read
whole by the local table reader; an Event Hubs Capture folder, one slice per ``.avro`` file,
in partition then path-time order, its partition from its path. Files that need reading to
know their columns (CSV, JSON Lines, ``.gz``, Capture files) are read first by a *survey*
job, one task per file, which sends the driver each file's columns, row count, renames and
notes (O(files) rows); a Capture's body fields are typed per file there and merged on the
driver. Every slice is then read with the same local functions, so column names and types
equal the local replay's, and errors are its one-line errors.
"""

from __future__ import annotations

import dataclasses
import pickle
from collections.abc import Iterator
from dataclasses import dataclass
from enum import StrEnum
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from diagnostics.captures.avro import (
    BodySchema,
    FileBodies,
    capture_columns,
    file_bodies,
    merged_body_schema,
    read_capture_files,
)
from diagnostics.captures.datasets import check_schemas, parquet_files
from diagnostics.captures.dialect import CsvOptions
from diagnostics.captures.names import Rename, rename_empty
from diagnostics.captures.paths import DEFAULT_PATH_FORMAT, CaptureFile, capture_files
from diagnostics.captures.reader import Capture, avro_capture, parquet_note, table_capture
from diagnostics.captures.tables import read_table_noted, table_kind
from diagnostics.engine.columns import EventColumns
from diagnostics.engine.policy import OrderingPolicy
from diagnostics.engine.replay import arrival_times
from diagnostics.errors import InputError, SettingError, UsageError
from diagnostics.spark.replay_ranges import (
    RANGE_BYTES,
    RangedTable,
    columns_of,
    plan_ranges,
    read_range,
)
from diagnostics.spark.replay_uris import copy_capture, scheme_of

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


class SliceRead(StrEnum):
    """How a task reads a slice."""

    ROWS = "rows"  # rows ``start .. start + length`` of a Parquet file
    TABLE = "table"  # a whole CSV, JSON Lines or .gz file, with the local table reader
    CAPTURE = "capture"  # one Event Hubs Capture file, with the whole capture's body fields
    RANGE = "range"  # bytes ``start .. stop`` of a large CSV or JSON Lines file (whole records)


@dataclass(frozen=True, slots=True)
class Slice:
    """Events ``offset .. offset + length`` of the capture: rows of ``file`` read as
    ``read`` says (``partition``: a Capture file's, from its path)."""

    offset: int
    length: int
    file: str = ""
    read: SliceRead = SliceRead.ROWS
    start: int = 0
    partition: int | None = None
    stop: int = 0


@dataclass(frozen=True, slots=True)
class ReplayPlan:
    """Everything a task needs, sent to it with the function (frozen, picklable).

    ``arrival``/``partition`` are the column settings as given; ``policy`` names columns as
    given too (the tasks apply the capture's renames as the local reader does);
    ``partitions`` is the fixed partition set (empty until the driver knows it); ``csv``:
    how CSV files are read; ``bodies``: a Capture's body fields; ``ranged``: how the ranges
    of one large CSV or JSON Lines file are read.
    """

    path: str
    source: str
    kind: str
    arrival: str | None
    partition: str | None
    policy: OrderingPolicy
    slices: tuple[Slice, ...]
    partitions: tuple[int, ...] = ()
    csv: CsvOptions | None = None
    bodies: BodySchema | None = None
    ranged: RangedTable | None = None

    @property
    def events(self) -> int:
        """How many events the slices hold."""
        return sum(part.length for part in self.slices)

    def with_partitions(self, partitions: tuple[int, ...]) -> ReplayPlan:
        """The plan once the partition set is known."""
        return dataclasses.replace(self, partitions=partitions)


def _slice_capture(plan: ReplayPlan, part: Slice) -> Capture:
    if part.read is SliceRead.CAPTURE:
        file = CaptureFile(Path(part.file), part.partition, ())
        table = read_capture_files([file], schema=plan.bodies)
        return avro_capture(table, plan.source, plan.arrival, plan.partition)
    if part.read is SliceRead.RANGE and plan.ranged is not None:
        frame, renames = read_range(plan.ranged, part.start, part.stop), plan.ranged.renames
    elif part.read is SliceRead.TABLE:
        frame, renames, _ = read_table_noted(Path(part.file), plan.source, plan.csv)
    else:
        rows = pl.scan_parquet(part.file).slice(part.start, part.length).collect()
        frame, renames = rename_empty(rows)
    return table_capture(
        frame,
        source=plan.source,
        kind=plan.kind,
        renames=renames,
        arrival=plan.arrival,
        partition=plan.partition,
    )


def read_slice(plan: ReplayPlan, split: int) -> tuple[pl.DataFrame, OrderingPolicy, EventColumns]:
    """Slice ``split`` of the capture as the local replay sees it: the input columns (renamed
    and nested columns added as ``read_capture`` and ``Capture.apply`` do), the policy and
    the event columns naming them."""
    capture = _slice_capture(plan, plan.slices[split])
    events, policy = capture.apply(plan.policy)
    return events, policy, capture.columns


# --- the survey: one task per file that must be read to know its columns ------------------

_SURVEYED = pa.schema([("index", pa.int64()), ("found", pa.binary())])


@dataclass(frozen=True, slots=True)
class _Table:
    """A table file as the local reader reads it: its columns (no rows), rows, renames, notes."""

    columns: pl.DataFrame
    rows: int
    renames: tuple[Rename, ...]
    notes: tuple[str, ...]


def _survey_one(plan: ReplayPlan, index: int) -> _Table | FileBodies | str:
    part = plan.slices[index]
    try:
        if part.read is SliceRead.CAPTURE:
            return file_bodies(CaptureFile(Path(part.file), part.partition, ()))
        frame, renames, notes = read_table_noted(Path(part.file), plan.source, plan.csv)
    except InputError as exc:
        return str(exc)
    return _Table(frame.clear(), frame.height, renames, notes)


def survey_batches(plan: ReplayPlan, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """The survey's task: for each file index in ``batches`` (column ``id``), what the file
    holds (pickled: O(columns) bytes), or its one-line error."""
    for batch in batches:
        for index in batch.column("id").to_pylist():
            found = pickle.dumps(_survey_one(plan, int(index)))
            yield pa.RecordBatch.from_pylist(
                [{"index": int(index), "found": found}], schema=_SURVEYED
            )


def _survey(spark: SparkSession, plan: ReplayPlan) -> list[_Table | FileBodies]:
    """Each file's survey, in input order; the first file's error (input order) raised."""
    count = len(plan.slices)
    ids = spark.range(0, count, 1, max(count, 1))
    schema = "index long, found binary"
    rows = ids.mapInArrow(partial(survey_batches, plan), schema).collect()
    found = [pickle.loads(r["found"]) for r in sorted(rows, key=lambda r: int(r["index"]))]
    for item in found:
        if isinstance(item, str):
            raise InputError(item)
    return found


# --- S0 ------------------------------------------------------------------------------------


def _row_groups(files: list[Path]) -> tuple[list[Slice], list[pl.Schema]]:
    """Slices of whole row groups (row counts from the footers) and each file's schema."""
    slices, schemas, offset = [], [], 0
    for file in files:
        try:
            meta = pq.ParquetFile(file).metadata
            schemas.append(pl.Schema(pl.read_parquet_schema(file)))
        except (OSError, ValueError, pl.exceptions.PolarsError) as exc:
            detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            msg = f"{file}: cannot be read as parquet: {detail}"
            raise InputError(msg) from exc
        start = 0
        for i in range(meta.num_row_groups):
            rows = meta.row_group(i).num_rows
            if rows:
                slices.append(Slice(offset, rows, str(file), SliceRead.ROWS, start))
            offset += rows
            start += rows
    return slices, schemas


def _numbered(slices: list[Slice], rows: list[int]) -> tuple[Slice, ...]:
    """``slices`` (one per file) with their row counts and first events; empty files out."""
    out, offset = [], 0
    for part, n in zip(slices, rows, strict=True):
        if n:
            out.append(dataclasses.replace(part, offset=offset, length=n))
        offset += n
    return tuple(out)


def plan_replay(
    path: str,
    source: str,
    arrival: str | None,
    partition: str | None,
    policy: OrderingPolicy,
    named_by: str | None = None,
    *,
    spark: SparkSession | None = None,
    csv: CsvOptions | None = None,
    path_format: str | None = None,
    copy_to: Path | None = None,
    range_bytes: int = RANGE_BYTES,
) -> tuple[ReplayPlan, Capture]:
    """S0: the capture's columns read as the local reader reads them, and its slices.
    ``spark`` runs the survey of the files that need one (CSV, JSON Lines, ``.gz``, Capture
    files). A URI (``abfss://``, ``file://``...) is listed and copied by Spark into
    ``copy_to`` (a folder the executors share: :mod:`diagnostics.spark.replay_uris`) and
    that copy planned. Raises the local reader's :class:`InputError` (or
    :class:`SettingError`). An uncompressed CSV or JSON Lines file larger than
    ``range_bytes`` is cut into byte ranges (:mod:`diagnostics.spark.replay_ranges`)."""
    if scheme_of(path) is not None:
        return _plan_uri(
            path, arrival, partition, policy, named_by,
            spark=spark, csv=csv, path_format=path_format, copy_to=copy_to,
            range_bytes=range_bytes,
        )  # fmt: skip
    csv = csv or CsvOptions()
    several = parquet_files(path)
    given = Path(path)
    if several is None and (
        given.is_dir() or (given.is_file() and table_kind(given.name)[0] == "avro")
    ):
        return _plan_capture(spark, path, source, arrival, partition, policy, named_by, path_format)
    if several is None and not given.is_file():
        msg = f"{given}: no such file or folder"
        raise InputError(msg)
    kind, gz = ("parquet", False) if several is not None else table_kind(given.name)
    base = ReplayPlan(
        path, source if several is not None or scheme_of(source) else str(Path(source)), kind,
        arrival, partition,
        policy, (), csv=csv,
    )  # fmt: skip
    if kind == "parquet" and not gz:
        files = several if several is not None else [given]
        slices, schemas = _row_groups(files)
        check_schemas(files, schemas)
        frame, renames = rename_empty(pl.DataFrame(schema=schemas[0]))
        notes: tuple[str, ...] = (parquet_note(len(files)),) if several is not None else ()
        rows = sum(s.length for s in slices)
        plan = dataclasses.replace(base, slices=tuple(slices))
    elif (
        spark is not None
        and not gz
        and (ranged := plan_ranges(spark, str(given), kind, csv, range_bytes)) is not None
    ):
        ranged_table, ranges, counts = ranged
        cut = [Slice(0, 0, str(given), SliceRead.RANGE, a, stop=b) for a, b in ranges]
        plan = dataclasses.replace(base, slices=_numbered(cut, counts), ranged=ranged_table)
        (frame, renames), rows = columns_of(ranged_table), sum(counts)
        notes = ranged_table.notes
    else:
        whole = Slice(0, 0, str(given), SliceRead.TABLE)
        if spark is None:
            msg = f"{path}: reading a {kind} capture on Spark needs a Spark session"
            raise UsageError(msg)
        (table,) = _survey(spark, dataclasses.replace(base, slices=(whole,)))
        assert isinstance(table, _Table)
        frame, renames, notes, rows = table.columns, table.renames, table.notes, table.rows
        plan = dataclasses.replace(base, slices=_numbered([whole], [rows]))
    capture = table_capture(
        frame, source=plan.source, kind=kind, renames=renames,
        arrival=arrival, partition=partition, notes=notes,
    )  # fmt: skip
    return plan, _checked(capture, policy, named_by, rows)


def _plan_uri(
    uri: str,
    arrival: str | None,
    partition: str | None,
    policy: OrderingPolicy,
    named_by: str | None,
    *,
    spark: SparkSession | None,
    csv: CsvOptions | None,
    path_format: str | None,
    copy_to: Path | None,
    range_bytes: int,
) -> tuple[ReplayPlan, Capture]:
    """S0 of a capture at a URI: Spark lists and copies it; the copy planned, named by the
    URI in the summary and in errors."""
    if spark is None or copy_to is None:
        msg = f"{uri}: a capture at a URI is read by Spark: --spark and an output folder"
        raise UsageError(msg)
    local = copy_capture(spark, uri, copy_to)
    try:
        return plan_replay(
            local, uri, arrival, partition, policy, named_by,
            spark=spark, csv=csv, path_format=path_format, range_bytes=range_bytes,
        )  # fmt: skip
    except SettingError as exc:
        raise SettingError(_named(str(exc), uri, local, copy_to), exc.setting) from exc
    except (InputError, UsageError) as exc:
        raise type(exc)(_named(str(exc), uri, local, copy_to)) from exc


def _named(message: str, uri: str, local: str, copy_to: Path) -> str:
    """``message`` with the copy's folder named as the URI's folder."""
    rest = local.removeprefix(str(copy_to)).lstrip("/")
    folder = uri[: len(uri) - len(rest)] if rest and uri.endswith(rest) else uri
    return message.replace(str(copy_to), folder.rstrip("/"))


def _plan_capture(
    spark: SparkSession | None,
    path: str,
    given: str,
    arrival: str | None,
    partition: str | None,
    policy: OrderingPolicy,
    named_by: str | None,
    path_format: str | None,
) -> tuple[ReplayPlan, Capture]:
    """S0 of an Event Hubs Capture: one slice per file, the body fields merged (``given``:
    the name the summary and errors use)."""
    source = given if scheme_of(given) else str(Path(path))
    files = capture_files(Path(path), path_format or DEFAULT_PATH_FORMAT)
    slices = [Slice(0, 0, str(f.path), SliceRead.CAPTURE, partition=f.partition) for f in files]
    base = ReplayPlan(path, source, "avro", arrival, partition, policy, tuple(slices))
    if spark is None:
        msg = f"{path}: reading an Event Hubs Capture on Spark needs a Spark session"
        raise UsageError(msg)
    found = [f for f in _survey(spark, base) if isinstance(f, FileBodies)]
    merged = merged_body_schema(files, [f.schema for f in found])
    if isinstance(merged, str):
        msg = (
            f"{source}: {merged}; --spark reads Capture files apart, so each body field must "
            "have one type in every file: replay this capture without --spark"
        )
        raise UsageError(msg)
    plan = dataclasses.replace(
        base, slices=_numbered(slices, [f.records for f in found]), bodies=merged
    )
    capture = avro_capture(capture_columns(files, found, merged), source, arrival, partition)
    return plan, _checked(capture, policy, named_by, sum(f.records for f in found))


def _checked(capture: Capture, policy: OrderingPolicy, named_by: str | None, rows: int) -> Capture:
    """The capture with its event count, once the columns the policy names are found."""
    capture.apply(policy, named_by=named_by)  # a column it names and the capture lacks
    if rows == 0:
        try:  # raises: the capture holds no events
            arrival_times(capture.events, capture.columns)
        except InputError as exc:  # named as the local replay names it: the capture first
            msg = f"{capture.source}: {exc}"
            raise InputError(msg) from exc
    return dataclasses.replace(capture, height=rows)
