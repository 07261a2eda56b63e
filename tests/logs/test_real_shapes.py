"""Real ASA wordings, key casings, time formats and export shapes (issue: real ASA logs).

Every example is hand-written in the shape of Microsoft's documented examples or of messages
users captured from real jobs; each test names the rule it guards.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import polars as pl
import pytest

from diagnostics.logs.aggregate import aggregate_files
from diagnostics.logs.inputs import expand_inputs
from diagnostics.logs.normalise import normalise
from diagnostics.logs.reader import read_records
from diagnostics.logs.records import DataError, Quarantined
from tests.logs.conftest import split

REAL = Path(__file__).resolve().parents[2] / "sample_logs" / "asa-real"
RID = (
    "/SUBSCRIPTIONS/6A1F0C2E-0000-4B5C-9D7E-3C2B1A0F9E8D/RESOURCEGROUPS/RG-T/PROVIDERS/"
    "MICROSOFT.STREAMANALYTICS/STREAMINGJOBS/MYSTREAMINGJOB"
)
UTC = dt.UTC


def parsed(value: object) -> DataError:
    outcome = normalise(value, "f.json", 1, json.dumps(value))
    assert isinstance(outcome, DataError), getattr(outcome, "reason", outcome)
    return outcome


def resource(props: dict, **envelope: object) -> dict:
    return {"time": "2019-02-04T17:11:52.7250696Z", "resourceId": RID, "category": "Execution",
            "level": "Informational", "properties": props} | envelope  # fmt: skip


# --- 1. wordings --------------------------------------------------------------------------------

OCCURRENCES = (
    "Source 'telemetry-eh' had 58 occurrences of kind 'InputDeserializerError.TypeConversionError'"
    " between times '2020-05-13T09:10:00.0000000Z' and '2020-05-13T09:11:00.0000000Z'."
)
DATA_ERRORS = (
    "Source 'ASAjob' had 24 data errors of kind 'LateInputEvent' between processing times "
    "'2019-02-04T17:10:49.7250696Z' and '2019-02-04T17:11:48.7563961Z'."
)


@pytest.mark.parametrize(
    ("text", "kind", "count", "source"),
    [
        (OCCURRENCES, "InputDeserializerError.TypeConversionError", 58, "telemetry-eh"),
        (DATA_ERRORS, "LateInputEvent", 24, "ASAjob"),
        (OCCURRENCES.replace("58 occurrences", "1 occurrence"), "InputDeserializerError.TypeConversionError", 1, "telemetry-eh"),
    ],
)  # fmt: skip
def test_both_count_phrasings_in_a_diagnostic_message(text, kind, count, source) -> None:
    record = parsed(resource({"Type": "DiagnosticMessage", "Message": text}))
    assert (record.kind, record.event_count, record.count_known, record.source) == (
        kind, count, True, source,
    )  # fmt: skip
    assert record.from_time is not None
    assert record.to_time > record.from_time


def test_count_free_message_only_record_is_parsed_with_an_unknown_count() -> None:
    record = parsed(
        resource(
            {
                "Source": "telemetry-eh",
                "Type": "DataError",
                "DataErrorType": "InputDeserializerError.InvalidData",
                "Message": "Could not deserialize the input event(s) from resource "
                "'Partition: [1], Offset: [4311]' as Json.",
            }
        )
    )
    assert (record.kind, record.event_count, record.count_known) == (
        "InputDeserializerError.InvalidData", None, False,
    )  # fmt: skip


def test_the_column_a_data_error_names_is_kept() -> None:
    missing = "The output record does not contain the column 'DeviceName' that is required."
    record = parsed(resource({"Source": "sql-output", "Type": "DataError", "EventCount": 3,
                              "DataErrorType": "OutputDataConversionError.RequiredColumnMissing",
                              "BriefMessage": missing}))  # fmt: skip
    assert (record.kind, record.source, record.column_name) == (
        "OutputDataConversionError.RequiredColumnMissing", "sql-output", "DeviceName",
    )  # fmt: skip
    text = "Could not convert the column [temperature] to type float."
    assert parsed(resource({"Type": "DataError", "DataErrorType": "InputDeserializerError.TypeConversionError", "Message": text})).column_name == "temperature"  # fmt: skip


def test_type_values_dataerror_diagnosticmessage_and_idle() -> None:
    idle = "Input Partition [3] does not have additional data for more than [5] minute(s)."
    assert parsed(resource({"Type": "InputPartitionNotProgressing", "Message": idle})).kind == (
        "InputPartitionNotProgressing"
    )
    assert (
        parsed(resource({"type": "inputpartitionnotprogressing", "message": idle})).idle_minutes
        == 5
    )
    assert parsed(resource({"Type": "DataError", "DataErrorType": "EarlyInputEvent", "EventCount": 1})).kind == "EarlyInputEvent"  # fmt: skip
    unnamed = normalise(
        resource({"Type": "DiagnosticMessage", "Message": "Job started."}), "f", 4, "r"
    )
    assert isinstance(unnamed, Quarantined)
    assert unnamed.reason == "properties.Message: record of type 'DiagnosticMessage' names no data-error kind"  # fmt: skip


# --- 1. casings ---------------------------------------------------------------------------------


def test_activity_log_keys_in_any_casing_at_the_top_level_and_inside_properties() -> None:
    documented = {
        "message Time": "2019-02-04 17:11:52Z",
        "error": None,
        "message": f"First Occurred: 02/04/2019 17:11:48 | Resource Name: ASAjob | Message: {DATA_ERRORS}",
        "type": "DiagnosticMessage",
        "correlation ID": "49efa148-4asd-4fe0-869d-a40ba4d7ef3b",
    }
    schema_cased = {
        "Message Time": documented["message Time"],
        "Error": None,
        "Message": documented["message"],
        "Type": "DiagnosticMessage",
        "Correlation ID": documented["correlation ID"],
    }
    camel = {
        "messageTime": documented["message Time"],
        "message": documented["message"],
        "type": "DiagnosticMessage",
        "correlationId": documented["correlation ID"],
    }
    enveloped = {
        "time": "2019-02-04T17:11:53Z",
        "operationName": "Diagnostic",
        "properties": documented,
    }
    results = {
        (r.job, r.kind, r.event_count, r.correlation_id)
        for r in map(parsed, [documented, schema_cased, camel, enveloped])
    }
    # the activity log's "Resource Name: ASAjob" is the job's real casing
    assert results == {("ASAjob", "LateInputEvent", 24, "49efa148-4asd-4fe0-869d-a40ba4d7ef3b")}


def test_resource_log_property_keys_in_any_casing() -> None:
    upper = {"Source": "in", "Type": "DataError", "DataErrorType": "LateInputEvent",
             "EventCount": 3, "FromTimestamp": "2019-02-04T17:00:00Z", "PartitionId": "2"}  # fmt: skip
    lower = {key[0].lower() + key[1:]: value for key, value in upper.items()}
    spaced = {"source": "in", "type": "DataError", "data error type": "LateInputEvent",
              "event_count": 3, "from timestamp": "2019-02-04T17:00:00Z", "partition id": 2}  # fmt: skip
    rows = [parsed(resource(p)) for p in (upper, lower, spaced)]
    assert {(r.source, r.kind, r.event_count, r.partition_id, r.from_time) for r in rows} == {
        ("in", "LateInputEvent", 3, 2, dt.datetime(2019, 2, 4, 17, tzinfo=UTC))
    }
    envelope = parsed({"Time": "2019-02-04T17:11:52Z", "ResourceID": RID, "Level": "Warning",
                       "Properties": upper})  # fmt: skip
    assert (envelope.job, envelope.level) == ("MYSTREAMINGJOB", "Warning")


def test_resource_ids_are_one_job_whatever_their_casing() -> None:
    props = {"Type": "DataError", "DataErrorType": "LateInputEvent", "EventCount": 1}
    records = [
        parsed(resource(props, resourceId=RID)),
        parsed(resource(props, resourceId=RID.lower())),
        parsed(
            {
                "TimeGenerated": "2019-02-04T17:00:00Z",
                "_ResourceId": RID.lower(),
                "properties_s": json.dumps(props),
            }
        ),
    ]
    # neither ASA's upper-case nor Log Analytics' lower-case id shows the real casing
    assert {(r.job_id, r.job) for r in records} == {(RID.lower(), "MYSTREAMINGJOB")}


# --- 1. time formats and levels -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2019-02-04T17:10:49.7250696Z", dt.datetime(2019, 2, 4, 17, 10, 49, 725069, tzinfo=UTC)),
        ("2019-02-04 17:11:52Z", dt.datetime(2019, 2, 4, 17, 11, 52, tzinfo=UTC)),
        ("2/3/2019 8:54:16 PM UTC", dt.datetime(2019, 2, 3, 20, 54, 16, tzinfo=UTC)),
        ("02/04/2019 17:11:48", dt.datetime(2019, 2, 4, 17, 11, 48, tzinfo=UTC)),
        ("2019-02-04T17:05:51.6050000", dt.datetime(2019, 2, 4, 17, 5, 51, 605000, tzinfo=UTC)),
    ],
)
def test_every_real_time_format_as_a_record_time(text: str, expected: dt.datetime) -> None:
    record = parsed({"message Time": text, "message": DATA_ERRORS, "type": "DiagnosticMessage"})
    assert record.record_time == expected


def test_both_level_spellings_are_one_level() -> None:
    props = {"Type": "DataError", "DataErrorType": "LateInputEvent", "EventCount": 1}
    levels = {parsed(resource(props, level=level)).level for level in ("Information", "Informational", "INFORMATIONAL")}  # fmt: skip
    assert levels == {"Informational"}


# --- 2. the portal notification text line -------------------------------------------------------


def test_portal_notifications_are_records_with_their_own_line_numbers(read) -> None:
    text = (
        b"[17:22:00] " + OCCURRENCES.encode() + b"\n"
        b"\n"
        b"[5:23:00 PM] Source 'in' had 7 occurrences of kind 'LateInputEvent' between times "
        b"'2/4/2019 5:22:00 PM' and '2/4/2019 5:23:00 PM'.\n"
        b"copied from the portal on Monday\n"
    )
    good, bad = read(text, "notes.txt")
    assert [(r.source_line, r.kind, r.event_count) for r in good] == [
        (1, "InputDeserializerError.TypeConversionError", 58),
        (3, "LateInputEvent", 7),
    ]
    assert good[1].record_time == dt.datetime(2019, 2, 4, 17, 23, tzinfo=UTC)  # end of the range
    assert [(q.source_line, q.reason) for q in bad] == [
        (4, "a text line that is neither JSON nor an ASA message")
    ]


def test_a_text_line_among_json_lines_is_read_as_a_record(read) -> None:
    good_line = json.dumps(resource({"Type": "DiagnosticMessage", "Message": DATA_ERRORS})).encode()
    good, bad = read(good_line + b"\n[17:22:00] " + OCCURRENCES.encode() + b"\n", "mixed.log")
    assert [r.source_line for r in good] == [1, 2]
    assert bad == []


# --- the whole folder -----------------------------------------------------------------------------


def test_real_folder_aggregates_with_nothing_quarantined() -> None:
    files = expand_inputs([str(REAL)])
    assert [Path(p).name for p in files.metrics] == ["az-monitor-metrics.json", "azuremetrics.csv"]
    tables = aggregate_files(files.logs, files.metrics)
    summary = tables.summary
    assert (summary["records_total"], summary["records_parsed"], summary["records_quarantined"]) == (24, 24, 0)  # fmt: skip
    # 17 data errors and idle notices, 7 job lifecycle records (Authoring, activity log)
    assert (tables.data_errors.height, tables.job_events.height, summary["job_events"]) == (
        17,
        7,
        7,
    )
    assert set(tables.job_events["job"]) == {"myStreamingJob"}
    # one job, shown as the activity log's "Resource Name: myStreamingJob" spells it
    assert summary["jobs"] == ["myStreamingJob"]
    # one job in every table: the rollups of upper- and lower-case resource ids merge
    for table in (tables.error_rollup, tables.partition_idle, tables.metrics):
        assert set(table["job"].drop_nulls()) == {"myStreamingJob"}
    for table in (tables.data_errors, tables.metrics):
        assert set(table["job_id"].drop_nulls()) == {RID.lower().replace("rg-t/", "rg-telemetry/")}
    # the activity line that names the job ("Resource Name: MyStreamingJob") but has no
    # resource id joins it by name
    activity = tables.data_errors.filter(pl.col("source_file").str.ends_with("activity-log.json"))
    assert activity["job"].to_list() == ["myStreamingJob"] * 3
    assert activity["job_id"].null_count() == 0
    late = tables.error_rollup.filter(
        pl.col("kind") == "LateInputEvent", pl.col("job").is_not_null()
    )
    assert late["event_count"].sum() == 30  # 17 + 4 + 9; the portal's 3 name no job
    invalid = tables.error_rollup.filter(pl.col("kind") == "InputDeserializerError.InvalidData")
    assert (invalid["event_count"].sum(), invalid["records_without_count"].sum()) == (7, 1)
    assert summary["events_by_kind"] == {
        "EarlyInputEvent": 24,
        "InputDeserializerError.InvalidData": 7,
        "InputDeserializerError.InvalidHeader": 0,
        "InputDeserializerError.TypeConversionError": 116,
        "InputPartitionNotProgressing": 3,
        "InvalidInputTimeStamp": 2,
        "LateInputEvent": 33,
        "OutOfOrderEvent": 6,
        "OutputDataConversionError.RequiredColumnMissing": 3,
        "OutputDataConversionError.TypeConversionError": 12,
    }
    assert summary["records_without_count"] == {
        "InputDeserializerError.InvalidData": 1,
        "InputDeserializerError.InvalidHeader": 1,
    }
    per_file = tables.data_errors.group_by("source_file").len().sort("source_file")
    assert {Path(f).name: n for f, n in per_file.rows()} == {
        "PT1H.json": 7,  # 8 lines, one blank
        "activity-log.json": 3,
        "loganalytics-azurediagnostics.csv": 2,
        "loganalytics-azurediagnostics.json": 2,
        "portal-notifications.txt": 3,
    }
    levels = set(tables.data_errors["level"].drop_nulls())
    assert levels == {"Informational", "Warning"}


def test_lines_of_every_line_shaped_file_are_parsed_or_quarantined() -> None:
    for name in ("PT1H.json", "activity-log.json", "portal-notifications.txt"):
        data = (REAL / name).read_bytes()
        good, bad = split(list(read_records(data, name)))
        lines = [n for n, line in enumerate(data.split(b"\n"), start=1) if line.strip()]
        assert sorted(o.source_line for o in [*good, *bad]) == lines, name


# --- 6. metrics exports ---------------------------------------------------------------------------


def test_az_monitor_export_rows_per_job_partition_and_minute() -> None:
    from diagnostics.logs.metrics import read_metrics

    path = REAL / "az-monitor-metrics.json"
    table = read_metrics(path.read_bytes(), str(path)).to_pylist()
    whole = [r for r in table if r["partition_id"] is None]
    assert [(r["minute"].minute, r["late_input_events"], r["output_watermark_delay_seconds"]) for r in whole] == [
        (4, 17, 12.0), (5, 4, 310.0), (6, 0, 615.0),
    ]  # fmt: skip
    assert {r["job"] for r in table} == {"MYSTREAMINGJOB"}
    assert {(r["partition_id"], r["input_events"]) for r in table if r["minute"].minute == 4} >= {
        (0, 400),
        (3, 20),
    }
    assert all(r["backlogged_input_events"] == 0 for r in whole)


def test_azuremetrics_table_export_and_unreadable_exports(tmp_path: Path) -> None:
    from diagnostics.errors import InputError
    from diagnostics.logs.metrics import read_metrics

    path = REAL / "azuremetrics.csv"
    rows = read_metrics(path.read_bytes(), str(path)).to_pylist()
    assert [(r["minute"].minute, r["input_events"], r["output_watermark_delay_seconds"]) for r in rows] == [
        (16, 380, 640.0), (17, 402, 660.0),
    ]  # fmt: skip
    broken = b'{"value": [{"name": {"value": "LateInputEvents"}, "timeseries": [{"data": [{"timeStamp": "soon", "total": 1}]}]}]}'  # fmt: skip
    with pytest.raises(InputError, match=r"bad\.json: value\[0\] \(LateInputEvents\) timeStamp: 'soon' is not a time stamp"):  # fmt: skip
        read_metrics(broken, "bad.json")
