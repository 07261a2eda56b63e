"""The native (Arrow) JSON Lines road gives exactly the Python reader's outcomes."""

from __future__ import annotations

import copy
import datetime as dt
import gzip
import json
from collections.abc import Iterable
from pathlib import Path

import pyarrow as pa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from diagnostics.logs import vectorised
from diagnostics.logs.batches import parse_file
from diagnostics.logs.reader import read_records
from diagnostics.logs.records import PARSED_SCHEMA, DataError
from diagnostics.logs.times import parse_log_time
from diagnostics.logs.vectorised import parse_file_fast, read_records_fast

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"

BASE = {
    "time": "2024-01-01T00:01:00.1234567Z",
    "resourceId": "/SUBSCRIPTIONS/X/PROVIDERS/MICROSOFT.STREAMANALYTICS/STREAMINGJOBS/job-1",
    "category": "Execution",
    "operationName": "Process Events",
    "level": "Information",
    "properties": {
        "Source": "in",
        "Type": "DataError",
        "DataErrorType": "LateInputEvent",
        "BriefMessage": "Input event with application timestamp '2024-01-01T00:00:00.0000000Z' "
        "and arrival time '2024-01-01T00:00:09.5000000Z' was sent later than configured "
        "tolerance.",
        "Message": "m",
        "ExampleEvents": "[]",
        "FromTimestamp": "2024-01-01T00:00:00Z",
        "ToTimestamp": "2024-01-01T00:01:00Z",
        "EventCount": 3,
        "PartitionId": 2,
    },
}

#: Changes of one record that a reader must treat in its own way (None removes the key).
TWEAKS: list[tuple[str | None, str, object]] = [
    ("properties", "EventCount", 0), ("properties", "EventCount", -1),
    ("properties", "EventCount", "7"), ("properties", "EventCount", None),
    ("properties", "EventCount", 2**63), ("properties", "EventCount", 1.5),
    ("properties", "EventCount", True), ("properties", "PartitionId", None),
    ("properties", "PartitionId", -3), ("properties", "PartitionId", "4"),
    ("properties", "DataErrorType", "InputPartitionNotProgressing"),
    ("properties", "DataErrorType", "LateInputEvents"), ("properties", "DataErrorType", ""),
    ("properties", "DataErrorType", None), ("properties", "Source", ""),
    ("properties", "Source", None), ("properties", "FromTimestamp", "yesterday"),
    ("properties", "FromTimestamp", ""), ("properties", "ToTimestamp", "2/4/2019 5:11:52 PM"),
    ("properties", "ToTimestamp", None), ("properties", "Message", None),
    ("properties", "Message", "Input Partition [3] does not have additional data for more "
     "than [2] minute(s)."),
    ("properties", "BriefMessage", ""), ("properties", "BriefMessage", None),
    ("properties", "Extra", 1), ("properties", "eventcount", 5),
    (None, "time", ""), (None, "time", None), (None, "time", "2024-01-01 00:01:00+02:00"),
    (None, "time", "not a time"), (None, "Time", "2024-01-01T00:00:00Z"),
    (None, "level", ""), (None, "level", "warning"), (None, "level", None),
    (None, "correlationId", "c-1"), (None, "correlationId", ""),
    (None, "resourceId", ""), (None, "resourceId", "   "), (None, "resourceId", "/a/b/"),
    (None, "resourceId", None), (None, "orderdoc", {"partition_id": 9}),
    (None, "properties", None), (None, "properties", "{\"DataErrorType\": \"X\"}"),
    (None, "time", "\ud83d\ude00"),
] + [
    (where, key, value)
    for where, key in ((None, "time"), ("properties", "FromTimestamp"))
    for value in ("2024-02-30T00:00:00Z", "2024-02-29T23:59:59.999999999Z",
                  "2023-02-29T00:00:00Z", "2100-02-29T00:00:00Z", "2000-02-29T12:00:00.5Z",
                  "1969-12-31T23:59:59.9Z", "1970-01-01T00:00:00Z", "2024-01-01T00:00:60Z",
                  "2024-01-01T24:00:00Z", " 2024-01-01T00:00:00Z", "2024-01-01t00:00:00z",
                  "2024-01-01T00:00:00.Z", "2024-12-31T23:59:59.1234567891Z",
                  "9999-12-31T23:59:59.999999Z", "2024-13-01T00:00:00Z")
]  # fmt: skip


def record(tweak: tuple[str | None, str, object] | None) -> dict:
    value = copy.deepcopy(BASE)
    if tweak is not None:
        where, key, new = tweak
        target = value if where is None else value[where]
        if new is None:
            target.pop(key, None)
        else:
            target[key] = new
    return value


