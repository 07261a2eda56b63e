"""The Spark job matches the polars reference on the samples and on garbage."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from diagnostics.aggregates import TABLES
from diagnostics.logs import aggregate as reference
from diagnostics.logs.inputs import expand_inputs
from diagnostics.logs.metrics import METRICS_SCHEMA
from diagnostics.logs.records import PARSED_SCHEMA
from diagnostics.spark import schemas
from diagnostics.spark.job import run_aggregate
from tests.spark.conftest import canonical, read_table

pytestmark = pytest.mark.spark

COLUMNS = {table.value: list(spec.columns) for table, spec in TABLES.items()}


def test_spark_schemas_mirror_arrow_schemas() -> None:
    spark_fields = [(f.name, f.dataType.simpleString()) for f in schemas.PARSED.fields]
    arrow_to_spark = {"string": "string", "int64": "bigint", "double": "double", "bool": "boolean"}
    expected = [
        (
            f.name,
            "timestamp" if str(f.type).startswith("timestamp") else arrow_to_spark[str(f.type)],
        )
        for f in PARSED_SCHEMA
    ]
    assert spark_fields == expected
    assert schemas.METRICS.names == METRICS_SCHEMA.names


def assert_same_as_reference(out: Path, files, result_summary: dict) -> None:
    expected = reference.aggregate_files(files.logs, files.metrics, skipped=files.skipped)
    assert result_summary == expected.summary  # files_read and files_skipped too
    for table, columns in COLUMNS.items():
        if table == "metrics" and not files.metrics:
            assert not (out / "metrics").exists()
            continue
        if table == "job_events" and expected.job_events.is_empty():
            assert not (out / "job_events").exists()  # no lifecycle record: no table
            continue
        got = read_table(out / table)
        want = getattr(expected, table)
        assert dict(got.schema) == dict(want.schema), table
        assert canonical(got, columns) == canonical(want, columns), table


def test_samples_folder_matches_reference(spark, samples: Path, tmp_path: Path) -> None:
    files = expand_inputs([str(samples)])
    result = run_aggregate(spark, files, tmp_path / "agg")
    assert result.summary["records_total"] == 28
    assert result.summary["records_quarantined"] == 5
    assert result.summary["files_read"] == 9
    on_disk = json.loads((tmp_path / "agg" / "summary.json").read_text())
    assert on_disk == result.summary
    assert sorted(p.name for p in (tmp_path / "agg").iterdir()) == sorted(
        [*(t for t in COLUMNS if t != "job_events"), "summary.json"]
    )
    assert_same_as_reference(tmp_path / "agg", files, result.summary)


def test_garbage_and_huge_record_lose_nothing(spark, tmp_path: Path) -> None:
    good = (Path(__file__).resolve().parents[2] / "sample_logs/asa/PT1H.json").read_bytes()
    big = b'{"time": "2024-01-01T00:00:00Z", "properties": {"pad": "' + b"z" * 4_000_000 + b'"}}'
    lines = [good.rstrip(), b"", b'{"trunc', b"\xff\xfe\xfd", b"[1, 2]", big, b'{"records": 5}']
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "garbage.json").write_bytes(b"\n".join(lines))
    (folder / "notes.md").write_text("not a log")
    files = expand_inputs([str(folder)])
    assert [Path(p).name for p in files.skipped] == ["notes.md"]
    stale = tmp_path / "agg" / "metrics" / "date=2020-01-01"
    stale.mkdir(parents=True)  # an earlier run's metrics must not survive a run without them
    (stale / "part-0.parquet").write_bytes(b"old")
    result = run_aggregate(spark, files, tmp_path / "agg")
    summary = result.summary
    assert summary["records_total"] == summary["records_parsed"] + summary["records_quarantined"]
    # [1, 2] is one line: quarantined once
    assert (summary["records_parsed"], summary["records_quarantined"]) == (6, 5)
    assert summary["files_skipped"] == [str((folder / "notes.md").resolve())]
    quarantine = read_table(tmp_path / "agg" / "quarantine")
    assert quarantine["raw_bytes"].max() == len(big)
    assert quarantine["raw"].str.len_bytes().max() == 64 * 1024
    assert_same_as_reference(tmp_path / "agg", files, summary)


def test_real_shapes_folder_matches_reference(spark, tmp_path: Path) -> None:
    """Real wordings, casings, time formats, a text file and Azure Monitor metric exports."""
    real = Path(__file__).resolve().parents[2] / "sample_logs" / "asa-real"
    files = expand_inputs([str(real)])
    assert len(files.metrics) == 2
    result = run_aggregate(spark, files, tmp_path / "agg")
    assert (result.summary["records_total"], result.summary["records_quarantined"]) == (24, 0)
    assert result.summary["job_events"] == 7  # Authoring and activity-log lifecycle records
    assert result.summary["jobs"] == ["myStreamingJob"]
    assert result.summary["records_without_count"] == {
        "InputDeserializerError.InvalidData": 1,
        "InputDeserializerError.InvalidHeader": 1,
    }
    assert_same_as_reference(tmp_path / "agg", files, result.summary)


def test_an_unreadable_metrics_export_is_an_input_error_naming_it(spark, tmp_path: Path) -> None:
    from diagnostics.errors import InputError

    bad = tmp_path / "metrics.json"
    bad.write_text('{"value": [{"name": {"value": "InputEvents"}, "timeseries": '
                   '[{"data": [{"timeStamp": "later", "total": 3}]}]}]}')  # fmt: skip
    files = expand_inputs([str(bad)])
    assert files.metrics == (str(bad.resolve()),)
    with pytest.raises(InputError, match=r"metrics\.json: value\[0\] \(InputEvents\) timeStamp"):
        run_aggregate(spark, files, tmp_path / "agg")


def test_hand_made_variants_match_reference(spark, tmp_path: Path) -> None:
    """Keys in other cases, both count wordings, every time format, text and broken lines
    among JSON lines, older codes, an az monitor export of a job with two inputs, and
    messages pasted from the portal's JSON view into a .txt and a .json file."""
    from tests.logs.test_pasted_messages import write_pasted
    from tests.logs.test_real_variants import two_inputs

    rid = "/SUBSCRIPTIONS/S/RESOURCEGROUPS/R/PROVIDERS/MICROSOFT.STREAMANALYTICS/STREAMINGJOBS/J2"
    text = (
        "Source 'in-b' had {n}data errors of kind '{k}' between processing times '{a}' and '{b}'."
    )
    lines = [
        json.dumps({"TIME": "2019-02-04T17:10:49.7250696Z", "ResourceID": rid, "LEVEL": "Information",
                    "Properties": {"SOURCE": "in-a", "TYPE": "DataError", "dataerrortype": "LateInputEvent",
                                   "EVENTCOUNT": "5", "partition id": 1}}),
        "",
        "[17:22:00] Source 'in-a' had 58 occurrences of kind 'InputDeserializerError.TypeConversionError'"
        " between times '2019-02-04T17:21:00.0000000Z' and '2019-02-04T17:22:00.0000000Z'.",
        "copied from the portal",
        '{"time": "2019-02-04T17:12:00Z", broken',
        json.dumps({"time": "02/04/2019 17:11:48", "resourceId": rid.lower(),
                    "properties": {"Type": "DataError", "DataErrorType": "SQLDatabaseOutputDataError",
                                   "Message": "Could not write the column [temp]."}}),
        json.dumps({"time": "2019-02-04T17:05:51.6050000", "resourceId": rid,
                    "properties": {"Type": "DiagnosticMessage", "Message": text.format(
                        n="", k="InputDeserializationError", a="2019-02-04 17:05:00Z", b="2/4/2019 5:05:50 PM UTC")}}),
        json.dumps({"message Time": "2/3/2019 8:54:16 PM UTC", "type": "DiagnosticMessage",
                    "message": text.format(n="1 ", k="InputEventTimestampNotFound",
                                           a="2019-02-03T20:53:00Z", b="2019-02-03T20:54:00Z"),
                    "correlationId": "c", "_ResourceId": rid.lower()}),
        json.dumps({"records": [{"time": "2019-02-04T17:09:00Z", "resourceid": rid.lower(), "properties": {
            "type": "inputpartitionnotprogressing",
            "message": "Input Partition [2] does not have additional data for more than [5] minute(s)."}}]}),
    ]  # fmt: skip
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "mixed.log").write_text("\r\n".join(lines) + "\n")
    two_inputs(folder)
    pasted = write_pasted(folder)  # 2 notes quarantined, 8 records
    files = expand_inputs([str(folder)])
    result = run_aggregate(spark, files, tmp_path / "agg")
    summary = result.summary
    assert (summary["records_total"], summary["records_parsed"]) == (8 + pasted, 6 + pasted - 2)
    assert summary["idle_partitions"] == [2]
    assert summary["events_by_kind"]["OutputDataConversionError.TypeConversionError"] == 8
    assert summary["jobs"] == ["J2", "X", "jobTwo"]
    assert summary["records_without_count"] == {
        "InputDeserializationError": 1,
        "SQLDatabaseOutputDataError": 1,
    }
    assert summary["events_by_kind"]["InvalidInputTimeStamp"] == 1
    assert_same_as_reference(tmp_path / "agg", files, summary)


def test_jobs_by_resource_id_match_reference(spark, tmp_path: Path) -> None:
    """One job name in two resource groups is two jobs, shown in their best casing; a job
    known by a text name only is its own job; metrics join the job of their id."""
    from tests.logs.test_jobs import two_resource_groups

    folder = tmp_path / "in"
    folder.mkdir()
    two_resource_groups(folder)
    files = expand_inputs([str(folder)])
    assert len(files.metrics) == 1
    result = run_aggregate(spark, files, tmp_path / "agg")
    assert result.summary["jobs"] == ["ordersJob (rg-east)", "ordersJob (rg-west)", "paymentsJob"]
    assert_same_as_reference(tmp_path / "agg", files, result.summary)
