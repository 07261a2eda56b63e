"""Findings in words: impact sentences keep the case of what they quote, the historical-replay
advice is for a separate job, evidence reads without exponents or internal names."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from diagnostics.appdata.jobfix import LOAD_PAGE_HINT, in_app_words
from diagnostics.explain import Cause, SuggestionKind, explain, render
from diagnostics.explain.readable import evidence_lines, impact_sentence
from diagnostics.explain.snippets import fix_clocks, fix_payload, separate_replay_job
from diagnostics.report.pipeline import write_agg_dir

from .conftest import PARTITIONS, POLICY

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs" / "scenarios"


def test_the_impact_capitalises_its_first_letter_only() -> None:
    impact = {
        "events_affected": 0,
        "delay_seconds": 0.0,
        "delay": 'ASA\'s default of 5 s (the "Events that arrive late" field)',
    }
    assert impact_sentence(impact) == (
        "No event adjusted or dropped; output held back by ASA's default of 5 s "
        '(the "Events that arrive late" field).'
    )
    # the extra impact values start a sentence of their own, in words
    hot = {"events_affected": 0, "delay_seconds": 0.0, "events_on_hot_partition": 1628}
    assert (
        impact_sentence(hot)
        == "No event adjusted or dropped. Events on the busiest partition: 1,628."
    )


def test_the_apps_load_page_hint_keeps_its_field_name(tmp_path: Path) -> None:
    """An idle partition read from logs without the job's tolerance: the delay is ASA's
    default, marked as assumed with how to give the real one; the app's words name the Load
    page field as the page shows it."""
    rid = "/SUBSCRIPTIONS/S/RESOURCEGROUPS/RG/PROVIDERS/MICROSOFT.STREAMANALYTICS/STREAMINGJOBS/"
    message = "Input Partition [1] does not have additional data for more than [5] minute(s)."
    record = {
        "time": "2024-03-05T10:10:00Z", "resourceId": rid + "ORDERS", "level": "Warning",
        "properties": {"Source": "eh", "Type": "InputPartitionNotProgressing", "Message": message},
    }  # fmt: skip
    log = tmp_path / "PT1H.json"
    log.write_text(json.dumps(record) + "\n")
    write_agg_dir([log], [], tmp_path / "agg")
    (idle,) = [f for f in explain(tmp_path / "agg").findings if f.cause is Cause.IDLE_PARTITION]
    assert impact_sentence(idle.impact).startswith(
        "No event adjusted or dropped; output held back by the late-arrival tolerance: 5 s "
        "(ASA's default, assumed; the job's own was not given: pass --job-definition, or "
        "--late-arrival and --out-of-order)."
    )
    assert idle.impact["delay_seconds"] == 5.0
    (in_app,) = in_app_words([idle])
    text = impact_sentence(in_app.impact)
    assert f"5 s (ASA's default, assumed; the job's own was not given: {LOAD_PAGE_HINT})" in text
    assert 'Load page (the "Job definition" field)' in text
    assert "--" not in text


@pytest.fixture(scope="module")
def historical() -> pl.DataFrame:
    return pl.read_csv(SAMPLES / "historical_replay" / "capture.csv")


def test_historical_replay_advice_is_for_a_separate_job(historical: pl.DataFrame) -> None:
    report = explain(None, events=historical, policy=POLICY, partitions=PARTITIONS)
    top = report.top
    assert top is not None
    assert top.cause is Cause.HISTORICAL_REPLAY
    job, tolerance = top.suggestions
    assert job.kind is SuggestionKind.SEPARATE_REPLAY_JOB
    assert "separate job" in job.snippet
    assert "the live job keeps its late-arrival tolerance (00:00:05)" in job.snippet
    # the unlimited tolerance is said to be the backfill job's, never the live job's
    assert tolerance.kind is SuggestionKind.LATE_ARRIVAL_TOLERANCE
    assert tolerance.value_seconds is None
    assert tolerance.snippet.startswith("On the separate backfill job only: Event ordering > ")
    assert "unlimited (eventsLateArrivalMaxDelayInSeconds: -1)" in tolerance.snippet
    assert "the live job keeps its late-arrival tolerance (00:00:05)" in tolerance.snippet
    # --format json keeps its schema: the same keys, kinds and values
    data = json.loads(render(report, "json"))["findings"][0]
    assert set(data) == {"cause", "severity", "title", "explanation", "evidence", "impact",
                         "suggestions", "confidence", "job"}  # fmt: skip
    assert [(s["kind"], s["value_seconds"]) for s in data["suggestions"]] == [
        ("separate_replay_job", None),
        ("late_arrival_tolerance", None),
    ]
    # lateness in days reads as days, not in exponent notation
    (lateness,) = [value for label, value in evidence_lines(top.evidence) if label == "lateness"]
    assert "e+" not in lateness
    assert "days)" in lateness


def test_without_the_jobs_tolerance_the_advice_does_not_invent_one() -> None:
    snippet = separate_replay_job(None).snippet
    assert snippet.endswith(
        "the live job keeps its late-arrival tolerance and reads live data only"
    )


def test_senders_are_counted_in_words() -> None:
    assert "Synchronise the clock of sender dev-1 (about 600 s fast)" in fix_clocks(["dev-1"], 600.0).snippet  # fmt: skip
    assert "the clock of senders dev-1, dev-2 with NTP" in fix_clocks(["dev-1", "dev-2"], None).snippet  # fmt: skip
    assert "(s)" not in fix_clocks(["dev-1"], None).snippet


def test_evidence_labels_are_words_not_field_names() -> None:
    lines = dict(
        evidence_lines(
            {
                "current_out_of_order_tolerance_seconds": 0,
                "events_between_suggestion_and_current": 3,
                "lateness": {"p50_seconds": 7200.0, "max_seconds": 4.5},
            }
        )
    )
    assert lines == {
        "out-of-order tolerance now": "0 s",
        "events between the suggested and the current tolerance": "3",
        "lateness": "median 7,200 s (about 2.0 hours), largest 4.5 s",
    }


def test_query_text_without_the_column_has_a_placeholder_not_words() -> None:
    unknown = fix_payload(None).snippet
    assert unknown.startswith("Make every event carry the TIMESTAMP BY column as an ISO-8601")
    assert "WHERE TRY_CAST(<timestamp column> AS datetime) IS NOT NULL" in unknown
    assert "WHERE TRY_CAST(event_time AS datetime)" in fix_payload("event_time").snippet
