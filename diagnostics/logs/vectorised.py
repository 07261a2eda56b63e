"""Reading JSON Lines log files with Arrow's native JSON reader, deferring to the Python parser.

The contract is :func:`diagnostics.logs.reader.read_records`' own: every non-blank line gives
its outcomes (parsed or quarantined, with file, line number and reason), in file order, and
the outcomes are *the same* as the Python reader's. This module only takes a faster road to
them for what is plainly simple, and hands everything else to the Python reader:

* **a whole file** goes to the Python reader unless it is plain JSON Lines (no gzip error,
  shape ``lines``), every non-blank line looks like one object (``{`` ... ``}``), no JSON
  escape of a UTF-16 surrogate occurs, the bytes are valid UTF-8, and Arrow's reader, given :data:`SCHEMA` (the keys
  of ASA's resource-log data errors, spelled as ASA writes them, and the common ``status``;
  any other key, a duplicated
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

import datetime as dt
import re
from collections.abc import Iterable, Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pa_json

from diagnostics.kinds import ErrorKind, normalise_kind
from diagnostics.logs import messages, normalise
from diagnostics.logs.batches import BATCH_ROWS, parse_file
from diagnostics.logs.lifecycle import JobEvent
from diagnostics.logs.normalise import _level as level_rule
from diagnostics.logs.reader import Outcome, prepare, read_line, read_records
from diagnostics.logs.records import PARSED_SCHEMA, DataError, Quarantined, to_arrow
from diagnostics.logs.times import parse_log_time
from diagnostics.timestamps import EARLIEST, LATEST

_S = pa.string()
#: ``properties`` of a resource-log data error as ASA writes it.
PROPERTIES = pa.struct(
    [(name, _S) for name in ("Source", "Type", "DataErrorType", "BriefMessage", "Message",
                             "ExampleEvents", "FromTimestamp", "ToTimestamp")]
    + [("EventCount", pa.int64()), ("PartitionId", pa.int64())]
)  # fmt: skip
#: The envelope; any key not listed here makes the file go to the Python reader.
SCHEMA = pa.schema(
    [(name, _S) for name in ("time", "resourceId", "category", "operationName", "status",
                             "level", "correlationId")]
    + [("properties", PROPERTIES)]
)  # fmt: skip
_PARSE = pa_json.ParseOptions(explicit_schema=SCHEMA, unexpected_field_behavior="error")
_READ = pa_json.ReadOptions(use_threads=False, block_size=1 << 26)
_SURROGATE = re.compile(rb"\\u[dD][89a-fA-F]")
_IDLE = ErrorKind.PARTITION_NOT_PROGRESSING.value
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_MICROSECOND = dt.timedelta(microseconds=1)
#: Record times outside this range (epoch microseconds) take the Python path, which
#: quarantines them (``diagnostics.logs.normalise``).
_LOW_US, _HIGH_US = EARLIEST // 1_000, LATEST // 1_000
#: Positions of the time columns in a row (record, from, to, example application, arrival).
_TIME_INDEXES = frozenset(i for i, f in enumerate(PARSED_SCHEMA) if pa.types.is_timestamp(f.type))


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


#: The one time form parsed in bulk (what ASA writes): 1970-9999, a valid clock time, 0-9
#: fractional digits, ``Z``. Anything else, and impossible dates, go to ``parse_log_time``.
_PLAIN_TIME = (
    r"^(19[7-9]\d|[2-9]\d{3})-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])"
    r"T([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d{1,9})?Z$"
)
_DAYS_BEFORE_MONTH = np.array([0, 0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334])
_MONTH_DAYS = np.array([0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31])


def _number(text: pa.Array, start: int, stop: int) -> np.ndarray:
    return pc.cast(pc.utf8_slice_codeunits(text, start, stop), pa.int64()).to_numpy()


def _micros(values: pa.ChunkedArray) -> list[int | None]:
    """Epoch microseconds of each time text, as :func:`parse_log_time` reads it (truncated
    to microseconds), or ``None`` where that gives no time or the value is absent."""
    text = values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values
    plain = pc.fill_null(pc.match_substring_regex(text, _PLAIN_TIME), False)
    safe = pc.if_else(plain, text, "1970-01-01T00:00:00Z")
    year, month, day = _number(safe, 0, 4), _number(safe, 5, 7), _number(safe, 8, 10)
    leap = (year % 4 == 0) & ((year % 100 != 0) | (year % 400 == 0))
    valid = plain.to_numpy(zero_copy_only=False) & (
        day <= _MONTH_DAYS[month] + (leap & (month == 2))
    )
    y = year - 1
    days = (
        y * 365 + y // 4 - y // 100 + y // 400 - 719_162  # days from 0001-01-01 to 1970-01-01
        + _DAYS_BEFORE_MONTH[month] + (leap & (month > 2)) + day - 1
    )  # fmt: skip
    seconds = days * 86_400 + _number(safe, 11, 13) * 3_600 + _number(safe, 14, 16) * 60
    seconds += _number(safe, 17, 19)
    fraction = pc.utf8_slice_codeunits(pc.utf8_slice_codeunits(safe, 20, -1), 0, 6)
    micros = seconds * 1_000_000 + _number(pc.utf8_rpad(fraction, 6, "0"), 0, 6)
    out: list[int | None] = micros.tolist()
    for index in np.flatnonzero(~valid).tolist():
        value = text[index].as_py()
        parsed = parse_log_time(value) if value else None
        out[index] = None if parsed is None else (parsed - _EPOCH) // _MICROSECOND
    return out


def _to_time(micros: int | None) -> dt.datetime | None:
    return None if micros is None else _EPOCH + dt.timedelta(microseconds=micros)


def _outcomes(data: bytes, name: str) -> Iterator[tuple | Outcome] | None:
    """The records of a file that Arrow can read: a *row* (the values of
    :data:`DATA_ERROR_COLUMNS`, times in epoch microseconds) for each simple line, the Python
    reader's outcomes for each other line, in file order; ``None`` if Arrow cannot read it."""
    prepared, gzip_error, shape = prepare(data, name)
    lines = prepared.split(b"\n") if shape == "lines" and gzip_error is None else []
    read = _table(prepared, lines) if lines else None
    if read is None:
        return None
    table, numbers = read
    props = table.column("properties").combine_chunks()
    times = [_micros(table.column("time"))] + [
        _micros(props.field(f)) for f in ("FromTimestamp", "ToTimestamp")
    ]
    columns = [table.column(c).to_pylist() for c in ("resourceId", "level", "correlationId")]
    fields = [props.field(f).to_pylist() for f in ("DataErrorType", "Source", "EventCount",
              "PartitionId", "Message", "BriefMessage")]  # fmt: skip
    valid = props.is_valid().to_numpy(zero_copy_only=False).tolist()
    rows = zip(numbers, valid, *times, *columns, *fields, strict=True)
    return _rows(rows, name, lines)


