"""Shapes, splitting, line numbers and quarantine of the pure-Python reader."""

from __future__ import annotations

import gzip
import json

from diagnostics.logs.normalise import normalise
from diagnostics.logs.records import RAW_LIMIT_BYTES, DataError, Quarantined

RID = "/SUBSCRIPTIONS/S/RESOURCEGROUPS/R/PROVIDERS/MICROSOFT.STREAMANALYTICS/STREAMINGJOBS/JOB1"


def record(kind: str = "LateInputEvent", count: int = 3, *, as_string: bool = False) -> dict:
    props = {
        "Source": "in",
        "Type": "DataError",
        "DataErrorType": kind,
        "EventCount": count,
        "FromTimestamp": "2024-01-01T00:00:01Z",
        "ToTimestamp": "2024-01-01T00:00:59Z",
        "BriefMessage": "Input event with application timestamp '2024-01-01T00:00:00' and "
        "arrival time '2024-01-01T00:00:30' was sent later than configured tolerance.",
    }
    return {
        "time": "2024-01-01T00:01:00Z",
        "resourceId": RID,
        "level": "Information",
        "properties": json.dumps(props) if as_string else props,
    }


def line(value: object) -> bytes:
    return json.dumps(value).encode()


def test_json_lines_with_crlf_bom_and_blank_lines(read) -> None:
    data = b"\xef\xbb\xbf" + line(record()) + b"\r\n\r\n   \r\n" + line(record(count=4)) + b"\r\n"
    parsed, bad = read(data)
    assert bad == []
    assert [(p.source_line, p.event_count) for p in parsed] == [(1, 3), (4, 4)]
    first = parsed[0]
    assert (first.job, first.source, first.kind, first.level) == (
        "JOB1",
        "in",
        "LateInputEvent",
        "Informational",
    )
    assert first.lateness_seconds == 30.0


def test_properties_as_json_string_equal_object(read) -> None:
    as_object, _ = read(line(record()))
    as_string, _ = read(line(record(as_string=True)))
    assert as_object == as_string


def test_legacy_names_are_normalised(read) -> None:
    data = (
        line(record("InputEventLateBeyondThreshold"))
        + b"\n"
        + line(record("InputEventEarlyBeyondThreshold"))
    )
    parsed, _ = read(data)
    assert [p.kind for p in parsed] == ["LateInputEvent", "EarlyInputEvent"]


def test_unknown_kind_kept_under_its_own_name(read) -> None:
    parsed, _ = read(line(record("SomethingNew", 9)))
    assert [(p.kind, p.event_count) for p in parsed] == [("SomethingNew", 9)]


def test_pretty_printed_records_wrapper_has_element_lines(read) -> None:
    text = json.dumps({"records": [record(count=1), record(count=2)]}, indent=2)
    parsed, bad = read(text.encode())
    assert bad == []
    starts = [i + 1 for i, row in enumerate(text.splitlines()) if row == "    {"]
    assert [p.source_line for p in parsed] == starts
    assert [p.event_count for p in parsed] == [1, 2]


def test_truncated_array_keeps_elements_before_the_break(read) -> None:
    text = json.dumps([record(count=1), record(count=2), record(count=3)], indent=1)
    parsed, bad = read(text[: len(text) - 40].encode())
    assert [p.event_count for p in parsed] == [1, 2]
    assert len(bad) == 1
    assert bad[0].reason.startswith("invalid JSON in document element")


def test_single_line_array_and_wrapper_lines_count_each_element(read) -> None:
    data = line([record(count=1), {"x": 1}]) + b"\n" + line({"records": [record(count=5)]})
    parsed, bad = read(data)
    assert [(p.source_line, p.event_count) for p in parsed] == [(1, 1), (2, 5)]
    assert [(q.source_line, q.reason.split(":")[0]) for q in bad] == [
        (1, "not a diagnostic record")
    ]


