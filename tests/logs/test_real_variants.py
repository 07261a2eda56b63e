"""More real ASA shapes (issue: real ASA logs): the older data error codes, text lines that
are not notifications, unquoted column names, metrics per input (``LogicalName``).

Examples are hand-written in the shapes of ASA's pages "Azure Stream Analytics data error
codes" and "Azure Stream Analytics data errors" and of ``az monitor metrics list`` output.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from diagnostics.kinds import KindFamily, kind_family
from diagnostics.logs.aggregate import aggregate_files
from diagnostics.logs.metrics import read_metrics
from diagnostics.logs.normalise import normalise
from diagnostics.logs.records import DataError

RID = (
    "/subscriptions/00000000-0000-0000-0000-000000000001/resourceGroups/rg/providers/"
    "Microsoft.StreamAnalytics/streamingjobs/jobTwo"
)
UTC = dt.UTC


def parsed(props: dict) -> DataError:
    value = {"time": "2019-02-04T17:11:52Z", "resourceId": RID, "properties": props}
    outcome = normalise(value, "f.json", 1, json.dumps(value))
    assert isinstance(outcome, DataError), getattr(outcome, "reason", outcome)
    return outcome


@pytest.mark.parametrize(
    ("code", "kind", "family"),
    [
        ("InputEventTimestampNotFound", "InvalidInputTimeStamp", KindFamily.TIMESTAMP),
        ("InputEventTimestampByOverValueNotFound", "InvalidInputTimeStampKey", KindFamily.TIMESTAMP),
        ("InputEventLateBeyondThreshold", "LateInputEvent", KindFamily.ORDERING),
        ("InputDeserializationError", "InputDeserializationError", KindFamily.INPUT_DATA),
        ("CosmosDBOutputMissingId", "CosmosDBOutputMissingId", KindFamily.OUTPUT_DATA),
        ("SQLDatabaseOutputDataError", "SQLDatabaseOutputDataError", KindFamily.OUTPUT_DATA),
        ("EventHubOutputRecordExceedsSizeLimit", "EventHubOutputRecordExceedsSizeLimit", KindFamily.OUTPUT_DATA),
    ],
)  # fmt: skip
def test_older_data_error_codes_keep_their_meaning(code: str, kind: str, family) -> None:
    record = parsed({"Source": "in", "Type": "DataError", "DataErrorType": code, "EventCount": 2})
    assert (record.kind, record.event_count) == (kind, 2)
    assert kind_family(record.kind) is family


def test_the_data_errors_pages_unquoted_column_is_kept() -> None:
    record = parsed({"Source": "in", "Type": "DataError",
                     "DataErrorType": "InputDeserializerError.TypeConversionError",
                     "Message": "Unable to convert column: dateColumn to expected type."})  # fmt: skip
    assert (record.column_name, record.count_known) == ("dateColumn", False)


def test_text_lines_that_are_not_notifications_say_so(read) -> None:
    notification = (
        "[17:22:00] Source 'in' had 2 occurrences of kind 'LateInputEvent' between times "
        "'2019-02-04T17:21:00Z' and '2019-02-04T17:22:00Z'."
    )
    text = "\n".join([
        "Stream Analytics job notifications",
        notification,
        "[17:25:00] Job started.",
        '{"time": "2019-02-04T17:12:00Z", broken',
        notification.replace("[17:22:00]", "[5:22 pm]"),
    ])  # fmt: skip
    good, bad = read(text.encode(), "portal.txt")
    assert [(r.source_line, r.kind, r.event_count) for r in good] == [
        (2, "LateInputEvent", 2),
        (5, "LateInputEvent", 2),
    ]
    reasons = {q.source_line: q.reason for q in bad}
    assert reasons[1] == "a text line that is neither JSON nor an ASA message"
    assert reasons[3].startswith("a text line with a portal notification's clock but not its wording")  # fmt: skip
    assert reasons[4].startswith("invalid JSON: Expecting property name")


def _metric(name: str, series: list[dict]) -> dict:
    return {"id": f"{RID}/providers/Microsoft.Insights/metrics/{name}",
            "name": {"value": name, "localizedValue": name}, "timeseries": series}  # fmt: skip


def _series(dims: dict[str, str], points: list[tuple[str, str, float]]) -> dict:
    return {
        "metadatavalues": [{"name": {"value": k}, "value": v} for k, v in dims.items()],
        "data": [{"timeStamp": t, a: v} for t, a, v in points],
    }


def two_inputs(tmp_path: Path) -> Path:
    """An export of a job with two inputs: both have a partition 0."""
    t10, t11 = "2019-02-04T17:10:00Z", "2019-02-04T17:11:00Z"
    document = {"value": [
        _metric("InputEvents", [
            _series({"LogicalName": "in-a", "PartitionId": "0"}, [(t10, "total", 100), (t11, "total", 0)]),
            _series({"LogicalName": "in-b", "PartitionId": "0"}, [(t10, "total", 5), (t11, "total", 50)]),
        ]),
        _metric("LateInputEvents", [
            _series({"LogicalName": "in-a"}, [(t10, "total", 7)]),
            _series({"LogicalName": "in-b"}, [(t10, "total", 2)]),
        ]),
        _metric("InputEventsSourcesBacklogged", [_series({"LogicalName": "in-b"}, [(t10, "maximum", 120)])]),
        _metric("OutputWatermarkDelaySeconds", [_series({}, [(t10, "maximum", 400), (t11, "maximum", 460)])]),
    ]}  # fmt: skip
    path = tmp_path / "metrics.json"
    path.write_text(json.dumps(document))
    return path


def test_metrics_are_kept_per_input(tmp_path: Path) -> None:
    path = two_inputs(tmp_path)
    rows = read_metrics(path.read_bytes(), str(path)).to_pylist()
    per_partition = {
        (r["source"], r["minute"].minute): r["input_events"] for r in rows if r["partition_id"] == 0
    }
    # partition 0 of in-a and partition 0 of in-b are two partitions, never added together
    assert per_partition == {("in-a", 10): 100, ("in-a", 11): 0, ("in-b", 10): 5, ("in-b", 11): 50}
    whole = [r for r in rows if r["partition_id"] is None]
    assert {(r["source"], r["late_input_events"], r["backlogged_input_events"]) for r in whole} >= {
        ("in-a", 7, None),
        ("in-b", 2, 120),
    }
    assert [r["output_watermark_delay_seconds"] for r in whole if r["source"] is None] == [
        400.0,
        460.0,
    ]
    # the metric id keeps ARM's casing (Microsoft.StreamAnalytics): the job's real name
    assert {r["job"] for r in rows} == {"jobTwo"}
    assert {r["job_id"] for r in rows} == {RID.lower()}


def test_the_job_totals_of_per_input_metrics(tmp_path: Path) -> None:
    from diagnostics.explain import Cause, explain
    from diagnostics.report.pipeline import write_agg_dir

    write_agg_dir([], [two_inputs(tmp_path)], tmp_path / "agg")
    found = {f.cause: f for f in explain(tmp_path / "agg").findings}
    # the job's late events are the sum over its inputs (no whole-job series in the export)
    assert found[Cause.LATE_ARRIVALS].impact["events_affected"] == 9
    assert found[Cause.WATERMARK_DELAY].impact["delay_seconds"] == 460.0
    assert "backlogged (up to 120 in a minute)" in found[Cause.WATERMARK_DELAY].explanation


def test_the_aggregate_keeps_the_input_column(tmp_path: Path) -> None:
    tables = aggregate_files([], [two_inputs(tmp_path)])
    assert tables.metrics.columns[:4] == ["job", "job_id", "source", "partition_id"]
    assert sorted(tables.metrics["source"].drop_nulls().unique()) == ["in-a", "in-b"]
    assert tables.summary["jobs"] == ["jobTwo"]  # a job known by its metrics alone is listed
