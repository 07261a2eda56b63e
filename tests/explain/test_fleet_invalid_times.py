"""Issue 39, point 9, on the fleet: the invalid-timestamp finding gives example values and
the senders and splits the events by what their time holds; a body the input cannot read is
an InputDeserializerError, counted once with logs and a capture."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from diagnostics.cli import main
from diagnostics.generate.fleet import device_name, fleet_events, groups
from diagnostics.generate.fleet_files import TELEMETRY_JOB
from diagnostics.report.pipeline import write_agg_dir

from ..fleet_small import SMALL_FLEET, small_fleet


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    return small_fleet(tmp_path_factory.mktemp("fleet9"), logs=True)


@pytest.fixture(scope="module")
def expected():
    """What the generator put in: US-format times of one device (not also nulled, cut or
    stamped 2099), times missing or null, bodies that are not JSON."""
    events = fleet_events(SMALL_FLEET)
    texts = np.array([t is not None for t in events.event_text])
    us_device = groups(SMALL_FLEET)["us_times"][0]
    us = (events.device == us_device) & texts & ~events.non_json
    us &= np.array([t is not None and t.endswith(("AM", "PM")) for t in events.event_text])
    return {
        "unparsable": int(us.sum()),
        "no_value": int((~texts & ~events.non_json).sum()),
        "missing": int((events.time_missing & ~events.non_json).sum()),
        "unreadable": int(events.non_json.sum()),
        "us_device": device_name(us_device),
    }


def _report(args: list[str], capsys) -> dict:
    assert main([*args, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def _finding(report: dict, cause: str) -> dict:
    (found,) = [f for f in report["findings"] if f["cause"] == cause]
    return found


def test_invalid_timestamps_split_with_examples_and_senders(fleet, expected, capsys):
    report = _report(
        ["explain", "--events", str(fleet.capture), "--job-definition", str(fleet.job)], capsys
    )
    invalid = _finding(report, "invalid_timestamps")
    evidence = invalid["evidence"]
    assert expected["unparsable"] > 50
    assert evidence["unparsable"]["events"] == expected["unparsable"]
    # the field missing from the body, and the field written null, told apart
    assert evidence["field_missing"]["events"] == expected["missing"] == 40
    assert evidence["null_or_empty"]["events"] == expected["no_value"] - expected["missing"] == 20
    assert "missing_or_null" not in evidence
    assert evidence["invalid_timestamp"] == expected["unparsable"] + expected["no_value"]
    examples = evidence["unparsable"]["examples"]
    assert len(examples) == 3
    assert all(e.startswith("6/3/2024 ") and e.endswith(("AM", "PM")) for e in examples)
    assert evidence["unparsable"]["senders"] == {expected["us_device"]: expected["unparsable"]}
    assert evidence["unparsable"]["sender_column"] == "deviceId"
    assert sum(evidence["field_missing"]["senders"].values()) <= 40
    assert sum(evidence["null_or_empty"]["senders"].values()) <= 20
    (fix,) = invalid["suggestions"]
    assert fix["snippet"].startswith(f"deviceId {expected['us_device']} writes values such as '6/3")
    # the bodies that are not JSON are the input's data errors, not invalid times
    lost = _finding(report, "input_data_errors")
    assert lost["evidence"]["events_by_kind"] == {
        "InputDeserializerError.InvalidData": expected["unreadable"]
    }


def test_text_names_examples_and_the_device(fleet, expected, capsys):
    assert (
        main(["explain", "--events", str(fleet.capture), "--job-definition", str(fleet.job)]) == 0
    )
    text = " ".join(capsys.readouterr().out.split())
    assert (
        f"of which a value that is not a time: {expected['unparsable']} events, such as '6/3/2024"
        in text
    )
    assert f"deviceId {expected['us_device']}: {expected['unparsable']}" in text
    assert "of which the event does not have the field: 40 events" in text
    assert "of which the field is null or empty: 20 events" in text


def _with_invalid_data(logs: Path, count: int) -> None:
    """The telemetry job's logs with the record ASA writes for bodies it cannot read (the
    fleet's logs come from a replay, which has no deserializer)."""
    hour = next(p for p in logs.rglob("PT1H.json") if TELEMETRY_JOB.upper() in str(p))
    first = json.loads(hour.read_text().splitlines()[0])
    record = {
        "time": "2024-06-03T08:20:00.0000000Z",
        "resourceId": first["resourceId"],
        "category": "Execution",
        "operationName": "Process Events",
        "level": "Information",
        "properties": {
            "Source": "telemetry-eh",
            "Type": "DiagnosticMessage",
            "Message": f"Source 'telemetry-eh' had {count} occurrences of kind "
            "'InputDeserializerError.InvalidData' between times "
            "'2024-06-03T08:00:01.0000000Z' and '2024-06-03T08:29:59.0000000Z'.",
        },
    }
    with hour.open("a") as out:
        out.write(json.dumps(record) + "\n")


def test_logs_and_capture_count_each_event_once(fleet, expected, tmp_path, capsys):
    import shutil

    assert fleet.logs is not None
    logs = tmp_path / "logs"
    shutil.copytree(fleet.logs, logs)
    _with_invalid_data(logs, expected["unreadable"])
    agg = tmp_path / "agg"
    write_agg_dir(sorted(logs.rglob("PT1H.json")), [], agg)  # the Spark job's tables
    both = _report(
        [
            "explain", str(agg), "--job", TELEMETRY_JOB, "--events", str(fleet.capture),
            "--job-definition", str(fleet.job),
        ],
        capsys,
    )  # fmt: skip
    logs_only = _report(["explain", str(agg), "--job", TELEMETRY_JOB], capsys)
    # the logs (a replay's) count the unreadable bodies among the invalid times, and ASA's
    # record counts them as InvalidData: with the capture, each event is counted once
    assert _finding(logs_only, "invalid_timestamps")["impact"]["events_affected"] == (
        expected["unparsable"] + expected["no_value"] + expected["unreadable"]
    )
    invalid = _finding(both, "invalid_timestamps")["impact"]["events_affected"]
    lost = _finding(both, "input_data_errors")
    assert lost["impact"]["events_affected"] == expected["unreadable"]
    assert invalid == expected["unparsable"] + expected["no_value"]
    assert lost["evidence"]["events_by_source"] == {"telemetry-eh": expected["unreadable"]}


def test_logs_alone_leave_far_off_examples_out_of_how_early(fleet, tmp_path, capsys):
    """From the logs alone (one example event per record), a record whose example is
    stamped 2099 is named apart, not read as an event 74 years early (issue 39, point 4)."""
    assert fleet.logs is not None
    agg = tmp_path / "agg"
    write_agg_dir(sorted(fleet.logs.rglob("PT1H.json")), [], agg)
    report = _report(["explain", str(agg), "--job", TELEMETRY_JOB], capsys)
    early = _finding(report, "early_arrivals")["evidence"]["early_by"]
    assert 400 < early["max_seconds"] < 425
    assert 400 < early["p99_9_seconds"] < 425
    far = early["far_off"]
    assert 1 <= far["events"] <= 6
    assert far["rows_are"] == "log lines"
    assert all(v.startswith("2099-") for v in far["values"])