def test_gzip_and_truncated_gzip(read) -> None:
    body = line(record(count=1)) + b"\n" + line(record(count=2)) + b"\n"
    parsed, bad = read(gzip.compress(body), "x.json.gz")
    assert ([p.event_count for p in parsed], bad) == ([1, 2], [])
    packed = gzip.compress(body * 200)
    parsed, bad = read(packed[: len(packed) // 2], "x.json.gz")
    assert len(parsed) >= 1
    assert bad[-1].reason == "truncated gzip stream"


def test_csv_export_with_multiline_field(read) -> None:
    props = json.dumps(record()["properties"], indent=1).replace('"', '""')
    data = (
        "TimeGenerated [UTC],ResourceId,Level,properties_s\r\n"
        f'"1/1/2024, 12:01:00.000 AM",{RID},Warning,"{props}"\r\n'
        f'"1/1/2024, 12:02:00.000 AM",{RID},Warning,""\r\n'
        f'"1/1/2024, 12:02:00.000 AM",{RID}\r\n'
    ).encode()
    parsed, bad = read(data, "export.csv")
    assert [(p.source_line, p.level, p.event_count) for p in parsed] == [(2, "Warning", 3)]
    lines_of_first = props.count("\n") + 1
    assert [(q.source_line, q.reason) for q in bad] == [
        (2 + lines_of_first, "properties_s: empty"),
        (3 + lines_of_first, "CSV row has 2 fields, the header 4"),
    ]


def test_activity_log_idle_and_unknown(read) -> None:
    idle = {
        "message Time": "2/3/2019 8:54:16 PM UTC",
        "message": "Input Partition [7] does not have additional data for more than [15] minute(s).",
        "type": "InputPartitionNotProgressing",
        "correlation ID": "abc",
    }
    other = {"message Time": "2/3/2019 8:54:16 PM UTC", "message": "hello", "type": "Other"}
    parsed, bad = read(line(idle) + b"\n" + line(other))
    assert [
        (p.kind, p.partition_id, p.idle_minutes, p.event_count, p.correlation_id) for p in parsed
    ] == [("InputPartitionNotProgressing", 7, 15, 1, "abc")]
    assert bad[0].reason == "message: record of type 'Other' names no data-error kind"


def test_engine_output_extras(read) -> None:
    value = record() | {"orderdoc": {"partition_id": 4, "correlation_id": "c-9"}}
    parsed, _ = read(line(value))
    assert (parsed[0].partition_id, parsed[0].correlation_id) == (4, "c-9")


def test_invalid_utf8_line_and_document(read) -> None:
    parsed, bad = read(line(record()) + b"\n" + b'{"a": "\xc3\x28"}\n')
    assert len(parsed) == 1
    assert (bad[0].source_line, bad[0].reason) == (2, "invalid UTF-8 at byte offset 7")
    parsed, bad = read(b'[\n{"a": "\xc3\x28"}\n]')
    assert parsed == []
    assert bad[0].reason.startswith("invalid UTF-8 at byte offset 9")


def test_wrong_types_are_quarantined_naming_the_field() -> None:
    cases = {
        "properties.EventCount: expected a non-negative integer, got bool": {"EventCount": True},
        "properties.EventCount: -1 is negative": {"EventCount": -1},
        "properties.Source: expected a string, got int 5": {"Source": 5},
        "properties.FromTimestamp: 'soon' is not a time stamp": {"FromTimestamp": "soon"},
    }
    for reason, change in cases.items():
        value = record()
        value["properties"] = value["properties"] | change
        outcome = normalise(value, "f", 1, "raw")
        assert isinstance(outcome, Quarantined)
        assert outcome.reason == reason
    missing_time = normalise(record() | {"time": None}, "f", 1, "raw")
    assert isinstance(missing_time, Quarantined)
    assert missing_time.reason == "time: missing"


def test_raw_text_is_capped_but_length_kept(read) -> None:
    big = b'{"junk": "' + b"x" * (3 * 1024 * 1024) + b'"'
    parsed, bad = read(line(record()) + b"\n" + big + b"\n")
    assert len(parsed) == 1
    assert bad[0].raw_bytes == len(big)
    assert len(bad[0].raw.encode()) == RAW_LIMIT_BYTES


def test_idle_resource_log_counts_one() -> None:
    value = {
        "time": "2024-01-01T00:10:00Z",
        "resourceId": RID,
        "properties": {
            "Type": "InputPartitionNotProgressing",
            "Message": "Input Partition [3] does not have additional data for more than [5] minute(s).",
            "EventCount": 40,
        },
    }
    outcome = normalise(value, "f", 1, "raw")
    assert isinstance(outcome, DataError)
    assert (outcome.kind, outcome.event_count, outcome.partition_id, outcome.idle_minutes) == (
        "InputPartitionNotProgressing", 1, 3, 5,
    )  # fmt: skip


def test_log_analytics_json_export_rows(read) -> None:
    row = {
        "TimeGenerated": "2024-01-01T00:01:00Z",
        "ResourceId": RID,
        "Level": "Warning",
        "properties_s": json.dumps(record()["properties"]),
    }
    parsed, bad = read(json.dumps([row, row | {"properties_s": ""}], indent=2).encode())
    assert [(p.job, p.level, p.event_count, p.source_line) for p in parsed] == [
        ("JOB1", "Warning", 3, 2)
    ]
    assert [q.reason for q in bad] == ["properties_s: empty"]
    parsed, _ = read(line(row) + b"\n")
    assert [p.kind for p in parsed] == ["LateInputEvent"]


def test_out_of_range_numbers_and_lone_surrogates_are_quarantined(read, tmp_path) -> None:
    """Values no table can store are quarantined with a reason, never a crash."""
    from diagnostics.logs.aggregate import aggregate_files

    huge = record()
    huge["properties"]["EventCount"] = 2**64
    surrogate = record()
    surrogate["properties"]["Source"] = "in\ud800"
    idle = {
        "time": "2024-01-01T00:01:00Z",
        "resourceId": RID,
        "properties": {
            "Source": "in",
            "Type": "InputPartitionNotProgressing",
            "Message": f"Input Partition [{2**70}] does not have additional data for more than "
            "[5] minute(s). Partition will not progress until either events arrive or late "
            "arrival threshold is met.",
        },
    }
    lines = [line(huge), line(surrogate), line(idle), line(record())]
    parsed, quarantined = read(b"\n".join(lines), "x.json")
    reasons = [q.reason for q in quarantined]
    assert [q.source_line for q in quarantined] == [1, 2, 3]
    assert "properties.EventCount" in reasons[0]
    assert "larger than a 64-bit integer" in reasons[0]
    assert "unpaired surrogate" in reasons[1]
    assert "larger than a 64-bit integer" in reasons[2]
    assert len(parsed) == 1
    # and the whole pipeline writes its tables with them quarantined
    path = tmp_path / "x.json"
    path.write_bytes(b"\n".join(lines))
    tables = aggregate_files([str(path)])
    assert tables.summary["records_quarantined"] == 3
    assert tables.summary["records_parsed"] == 1
    tables.quarantine.write_parquet(tmp_path / "q.parquet")
