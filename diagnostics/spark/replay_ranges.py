"""One large uncompressed CSV or JSON Lines file cut into byte ranges (stage S0,
docs/spark-replay.md), so that no task reads the whole file.

- The file is cut every ``range_bytes`` bytes; a *counting* job (a task per cut) reads its
  bytes and finds the first line break after its cut that ends a record: for CSV, a break
  outside quotes, told from the parity of the quotes before it (the quotes counted in every
  earlier range, chained on the driver, as :func:`diagnostics.captures.tables.header_end`
  reads a header); for JSON Lines, any break (JSON text holds no raw line break). Ranges run
  from one such break to the next (a range without one joins the previous).
- The column types are fixed on the driver as the local reader infers them for the whole file:
  polars' inference over the first 10,000 rows, read from the head of the file (the ranges
  up to the first 10,000 rows).
- A *survey* job (a task per range) reads each range with those types and sends its row
  count (the ranges' first ``event_id``) and, for CSV, what decides the decimal-comma
  columns. A value a range cannot read with the inferred type makes the whole file text, as
  the local reader falls back to text; a range that cannot be read as text either (a ragged
  row, text that is not UTF-8) or a JSON Lines error gives ``None``: the file is read whole,
  as before, and so gives the local reader's error or reading.
"""

from __future__ import annotations

import io
import pickle
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import polars as pl
import pyarrow as pa

from diagnostics.captures.dialect import CsvOptions, csv_notes, detect_separator
from diagnostics.captures.jsonl import check_repeated_keys
from diagnostics.captures.names import Rename, rename_empty
from diagnostics.captures.tables import header_end, named_header
from diagnostics.errors import InputError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

#: The size of the byte ranges one large CSV or JSON Lines file is cut into.
RANGE_BYTES = 64 << 20
#: The rows polars infers a file's column types from (the local reader's setting).
INFER_ROWS = 10_000
_BOM = b"\xef\xbb\xbf"
_DECIMAL_COMMA = r"^\s*[-+]?\d+(?:\.\d{3})*,\d+\s*$|^\s*[-+]?\d+\s*$"
_FOUND = pa.schema([("index", pa.int64()), ("found", pa.binary())])


@dataclass(frozen=True, slots=True)
class RangedTable:
    """How every range of one file is read: ``header`` (CSV: the plain header line polars
    reads, ``c0,c1,...``), the final column ``names`` and ``renames``, the ``schema`` the
    ranges are read with, the ``decimal`` columns (decimal commas read as numbers) and the
    summary's ``notes``."""

    file: str
    kind: str
    separator: str
    header: bytes
    names: tuple[str, ...]
    renames: tuple[Rename, ...]
    schema: pl.Schema
    decimal: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()


def _read_bytes(file: str, start: int, stop: int) -> bytes:
    with Path(file).open("rb") as handle:
        handle.seek(start)
        return handle.read(stop - start)


def read_range(table: RangedTable, start: int, stop: int) -> pl.DataFrame:
    """Bytes ``start .. stop`` of the file (whole records) as the local reader reads them."""
    data = _read_bytes(table.file, start, stop)
    if table.kind == "jsonl":
        frame = pl.read_ndjson(io.BytesIO(data.removeprefix(_BOM)), schema=table.schema)
        frame, _ = rename_empty(frame)
        return frame
    frame = pl.read_csv(
        io.BytesIO(table.header + data), separator=table.separator, schema=table.schema
    )
    frame.columns = list(table.names)
    if table.decimal:
        frame = frame.with_columns(
            pl.col(name)
            .str.strip_chars()
            .str.replace_all(".", "", literal=True)
            .str.replace(",", ".", literal=True)
            .cast(pl.Float64, strict=False)
            for name in table.decimal
        )
    return frame


# --- the counting pass -------------------------------------------------------------------


