"""One answer (issue 25): on the user's capture of issue 25, ``explain --write-fix``,
``whatif`` and the app's data functions recommend the same setting with the same numbers;
every number beside a fix is the fix's (issue 24, point 2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from diagnostics.appdata import insight, jobfix
from diagnostics.appdata.build import CaptureSettings
from diagnostics.appdata.capture_input import build_from_reader
from diagnostics.captures.reader import read_capture
from diagnostics.cli import main as orderdoc
from diagnostics.durations import SECOND
from diagnostics.engine.policy import OrderingPolicy
from diagnostics.explain.model import Cause
from tests.whatif.usercapture import write_user_files

from .conftest import JOBS, SCENARIOS, scenario_folder


@pytest.fixture(scope="module")
def user(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """Issue 25's capture and job: through the command line and through the app."""
    folder = tmp_path_factory.mktemp("issue25")
    capture, job = write_user_files(folder)
    assert orderdoc(["explain", "--events", str(capture), "--job-definition", str(job),
                     "--write-fix", str(folder / "fix")]) == 0  # fmt: skip
    assert orderdoc(["whatif", str(capture), "--job-definition", str(job), "--out",
                     str(folder / "wi"), "--no-png", "--no-verify"]) == 0  # fmt: skip
    agg = folder / "agg"
    policy = OrderingPolicy(timestamp_by="eventTime", late_arrival_ns=5 * SECOND)
    build_from_reader(read_capture(capture), CaptureSettings(policy=policy), agg)
    jobfix.save(agg, job.name, job.read_bytes())
    return {"folder": folder, "agg": agg}


def _whatif_row(folder: Path) -> dict:
    return json.loads((folder / "wi" / "whatif.json").read_text())["recommended"]


def test_whatif_the_fix_and_the_app_recommend_the_same_setting(user) -> None:
    cli = _whatif_row(user["folder"])
    view = jobfix.build_fix(user["agg"])
    assert view is not None
    fixed = json.loads((user["folder"] / "fix" / "job.arm.fixed.json").read_text())
    props = fixed["resources"][0]["properties"]
    setting = (cli["late_arrival_s"], cli["out_of_order_s"], cli["over"], cli["partition_by"])
    assert setting == (
        props["eventsLateArrivalMaxDelayInSeconds"],
        props["eventsOutOfOrderMaxDelayInSeconds"],
        "deviceId",
        True,
    )
    query = (user["folder"] / "fix" / "query.asaql").read_text()
    assert "TIMESTAMP BY eventTime OVER deviceId PARTITION BY PartitionId" in query
    # the app's Findings page fix and its What-if page
    assert view.policy_after == (
        f"TIMESTAMP BY eventTime OVER deviceId, late {int(cli['late_arrival_s']) // 60}m"
        f"{int(cli['late_arrival_s']) % 60}s, out-of-order {int(cli['out_of_order_s'])}s, adjust, "
        "PARTITION BY PartitionId"
    )
    ctx_events, ctx_policy, ctx_columns = _context(user["agg"])
    page = insight.recommendation(ctx_events, ctx_policy, columns=ctx_columns)
    assert page.row["late_arrival_s"] == cli["late_arrival_s"]
    assert page.row["out_of_order_s"] == cli["out_of_order_s"]
    assert page.row["over"] == cli["over"]
    # the same numbers: adjusted, dropped, p95 delay
    assert (page.row["adjusted"], page.row["dropped"]) == (cli["adjusted"], cli["dropped"])
    assert page.row["delay_p95_s"] == pytest.approx(cli["delay_p95_s"], abs=1e-3)
    assert view.after is not None
    assert view.after["release delay p95 (s)"] == pytest.approx(cli["delay_p95_s"], abs=1e-3)
    assert view.after["late events"] + view.after["out-of-order events"] == cli["adjusted"]
    fix_md = dict(view.files)["FIX.md"].decode()
    assert f"p95 release delay {cli['delay_p95_s']:.1f} s" in fix_md
    assert "Settings that came close:" in fix_md


def test_the_findings_do_this_is_the_one_recommendation(user) -> None:
    report = jobfix.explain_folder(user["agg"])
    cli = _whatif_row(user["folder"])
    assert report.recommended is not None
    assert report.recommended.late_seconds == cli["late_arrival_s"]
    assert report.recommended.ooo_seconds == cli["out_of_order_s"]
    late = next(f for f in report.findings if f.cause is Cause.LATE_ARRIVALS)
    values = {s.kind.value: s.value_seconds for s in late.suggestions}
    assert values["late_arrival_tolerance"] == cli["late_arrival_s"]
    assert values["out_of_order_tolerance"] == cli["out_of_order_s"]


def _context(agg: Path):
    import polars as pl

    from diagnostics.appdata.build import capture_context

    ctx = capture_context(agg)
    assert ctx is not None
    return pl.read_parquet(ctx.events_path), ctx.settings.policy, ctx.settings.columns


def test_the_findings_delay_beside_a_fix_is_the_fixs_measured_delay(tmp_path) -> None:
    agg = scenario_folder(tmp_path, "late_senders")
    jobfix.save(agg, "late_senders.arm.json", (JOBS / "late_senders.arm.json").read_bytes())
    report = jobfix.explain_folder(agg)
    # with the capture the late senders are the batching senders' finding
    late = next(f for f in report.findings if f.cause is Cause.BATCHING_SENDERS)
    label, value = insight.delay_metric(late)
    view = jobfix.build_fix(agg)
    assert view is not None
    assert view.after is not None
    assert label == "Release delay p95 with the fix"
    assert value == f"{view.after['release delay p95 (s)']:,.1f} s"
    assert "Measured on the capture, the recommended setting gives a p95 release delay of" in (
        insight.impact_text(late.impact)
    )


