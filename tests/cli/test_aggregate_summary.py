"""The summary ``orderdoc aggregate`` prints: known counts, and how many records named none."""

from __future__ import annotations

from pathlib import Path

from diagnostics.cli.aggregate import format_summary, inputs_line
from diagnostics.logs.aggregate import aggregate_files
from diagnostics.logs.inputs import expand_inputs

REAL = Path(__file__).resolve().parents[2] / "sample_logs" / "asa-real"


def test_summary_shows_records_without_a_count_as_at_least() -> None:
    files = expand_inputs([str(REAL)])
    summary = aggregate_files(files.logs, files.metrics).summary
    text = format_summary(summary, Path("agg"))
    lines = {line.split()[0]: line for line in text.splitlines() if line.startswith("  ")}
    assert lines["InputDeserializerError.InvalidData"].split() == [
        "InputDeserializerError.InvalidData", "7", "+", "1", "record", "without", "a",
        "count", "(at", "least", "8)",
    ]  # fmt: skip
    assert lines["LateInputEvent"].split() == ["LateInputEvent", "33"]
    assert "jobs: myStreamingJob" in text
    assert text.splitlines()[0] == (
        "records: 24 total, 24 parsed, 0 quarantined (7 job lifecycle records among the "
        "parsed: table job_events)"
    )


def test_silent_partitions_are_named_per_job(tmp_path: Path) -> None:
    import json

    from diagnostics.aggregates import read_summary
    from diagnostics.report.pipeline import write_agg_dir

    rid = "/SUBSCRIPTIONS/S/RESOURCEGROUPS/R/PROVIDERS/MICROSOFT.STREAMANALYTICS/STREAMINGJOBS/"
    idle = "Input Partition [{p}] does not have additional data for more than [5] minute(s)."
    records = [
        {"time": "2024-03-05T10:10:00Z", "resourceId": rid + job, "level": "Warning",
         "properties": {"Source": "eh", "Type": "InputPartitionNotProgressing",
                        "Message": idle.format(p=partition)}}
        for job, partition in (("ORDERS", 3), ("PAYMENTS", 0), ("PAYMENTS", 2))
    ]  # fmt: skip
    log = tmp_path / "PT1H.json"
    log.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    write_agg_dir([log], [], tmp_path / "agg")
    text = format_summary(read_summary(tmp_path / "agg"), tmp_path / "agg")
    assert (
        "silent partitions (InputPartitionNotProgressing): partition 3 of job ORDERS; "
        "partitions 0, 2 of job PAYMENTS"
    ) in text.splitlines()
    assert "idle partitions" not in text


def test_a_summary_without_idle_notices_or_times_says_so() -> None:
    summary = {
        "records_total": 0, "records_parsed": 0, "records_quarantined": 0, "jobs": ["J"],
        "time_range": {"from": None, "to": None}, "events_by_kind": {}, "idle_partitions": [],
    }  # fmt: skip
    lines = format_summary(summary, Path("no-such-folder")).splitlines()
    assert "time range: - (no log record with a time)" in lines
    assert "silent partitions (InputPartitionNotProgressing): none" in lines


def test_counts_are_in_the_singular_or_the_plural() -> None:
    summary = {
        "records_total": 3, "records_parsed": 3, "records_quarantined": 0, "jobs": ["J"],
        "time_range": {"from": None, "to": None}, "idle_partitions": [],
        "events_by_kind": {"LateInputEvent": 1_200, "EarlyInputEvent": 1},
        "records_without_count": {"LateInputEvent": 1_234, "EarlyInputEvent": 1},
    }  # fmt: skip
    lines = format_summary(summary, Path("no-such-folder")).splitlines()
    assert "  + 1,234 records without a count (at least 2,434)" in lines[4]
    assert "  + 1 record without a count (at least 2)" in lines[5]
    assert inputs_line(1, 0, 2_500_000) == "1 log file, 0 metrics files, 2.5 MB"
    assert inputs_line(3, 1, 0) == "3 log files, 1 metrics file, 0.0 MB"
