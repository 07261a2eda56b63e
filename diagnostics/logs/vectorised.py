"""Reading JSON Lines log files with Arrow's native JSON reader, deferring to the Python parser.

The contract is :func:`diagnostics.logs.reader.read_records`' own: every non-blank line gives
its outcomes (parsed or quarantined, with file, line number and reason), in file order, and
the outcomes are *the same* as the Python reader's. This module only takes a faster road to
them for what is plainly simple, and hands everything else to the Python reader:

* **a whole file** goes to the Python reader unless it is plain JSON Lines (no gzip error,
  shape ``lines``), every non-blank line looks like one object (``{`` ... ``}``), no JSON
  escape of a UTF-16 surrogate occurs, the bytes are valid UTF-8, and Arrow's reader, given :data:`SCHEMA` (the keys
  of ASA's resource-log data errors, spelled as ASA writes them; any other key, a duplicated
  key, a value of another JSON type or invalid JSON is an error), reads it with
  exactly one row per non-blank line;
* **a line** goes to the Python reader (``read_line``) unless it is a data error in its plain
  form: ``time``, ``resourceId`` with a job, ``properties.DataErrorType`` (not an idle
  notice), ``Source``, ``FromTimestamp``, ``ToTimestamp`` all non-empty, times the Python
  rules parse, ``EventCount`` and ``PartitionId`` non-negative or (partition) absent.

For a simple line the record is built with the very functions the Python normaliser uses
(time parsing, job names, kinds, levels, example times), so values cannot drift apart; what
the native reader saves is the JSON decoding and the key matching. Equality with the Python
reader is property-tested (tests/logs/test_vectorised.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

import pyarrow as pa
import pyarrow.json as pa_json

from diagnostics.kinds import ErrorKind, normalise_kind
from diagnostics.logs import messages, normalise
from diagnostics.logs.batches import BATCH_ROWS
from diagnostics.logs.normalise import _level as level_rule
from diagnostics.logs.reader import Outcome, prepare, read_line, read_records
from diagnostics.logs.records import DataError, to_arrow
from diagnostics.logs.times import parse_log_time

_S = pa.string()
#: ``properties`` of a resource-log data error as ASA writes it.
PROPERTIES = pa.struct(
    [(name, _S) for name in ("Source", "Type", "DataErrorType", "BriefMessage", "Message",
                             "ExampleEvents", "FromTimestamp", "ToTimestamp")]
    + [("EventCount", pa.int64()), ("PartitionId", pa.int64())]
)  # fmt: skip
#: The envelope; any key not listed here makes the file go to the Python reader.
SCHEMA = pa.schema(
    [(name, _S) for name in ("time", "resourceId", "category", "operationName", "level",
                             "correlationId")]
    + [("properties", PROPERTIES)]
)  # fmt: skip
_PARSE = pa_json.ParseOptions(explicit_schema=SCHEMA, unexpected_field_behavior="error")
_READ = pa_json.ReadOptions(use_threads=False, block_size=1 << 26)
_SURROGATE = re.compile(rb"\\u[dD][89a-fA-F]")
_IDLE = ErrorKind.PARTITION_NOT_PROGRESSING.value


def _table(data: bytes, lines: list[bytes]) -> tuple[pa.Table, list[int]] | None:
    """Arrow's reading of ``data`` and the 1-based line number of each row, or ``None`` when
    the file is not plainly one object per non-blank line."""
    numbers: list[int] = []
    for number, line in enumerate(lines, start=1):
        body = line.rstrip(b"\r")
        if body[:1] == b"{" and body[-1:] == b"}":
            numbers.append(number)
        elif line.strip():
            return None
    if not numbers or _SURROGATE.search(data):
        return None
    try:  # Arrow's reader does not check UTF-8
        data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    try:
        table = pa_json.read_json(pa.BufferReader(data), read_options=_READ, parse_options=_PARSE)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    if table.num_rows != len(numbers):
        return None
    return table, numbers


def _text(value: str | None) -> str | None:
    """A text field as the Python rules read it: empty means absent."""
    return value or None


def _row(row: tuple, name: str, number: int) -> DataError | None:
    """The record of one simple line, or ``None`` if the line is not simple."""
    time, resource, level, correlation, props = row
    if props is None or not time or not resource:
        return None
    error_type = props["DataErrorType"]
    source, count = props["Source"], props["EventCount"]
    if not error_type or not source or count is None or count < 0:
        return None
    kind = normalise_kind(error_type)
    partition = props["PartitionId"]
    if kind == _IDLE or (partition is not None and partition < 0):
        return None
    job = normalise.job_name(resource)
    record_time = parse_log_time(time)
    from_time = parse_log_time(props["FromTimestamp"]) if props["FromTimestamp"] else None
    to_time = parse_log_time(props["ToTimestamp"]) if props["ToTimestamp"] else None
    if job is None or record_time is None or from_time is None or to_time is None:
        return None
    message, brief = props["Message"] or "", props["BriefMessage"] or ""
    example = messages.parse_example(brief) or messages.parse_example(message)
    return DataError(
        job=job,
        source=source,
        partition_id=partition,
        kind=kind,
        event_count=count,
        count_known=True,
        record_time=record_time,
        from_time=from_time,
        to_time=to_time,
        example_application_time=example.application_time if example else None,
        example_arrival_time=example.arrival_time if example else None,
        lateness_seconds=example.lateness_seconds if example else None,
        idle_minutes=None,
        level=level_rule(_text(level)),
        correlation_id=_text(correlation),
        column_name=messages.parse_column(brief) or messages.parse_column(message),
        source_file=name,
        source_line=number,
    )


def read_records_fast(data: bytes, name: str) -> Iterator[Outcome]:
    """Every record of the file ``name``: the same outcomes, in the same order, as
    :func:`~diagnostics.logs.reader.read_records` (see the module docstring)."""
    prepared, gzip_error, shape = prepare(data, name)
    lines = prepared.split(b"\n") if shape == "lines" and gzip_error is None else []
    read = _table(prepared, lines) if lines else None
    if read is None:
        yield from read_records(data, name)
        return
    table, numbers = read
    columns = [table.column(c).to_pylist() for c in ("time", "resourceId", "level",
                                                     "correlationId", "properties")]  # fmt: skip
    for row, number in zip(zip(*columns, strict=True), numbers, strict=True):
        record = _row(row, name, number)
        if record is None:
            yield from read_line(lines[number - 1], name, number)
        else:
            yield record


def parse_file_fast(data: bytes, name: str) -> Iterator[pa.RecordBatch]:
    """:func:`~diagnostics.logs.batches.parse_file` through :func:`read_records_fast`."""
    chunk: list[Outcome] = []
    for outcome in read_records_fast(data, name):
        chunk.append(outcome)
        if len(chunk) >= BATCH_ROWS:
            yield to_arrow(chunk)
            chunk = []
    if chunk:
        yield to_arrow(chunk)


def parse_path_batches_fast(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """``mapInArrow`` body: local file ``path`` rows in, parsed records out (the tasks read
    the files), as :func:`diagnostics.logs.batches.parse_path_batches` with the native reader."""
    for batch in batches:
        for path in batch.column("path").to_pylist():
            with open(path, "rb") as handle:
                data = handle.read()
            yield from parse_file_fast(data, path)
