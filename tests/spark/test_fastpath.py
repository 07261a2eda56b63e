"""The opt-in native JSON Lines path gives exactly what the Python parser gives, line by line."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import polars as pl
import pyarrow as pa
import pytest

from diagnostics.logs.reader import read_records
from diagnostics.logs.records import PARSED_SCHEMA, to_arrow
from diagnostics.spark import fastpath
from diagnostics.spark.job import read_files, stage_records
from tests.spark.conftest import canonical

pytestmark = pytest.mark.spark

RID = "/SUBSCRIPTIONS/X/RESOURCEGROUPS/RG/PROVIDERS/MICROSOFT.STREAMANALYTICS/STREAMINGJOBS/job-a"
LATE = (
    "Input event with application timestamp '2024-01-01T00:00:01.1234567' and arrival time "
    "'2024-01-01T00:10:00.5' was sent later than configured tolerance."
)
EARLY = (
    "Input event arrival time '2024-01-01T00:00:00Z' is earlier than input event application "
    "timestamp '2024-01-01T00:30:00.000001Z' by more than 5 minutes."
)
IDLE = (
    "Input Partition [7] does not have additional data for more than [15] minute(s). "
    "Partition will not progress until either events arrive or late arrival threshold is met."
)
AGG = (
    "Source 'eh' had 42 data errors of kind 'LateInputEvent' between processing times "
    "'2024-01-01T00:00:00.0000000Z' and '2024-01-01T00:01:00.0000000Z'."
)


def rec(props: dict, **top: object) -> dict:
    """A resource-log record (compact JSON when dumped)."""
    return (
        {"time": "2024-01-01T00:05:00.1234567Z", "resourceId": RID, "level": "Information"}
        | top
        | {"properties": props}
    )


def line(value: object) -> str:
    return json.dumps(value, separators=(",", ":"))


#: Lines the native path must accept (and parse exactly as Python does).
CLEAN = [
    line(rec({"Type": "DataError", "DataErrorType": "LateInputEvent", "BriefMessage": LATE,
              "Message": LATE, "EventCount": 12, "FromTimestamp": "2024-01-01T00:04:00Z",
              "ToTimestamp": "2024-01-01T00:05:00.9Z", "Source": "eh", "PartitionId": 3})),
    line(rec({"Type": "DataError", "DataErrorType": "EarlyInputEvent", "BriefMessage": EARLY,
              "EventCount": "7"}, correlationId="c-1")),
    line(rec({"Type": "DataError", "DataErrorType": "InputEventLateBeyondThreshold",
              "Message": AGG})),
    line(rec({"Type": "InputPartitionNotProgressing", "Message": IDLE, "Source": "eh"},
             level="Warning")),
    line(rec({"Type": "InputPartitionNotProgressing", "BriefMessage": IDLE, "PartitionId": "2"})),
    line(rec({"DataErrorType": "SomethingNew", "EventCount": 0}, resourceId="/a/b/job-b//")),
    line(rec({"DataErrorType": "OutOfOrderEvent", "EventCount": 1, "PartitionId": ""},
             resourceId="", Resource="res-name")),
    "  " + line(rec({"DataErrorType": "OutOfOrderEvent", "EventCount": 5})) + " \t",
    line(rec({"DataErrorType": "OutOfOrderEvent", "EventCount": 5, "Message": None,
              "X": [1, {"y": 0}]})),
]  # fmt: skip

# a duplicate key: the last one wins in Spark's reader as in Python's json
CLEAN.append(CLEAN[0][:-1] + ',"time":"2024-01-01T00:00:00Z"}')

#: Lines the native path must leave to the Python parser (valid or not).
KEPT = [
    CLEAN[0] + " x",  # trailing data
    CLEAN[0] + CLEAN[1],  # two records on one line
    CLEAN[0] + "]" + CLEAN[1],  # trailing data after a bracket
    CLEAN[0] + ', "y": 1',
    line(rec({"DataErrorType": "OutOfOrderEvent", "EventCount": 5.0})),
    line(rec({"DataErrorType": "OutOfOrderEvent", "EventCount": -1})),
    line(rec({"DataErrorType": "OutOfOrderEvent", "EventCount": True})),
    line(rec({"DataErrorType": "OutOfOrderEvent", "EventCount": " 5 "})),
    line(rec({"DataErrorType": "OutOfOrderEvent", "EventCount": 1}, level=5)),
    line(rec({"DataErrorType": "OutOfOrderEvent", "EventCount": 1}, level={"a": 1})),
    line(rec({"DataErrorType": 7, "EventCount": 1})),
    line(rec({"DataErrorType": "OutOfOrderEvent", "EventCount": 1}, time="2024-01-01 00:00:00")),
    line(rec({"DataErrorType": "OutOfOrderEvent", "EventCount": 1}, time="2/3/2019 8:54:16 PM")),
    line(rec({"DataErrorType": "OutOfOrderEvent", "EventCount": 1}, time="2024-02-30T00:00:00Z")),
    line(rec({"DataErrorType": "OutOfOrderEvent", "EventCount": 1}, time="2024-01-01T00:00:00+01:00")),
    line(rec({"DataErrorType": "OutOfOrderEvent", "EventCount": 1}, time=20240101)),
    line(rec({"DataErrorType": "OutOfOrderEvent", "EventCount": 1}, time="")),
    line(rec({"DataErrorType": "OutOfOrderEvent", "EventCount": 1, "FromTimestamp": "soon"})),
    line(rec({"DataErrorType": "LateInputEvent", "EventCount": 1,
              "BriefMessage": LATE.replace("2024-01-01T00:00:01.1234567", "2/3/2019 8:54:16 PM")})),
    line(rec({"DataErrorType": "LateInputEvent", "EventCount": 1,
              "BriefMessage": LATE.replace("2024-01-01T00:00:01", "2024-13-01T00:00:01"),
              "Message": EARLY})),
    line(rec({"Type": "InputPartitionNotProgressing", "Message": IDLE.replace("[7]", "[\u0667]")})),
    line(rec({"Type": "DataError", "EventCount": 1})),
    line(rec({"Type": "Other", "EventCount": 1})),
    line(rec({"DataErrorType": "OutOfOrderEvent"})),
    line(rec({"DataErrorType": "OutOfOrderEvent", "EventCount": 1}, orderdoc={"partition_id": 4})),
    line(rec({"DataErrorType": "OutOfOrderEvent", "EventCount": 1}, orderdoc=[1])),
    line(rec({"DataErrorType": "OutOfOrderEvent", "EventCount": 1}, resourceId="/streamingjobs/\u017fx")),
    line({**rec({}), "properties": line({"DataErrorType": "OutOfOrderEvent", "EventCount": 2})}),
    line({**rec({}), "properties": line({"DataErrorType": "OutOfOrderEvent"}) + " x"}),
    line({**rec({}), "properties": "not json"}),
    line({**rec({}), "properties": [1]}),
    line(rec({"DataErrorType": "OutOfOrderEvent", "EventCount": 1, "Source": "caf\u00e9"})),
    line(rec({"DataErrorType": "OutOfOrderEvent", "EventCount": 1}, level="1e5")),
    CLEAN[0].replace("12", "NaN"),
    CLEAN[0].replace('"', "'"),
    line([rec({"DataErrorType": "OutOfOrderEvent", "EventCount": 1})]),
    line({"records": [rec({"DataErrorType": "OutOfOrderEvent", "EventCount": 1})]}),
    line({"message Time": "2/3/2019 8:54:16 PM", "message": AGG, "type": "LateInputEvent"}),
    '{"trunc',
    "5",
    "null",
    "   ",
    "",
]  # fmt: skip


def python_table(path: Path) -> pl.DataFrame:
    outcomes = list(read_records(path.read_bytes(), str(path)))
    table = pa.Table.from_batches([to_arrow(outcomes)] if outcomes else [], schema=PARSED_SCHEMA)
    return pl.from_arrow(table)  # type: ignore[return-value]


def native_run(spark, path: Path, staging: Path) -> tuple[pl.DataFrame, int]:
    """The staged records of ``path`` and how many lines the native checks accepted."""
    parsed = stage_records(spark, read_files(spark, [str(path)]), staging)
    got = pl.from_arrow(parsed.toArrow())
    lines = spark.read.schema(fastpath.LINES).parquet(str(staging / "lines"))
    native = lines.filter("line IS NULL AND reason IS NULL AND kind IS NOT NULL").count()
    return got, native  # type: ignore[return-value]


def assert_same(got: pl.DataFrame, want: pl.DataFrame) -> None:
    columns = list(PARSED_SCHEMA.names)
    assert got.height == want.height
    assert canonical(got, columns) == canonical(want, columns)


def test_clean_lines_are_parsed_natively_and_exactly(spark, tmp_path: Path) -> None:
    path = tmp_path / "clean.json"
    path.write_bytes(b"\xef\xbb\xbf" + "\r\n".join(CLEAN).encode() + b"\r\n")
    got, native = native_run(spark, path, tmp_path / "stage")
    assert native == len(CLEAN)
    want = python_table(path)
    assert want["reason"].null_count() == len(CLEAN)
    assert_same(got, want)


def test_mixed_file_rejected_lines_keep_python_reasons_and_numbers(spark, tmp_path: Path) -> None:
    mixed = [x for pair in zip(CLEAN * 6, KEPT, strict=False) for x in pair]
    path = tmp_path / "mixed.jsonl"
    path.write_bytes("\n".join(mixed).encode("utf-8", "surrogatepass"))
    got, native = native_run(spark, path, tmp_path / "stage")
    assert native == len(KEPT)  # every clean line, none of the others
    want = python_table(path)
    assert want["reason"].drop_nulls().len() > 20
    assert_same(got, want)
    quarantined = got.filter(pl.col("reason").is_not_null())
    assert sorted(quarantined["source_line"].to_list()) == sorted(
        want.filter(pl.col("reason").is_not_null())["source_line"].to_list()
    )


def test_other_shapes_and_encodings_take_the_python_path(spark, tmp_path: Path) -> None:
    body = "\n".join(CLEAN[:3]).encode()
    cases = {
        "archive.json.gz": gzip.compress(body)[:-7],  # truncated: lines, then a gzip error
        "latin1.json": body + b"\n" + CLEAN[3].encode().replace(b"eh", b"\xe9h"),
        "array.json": ("[" + ",\n".join(CLEAN[:3]) + "]").encode(),
    }
    for name, data in cases.items():
        path = tmp_path / name
        path.write_bytes(data)
        got, _native = native_run(spark, path, tmp_path / f"stage-{name}")
        assert_same(got, python_table(path))
