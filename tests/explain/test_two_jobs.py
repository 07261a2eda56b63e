"""Two jobs in one log folder (the fleet's telemetry and billing jobs): each finding once, a
job definition applies to the job it names only, and tolerances not given are shown as ASA's
defaults, assumed, with how to give the real ones (issue 39, points 6 and 7)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from diagnostics.cli import main
from diagnostics.explain import explain, render
from diagnostics.explain.model import Cause
from tests.fleet_logs import BILLING, TELEMETRY, FleetLogs, build

ASSUMED_LATE = "5 s (ASA's default, assumed; the job's own was not given: pass --job-definition, or --late-arrival and --out-of-order)"  # fmt: skip


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> FleetLogs:
    return build(tmp_path_factory.mktemp("fleet"))


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    assert main(["explain", *argv, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_each_finding_once_per_job(fleet: FleetLogs) -> None:
    report = explain(fleet.agg)
    keys = Counter((f.job, f.cause) for f in report.findings)
    assert keys, "the fleet's logs have findings"
    assert max(keys.values()) == 1, keys
    assert {job for job, _ in keys} == {TELEMETRY, BILLING}
    for job in (TELEMETRY, BILLING):
        assert (job, Cause.LATE_ARRIVALS) in keys
        assert (job, Cause.OUT_OF_ORDER) in keys
    # each job's out-of-order finding (a consequence of its late arrivals) right after its own
    for i, f in enumerate(report.findings):
        if f.cause is Cause.OUT_OF_ORDER and f.impact.get("consequence_of"):
            before = report.findings[i - 1]
            assert (before.job, before.cause) == (f.job, Cause.LATE_ARRIVALS)
    text = render(report, "text")
    titles = [line for line in text.splitlines() if line[:1].isdigit()]
    assert len(titles) == len(report.findings) == len(set(titles))


def test_a_job_definition_applies_to_the_job_it_names(
    fleet: FleetLogs, capsys: pytest.CaptureFixture[str]
) -> None:
    report = run(capsys, str(fleet.agg), "--job-definition", str(fleet.job))
    late = {f["job"]: f for f in report["findings"] if f["cause"] == "late_arrivals"}
    ooo = {f["job"]: f for f in report["findings"] if f["cause"] == "out_of_order"}
    # the telemetry job's definition: late 10 s, out-of-order 3 s, for that job only
    assert late[TELEMETRY]["evidence"]["current_late_tolerance_seconds"] == 10
    assert late[TELEMETRY]["title"].endswith("the late-arrival tolerance (10 s)")
    assert "tolerances_assumed" not in late[TELEMETRY]["evidence"]
    assert ooo[TELEMETRY]["evidence"]["current_out_of_order_tolerance_seconds"] == 3
    # the billing job keeps what its logs say: ASA's defaults, assumed
    assert late[BILLING]["evidence"]["current_late_tolerance_seconds"] == 5
    assert late[BILLING]["title"].endswith(
        "the late-arrival tolerance (5 s, ASA's default, assumed)"
    )
    assert late[BILLING]["evidence"]["tolerances_assumed"] is True
    assert ooo[BILLING]["evidence"]["current_out_of_order_tolerance_seconds"] == 0
    assert report["tolerances"] == [
        f"job {TELEMETRY}: the policy above, from its job definition",
        f"job {BILLING}: tolerances not given, ASA's defaults assumed (late arrival 5 s, out of "
        "order 0 s, Adjust); pass --job-definition, or --late-arrival and --out-of-order",
    ]
    assert "(from job fleet-telemetry" in report["policy"]
    # the same with the name in another casing: Azure's job names ignore case
    named = run(
        capsys, str(fleet.agg), "--job-definition", str(fleet.job), "--job", "Fleet-Telemetry"
    )
    (finding,) = [f for f in named["findings"] if f["cause"] == "late_arrivals"]
    assert finding["evidence"]["current_late_tolerance_seconds"] == 10


def test_a_definition_of_another_job_is_refused_naming_the_jobs(
    fleet: FleetLogs, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    template = json.loads(fleet.job.read_text())
    template["resources"][0]["name"] = "orders-job"
    other = tmp_path / "orders.arm.json"
    other.write_text(json.dumps(template))
    assert main(["explain", str(fleet.agg), "--job-definition", str(other)]) == 2
    err = capsys.readouterr().err
    assert "the job definition names job 'orders-job', which is not in the aggregate folder" in err
    assert (
        f"its jobs: {BILLING}, {TELEMETRY}); give the definition of one of them, or name the job to read with it (use --job)"
        in err
    )
    assert err.count("\n") == 1


def test_from_logs_alone_every_tolerance_shown_is_marked_assumed(
    fleet: FleetLogs, capsys: pytest.CaptureFixture[str]
) -> None:
    report = run(capsys, str(fleet.agg))
    assert len(report["tolerances"]) == 2  # both jobs: ASA's defaults, assumed
    text = render(explain(fleet.agg), "text")
    assert "late-arrival tolerance now: 5 s\n" not in text
    assert "out-of-order tolerance now: 0 s\n" not in text
    assert f"late-arrival tolerance now: {ASSUMED_LATE}"[:60] in text
    (idle,) = [f for f in report["findings"] if f["cause"] == "idle_partition"]
    assert idle["job"] == TELEMETRY
    assert idle["evidence"]["idle_partitions"] == [5]
    assert idle["impact"]["delay"] == f"the late-arrival tolerance: {ASSUMED_LATE}"
    for finding in report["findings"]:
        evidence = finding["evidence"]
        shows = {"current_late_tolerance_seconds", "current_out_of_order_tolerance_seconds"}
        if shows & set(evidence):
            assert evidence["tolerances_assumed"] is True, finding["title"]


def test_a_capture_goes_with_the_logs_of_the_job_it_is_the_input_of(fleet: FleetLogs) -> None:
    """A capture is one job's input: with a folder of several jobs, the job definition (or
    --job) says which job's logs go with it; without either it is a one-line error."""
    import polars as pl

    from diagnostics.engine.policy import OrderingPolicy
    from diagnostics.errors import UsageError
    from diagnostics.explain import _capture_job
    from diagnostics.explain.evidence import jobs_in

    names = jobs_in(fleet.agg)
    assert _capture_job(fleet.agg, names, "Fleet-Telemetry") == TELEMETRY
    events = pl.DataFrame({"t": ["2024-06-03T08:00:00Z"]})
    with pytest.raises(UsageError, match=r"holds several jobs .* name the job whose logs go"):
        explain(fleet.agg, events=events, policy=OrderingPolicy(timestamp_by="t"))


def test_a_definition_naming_no_job_needs_the_job_with_several(
    fleet: FleetLogs, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shown = json.loads(fleet.job.read_text())["resources"][0]
    resource = {
        "type": "Microsoft.StreamAnalytics/streamingjobs",
        "properties": shown["properties"],
    }
    unnamed = tmp_path / "unnamed.json"  # the portal's JSON view without its name
    unnamed.write_text(json.dumps(resource))
    assert main(["explain", str(fleet.agg), "--job-definition", str(unnamed)]) == 2
    err = capsys.readouterr().err
    assert (
        "names no job and the aggregate folder holds several: name the job it is the definition of (use --job)"
        in err
    )
    report = run(capsys, str(fleet.agg), "--job-definition", str(unnamed), "--job", TELEMETRY)
    (late,) = [f for f in report["findings"] if f["cause"] == "late_arrivals"]
    assert late["evidence"]["current_late_tolerance_seconds"] == 10