def test_the_command_line_and_the_app_agree_on_every_number(user, capsys) -> None:
    from diagnostics.appdata.overview import kpis
    from diagnostics.appdata.store import open_aggregate
    from diagnostics.explain.readable import evidence_lines

    folder = user["folder"]
    capsys.readouterr()
    assert orderdoc(["explain", "--events", str(folder / "capture.csv"), "--job-definition",
                     str(folder / "job.arm.json"), "--format", "json"]) == 0  # fmt: skip
    cli = json.loads(capsys.readouterr().out)
    app = jobfix.explain_folder(user["agg"])
    cli_idle = next(f for f in cli["findings"] if f["cause"] == "idle_partition")
    app_idle = next(f for f in app.findings if f.cause is Cause.IDLE_PARTITION)
    assert app_idle.title == cli_idle["title"]  # "... (10 idle minutes)"
    assert app_idle.evidence["idle_minutes_total"] == cli_idle["evidence"]["idle_minutes_total"]
    assert round(app_idle.confidence, 2) == cli_idle["confidence"]
    assert ("silent partitions", "partition 3") in evidence_lines(app_idle.evidence)
    # events with data errors: each event once, as the replay's adjusted + dropped
    assert orderdoc(["replay", str(folder / "capture.csv"), "--timestamp-by", "eventTime",
                     "--out", str(folder / "replayed"), "--json"]) == 0  # fmt: skip
    counts = json.loads(capsys.readouterr().out)["counts"]
    shown = kpis(open_aggregate(user["agg"])).data_errors_text
    assert shown == f"{counts['adjusted'] + counts['dropped']:,}"
    late, ooo = (
        next(f for f in cli["findings"] if f["cause"] == c)
        for c in ("late_arrivals", "out_of_order")
    )
    assert counts["adjusted"] < late["evidence"]["events"] + ooo["evidence"]["events"]


def test_fix_md_counts_each_late_or_out_of_order_event_once(user, capsys) -> None:
    """An event both late and out of order is one event kept, as the replay counts it (the
    finding counts 605 late and 682 out of order; the replay adjusts 786 events)."""
    folder = user["folder"]
    capsys.readouterr()
    assert orderdoc(["replay", str(folder / "capture.csv"), "--timestamp-by", "eventTime",
                     "--out", str(folder / "replayed-gain"), "--json"]) == 0  # fmt: skip
    before = json.loads(capsys.readouterr().out)["counts"]
    after = _whatif_row(folder)
    assert before["dropped"] == after["dropped"] == 0
    b, a = before["adjusted"], after["adjusted"]
    fix_md = (folder / "fix" / "FIX.md").read_text()
    assert f"Gain: {b - a} of {b} late or out-of-order events ({(b - a) / b:.0%})" in fix_md


def test_each_finding_gives_one_from_clause_that_keeps_the_jobs_timestamp_by(user) -> None:
    """The idle partition's PARTITION BY and the recommendation's OVER are one FROM clause,
    the one --write-fix writes (not a second clause without TIMESTAMP BY)."""
    from diagnostics.explain.model import SnippetForm

    query = (user["folder"] / "fix" / "query.asaql").read_text()
    written = next(line for line in query.splitlines() if line.startswith("FROM "))
    for finding in jobfix.explain_folder(user["agg"]).findings:
        clauses = [s.snippet for s in finding.suggestions if s.form is SnippetForm.QUERY]
        assert len(clauses) <= 1, (finding.cause, clauses)
        for clause in clauses:
            assert clause.replace("FROM input", "FROM [input]") == written, finding.cause


def test_a_capture_replayed_without_the_jobs_name_is_named_by_the_definition_kept_beside_it(
    user,
) -> None:
    """The folder was replayed without a job name, then its definition saved: the header
    names the job the definition names, not "Job not named"."""
    from diagnostics.appdata import loaded
    from tests.whatif.usercapture import user_job

    assert loaded.job_names(user["agg"], ()) == f"Job {user_job()['resources'][0]['name']}"


def test_a_healthy_job_hears_the_same_recommendation_as_optional(tmp_path: Path) -> None:
    """No finding asks for a change on the healthy scenario: explain still says the one
    recommendation (whatif's), marked optional, and --write-fix leaves the job as it is."""
    capture = SCENARIOS / "healthy" / "capture.csv"
    job = JOBS / "healthy.resource.json"
    assert orderdoc(["whatif", str(capture), "--job-definition", str(job), "--out",
                     str(tmp_path / "wi"), "--no-png", "--no-verify"]) == 0  # fmt: skip
    cli = _whatif_row(tmp_path)
    assert orderdoc(["explain", "--events", str(capture), "--job-definition", str(job),
                     "--format", "json", "--out", str(tmp_path / "ex.json")]) == 0  # fmt: skip
    report = json.loads((tmp_path / "ex.json").read_text())
    said = report["recommended"]
    assert (said["late_arrival_seconds"], said["out_of_order_seconds"]) == (
        cli["late_arrival_s"],
        cli["out_of_order_s"],
    )
    assert said["notes"][0].startswith("optional: no finding asks for a change")
    assert orderdoc(["explain", "--events", str(capture), "--job-definition", str(job),
                     "--write-fix", str(tmp_path / "fix")]) == 0  # fmt: skip
    fixed = json.loads(next((tmp_path / "fix").glob("*.fixed.json")).read_text())
    original = json.loads(job.read_text())
    assert fixed == original
    fix_md = (tmp_path / "fix" / "FIX.md").read_text()
    assert f"late {cli['late_arrival_s']:g} s" in fix_md
    assert "optional: no finding asks for a change" in fix_md