def _breaks(table: RangedTable, cut: int, stop: int) -> tuple[int, int, int]:
    """Bytes ``cut .. stop``: their quotes' count, and the first record-ending line break
    after ``cut`` when the quotes before ``cut`` are even and when odd (``-1``: none)."""
    data = np.frombuffer(_read_bytes(table.file, cut, stop), dtype=np.uint8)
    lines = np.flatnonzero(data == ord("\n"))
    if table.kind == "jsonl":
        first = int(lines[0]) + cut + 1 if lines.size else -1
        return 0, first, first
    quotes = np.cumsum(data == ord('"'))
    before = quotes[lines] % 2 if lines.size else np.zeros(0, dtype=np.int64)
    even = np.flatnonzero(before == 0)
    odd = np.flatnonzero(before == 1)
    return (
        int(quotes[-1]) if quotes.size else 0,
        int(lines[even[0]]) + cut + 1 if even.size else -1,
        int(lines[odd[0]]) + cut + 1 if odd.size else -1,
    )


def _per_index(spark: SparkSession, count: int, function: Callable[[int], object]) -> list[object]:
    """``function(i)`` for ``i`` in ``0 .. count``, a Spark task each, in order."""
    ids = spark.range(0, count, 1, max(count, 1))
    rows = ids.mapInArrow(partial(_task, function), "index long, found binary").collect()
    return [pickle.loads(r["found"]) for r in sorted(rows, key=lambda r: int(r["index"]))]


def _task(
    function: Callable[[int], object], batches: Iterator[pa.RecordBatch]
) -> Iterator[pa.RecordBatch]:
    for batch in batches:
        for index in batch.column("id").to_pylist():
            found = pickle.dumps(function(int(index)))
            yield pa.RecordBatch.from_pylist([{"index": int(index), "found": found}], schema=_FOUND)


def cut_ranges(
    spark: SparkSession, table: RangedTable, first: int, size: int, range_bytes: int
) -> list[tuple[int, int]]:
    """The file's bytes ``first .. size`` as ranges of whole records, about ``range_bytes``
    each (the counting job)."""
    cuts = list(range(first, size, range_bytes))
    ends = [*cuts[1:], size]
    found = _per_index(spark, len(cuts), lambda i: _breaks(table, cuts[i], ends[i]))
    starts, odd = [first], False
    for i, item in enumerate(found):
        assert isinstance(item, tuple)
        quotes, after_even, after_odd = (int(v) for v in item)
        if i > 0:
            start = after_odd if odd else after_even
            if start > starts[-1] and start < size:
                starts.append(start)
        odd = odd != bool(quotes % 2)
    return list(zip(starts, [*starts[1:], size], strict=True))


# --- the types and the survey -----------------------------------------------------------


def _head(table: RangedTable, ranges: list[tuple[int, int]]) -> bytes:
    """The file's head up to the first range end after which :data:`INFER_ROWS` rows are
    read (the whole file if it holds fewer)."""
    text = replace(table, schema=pl.Schema(dict.fromkeys(table.schema, pl.String)))
    rows = 0
    for _, stop in ranges:
        if table.kind == "csv":
            rows = read_range(text, ranges[0][0], stop).height
        else:
            rows = sum(1 for line in _read_bytes(table.file, 0, stop).split(b"\n") if line.strip())
        if rows >= INFER_ROWS:
            return _read_bytes(table.file, ranges[0][0], stop)
    return _read_bytes(table.file, ranges[0][0], ranges[-1][1])


def _inferred(table: RangedTable, head: bytes) -> pl.Schema:
    """The types polars infers from the first :data:`INFER_ROWS` rows (no row parsed: a
    later one may not parse, which the survey finds)."""
    if table.kind == "jsonl":
        data = io.BytesIO(head.removeprefix(_BOM))
        return pl.scan_ndjson(data, infer_schema_length=INFER_ROWS).collect_schema()
    data = io.BytesIO(table.header + head)
    scan = pl.scan_csv(data, separator=table.separator, infer_schema_length=INFER_ROWS)
    return scan.collect_schema()


@dataclass(frozen=True, slots=True)
class _Range:
    """A range as read: its rows and, per text column, (values, any with a comma, all
    decimal-comma numbers)."""

    rows: int
    text: dict[str, tuple[bool, bool, bool]]


def _survey_range(table: RangedTable, start: int, stop: int) -> _Range | str:
    try:
        frame = read_range(table, start, stop)
        if table.kind == "jsonl":
            check_repeated_keys(frame, _read_bytes(table.file, start, stop), table.file)
    except (pl.exceptions.PolarsError, InputError) as exc:
        return str(exc) or type(exc).__name__
    text = {}
    for name, dtype in frame.schema.items():
        if dtype == pl.String:
            values = frame[name].drop_nulls()
            text[name] = (
                not values.is_empty(),
                bool(values.str.contains(",").any()),
                bool(values.str.contains(_DECIMAL_COMMA).all()),
            )
    return _Range(frame.height, text)


