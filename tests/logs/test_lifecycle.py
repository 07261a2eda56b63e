"""Job lifecycle records (the Authoring log, the activity log's Administrative records) are read
as job events: counted, kept in ``job_events``, never quarantined, never taken for data errors."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import polars as pl
import pytest

from diagnostics.generate.fleet_files import authoring_record
from diagnostics.logs.aggregate import aggregate_files
from diagnostics.logs.lifecycle import JobAction, JobEvent, action_of
from diagnostics.logs.normalise import normalise
from diagnostics.logs.reader import read_records
from diagnostics.logs.records import DataError, Quarantined
from diagnostics.logs.vectorised import read_records_fast
from diagnostics.resources import default_rule_paths
from diagnostics.rules import evaluate, load_rules

REAL = Path(__file__).resolve().parents[2] / "sample_logs" / "asa-real"
RID = (
    "/SUBSCRIPTIONS/6A1F0C2E-0000-4B5C-9D7E-3C2B1A0F9E8D/RESOURCEGROUPS/RG-TELEMETRY/PROVIDERS/"
    "MICROSOFT.STREAMANALYTICS/STREAMINGJOBS/MYSTREAMINGJOB"
)
UTC = dt.UTC


def read(name: str) -> list[object]:
    return list(read_records((REAL / name).read_bytes(), name))


def test_authoring_records_are_job_events() -> None:
    start, update, stop = read("authoring-PT1H.json")
    assert isinstance(start, JobEvent)
    assert (start.category, start.action, start.status, start.job) == (
        "Authoring",
        "start",
        "Succeeded",
        "MYSTREAMINGJOB",
    )
    assert start.record_time == dt.datetime(2019, 2, 4, 17, 0, 5, 402187, tzinfo=UTC)
    assert start.operation == "Start Stream Analytics Job"
    assert start.correlation_id == "2b7d3c1e-4f5a-4e6b-9c8d-7a6b5c4d3e2f"  # properties as a string
    assert start.level == "Informational"
    assert isinstance(update, JobEvent)  # properties as an object, level "Information"
    assert (update.action, update.level, update.source_line) == ("update", "Informational", 2)
    assert isinstance(stop, JobEvent)
    assert stop.action == "stop"


def test_activity_log_records_streamed_to_storage_are_job_events() -> None:
    started, succeeded = read("activity-log-storage.json")
    for event in (started, succeeded):
        assert isinstance(event, JobEvent)
        assert (event.category, event.action, event.job) == (
            "Administrative",
            "start",
            "MYSTREAMINGJOB",
        )
        assert event.operation == "MICROSOFT.STREAMANALYTICS/STREAMINGJOBS/START/ACTION"
    assert isinstance(started, JobEvent)
    assert isinstance(succeeded, JobEvent)
    assert (started.status, succeeded.status) == ("Start", "Success")  # resultType


def test_activity_log_records_of_the_portal_and_az_are_job_events() -> None:
    scale, stop = read("activity-log-portal.json")  # a JSON array, as az monitor writes it
    assert isinstance(scale, JobEvent)
    assert isinstance(stop, JobEvent)
    assert [(e.action, e.status, e.category) for e in (scale, stop)] == [
        ("scale", "Succeeded", "Administrative"),
        ("stop", "Succeeded", "Administrative"),
    ]
    assert stop.operation == "Microsoft.StreamAnalytics/streamingjobs/Stop/action"
    assert stop.record_time == dt.datetime(2019, 2, 4, 17, 31, 9, 800000, tzinfo=UTC)
    assert stop.job == "myStreamingJob"  # the ARM casing of the resource id
    assert stop.job_id == RID.lower()


def test_an_activity_log_message_carrying_a_data_error_stays_a_data_error() -> None:
    outcomes = read("activity-log.json")  # its first record has category Administrative
    assert all(isinstance(o, DataError) for o in outcomes)


def test_what_is_not_a_jobs_lifecycle_record_is_quarantined_with_its_reason() -> None:
    other = {
        "time": "2019-02-04T17:00:00Z",
        "resourceId": "/SUBSCRIPTIONS/S/RESOURCEGROUPS/R/PROVIDERS/MICROSOFT.STORAGE/STORAGEACCOUNTS/LOGS",
        "operationName": "MICROSOFT.STORAGE/STORAGEACCOUNTS/LISTKEYS/ACTION",
        "category": "Action",
        "properties": {"eventCategory": "Administrative"},
    }
    bad = normalise(other, "a.json", 1, json.dumps(other))
    assert isinstance(bad, Quarantined)
    assert (
        "is not a Stream Analytics job (a Administrative record of another resource)" in bad.reason
    )
    no_time = {"resourceId": RID, "category": "Authoring", "properties": {"Message": "x"}}
    bad = normalise(no_time, "a.json", 2, json.dumps(no_time))
    assert isinstance(bad, Quarantined)
    assert bad.reason == "time: missing"
    # an Execution record that is neither a data error nor a lifecycle record: as before
    generic = {"time": "2019-02-04T17:00:00Z", "resourceId": RID, "category": "Execution",
               "properties": {"Type": "JobValidationError", "Message": "The query is not valid."}}  # fmt: skip
    bad = normalise(generic, "a.json", 3, json.dumps(generic))
    assert isinstance(bad, Quarantined)
    assert "names no data-error kind" in bad.reason


@pytest.mark.parametrize(
    ("operation", "message", "action"),
    [
        ("Microsoft.StreamAnalytics/streamingjobs/Start/action", None, JobAction.START),
        ("MICROSOFT.STREAMANALYTICS/STREAMINGJOBS/STOP/ACTION", None, JobAction.STOP),
        ("Microsoft.StreamAnalytics/streamingjobs/Scale/action", None, JobAction.SCALE),
        ("Microsoft.StreamAnalytics/streamingjobs/write", None, JobAction.UPDATE),
        ("Microsoft.StreamAnalytics/streamingjobs/delete", None, JobAction.DELETE),
        ("Microsoft.StreamAnalytics/streamingjobs/outputs/Write", None, JobAction.UPDATE),
        ("Diagnostic message", "Streaming job started.", JobAction.START),
        ("Start Stream Analytics Job", None, JobAction.START),
        ("Restart policy read", None, JobAction.OTHER),
        (None, None, JobAction.OTHER),
    ],
)
def test_the_action_an_operation_names(
    operation: str | None, message: str | None, action: JobAction
) -> None:
    assert action_of(operation, message) is action


def test_the_fleets_authoring_record_is_a_job_event() -> None:
    at = dt.datetime(2024, 6, 3, 7, 58, tzinfo=UTC)
    record = authoring_record("fleet-telemetry", at)
    assert isinstance(record["properties"], str)  # serialized, as the documentation says
    event = normalise(record, "PT1H.json", 1, json.dumps(record))
    assert isinstance(event, JobEvent)
    assert (event.job, event.action, event.record_time) == ("FLEET-TELEMETRY", "start", at)
    assert event.correlation_id is not None


def test_the_native_reader_gives_the_same_outcomes(tmp_path: Path) -> None:
    """A file mixing data errors and lifecycle records: the Arrow path and the Python path
    read it alike (the Authoring records go to the Python normaliser)."""
    data = (REAL / "PT1H.json").read_bytes() + (REAL / "authoring-PT1H.json").read_bytes()
    slow = list(read_records(data, "mixed.json"))
    fast = list(read_records_fast(data, "mixed.json"))
    assert fast == slow
    assert sum(isinstance(o, JobEvent) for o in fast) == 3


def test_job_events_are_counted_joined_to_their_job_and_fire_no_quarantine_alert(
    tmp_path: Path,
) -> None:
    from diagnostics.aggregates import write_tables

    files = [REAL / n for n in ("PT1H.json", "authoring-PT1H.json", "activity-log-portal.json")]
    tables = aggregate_files(files)
    summary = tables.summary
    assert summary["records_quarantined"] == 0
    assert summary["job_events"] == 5
    assert summary["records_parsed"] == tables.data_errors.height + 5
    # the Authoring records say MYSTREAMINGJOB, the activity log myStreamingJob: one job,
    # shown as the data errors show it (job events change no job's name)
    assert set(tables.job_events["job"]) == set(tables.data_errors["job"]) == {"MYSTREAMINGJOB"}
    assert tables.job_events["action"].to_list() == ["start", "update", "scale", "stop", "stop"]
    assert tables.job_events.schema["date"] == pl.Date
    write_tables(tables, tmp_path / "agg")
    alerts = evaluate(load_rules(default_rule_paths()), tmp_path / "agg")
    assert not [a for a in alerts if a.rule_id == "quarantined-records"]