def _rows(rows: Iterator[tuple], name: str, lines: list[bytes]) -> Iterator[tuple | Outcome]:
    for (number, valid, record_time, from_time, to_time, resource, level, correlation,
         error_type, source, count, partition, message, brief) in rows:  # fmt: skip
        kind = normalise_kind(error_type) if error_type else None
        job = normalise.job_of(resource, messages.parse_resource_name(message or ""))
        if (
            not valid
            or kind is None
            or kind == _IDLE
            or job.name is None
            or not source
            or count is None
            or count < 0
            or (partition is not None and partition < 0)
            or record_time is None
            or from_time is None
            or to_time is None
            or min(record_time, from_time, to_time) < _LOW_US
            or max(record_time, from_time, to_time) > _HIGH_US
        ):
            yield from read_line(lines[number - 1], name, number)
            continue
        message, brief = message or "", brief or ""
        example = messages.parse_example(brief) or messages.parse_example(message)
        yield (
            job.name, job.job_id, source, partition, kind, count, True, record_time, from_time,
            to_time,
            (example.application_time - _EPOCH) // _MICROSECOND if example else None,
            (example.arrival_time - _EPOCH) // _MICROSECOND if example else None,
            example.lateness_seconds if example else None,
            None, level_rule(_text(level)), _text(correlation),
            messages.parse_column(brief) or messages.parse_column(message), name, number,
        )  # fmt: skip


def read_records_fast(data: bytes, name: str) -> Iterator[Outcome]:
    """Every record of the file ``name``: the same outcomes, in the same order, as
    :func:`~diagnostics.logs.reader.read_records` (see the module docstring)."""
    outcomes = _outcomes(data, name)
    if outcomes is None:
        yield from read_records(data, name)
        return
    for item in outcomes:
        if isinstance(item, DataError | JobEvent | Quarantined):
            yield item
        else:
            yield DataError._make(
                _to_time(v) if i in _TIME_INDEXES else v for i, v in enumerate(item)
            )


def _simple_batch(rows: list[tuple]) -> pa.RecordBatch:
    """A batch with :data:`PARSED_SCHEMA` of simple rows (times in epoch microseconds)."""
    columns = list(zip(*rows, strict=True))
    arrays = []
    for index, field in enumerate(PARSED_SCHEMA):
        if index >= len(columns):  # reason, raw, raw_bytes: null for a parsed record
            arrays.append(pa.nulls(len(rows), field.type))
        elif index in _TIME_INDEXES:
            arrays.append(pa.array(columns[index], pa.int64()).cast(field.type))
        else:
            arrays.append(pa.array(columns[index], field.type))
    return pa.RecordBatch.from_arrays(arrays, schema=PARSED_SCHEMA)


def parse_file_fast(data: bytes, name: str) -> Iterator[pa.RecordBatch]:
    """:func:`~diagnostics.logs.batches.parse_file`'s batches (the same rows in the same
    order; batch boundaries may differ), simple lines built column by column."""
    outcomes = _outcomes(data, name)
    if outcomes is None:
        yield from parse_file(data, name)
        return
    simple: list[tuple] = []
    other: list[Outcome] = []
    for item in outcomes:
        if isinstance(item, DataError | JobEvent | Quarantined):
            other.append(item)
        else:
            simple.append(item)
    parts = [_simple_batch(simple)] if simple else []
    if other:
        parts.append(to_arrow(other))
    merged = pa.Table.from_batches(parts, PARSED_SCHEMA)
    if other and simple:  # back into file order (stable: a line's outcomes keep their order)
        merged = merged.take(pc.sort_indices(merged, [("source_line", "ascending")]))
    yield from merged.to_batches(max_chunksize=BATCH_ROWS)


def parse_path_batches_fast(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """``mapInArrow`` body: local file ``path`` rows in, parsed records out (the tasks read
    the files), as :func:`diagnostics.logs.batches.parse_path_batches` with the native reader."""
    for batch in batches:
        for path in batch.column("path").to_pylist():
            with open(path, "rb") as handle:
                data = handle.read()
            yield from parse_file_fast(data, path)
