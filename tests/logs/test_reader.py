"""Shapes, splitting, line numbers and quarantine of the pure-Python reader."""

from __future__ import annotations

import gzip
import json

import pytest

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
        (1, "element 2 of the 2 on this line")
    ]


def test_an_array_line_is_quarantined_at_most_once(read) -> None:
    """A JSON Lines line holding an array: its good elements are records, its bad ones one
    quarantined record for the line (so a line is never counted twice)."""
    good = [line(record(count=n)) for n in (1, 2)]
    data = b"\n".join([*good, b"[1, 2]", b"[]", line([record(count=7), 3, None, {}, "x"])])
    parsed, bad = read(data)
    assert [(p.source_line, p.event_count) for p in parsed] == [(1, 1), (2, 2), (5, 7)]
    assert [q.source_line for q in bad] == [3, 4, 5]
    assert bad[0].reason.startswith("2 of the 2 elements on this line: element 1: not a")
    assert bad[1].reason == "an empty JSON array: no record on this line"
    assert bad[2].reason.startswith("4 of the 5 elements on this line: element 2: ")
    assert bad[2].reason.endswith("; and 1 more")
    assert bad[2].raw == line([record(count=7), 3, None, {}, "x"]).decode()
    one, _ = read(b"[5]")
    assert one == []


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
    assert (bad[0].source_line, bad[0].reason) == (2, "invalid UTF-8 at byte 8 of line 2")
    # the same bytes on the same line of a document are said the same way
    parsed, bad = read(b'[\n{"a": "\xc3\x28"}\n]')
    assert parsed == []
    assert (bad[0].source_line, bad[0].reason) == (2, "invalid UTF-8 at byte 8 of line 2")


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


# --- documents spread over lines: a broken element costs that element only --------------------


def _pretty_array(values: list[dict], *, wrapper: bool = False) -> list[str]:
    """The lines of ``values`` as json.dumps(indent=2) writes them (in a records wrapper)."""
    text = json.dumps({"records": values} if wrapper else values, indent=2)
    return text.split("\n")


def _element_starts(lines: list[str], indent: int) -> list[int]:
    return [n for n, row in enumerate(lines, start=1) if row == " " * indent + "{"]


def _break_line(lines: list[str], containing: str, replace: tuple[str, str]) -> int:
    number = next(n for n, row in enumerate(lines, start=1) if containing in row)
    lines[number - 1] = lines[number - 1].replace(*replace)
    return number


@pytest.mark.parametrize("wrapper", [False, True])
@pytest.mark.parametrize(
    "damage",
    [
        ('"EventCount": 3', ("3", "3,,")),  # a stray comma
        ('"Source": "in3"', (":", "")),  # a key without its colon
        ('"BriefMessage": "late 3"', ('"late 3"', '"late 3')),  # an unterminated string
    ],
)
def test_broken_element_costs_only_that_element(read, wrapper: bool, damage) -> None:
    """Issue 17: a pretty-printed array of 5 records with element 3 broken gives 4 records
    and 1 quarantined record at element 3's first line; elements 4 and 5 are kept."""
    values = [record(count=n) for n in range(1, 6)]
    for n, value in enumerate(values, start=1):
        value["properties"] |= {"Source": f"in{n}", "BriefMessage": f"late {n}"}
    lines = _pretty_array(values, wrapper=wrapper)
    starts = _element_starts(lines, 4 if wrapper else 2)
    containing, replace = damage
    broken_at = _break_line(lines, containing, replace)
    assert starts[2] < broken_at < starts[3]
    parsed, bad = read("\n".join(lines).encode(), "PT1H.json")
    assert [(p.source_line, p.event_count) for p in parsed] == [
        (starts[0], 1), (starts[1], 2), (starts[3], 4), (starts[4], 5),
    ]  # fmt: skip
    assert [q.source_line for q in bad] == [starts[2]]
    assert bad[0].reason.startswith("invalid JSON in document element: ")
    assert bad[0].reason.endswith(f"(lines {starts[2]}-{starts[3] - 1})")
    assert bad[0].raw.startswith("{")
    assert bad[0].raw.endswith("}")