def _survey(
    spark: SparkSession, table: RangedTable, ranges: list[tuple[int, int]]
) -> list[_Range] | None:
    found = _per_index(spark, len(ranges), lambda i: _survey_range(table, *ranges[i]))
    if any(isinstance(item, str) for item in found):
        return None
    return [item for item in found if isinstance(item, _Range)]


def _decimal(table: RangedTable, found: list[_Range], options: CsvOptions) -> tuple[str, ...]:
    """The text columns read as numbers (``diagnostics.captures.dialect.with_decimal_commas``
    over the whole file: some value, one with a comma, every one a decimal-comma number)."""
    if options.decimal_comma is False or (options.decimal_comma is None and table.separator == ","):
        return ()
    return tuple(
        name
        for name, dtype in zip(table.names, table.schema.values(), strict=True)
        if dtype == pl.String
        and any(part.text[name][0] for part in found)
        and any(part.text[name][1] for part in found)
        and all(part.text[name][2] for part in found)
    )


def plan_ranges(
    spark: SparkSession,
    file: str,
    kind: str,
    options: CsvOptions,
    range_bytes: int = RANGE_BYTES,
) -> tuple[RangedTable, list[tuple[int, int]], list[int]] | None:
    """``file`` cut into ranges: how they are read, their bytes and their row counts; ``None``
    when it is read whole (small; UTF-16; a JSON array; a header not read here; or a
    range that cannot be read, so that the local reader gives its error)."""
    size = Path(file).stat().st_size
    start = _read_bytes(file, 0, min(size, 1 << 20))
    if size <= range_bytes or start[:2] in (b"\xff\xfe", b"\xfe\xff", b"\x1f\x8b"):
        return None
    if kind == "jsonl":
        if start.removeprefix(_BOM).lstrip()[:1] in (b"[", b""):
            return None
        table = RangedTable(file, kind, "", b"", (), (), pl.Schema())
        first = 0
    else:
        data = start.removeprefix(_BOM)
        bom = len(start) - len(data)
        end = header_end(data)
        if end is None or end >= len(data):
            return None
        tsv = "\t" if file.lower().endswith(".tsv") else None
        sep = options.separator or tsv or detect_separator(data[:end].decode("utf-8", "replace"))
        plain, names, renames = named_header(data[: end + 1], sep)
        if names is None:
            return None
        table = RangedTable(
            file, kind, sep, plain, tuple(names), renames,
            pl.Schema({f"c{i}": pl.String for i in range(len(names))}),
        )  # fmt: skip
        first = bom + end + 1
    ranges = cut_ranges(spark, table, first, size, range_bytes)
    try:
        table = replace(table, schema=_inferred(table, _head(table, ranges)))
    except pl.exceptions.PolarsError:  # the head does not read: the whole file, as locally
        return None
    if kind == "jsonl":
        frame, renames = rename_empty(pl.DataFrame(schema=table.schema))
        table = replace(table, names=tuple(frame.columns), renames=renames)
    found = _survey(spark, table, ranges)
    if found is None and kind == "csv":  # a value the inferred type does not read: text
        table = replace(table, schema=pl.Schema(dict.fromkeys(table.schema, pl.String)))
        found = _survey(spark, table, ranges)
    if found is None:
        return None
    if kind == "csv":
        decimal = _decimal(table, found, options)
        notes = csv_notes(table.separator, options.separator is not None, decimal)
        table = replace(table, decimal=decimal, notes=notes)
    return table, ranges, [part.rows for part in found]


def columns_of(table: RangedTable) -> tuple[pl.DataFrame, tuple[Rename, ...]]:
    """The file's columns (no rows) and renames, as the local reader names and types them."""
    frame = pl.DataFrame(schema=table.schema)
    if table.kind == "csv":
        frame.columns = list(table.names)
        frame = frame.with_columns(pl.col(name).cast(pl.Float64) for name in table.decimal)
        return frame, table.renames
    return rename_empty(frame)
