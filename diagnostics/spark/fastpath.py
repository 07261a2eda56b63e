"""The opt-in native JSON Lines path: Spark parses the clean lines, Python the rest.

Off by default (``--conf spark.orderdoc.nativeJsonLines=true`` turns it on): on the 2-core
benchmark machine it was slower than the Python parser it is meant to replace
(docs/performance.md). Data flow (nothing of the data goes to the driver)::

    binaryFile(path, content) --mapInArrow(split_file_batches)--> one row per JSON line
                                  (other shapes, gzip errors: rows parsed in Python as before)
    lines --native(): from_json + checks in Spark SQL--> parsed rows; a line the checks do
                                  not fully accept keeps its text in ``line``
    kept lines --mapInArrow(reparse_line_batches)--> the Python parser (same reasons, lines)

The checks accept a line only when every rule of :func:`diagnostics.logs.normalise.normalise`
the line meets is decided the same way in Spark SQL: one JSON object and nothing after it,
no ``\\u`` escapes (lone surrogates), ``properties`` an object (a JSON string, and our
engine's ``orderdoc`` extras, take the Python path), every field it reads a string where
Python wants one (Spark gives other values as their JSON text, which the checks recognise),
counts and partitions as digits that fit in 64 bits, times in the strict ISO form
``YYYY-MM-DDTHH:MM:SS[.f+][Z]`` (also inside messages), ASCII messages and resource ids
(Python's ``\\d`` and ``IGNORECASE`` are Unicode-aware, Java's are not). Anything else, valid
or not, goes to the Python parser, so the results are the Python parser's; the tests compare
both on clean, tricky and broken lines.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Iterable, Iterator

import numpy as np
import pyarrow as pa
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import StringType, StructField, StructType

from diagnostics.kinds import LEGACY_KIND_NAMES, ErrorKind
from diagnostics.logs.batches import BATCH_ROWS, local_name
from diagnostics.logs.reader import gzip_quarantine, prepare, read_line, read_records
from diagnostics.logs.records import PARSED_SCHEMA, to_arrow
from diagnostics.spark import schemas

IDLE = ErrorKind.PARTITION_NOT_PROGRESSING.value

#: Arrow and Spark schemas of the split rows: the parsed columns plus the line's text.
LINES_ARROW = PARSED_SCHEMA.append(pa.field("line", pa.string()))
LINES = StructType([*schemas.PARSED.fields, StructField("line", StringType(), True)])
#: Input rows of the Python fallback.
KEPT = StructType([f for f in LINES.fields if f.name in ("source_file", "source_line", "line")])


# --- Python side: splitting files into lines, and the fallback ---------------------------------


def _line_batch(data: bytes, name: str, first: int, offsets: np.ndarray) -> pa.RecordBatch:
    """Rows for lines ``first``.. whose byte ranges are ``offsets`` (text shares ``data``)."""
    count = len(offsets) - 1
    base = int(offsets[0])
    lines = pa.StringArray.from_buffers(
        count, pa.py_buffer((offsets - base).astype(np.int32)), pa.py_buffer(data)[base:]
    )
    columns = []
    for field in LINES_ARROW:
        if field.name == "source_file":
            columns.append(pa.array([name] * count, pa.string()))
        elif field.name == "source_line":
            columns.append(pa.array(np.arange(first, first + count, dtype=np.int64)))
        elif field.name == "line":
            columns.append(lines)
        else:
            columns.append(pa.nulls(count, field.type))
    return pa.RecordBatch.from_arrays(columns, schema=LINES_ARROW)


def _with_line(batch: pa.RecordBatch) -> pa.RecordBatch:
    """A parsed batch with a null ``line`` column."""
    columns = [*batch.columns, pa.nulls(batch.num_rows, pa.string())]
    return pa.RecordBatch.from_arrays(columns, schema=LINES_ARROW)


def split_file(data: bytes, name: str) -> Iterator[pa.RecordBatch]:
    """Rows (:data:`LINES_ARROW`) of one file: its lines, or its records parsed in Python.

    A file :func:`~diagnostics.logs.reader.read_records` reads as JSON Lines and that is valid
    UTF-8 gives one row per line (``line`` is the text up to and including ``\\n``); any other
    file is parsed here, as before. A gzip error adds its quarantined row either way.
    """
    body, gzip_error, shape = prepare(data, name)
    try:
        if len(body) >= 2**31 - 1:
            raise ValueError  # beyond 32-bit string offsets: the Python path
        body.decode("utf-8")
    except (UnicodeDecodeError, ValueError):
        shape = "document" if shape == "lines" else shape
    if shape != "lines":
        chunk = []
        for outcome in read_records(data, name):
            chunk.append(outcome)
            if len(chunk) >= BATCH_ROWS:
                yield _with_line(to_arrow(chunk))
                chunk = []
        if chunk:
            yield _with_line(to_arrow(chunk))
        return
    ends = np.flatnonzero(np.frombuffer(body, dtype=np.uint8) == ord("\n")) + 1
    offsets = np.concatenate([[0], ends, [len(body)]]).astype(np.int64)
    for start in range(0, len(offsets) - 1, BATCH_ROWS):
        yield _line_batch(body, name, start + 1, offsets[start : start + BATCH_ROWS + 1])
    if gzip_error is not None:
        yield _with_line(to_arrow([gzip_quarantine(body, name, gzip_error)]))


def split_file_batches(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """``mapInArrow`` body: rows of (``path``, ``content``) in, :data:`LINES_ARROW` rows out."""
    for batch in batches:
        paths = batch.column("path").to_pylist()
        contents = batch.column("content")
        for index, path in enumerate(paths):
            yield from split_file(contents[index].as_py() or b"", local_name(path))


def reparse_line_batches(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """``mapInArrow`` body: lines the native checks kept, parsed by the Python parser."""
    chunk = []
    for batch in batches:
        names = batch.column("source_file").to_pylist()
        numbers = batch.column("source_line").to_pylist()
        texts = batch.column("line").to_pylist()
        for name, number, text in zip(names, numbers, texts, strict=True):
            line = text.encode("utf-8")
            chunk.extend(read_line(line.removesuffix(b"\n"), name, number))
            if len(chunk) >= BATCH_ROWS:
                yield to_arrow(chunk)
                chunk = []
    if chunk:
        yield to_arrow(chunk)


# --- Spark side: the native parse and its checks -----------------------------------------------

_AGGREGATE = (
    r"Source '([^']*)' had ([0-9]+) data errors? of kind '([^']+)'"
    r"(?: between processing times '([^']+)' and '([^']+)')?"
)
_LATE = r"application timestamp '([^']+)' and arrival time '([^']+)'"
_EARLY = r"arrival time '([^']+)' is earlier than input event application timestamp '([^']+)'"
_IDLE_TEXT = (
    r"Input Partition \[([0-9]+)\] does not have additional data for more than "
    r"\[([0-9]+)\] minute"
)
_TIME = r"^[1-9][0-9]{3}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?Z?\z"
_DIGITS = r"^[0-9]{1,18}\z"
_NON_ASCII = r"[^\x00-\x7F]"


#: What ``from_json`` reads of a line: every field as its raw text (Spark gives a non-string
#: JSON value as its JSON text, so the checks below tell strings from other values).
_FIELDS = ["time", "resourceId", "Resource", "level", "correlationId", "orderdoc"]
_PROPS = [
    "Type",
    "DataErrorType",
    "BriefMessage",
    "Message",
    "Source",
    "FromTimestamp",
    "ToTimestamp",
    "PartitionId",
    "EventCount",
]
_SCHEMA = (
    "array<struct<"
    + ", ".join(f"`{k}`: string" for k in _FIELDS)
    + ", properties: struct<"
    + ", ".join(f"`{k}`: string" for k in _PROPS)
    + ">>>"
)
#: Python's ``json`` accepts neither single quotes nor NaN/Infinity in the places we read.
_JSON_OPTIONS = {"allowSingleQuotes": "false", "allowNonNumericNumbers": "false"}
#: The JSON text of a value that is not a string (number, true/false, object, array).
_NOT_STRING = r"(?s)^(-?[0-9][0-9.eE+-]*|true|false|[\[{].*)\z"


def _text_ok(text: Column) -> Column:
    """True if the raw text of an optional field can only come from a JSON string (or null)."""
    return text.isNull() | ~text.rlike(_NOT_STRING)


def _time_ok(text: Column) -> Column:
    """A time stamp text: null or "" (no time), or the strict ISO form of a valid time."""
    return text.isNull() | (text == "") | (text.rlike(_TIME) & _time(text).isNotNull())


def _time(text: Column) -> Column:
    """The time of a strict ISO text (fraction truncated to microseconds), else null."""
    seconds = F.try_to_timestamp(F.substring(text, 1, 19), F.lit("yyyy-MM-dd'T'HH:mm:ss"))
    fraction = F.regexp_extract(text, r"\.([0-9]+)", 1)
    micros = F.rpad(F.substring(fraction, 1, 6), 6, "0").try_cast("long")
    return F.when(text.rlike(_TIME), F.timestamp_micros(F.unix_micros(seconds) + micros))


def _extract(text: Column, pattern: str, group: int) -> Column:
    """Group ``group`` of the first match of ``pattern`` in ``text``; "" if none."""
    return F.regexp_extract(F.coalesce(text, F.lit("")), pattern, group)


def _matches(text: Column, pattern: str) -> Column:
    return F.coalesce(text, F.lit("")).rlike(pattern)


def native(lines: DataFrame) -> DataFrame:
    """Split rows in, :data:`LINES` rows out: accepted lines parsed (``line`` null).

    The line is parsed as the only element of ``[line]``; that it is one JSON value with
    nothing after it is checked by also parsing ``{"x":line}`` (each wrapping fails on a
    different kind of trailing data: ``]`` ends the object wrapping, anything else breaks
    the array or gives it a second element).
    """
    line = F.col("line")
    in_array = F.from_json(F.concat(F.lit("["), line, F.lit("]")), _SCHEMA, _JSON_OPTIONS)
    in_object = F.from_json(F.concat(F.lit('{"x":'), line, F.lit("}")), "x struct<>", _JSON_OPTIONS)
    frame = lines.withColumns(
        {
            "_a": F.when(line.isNotNull() & ~line.contains("\\u"), in_array),
            "_single": F.when(line.isNotNull(), in_object.getField("x").isNotNull()),
        }
    )
    rec = F.col("_r")
    frame = frame.withColumn("_r", F.when(F.size("_a") == 1, F.col("_a")[0]))
    frame = frame.withColumns(
        {f"_f_{k}": rec.getField(k) for k in _FIELDS}
        | {f"_p_{k}": rec.getField("properties").getField(k) for k in _PROPS}
    )
    field = {k: F.col(f"_f_{k}") for k in _FIELDS} | {k: F.col(f"_p_{k}") for k in _PROPS}
    oks: list[Column] = [
        F.col("_single"),
        rec.isNotNull(),
        field["orderdoc"].isNull(),  # our engine's extras: the Python path
    ]
    for key in ("resourceId", "Resource", "level", "correlationId", "Type", "DataErrorType",
                "BriefMessage", "Message", "Source"):  # fmt: skip
        oks.append(_text_ok(field[key]))
    for key in ("PartitionId", "EventCount"):
        text = field[key]
        oks.append(text.isNull() | (text == "") | text.rlike(_DIGITS))
    message, brief = field["Message"], field["BriefMessage"]
    resource_id = field["resourceId"]
    oks.append(~F.concat_ws("", message, brief, resource_id).rlike(_NON_ASCII))
    times = {}
    for key in ("time", "FromTimestamp", "ToTimestamp"):
        oks.append(_time_ok(field[key]))
        times[key] = F.col(f"_time_{key}")
    legacy = F.create_map(*[F.lit(x) for pair in LEGACY_KIND_NAMES.items() for x in pair])
    error_type, record_type = field["DataErrorType"], field["Type"]
    frame = frame.withColumns(
        {f"_time_{k}": _time(field[k]) for k in times}
        | {
            "_kind": F.when(
                error_type != "", F.coalesce(F.try_element_at(legacy, error_type), error_type)
            ).when(record_type == IDLE, F.lit(IDLE)),
            "_idle_text": F.when(_matches(message, _IDLE_TEXT), message).otherwise(brief),
            "_aggregate": _matches(message, _AGGREGATE),
            "_late_b": _matches(brief, _LATE),
            "_early_b": _matches(brief, _EARLY),
            "_late_m": _matches(message, _LATE),
            "_early_m": _matches(message, _EARLY),
            "_count": F.when(field["EventCount"] != "", field["EventCount"].try_cast("bigint")),
            "_partition": F.when(
                field["PartitionId"] != "", field["PartitionId"].try_cast("bigint")
            ),
        }
    )
    kind, idle_text, aggregate = F.col("_kind"), F.col("_idle_text"), F.col("_aggregate")
    late_b, early_b, late_m, early_m = (
        F.col(c) for c in ("_late_b", "_early_b", "_late_m", "_early_m")
    )
    oks.append(kind.isNotNull() & times["time"].isNotNull())
    frame = frame.withColumns(
        {
            "_is_idle": kind == IDLE,
            "_idle_match": _matches(idle_text, _IDLE_TEXT),
            "_idle_partition": _extract(idle_text, _IDLE_TEXT, 1),
            "_idle_minutes": _extract(idle_text, _IDLE_TEXT, 2),
            "_agg_count": F.when(aggregate, _extract(message, _AGGREGATE, 2)),
            "_agg_from": F.when(aggregate, _extract(message, _AGGREGATE, 4)),
            "_agg_to": F.when(aggregate, _extract(message, _AGGREGATE, 5)),
            "_app_text": F.when(late_b, _extract(brief, _LATE, 1))
            .when(early_b, _extract(brief, _EARLY, 2))
            .when(late_m, _extract(message, _LATE, 1))
            .when(early_m, _extract(message, _EARLY, 2)),
            "_arr_text": F.when(late_b, _extract(brief, _LATE, 2))
            .when(early_b, _extract(brief, _EARLY, 1))
            .when(late_m, _extract(message, _LATE, 2))
            .when(early_m, _extract(message, _EARLY, 1)),
        }
    )
    is_idle, idle_match = F.col("_is_idle"), F.col("_idle_match")
    idle_partition, idle_minutes = F.col("_idle_partition"), F.col("_idle_minutes")
    agg_count, agg_from, agg_to = F.col("_agg_count"), F.col("_agg_from"), F.col("_agg_to")
    app_text, arr_text = F.col("_app_text"), F.col("_arr_text")
    # an example or processing time that is not strict ISO takes the Python path (it may
    # still parse it, or move on from the brief message to the message)
    oks += [_time_ok(app_text), _time_ok(arr_text), _time_ok(agg_from), _time_ok(agg_to)]
    oks.append(
        ~is_idle | ~idle_match | (idle_partition.rlike(_DIGITS) & idle_minutes.rlike(_DIGITS))
    )
    event_count = F.col("_count")
    oks.append(is_idle | event_count.isNotNull() | (aggregate & agg_count.rlike(_DIGITS)))
    frame = frame.withColumns({"_app": _time(app_text), "_arr": _time(arr_text)})
    app, arr = F.col("_app"), F.col("_arr")
    given_partition = F.col("_partition")
    job_match = _extract(resource_id, r"(?i)/STREAMINGJOBS/([^/]+)", 1)
    last_segment = _extract(resource_id, r"([^/]*)/*$", 1)
    from_resource = F.when(job_match != "", job_match).when(last_segment != "", last_segment)
    job = F.coalesce(
        F.when(F.coalesce(resource_id, F.lit("")) != "", from_resource), field["Resource"]
    )
    values = {
        "job": job,
        "source": field["Source"],
        "partition_id": F.when(
            is_idle & idle_match,
            F.coalesce(given_partition, idle_partition.try_cast("bigint")),
        ).otherwise(given_partition),
        "kind": kind,
        "event_count": F.when(is_idle, F.lit(1).cast("bigint")).otherwise(
            F.coalesce(event_count, agg_count.try_cast("bigint"))
        ),
        "record_time": times["time"],
        "from_time": F.coalesce(times["FromTimestamp"], _time(agg_from)),
        "to_time": F.coalesce(times["ToTimestamp"], _time(agg_to)),
        "example_application_time": app,
        "example_arrival_time": arr,
        "lateness_seconds": (F.unix_micros(arr) - F.unix_micros(app)).cast("double")
        / F.lit(1_000_000.0),
        "idle_minutes": F.when(is_idle & idle_match, idle_minutes.try_cast("bigint")),
        "level": field["level"],
        "correlation_id": F.when(
            F.coalesce(field["correlationId"], F.lit("")) != "", field["correlationId"]
        ),
    }
    accepted = functools.reduce(operator.and_, oks)
    frame = frame.withColumn("_take", F.coalesce(line.isNotNull() & accepted, F.lit(False)))
    take = F.col("_take")
    columns = []
    for spec in LINES.fields:
        if spec.name in values:
            value = F.when(take, values[spec.name]).otherwise(F.col(spec.name))
        elif spec.name == "line":
            value = F.when(take, F.lit(None)).otherwise(line)
        else:
            value = F.col(spec.name)
        columns.append(value.cast(spec.dataType).alias(spec.name))
    return frame.select(*columns)