def test_element_cut_short_and_missing_commas_lose_nothing(read) -> None:
    values = [record(count=n) for n in range(1, 5)]
    lines = _pretty_array(values)
    starts = _element_starts(lines, 2)
    # element 2 ends in the middle of its time stamp: its other lines and the comma are gone
    cut = next(n for n in range(starts[1], starts[2]) if '"ToTimestamp"' in lines[n - 1])
    lines[cut - 1] = lines[cut - 1][:30]
    del lines[cut : starts[2] - 1]
    # and the comma after element 3 is missing
    closing = next(n for n in range(len(lines), 0, -1) if lines[n - 1] == "  },")
    lines[closing - 1] = "  }"
    parsed, bad = read("\n".join(lines).encode())
    starts = _element_starts(lines, 2)
    assert [(p.source_line, p.event_count) for p in parsed] == [
        (starts[0], 1), (starts[2], 3), (starts[3], 4),
    ]  # fmt: skip
    assert [q.source_line for q in bad] == [starts[1]]


def test_truncated_document_adds_one_record_for_its_missing_end(read) -> None:
    text = json.dumps([record(count=1), record(count=2)], indent=2)
    parsed, bad = read(text[: text.rindex("}") + 1].encode())  # the closing ']' is cut off
    assert [p.event_count for p in parsed] == [1, 2]
    assert [(q.source_line, q.reason) for q in bad] == [
        (1, "a JSON document that ends before its closing ']'")
    ]


def test_pasted_pretty_objects_are_one_record_each(read) -> None:
    """Issue 17: two pretty-printed objects one after the other (a copy-paste) are two
    records at their first lines, also with a comma or text between them, and one broken
    object costs that object only."""
    first, second = (json.dumps(record(count=n), indent=2) for n in (1, 2))
    size = first.count("\n") + 1
    parsed, bad = read(f"{first}\n{second}\n".encode(), "pasted.json")
    assert ([(p.source_line, p.event_count) for p in parsed], bad) == ([(1, 1), (size + 1, 2)], [])
    parsed, bad = read(f"{first},\n\n{second}".encode(), "pasted.json")
    assert ([(p.source_line, p.event_count) for p in parsed], bad) == ([(1, 1), (size + 2, 2)], [])
    broken = first.replace('"EventCount": 1', '"EventCount": 1 1')
    note = "copied from the portal at 17:25"
    parsed, bad = read(f"{note}\n{broken}\n{second}\n".encode(), "pasted.txt")
    assert [(p.source_line, p.event_count) for p in parsed] == [(size + 2, 2)]
    assert [(q.source_line, q.reason.split(" (")[0]) for q in bad] == [
        (1, "a text line that is neither JSON nor an ASA message"),
        (2, "invalid JSON: Expecting ',' delimiter at line 10 column 21"),
    ]
    assert bad[1].reason.endswith(f"(lines 2-{size + 1})")


def test_text_after_a_value_on_its_last_line_is_its_own_record(read) -> None:
    text = json.dumps(record(count=1), indent=2) + " trailing words\n"
    parsed, bad = read(text.encode())
    last = text.count("\n")
    assert [p.event_count for p in parsed] == [1]
    assert [(q.source_line, q.raw) for q in bad] == [(last, " trailing words")]


def test_invalid_utf8_costs_its_line_or_element_only(read) -> None:
    notice = (
        b"[17:22:00] Source 'in' had 3 occurrences of kind 'LateInputEvent' between times "
        b"'2019-02-04T17:21:00Z' and '2019-02-04T17:22:00Z'."
    )
    parsed, bad = read(notice + b"\nbad \xff byte\n" + notice + b"\n", "notes.txt")
    assert [p.source_line for p in parsed] == [1, 3]
    assert [(q.source_line, q.reason) for q in bad] == [(2, "invalid UTF-8 at byte 5 of line 2")]
    body = json.dumps([record(count=1), {"a": "?"}, record(count=3)], indent=2).encode()
    body = body.replace(b'"?"', b'"\xc3\x28"')
    parsed, bad = read(body)
    assert [p.event_count for p in parsed] == [1, 3]
    offset = body.index(b"\xc3")
    line, byte = body.count(b"\n", 0, offset) + 1, offset - body.rfind(b"\n", 0, offset)
    assert [q.reason for q in bad] == [f"invalid UTF-8 at byte {byte} of line {line}"]