GOOD = json.dumps(BASE).encode()
lines = st.one_of(
    st.just(GOOD),
    st.sampled_from(TWEAKS).map(lambda t: json.dumps(record(t)).encode()),
    st.sampled_from(
        [
            b"",
            b"   ",
            b"\r",
            b"not json",
            GOOD[:40],
            GOOD + b" ",
            b" " + GOOD,
            GOOD + b"\r",
            GOOD + GOOD,
            b"[" + GOOD + b"]",
            b'{"records": [' + GOOD + b"," + GOOD + b"]}",
            b"[]",
            b"{}",
            GOOD.replace(b'"Source"', b'"Source": "a", "Source"'),
            GOOD.replace(b'"in"', b'"\\ud800"'),
            GOOD.replace(b'"in"', b'"\xff"'),
            GOOD.replace(b'"in"', b'"caf\\u00e9"'),
            b"[17:22:00] Source 'in' had 58 occurrences of kind 'LateInputEvent' between "
            b"times '2024-01-01T00:00:00Z' and '2024-01-01T00:01:00Z'.",
        ]
    ),
)


def table(batches: Iterable[pa.RecordBatch]) -> pa.Table:
    return pa.Table.from_batches(list(batches), PARSED_SCHEMA)


def same(data: bytes, name: str = "f.json") -> None:
    """Both roads give the same outcomes and the same Arrow rows."""
    assert list(read_records_fast(data, name)) == list(read_records(data, name))
    assert table(parse_file_fast(data, name)).equals(table(parse_file(data, name)))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(lines, max_size=12), st.booleans())
def test_any_mix_of_lines_reads_as_the_python_reader(
    body: list[bytes], final_newline: bool
) -> None:
    data = b"\n".join(body) + (b"\n" if final_newline else b"")
    same(data)


@settings(max_examples=40, deadline=None)
@given(st.lists(lines, min_size=1, max_size=6), st.sampled_from(["gzip", "bom", "cut-gzip"]))
def test_compressed_and_marked_files_read_alike(body: list[bytes], wrap: str) -> None:
    data = b"\n".join(body)
    if wrap == "bom":
        data = b"\xef\xbb\xbf" + data
    else:
        data = gzip.compress(data)
        if wrap == "cut-gzip":
            data = data[: len(data) // 2]
    same(data, "f.json.gz")


def test_every_tweak_alone_and_among_clean_lines() -> None:
    for tweak in TWEAKS:
        line = json.dumps(record(tweak)).encode()
        same(line)
        same(b"\n".join([GOOD, line, b"", GOOD]) + b"\n")


def test_clean_file_takes_the_native_road_and_keeps_line_numbers(monkeypatch) -> None:
    data = b"\n".join([GOOD, b"", GOOD, b"   ", GOOD]) + b"\n"

    def python_reader(*_args: object) -> None:
        raise AssertionError("a clean line went to the Python reader")

    with monkeypatch.context() as patch:
        patch.setattr(vectorised, "read_records", python_reader)
        patch.setattr(vectorised, "read_line", python_reader)
        outcomes = list(read_records_fast(data, "f.json"))
    assert [o.source_line for o in outcomes] == [1, 3, 5]
    assert all(isinstance(o, DataError) for o in outcomes)
    assert outcomes == list(read_records(data, "f.json"))
    first = outcomes[0]
    assert (first.job, first.kind, first.event_count, first.partition_id) == (
        "JOB-1", "LateInputEvent", 3, 2)  # fmt: skip
    assert first.lateness_seconds == 9.5


def test_batches_equal_the_python_batches_on_the_samples() -> None:
    files = [p for p in SAMPLES.rglob("*") if p.is_file()]
    assert files
    for path in files:
        data = path.read_bytes()
        assert table(parse_file_fast(data, str(path))).equals(table(parse_file(data, str(path)))), (
            path
        )


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.datetimes(min_value=dt.datetime(1960, 1, 1), max_value=dt.datetime(9999, 12, 31)),
            st.integers(0, 9),
            st.integers(0, 10**9 - 1),
        ),
        min_size=1,
        max_size=20,
    )
)
def test_times_in_bulk_equal_the_python_rules(values: list) -> None:
    texts = []
    for moment, digits, fraction in values:
        text = moment.strftime("%Y-%m-%dT%H:%M:%S")
        texts.append(text + (f".{fraction:09d}"[: digits + 1] if digits else "") + "Z")
    texts += ["2024-02-30T00:00:00Z", "2023-02-29T00:00:00Z", "", "x"]
    expected = []
    for text in texts:
        parsed = parse_log_time(text) if text else None
        epoch = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
        expected.append(
            None if parsed is None else (parsed - epoch) // dt.timedelta(microseconds=1)
        )
    assert vectorised._micros(pa.chunked_array([pa.array([*texts, None])])) == [*expected, None]
