"""The app's job definition with logs (as ``orderdoc explain AGG_DIR --job-definition FILE
--write-fix DIR`` does), the app's words for the explainer's flag hints, and the diffs."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from diagnostics.appdata import insight, jobfix, samples
from diagnostics.appdata.build import build_from_capture, build_from_logs, capture_context
from diagnostics.explain import explain
from diagnostics.explain.model import Cause
from diagnostics.explain.snippets import late_tolerance, timestamp_by_over

from .conftest import SCENARIOS

JOBS = SCENARIOS.parent / "jobs"
IDLE = SCENARIOS / "idle_partition"


@pytest.fixture
def idle_logs(tmp_path: Path) -> Path:
    """The idle_partition scenario's ASA logs and metrics, aggregated as the Load page does."""
    out = tmp_path / "agg"
    build_from_logs([IDLE / "diagnostics.jsonl"], out, metrics=[IDLE / "metrics.parquet"])
    return out


def _idle(report):
    return next(f for f in report.findings if f.cause is Cause.IDLE_PARTITION)


def _texts(report) -> list[str]:
    return [
        t
        for f in report.findings
        for t in (f.explanation, *(v for v in f.impact.values() if isinstance(v, str)))
    ]


def test_logs_without_a_job_say_what_to_fill_in_on_the_load_page(idle_logs):
    report = jobfix.explain_folder(idle_logs)
    assert _idle(report).impact["delay"] == (
        "the late-arrival tolerance: 5 s (ASA's default, assumed; the job's own was not given: "
        f"{jobfix.LOAD_PAGE_HINT})"
    )
    assert not any("--" in t for t in _texts(report))  # no command-line flag in the app
    assert not any("--" in line for line in report.tolerances)
    assert report.tolerances[0].endswith(
        f"assumed (late arrival 5 s, out of order 0 s, Adjust); {jobfix.LOAD_PAGE_HINT}"
    )
    assert jobfix.build_fix(idle_logs) is None  # no job: no corrected job


def test_logs_with_a_job_use_its_policy_and_get_the_corrected_job(idle_logs):
    data = (JOBS / "idle_partition.az-show.json").read_bytes()
    jobfix.save(idle_logs, "my-job.json", data)
    report = jobfix.explain_folder(idle_logs)
    finding = _idle(report)
    # the job's late tolerance gives the delay, as explain AGG_DIR --job-definition does
    assert finding.impact["delay"] == "the late-arrival tolerance: 5 s"
    assert report.policy is not None
    assert report.policy.startswith("TIMESTAMP BY event_time, late 5s")
    assert "(from job sample-idle-partition (az-show my-job.json" in report.policy
    # the query suggestions name the job's input
    assert "FROM telemetry PARTITION BY PartitionId" in [s.snippet for s in finding.suggestions]
    view = jobfix.build_fix(idle_logs)
    assert view is not None
    assert view.before is None  # logs only: nothing replayed
    assert "not measured" in view.basis
    assert "+FROM [telemetry] TIMESTAMP BY event_time PARTITION BY PartitionId" in view.query_diff
    # the definition's diff shows the changed value only, laid out alike
    changed = [
        line
        for line in view.definition_diff.splitlines()
        if line[:1] in "+-" and line[:3] not in ("+++", "---")
    ]
    assert len(changed) == 2
    assert all('"query":' in line for line in changed)
    files = dict(view.files)
    assert set(files) == {"my-job.fixed.json", "query.asaql", "query.diff", "apply.sh", "FIX.md"}
    fix_md = files["FIX.md"].decode()
    # FIX.md names the file as uploaded, never where the app keeps it
    assert fix_md.startswith(
        "# Fix for job sample-idle-partition (az-show my-job.json, compatibility level 1.2)"
    )
    assert str(idle_logs) not in fix_md
    assert "/tmp" not in view.summary
    assert "No capture was given, so the change is not measured: upload a capture" in fix_md
    assert "--events" not in fix_md  # no command-line flag in the app's FIX.md
    assert "--job-definition" not in fix_md
    written = json.loads(files["my-job.fixed.json"])
    assert "PARTITION BY PartitionId" in written["transformation"]["query"]


def test_an_unreadable_saved_job_leaves_the_findings_and_fails_the_fix(idle_logs):
    jobfix.save(idle_logs, "job.json", b"{oops")
    report = jobfix.explain_folder(idle_logs)
    assert (
        _idle(report)
        .impact["delay"]
        .startswith("the late-arrival tolerance: 5 s (ASA's default, assumed")
    )
    with pytest.raises(jobfix.InputError, match=r"^job.json: not JSON"):
        jobfix.build_fix(idle_logs)


def test_a_capture_is_explained_over_the_partitions_it_was_replayed_with(tmp_path):
    """A partition the capture has no event of (declared on the Load page) is in the
    findings' evidence, as in the replay that measures the fix."""
    events = pl.read_csv(SCENARIOS / "healthy" / "capture.csv")
    events = events.filter(pl.col("partition_id") != 3)
    out = tmp_path / "agg"
    build_from_capture(events, samples.default_settings("healthy"), out, partitions=range(4))
    ctx = capture_context(out)
    assert ctx is not None
    assert ctx.partitions == (0, 1, 2, 3)
    report = jobfix.explain_folder(out)
    idle = _idle(report)
    assert idle.evidence["events_per_partition"]["3"] == 0
    assert set(idle.evidence["events_per_partition"]) == {"0", "1", "2", "3"}
    expected = explain(
        out,
        events=events,
        policy=ctx.settings.policy,
        columns=ctx.settings.columns,
        partitions=ctx.partitions,
    )
    assert [f.evidence for f in report.findings] == [f.evidence for f in expected.findings]


def test_suggestion_headings_are_the_command_lines_labels():
    over = timestamp_by_over("ts", ("device_id",), multi_partition=True)
    assert insight.suggestion_heading(over) == "query: TIMESTAMP BY ... OVER"
    assert insight.suggestion_heading(late_tolerance(121)) == "late-arrival tolerance (121 s)"
    assert insight.suggestion_heading(late_tolerance(None)) == "late-arrival tolerance"


def test_definition_diff_ignores_layout():
    old = json.dumps({"a": 1, "b": {"q": "x"}})  # minified, as an export may be
    new = json.dumps({"a": 1, "b": {"q": "y"}}, indent=2)
    diff = jobfix.definition_diff(old, new, "job.json")
    assert diff.splitlines()[:2] == ["--- job.json (now)", "+++ job.json (corrected)"]
    assert [line for line in diff.splitlines() if line[:1] in "+-"][2:] == [
        '-    "q": "x"',
        '+    "q": "y"',
    ]
    assert jobfix.definition_diff(old, old, "job.json") == ""
