"""Causes without a generated scenario (invalid timestamps, a too-loose tolerance, CTI
violations, idle partitions from a capture), the model, ranking and rendering."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

from diagnostics.durations import MINUTE, SECOND
from diagnostics.engine.policy import OrderingPolicy
from diagnostics.engine.replay import replay
from diagnostics.engine.summary import summarize
from diagnostics.explain import Cause, Finding, SuggestionKind, explain, rank, render
from diagnostics.kinds import Severity
from diagnostics.report.pipeline import write_agg_dir

from .conftest import PARTITIONS, POLICY, run_cli

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs" / "scenarios"


@pytest.fixture(scope="module")
def healthy() -> pl.DataFrame:
    return pl.read_csv(SAMPLES / "healthy" / "capture.csv")


def test_invalid_timestamps_are_found_and_named(healthy) -> None:
    broken = healthy.with_columns(
        pl.when(pl.col("message_id") % 20 == 0)
        .then(pl.lit("not a time"))
        .otherwise(pl.col("event_time"))
        .alias("event_time")
    )
    report = explain(None, events=broken, policy=POLICY, partitions=PARTITIONS)
    top = report.top
    assert top.cause is Cause.INVALID_TIMESTAMPS
    assert top.evidence["invalid_timestamp"] == 100
    assert top.severity is Severity.CRITICAL  # 5 % of the events are dropped
    assert top.suggestions[0].kind is SuggestionKind.FIX_PAYLOAD
    assert "event_time" in top.suggestions[0].snippet


def test_a_loose_tolerance_is_reported_and_tightening_it_costs_nothing(healthy) -> None:
    loose = OrderingPolicy(timestamp_by="event_time", late_arrival_ns=10 * MINUTE)
    report = explain(None, events=healthy, policy=loose, partitions=PARTITIONS)
    assert report.top.cause is Cause.TOLERANCE_TOO_LOOSE
    assert report.top.severity is Severity.WARNING
    suggestion = report.top.suggestions[0]
    assert suggestion.kind is SuggestionKind.LATE_ARRIVAL_TOLERANCE
    assert suggestion.value_seconds <= 5
    tight = OrderingPolicy(
        timestamp_by="event_time", late_arrival_ns=int(suggestion.value_seconds * SECOND)
    )
    before = summarize(replay(healthy, loose, partitions=PARTITIONS))
    after = summarize(replay(healthy, tight, partitions=PARTITIONS))
    assert after["counts"]["adjusted"] == before["counts"]["adjusted"] == 0
    assert after["release_delay_seconds"]["max"] < before["release_delay_seconds"]["max"] / 10


def test_the_default_tolerance_is_not_called_loose(healthy) -> None:
    report = explain(None, events=healthy, policy=POLICY, partitions=PARTITIONS)
    assert Cause.TOLERANCE_TOO_LOOSE not in {f.cause for f in report.findings}


def test_cti_violations_from_a_cti_replay(tmp_path) -> None:
    capture = SAMPLES / "late_senders" / "capture.csv"
    out = tmp_path / "cti"
    argv = ["replay", str(capture), "--out", str(out), "--timestamp-by", "event_time"]
    assert run_cli([*argv, "--cti-every", "10", "--cti-delay", "1s"]) == 0
    write_agg_dir([out / "diagnostics.jsonl"], [out / "metrics.parquet"], tmp_path / "agg")
    report = explain(tmp_path / "agg")
    top = report.top
    assert top.cause is Cause.CTI_VIOLATIONS
    violations = int(pl.read_parquet(out / "outcomes.parquet")["violation"].sum())
    assert top.impact["events_affected"] == violations
    delay = top.suggestions[0]
    assert delay.kind is SuggestionKind.CTI_DELAY
    # the example lateness bounds the lag of a generated CTI from above: the advice is enough
    assert delay.value_seconds >= 119.482


def test_idle_partition_from_the_capture_alone() -> None:
    events = pl.read_csv(SAMPLES / "idle_partition" / "capture.csv")
    report = explain(None, events=events, policy=POLICY, partitions=PARTITIONS)
    assert report.top.cause is Cause.IDLE_PARTITION
    assert report.top.evidence["idle_partitions"] == [3]
    kinds = [s.kind for s in report.top.suggestions]
    # the one recommendation (late 1 s: nothing in the capture is later) frees the output
    # without PARTITION BY, which measures less than 1 s better; the finding says so
    assert report.recommended is not None
    assert report.recommended.late_seconds == 1
    assert not report.recommended.partition_by
    # the finding's do-this is the recommendation: lower the late tolerance to 1 s
    assert kinds == [SuggestionKind.FEED_ALL_PARTITIONS, SuggestionKind.LATE_ARRIVAL_TOLERANCE]
    assert report.top.suggestions[1].value_seconds == 1
    assert report.top.left_out[0].startswith("PARTITION BY PartitionId (proposed by a finding)")


def test_over_key_analysis_prefers_the_device() -> None:
    events = pl.read_csv(SAMPLES / "cross_device_disorder" / "capture.csv")
    report = explain(None, events=events, policy=POLICY, partitions=PARTITIONS)
    analysis = report.top.evidence["over_key_analysis"]
    assert analysis[0]["column"] == "device_id"
    assert analysis[0]["good"]
    assert analysis[0]["out_of_order_within_keys"] <= 0.1 * analysis[0]["out_of_order_across_keys"]
    snippet = report.top.suggestions[0].snippet
    assert snippet == "FROM input TIMESTAMP BY event_time OVER device_id PARTITION BY PartitionId"
    # unique ids and measurements are never OVER candidates: the sender column is the one
    assert [row["column"] for row in analysis] == ["device_id"]
    assert report.senders is not None
    assert report.senders.column == "device_id"
    assert "message_id (about one value per event)" in report.senders.reason


def test_explain_needs_a_source() -> None:
    from diagnostics.errors import UsageError

    with pytest.raises(UsageError):
        explain(None)


def _finding(cause: Cause, severity: Severity, events: int, delay: float, conf: float) -> Finding:
    return Finding(
        cause=cause, severity=severity, title=cause.value, explanation="x",
        impact={"events_affected": events, "delay_seconds": delay}, confidence=conf,
    )  # fmt: skip


findings = st.builds(
    _finding,
    st.sampled_from(list(Cause)),
    st.sampled_from(list(Severity)),
    st.integers(0, 10_000),
    st.floats(0, 1_000),
    st.floats(0, 1),
)


@given(st.lists(findings, max_size=8), st.randoms())
def test_ranking_is_by_severity_then_impact_and_ignores_input_order(items, rnd) -> None:
    ranked = rank(items)
    keys = [(-f.severity.rank, -f.score) for f in ranked]
    assert keys == sorted(keys)
    shuffled = list(items)
    rnd.shuffle(shuffled)
    assert [f.to_dict() for f in rank(shuffled)] == [f.to_dict() for f in ranked]


def test_finding_rejects_confidence_outside_0_1() -> None:
    with pytest.raises(ValueError, match="confidence"):
        _finding(Cause.HEALTHY, Severity.INFO, 0, 0.0, 1.5)


def test_renderings_carry_the_same_findings(tmp_path) -> None:
    events = pl.read_csv(SAMPLES / "late_senders" / "capture.csv")
    report = explain(None, events=events, policy=POLICY, partitions=PARTITIONS)
    doc = json.loads(render(report, "json"))
    assert [f["cause"] for f in doc["findings"]] == [f.cause.value for f in report.findings]
    first = doc["findings"][0]
    assert set(first) >= {"cause", "severity", "title", "explanation", "evidence", "impact",
                          "suggestions", "confidence"}  # fmt: skip
    assert first["suggestions"][0]["snippet"] in render(report, "text")
    markdown = render(report, "markdown")
    assert f"1. {report.findings[0].title}" in markdown
    late = report.recommended.late_seconds
    assert f"Events that arrive late: 00:{late // 60:02d}:{late % 60:02d}" in markdown
    assert np.isfinite(first["confidence"])


def test_cli_json_and_one_line_errors(tmp_path, capsys) -> None:
    from diagnostics.cli import main as orderdoc

    capture = SAMPLES / "late_senders" / "capture.csv"
    code = orderdoc(["explain", "--events", str(capture), "--timestamp-by", "event_time",
                     "--partitions", "4", "--format", "json", "--out", str(tmp_path / "r.json")])  # fmt: skip
    assert code == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == json.loads((tmp_path / "r.json").read_text())
    assert printed["findings"][0]["cause"] == "batching_senders"
    assert printed["senders"]["column"] == "device_id"
    for argv, needle in (
        (["explain"], "AGG_DIR"),
        (["explain", "--events", str(capture)], "--timestamp-by"),
        (["explain", str(tmp_path / "missing")], "no such aggregate folder"),
        (["explain", "--events", str(tmp_path / "x.csv"), "--timestamp-by", "t"], "no such file"),
        (["explain", "--events", str(capture), "--timestamp-by", "nope"], "'nope' is missing"),
    ):
        assert orderdoc(argv) == 2
        err = capsys.readouterr().err.strip()
        assert needle in err
        assert len(err.splitlines()) == 1


def test_job_filter_keeps_one_job_of_a_shared_aggregate_folder(runs, tmp_path) -> None:
    late, skew = runs[("late_senders", 7)], runs[("clock_skew", 7)]
    logs = [r.agg_dir.parent / "replay" / "diagnostics.jsonl" for r in (late, skew)]
    metrics = [r.agg_dir.parent / "replay" / "metrics.parquet" for r in (late, skew)]
    write_agg_dir(logs, metrics, tmp_path / "agg")
    both = {f.cause for f in explain(tmp_path / "agg").findings}
    assert {Cause.LATE_ARRIVALS, Cause.EARLY_ARRIVALS} <= both
    only = explain(tmp_path / "agg", job="job-clock_skew")
    assert [f.cause for f in only.findings] == [Cause.EARLY_ARRIVALS]
    assert only.top.evidence["events"] == explain(skew.agg_dir).top.evidence["events"]


def _aggregated(tmp_path, name: str, content: bytes):  # type: ignore[no-untyped-def]
    """An aggregate folder of one log file, made by the polars reference of the Spark job."""
    from diagnostics.aggregates import write_tables
    from diagnostics.logs.aggregate import aggregate_files

    log = tmp_path / name / "PT1H.json"
    log.parent.mkdir()
    log.write_bytes(content)
    agg = tmp_path / f"{name}-agg"
    write_tables(aggregate_files([log]), agg)
    return agg


def test_unreadable_records_are_not_called_healthy(tmp_path, capsys) -> None:
    """A folder whose log records were all quarantined is not "no problem": nothing was
    judged; with some read, the verdict says how many were not."""
    from diagnostics.cli import main as orderdoc

    lines = [b'{"time": "2024-01-01T00:00:0', b"\x00\xff binary \x01", b"not json at all"]
    unread = _aggregated(tmp_path, "unread", b"\n".join(lines) + b"\n")
    report = explain(unread)
    (verdict,) = report.findings
    assert verdict.cause is Cause.HEALTHY
    assert verdict.severity is Severity.WARNING
    assert verdict.title == "Nothing judged: none of the 3 log records could be read"
    assert verdict.explanation.startswith("3 log records could not be read and were quarantined")
    assert verdict.evidence["log_records_quarantined"] == 3
    assert verdict.evidence["log_records_read"] == 0

    from diagnostics.explain.causes_partitions import healthy
    from diagnostics.explain.evidence import Evidence

    partly = healthy(Evidence(sources=("logs",), records_total=10, records_quarantined=1), [])
    assert partly is not None
    assert partly.severity is Severity.WARNING
    assert partly.title == "No ordering problem found in the 9 log records read"
    assert partly.explanation.startswith("1 log record could not be read and was quarantined")
    assert "In the records read: no events were adjusted or dropped" in partly.explanation
    clean = healthy(Evidence(sources=("logs",), records_total=10), [])
    assert clean is not None
    assert (clean.severity, clean.title) == (Severity.INFO, "No ordering problem found")
    assert "log_records_quarantined" not in clean.evidence

    assert orderdoc(["explain", str(unread)]) == 0
    printed = capsys.readouterr().out
    assert "Nothing judged: none of the 3 log records could be read" in printed
    assert "No ordering problem found\n" not in printed
