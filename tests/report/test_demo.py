"""``orderdoc demo``: the pipeline end to end on two bundled scenarios."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from diagnostics.cli import main as orderdoc

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs" / "scenarios"
ASA = SAMPLES.parent / "asa"


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    out = tmp_path_factory.mktemp("demo")
    import contextlib
    import io

    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        code = orderdoc(["demo", "--out", str(out), "--scenario", "late_senders",
                         "--scenario", "healthy", "--scenario", "historical_replay"])  # fmt: skip
    assert code == 0
    return out, buffer.getvalue()


def test_demo_regenerates_the_bundled_captures(demo) -> None:
    out, _ = demo
    for name in ("late_senders", "healthy"):
        assert (out / name / "capture.csv").read_bytes() == (
            SAMPLES / name / "capture.csv"
        ).read_bytes()


def test_demo_writes_every_stage(demo) -> None:
    out, _ = demo
    folder = out / "late_senders"
    for path in ("replay/outcomes.parquet", "replay/diagnostics.jsonl", "agg/summary.json",
                 "agg/data_errors", "explain.json", "alerts.jsonl", "whatif/whatif.csv"):  # fmt: skip
        assert (folder / path).exists(), path
    report = json.loads((folder / "explain.json").read_text())
    # with the capture the late senders are the devices that send in batches
    assert report["findings"][0]["cause"] == "batching_senders"
    summary = json.loads((folder / "agg" / "summary.json").read_text())
    assert (summary["files_read"], summary["files_skipped"]) == (2, [])  # both files read
    assert not (out / "healthy" / "whatif").exists()  # nothing to tune on a healthy job


def test_demo_prints_the_report_and_how_to_open_the_app(demo) -> None:
    out, printed = demo
    assert "late_senders" in printed
    assert "batching senders" in printed  # causes in words, not identifiers
    assert "batching_senders" not in printed
    # the one recommendation, as explain.json carries it, is what the report prints
    rec = json.loads((out / "late_senders" / "explain.json").read_text())["recommended"]
    late = rec["late_arrival_seconds"]
    assert f"Events that arrive late: 00:{late // 60:02d}:{late % 60:02d}" in printed
    assert f"what-if recommended: late {late}s" in printed
    assert f"orderdoc app {out / 'late_senders' / 'agg'}" in printed


def test_demo_reports_markdown_and_html_with_charts(demo) -> None:
    out, _ = demo
    markdown = (out / "report.md").read_text()
    # the top cause with the capture (the batching devices) and from the logs alone
    assert "| late_senders | critical | batching senders | late arrivals |" in markdown
    assert "| healthy | info | healthy | healthy |" in markdown
    page = (out / "report.html").read_text()
    assert page.count("Plotly.newPlot") >= 3  # two lateness histograms and one sweep
    assert "orderdoc app" in page


def test_demo_fixes_the_bundled_job_definition_and_shows_the_diff(demo) -> None:
    out, printed = demo
    fix = out / "late_senders" / "fix"
    assert {p.name for p in fix.iterdir()} == {
        "late_senders.arm.fixed.json", "query.asaql", "query.diff", "apply.sh", "FIX.md",
    }  # fmt: skip
    rec = json.loads((out / "late_senders" / "explain.json").read_text())["recommended"]
    # the fix is the one recommendation: at most 1 % of the 2,000 events left adjusted
    assert rec["adjusted"] + rec["dropped"] <= 20
    assert f"replayed: late 513 -> {rec['adjusted']}, out of order 270 -> 0" in printed
    written = json.loads((fix / "late_senders.arm.fixed.json").read_text())
    props = written["resources"][0]["properties"]
    assert props["eventsLateArrivalMaxDelayInSeconds"] == rec["late_arrival_seconds"]
    assert "fix: healthy.resource.json needs no change" in printed
    markdown = (out / "report.md").read_text()
    assert "### The corrected job" in markdown
    assert "-    FROM telemetry TIMESTAMP BY event_time\n" in markdown
    assert (
        "+    FROM telemetry TIMESTAMP BY event_time OVER device_id PARTITION BY PartitionId"
        in markdown
    )
    page = (out / "report.html").read_text()
    assert "<h3>The corrected job</h3>" in page
    assert "corrected query" in page  # the side-by-side diff table
    assert not (out / "healthy" / "fix" / "query.asaql").exists()
    # the findings' query suggestions name the job's input, as the definition does
    assert "OVER: FROM telemetry TIMESTAMP BY event_time OVER device_id" in printed
    assert "FROM input " not in printed
    assert "FROM input " not in markdown


def test_unknown_scenario_is_one_line_exit_2(tmp_path, capsys) -> None:
    assert orderdoc(["demo", "--out", str(tmp_path), "--scenario", "nope"]) == 2
    err = capsys.readouterr().err.strip()
    assert "--scenario 'nope' is unknown" in err
    assert len(err.splitlines()) == 1


def test_demo_text_speaks_asa_not_field_names(demo) -> None:
    out, printed = demo
    markdown = (out / "report.md").read_text()
    for text in (printed, markdown):
        for wrong in ("(s)", "spec \u00a7", "e+0", "_seconds", '{"', "{'", "current out of order"):
            assert wrong not in text, wrong
    assert "(+1 more finding in " in printed  # late_senders: out of order follows the late events
    assert "| out-of-order tolerance now | 0 s |" in markdown
    # historical replay: the unlimited tolerance is the backfill job's, the live job is kept
    assert "late-arrival tolerance: On the separate backfill job only: " in printed
    assert "| lateness | median 2," in markdown  # in days, never 2.27e+06 s
    assert "days), 95th percentile" in markdown
    kept = "needs no change to its event ordering settings or query; do the advice above instead"
    assert f"fix: historical_replay.arm.json {kept} (FIX.md)" in printed
    assert f"`historical_replay.arm.json` {kept} (FIX.md)." in markdown
    assert "fix: healthy.resource.json needs no change\n" in printed  # nothing to advise


def test_the_reference_aggregate_lists_what_the_input_expansion_skips(tmp_path: Path) -> None:
    """write_agg_dir (the demo's polars producer) names skipped files as the Spark job does."""
    from diagnostics.logs.inputs import expand_inputs
    from diagnostics.report.pipeline import write_agg_dir

    folder = tmp_path / "logs"
    folder.mkdir()
    (folder / "PT1H.json").write_bytes((ASA / "PT1H.json").read_bytes())
    (folder / "notes.md").write_text("not a log\n")
    files = expand_inputs([str(folder)])
    summary = write_agg_dir(files.logs, files.metrics, tmp_path / "agg", skipped=files.skipped)
    skipped = [str((folder / "notes.md").resolve())]
    assert (summary["files_read"], summary["files_skipped"]) == (1, skipped)
    written = json.loads((tmp_path / "agg" / "summary.json").read_text())
    assert written["files_skipped"] == skipped


def test_the_summary_gives_the_whole_recommended_setting_or_the_first_fix(demo) -> None:
    """The summary's fix is the recommended setting whole when the top finding's fix is a
    policy change (late_senders: the late tolerance alone would be only part of it), and the
    top finding's first suggestion otherwise (historical_replay: a separate job)."""
    out, printed = demo
    rows = {
        line.split(" | ")[0].strip("| "): line.split(" | ")[4].strip("`")
        for line in (out / "report.md").read_text().splitlines()
        if line.startswith("| ") and line.count(" | ") == 5
    }
    rec = json.loads((out / "late_senders" / "explain.json").read_text())["recommended"]
    assert rec["over"] == ["device_id"]
    assert rec["partition_by"] is True
    assert rows["late_senders"] == f"recommended setting: {rec['setting']}"
    assert f"-> recommended setting: {rec['setting']}\n" in printed
    historical = json.loads((out / "historical_replay" / "explain.json").read_text())
    first = historical["findings"][0]["suggestions"][0]
    assert first["kind"] == "separate_replay_job"
    assert rows["historical_replay"] == first["snippet"]
    assert rows["healthy"] == "-"
