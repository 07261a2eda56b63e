"""Explain on real-shaped logs and metrics: every data-error kind named for what it is,
"at least N" for records without a count, metrics-only findings, findings per job."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from diagnostics.engine.policy import OrderingPolicy
from diagnostics.explain import Cause, explain, render
from diagnostics.kinds import KindFamily, Severity, kind_family, normalise_kind
from diagnostics.report.pipeline import write_agg_dir

REAL = Path(__file__).resolve().parents[2] / "sample_logs" / "asa-real"
LOGS = sorted(p for p in REAL.iterdir() if p.name not in {"az-monitor-metrics.json", "azuremetrics.csv", "README.md"})  # fmt: skip
SECOND = 1_000_000_000


@pytest.fixture(scope="module")
def real_agg(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("real") / "agg"
    write_agg_dir(LOGS, [REAL / "az-monitor-metrics.json", REAL / "azuremetrics.csv"], out)
    return out


def by_cause(report) -> dict[Cause, object]:
    return {f.cause: f for f in report.findings}


def test_kind_families_and_older_names() -> None:
    assert kind_family("InputDeserializerError.TypeConversionError") is KindFamily.INPUT_DATA
    assert kind_family("OutputDataConversionError.RequiredColumnMissing") is KindFamily.OUTPUT_DATA
    assert kind_family("InvalidInputTimeStamp") is KindFamily.TIMESTAMP
    assert kind_family("LateInputEvent") is KindFamily.ORDERING
    names = ["InputEventLateBeyondThreshold", "LateInputEvents", "LateInputEvent"]
    assert {normalise_kind(n) for n in names} == {"LateInputEvent"}
    assert normalise_kind("EarlyInputEvents") == "EarlyInputEvent"


def test_payload_and_output_errors_are_named_for_what_they_are(real_agg: Path) -> None:
    found = by_cause(explain(real_agg))
    payload = found[Cause.INPUT_DATA_ERRORS]
    assert payload.severity is Severity.CRITICAL
    # 7 + 116 counted, plus two records that named no count: a minimum
    assert payload.title.startswith("at least 125 events of the input 'telemetry-eh' could not be read")  # fmt: skip
    assert payload.evidence["records_without_count"] == {
        "InputDeserializerError.InvalidData": 1,
        "InputDeserializerError.InvalidHeader": 1,
    }
    assert "not an ordering problem" in payload.explanation
    output = found[Cause.OUTPUT_DATA_ERRORS]
    assert output.title == "15 result rows did not fit the output 'sql-output' (RequiredColumnMissing, TypeConversionError)"  # fmt: skip
    assert output.evidence["events_by_column"] == {"DeviceName": 3}
    assert "column 'DeviceName'" in output.suggestions[0].snippet
    # the ordering findings count only the ordering kinds
    assert found[Cause.LATE_ARRIVALS].impact["events_affected"] == 33
    assert {f.job for f in found.values()} == {"myStreamingJob"}
    assert "Job myStreamingJob: at least 125 events" in render(explain(real_agg), "text")


def test_metrics_alone_give_findings(tmp_path: Path) -> None:
    write_agg_dir([], [REAL / "az-monitor-metrics.json"], tmp_path / "agg")
    found = by_cause(explain(tmp_path / "agg"))
    assert found[Cause.LATE_ARRIVALS].impact["events_affected"] == 21  # 17 + 4 per minute
    delay = found[Cause.WATERMARK_DELAY]
    assert delay.severity is Severity.WARNING
    assert delay.impact["delay_seconds"] == 615.0
    assert (
        "exceeds the late-arrival tolerance, 5 s (ASA's default, assumed; the job's own was not "
        "given: pass --job-definition, or --late-arrival and --out-of-order), without backlog"
    ) in delay.explanation
    # with the job's tolerance known (600 s), 615 s is the configured wait: no finding
    tolerant = OrderingPolicy(timestamp_by="t", late_arrival_ns=600 * SECOND)
    assert Cause.WATERMARK_DELAY not in by_cause(explain(tmp_path / "agg", policy=tolerant))


def test_backlog_in_the_metrics_is_the_cause_of_the_delay(tmp_path: Path) -> None:
    document = json.loads((REAL / "az-monitor-metrics.json").read_text())
    backlog = next(m for m in document["value"] if m["name"]["value"] == "InputEventsSourcesBacklogged")  # fmt: skip
    backlog["timeseries"][0]["data"][2]["total"] = 4200.0
    (tmp_path / "metrics.json").write_text(json.dumps(document))
    write_agg_dir([], [tmp_path / "metrics.json"], tmp_path / "agg")
    delay = by_cause(explain(tmp_path / "agg"))[Cause.WATERMARK_DELAY]
    assert delay.severity is Severity.CRITICAL
    assert "backlogged (up to 4,200 in a minute)" in delay.explanation
    assert delay.suggestions[0].kind.value == "scale_out"


def test_findings_per_job_and_the_idle_delay_they_state(tmp_path: Path) -> None:
    rid = "/SUBSCRIPTIONS/S/RESOURCEGROUPS/R/PROVIDERS/MICROSOFT.STREAMANALYTICS/STREAMINGJOBS/"
    idle = "Input Partition [{p}] does not have additional data for more than [{m}] minute(s)."
    lines = []
    for job, partition in (("ORDERS", 1), ("payments", 2)):
        for minute, minutes in ((10, 5), (15, 10)):
            lines.append({
                "time": f"2024-03-05T10:{minute}:00Z", "resourceId": rid + job, "level": "Warning",
                "properties": {"Source": "eh", "Type": "InputPartitionNotProgressing",
                               "Message": idle.format(p=partition, m=minutes)},
            })  # fmt: skip
    log = tmp_path / "PT1H.json"
    log.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    write_agg_dir([log], [], tmp_path / "agg")
    report = explain(tmp_path / "agg")
    idle_findings = {f.job: f for f in report.findings if f.cause is Cause.IDLE_PARTITION}
    assert sorted(idle_findings) == ["ORDERS", "PAYMENTS"]
    assert idle_findings["PAYMENTS"].evidence["idle_partitions"] == [2]
    assert idle_findings["ORDERS"].impact["delay"] == (
        "the late-arrival tolerance: 5 s (ASA's default, assumed; the job's own was not given: "
        "pass --job-definition, or --late-arrival and --out-of-order)"
    )
    assert any(line.startswith("job ORDERS: tolerances not given") for line in report.tolerances)
    policy = OrderingPolicy(timestamp_by="t", late_arrival_ns=30 * SECOND)
    one = explain(tmp_path / "agg", policy=policy, job="orders")
    finding = next(f for f in one.findings if f.cause is Cause.IDLE_PARTITION)
    assert finding.job == "ORDERS"
    assert (finding.impact["delay"], finding.impact["delay_seconds"]) == (
        "the late-arrival tolerance: 30 s",
        30.0,
    )


def test_a_finding_keeps_its_job_through_pickling(real_agg: Path) -> None:
    import pickle

    finding = explain(real_agg).findings[0]
    assert pickle.loads(pickle.dumps(finding)).job == finding.job == "myStreamingJob"


def test_a_minimum_count_reads_at_least_in_the_impact_too(real_agg: Path) -> None:
    from diagnostics.explain.readable import impact_sentence

    payload = by_cause(explain(real_agg))[Cause.INPUT_DATA_ERRORS]
    assert payload.impact["minimum"] is True
    assert impact_sentence(payload.impact).startswith("At least 125 events lost.")
    output = by_cause(explain(real_agg))[Cause.OUTPUT_DATA_ERRORS]  # every count known
    assert impact_sentence(output.impact).startswith("15 events lost.")


def _log(tmp_path: Path, records: list[dict], notes: str = "") -> Path:
    log = tmp_path / "PT1H.json"
    log.write_text("\n".join(json.dumps(r) for r in records) + "\n" + notes)
    write_agg_dir([log], [], tmp_path / "agg")
    return tmp_path / "agg"


def test_older_codes_are_named_as_payload_and_output_errors(tmp_path: Path) -> None:
    rid = "/SUBSCRIPTIONS/S/RESOURCEGROUPS/R/PROVIDERS/MICROSOFT.STREAMANALYTICS/STREAMINGJOBS/J"
    records = [
        {"time": f"2019-02-04T17:0{i}:00Z", "resourceId": rid,
         "properties": {"Source": source, "Type": "DataError", "DataErrorType": code, "EventCount": n}}
        for i, (source, code, n) in enumerate([
            ("in-a", "InputDeserializationError", 4), ("in-b", "InputDeserializerError.InvalidData", 1),
            ("cosmos-out", "CosmosDBOutputMissingId", 3), ("in-a", "InputEventTimestampNotFound", 2),
        ])
    ]  # fmt: skip
    found = by_cause(explain(_log(tmp_path, records)))
    payload = found[Cause.INPUT_DATA_ERRORS]
    assert payload.title == "5 events of the inputs 'in-a' and 'in-b' could not be read (InputDeserializationError, InvalidData) and were lost"  # fmt: skip
    assert found[Cause.OUTPUT_DATA_ERRORS].title == "3 result rows did not fit the output 'cosmos-out' (CosmosDBOutputMissingId)"  # fmt: skip
    assert found[Cause.INVALID_TIMESTAMPS].impact["events_affected"] == 2
    assert Cause.LATE_ARRIVALS not in found


def test_records_naming_no_job_are_said_to_be_so(tmp_path: Path) -> None:
    rid = "/SUBSCRIPTIONS/S/RESOURCEGROUPS/R/PROVIDERS/MICROSOFT.STREAMANALYTICS/STREAMINGJOBS/"
    records = [
        {"time": "2019-02-04T17:00:00Z", "resourceId": rid + job,
         "properties": {"Source": "in", "Type": "DataError", "DataErrorType": "OutOfOrderEvent", "EventCount": 2}}
        for job in ("A", "B")
    ]  # fmt: skip
    notes = (
        "[17:22:00] Source 'in' had 58 occurrences of kind 'InputDeserializerError.InvalidData' "
        "between times '2019-02-04T17:21:00Z' and '2019-02-04T17:22:00Z'.\n"
    )
    report = explain(_log(tmp_path, records, notes))
    payload = by_cause(report)[Cause.INPUT_DATA_ERRORS]
    assert payload.job is None
    assert payload.title == (
        "Records that name no job (e.g. portal notifications): 58 events of the input 'in' "
        "could not be read (InvalidData) and were lost"
    )
    assert {f.job for f in report.findings if f.cause is Cause.OUT_OF_ORDER} == {"A", "B"}


def test_job_totals_take_each_minute_once_across_exports(real_agg: Path) -> None:
    from diagnostics.explain.evidence import from_agg_dir

    evidence = from_agg_dir(real_agg, job="MYSTREAMINGJOB")
    # 17:04-17:06 from the az export's partitions (400+410+395 and 20+0+0), 17:16-17:17
    # from AzureMetrics' whole-job rows (380 + 402): each minute counted once
    assert evidence.total_events == 1_225 + 782
    assert evidence.partition_events == {0: 1_205, 3: 20}
    assert evidence.watermark_delay is not None
    assert evidence.watermark_delay["max"] == 660.0


def test_overlapping_idle_episodes_count_their_minutes_once(real_agg: Path) -> None:
    """The real logs' partition 3 has two overlapping idle episodes (17:07-17:19 and
    17:09:16-17:24:16): 17 idle minutes, not the 27 their lengths add up to."""
    report = explain(real_agg)
    (idle,) = [f for f in report.findings if f.cause is Cause.IDLE_PARTITION]
    assert idle.evidence["idle_minutes_total"] == pytest.approx(17.3, abs=0.05)
    assert idle.title.endswith("Input partition 3 stopped sending (17 idle minutes)")
    assert sum(e["minutes"] for e in idle.evidence["episodes"]) > 26
