"""The findings model: a typed, read-only impact that survives pickling (the app caches
reports) and keeps its keys, in order, in the JSON form."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import polars as pl
import pytest

from diagnostics.explain import Cause, Finding, explain, render
from diagnostics.kinds import Severity

from .conftest import PARTITIONS, POLICY

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs" / "scenarios"


def test_a_report_pickles_and_stays_read_only() -> None:
    events = pl.read_csv(SAMPLES / "cross_device_disorder" / "capture.csv")
    report = explain(None, events=events, policy=POLICY, partitions=PARTITIONS)
    copy = pickle.loads(pickle.dumps(report))
    assert copy == report
    assert render(copy, "json") == render(report, "json")
    with pytest.raises(TypeError):
        copy.findings[0].impact["events_affected"] = 0


def test_impact_keys_keep_the_order_each_cause_gives_them() -> None:
    events = pl.read_csv(SAMPLES / "cross_device_disorder" / "capture.csv")
    report = explain(None, events=events, policy=POLICY, partitions=PARTITIONS)
    doc = json.loads(render(report, "json"))
    disorder = next(f for f in doc["findings"] if f["cause"] == "out_of_order")
    assert list(disorder["impact"])[:4] == [
        "events_affected",
        "delay_seconds",
        "fix_release_delay_p95_seconds",  # measured under the one recommendation
        "release_delay_p95_now_seconds",
    ]


def test_a_finding_without_impact_affects_nothing() -> None:
    finding = Finding(Cause.HEALTHY, Severity.INFO, "t", "e")
    assert finding.to_dict()["impact"] == {"events_affected": 0, "delay_seconds": 0.0}
    assert finding.score == 0.0


def test_each_suggestion_says_whether_it_is_prose_a_setting_or_query_text() -> None:
    from diagnostics.explain import snippets
    from diagnostics.explain.model import SnippetForm
    from diagnostics.jobdef.query import parse_query

    feed = snippets.feed_partitions([3])
    assert feed.form is SnippetForm.PROSE
    assert feed.snippet.startswith("Check the producers writing to partition 3: send with")
    assert feed.snippet.endswith("so that no partition goes silent")
    for sentence in (
        snippets.fix_clocks(["dev-1"], 30.0),
        snippets.fix_payload("eventTime"),
        snippets.separate_replay_job(5),
        snippets.backfill_late_tolerance(5),
        snippets.scale_out(1, 0.8),
        snippets.measure_lateness("eventTime"),
        snippets.inspect_records("SomethingNew", "the data errors page"),
    ):
        assert sentence.form is SnippetForm.PROSE, sentence.kind
    for setting in (
        snippets.late_tolerance(90),
        snippets.late_tolerance(None),
        snippets.ooo_tolerance(10),
    ):
        assert setting.form is SnippetForm.SETTING
        assert setting.snippet.startswith("Event ordering > ")
    for query in (
        snippets.partition_by("telemetry"),
        snippets.timestamp_by_over("eventTime", ("deviceId",), multi_partition=True),
    ):
        assert query.form is SnippetForm.QUERY
        assert [s.name for s in parse_query(query.snippet).sources] == [
            "telemetry" if "telemetry" in query.snippet else "input"
        ]
    assert snippets.cti_delay(12.0).form is SnippetForm.CODE
    assert snippets.cti_delay(None).form is SnippetForm.PROSE
    assert feed.to_dict()["form"] == "prose"


def test_markdown_shows_sentences_as_text_and_settings_as_code() -> None:
    from diagnostics.explain import snippets
    from diagnostics.explain.model import Report

    finding = Finding(
        cause=Cause.IDLE_PARTITION,
        severity=Severity.WARNING,
        title="Partition 3 is silent",
        explanation="It stopped sending.",
        suggestions=(snippets.feed_partitions([3]), snippets.partition_by()),
    )
    text = render(Report([finding], ("capture",)), "markdown")
    assert (
        "**: Check the producers writing to partition 3: send with a partition key spread over "
        "all partitions (or none, for round-robin) so that no partition goes silent\n" in text
    )
    assert "`Check the producers" not in text
    assert "`FROM input PARTITION BY PartitionId`" in text
