"""The app on a two-job log folder (the fleet's telemetry and billing jobs): one job scope,
chosen in the sidebar, for every page; the jobs with findings first; on each page, each job's
numbers are those of ``orderdoc explain AGG --job NAME`` and of the job's aggregate rows
(issue 39, point 11; issue 42, the Partitions page's job).

The expected numbers come from the command line's JSON report and the aggregate tables, not
from the app's code."""

from __future__ import annotations

import json

import polars as pl
import pytest

from diagnostics.cli import main
from diagnostics.kinds import Severity
from tests.app.conftest import figures, metrics, traces
from tests.fleet_logs import BILLING, TELEMETRY, FleetLogs, build

pytestmark = pytest.mark.timeout(900)

TILES = {
    "LateInputEvent": ("Late events", "late_arrivals"),
    "OutOfOrderEvent": ("Out-of-order events", "out_of_order"),
    "EarlyInputEvent": ("Early events", "early_arrivals"),
    "InvalidInputTimeStamp": ("Invalid timestamps", "invalid_timestamps"),
}


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> FleetLogs:
    return build(tmp_path_factory.mktemp("fleet"))


@pytest.fixture(scope="module")
def cli(fleet: FleetLogs) -> dict[str, dict]:
    """``orderdoc explain AGG --job NAME --format json`` of each job."""
    import contextlib
    import io

    reports = {}
    for job in (TELEMETRY, BILLING):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            assert main(["explain", str(fleet.agg), "--job", job, "--format", "json"]) == 0
        reports[job] = json.loads(out.getvalue())
    return reports


@pytest.fixture(scope="module")
def rows(fleet: FleetLogs) -> pl.DataFrame:
    return pl.read_parquet(fleet.agg / "data_errors" / "part-0.parquet")


def expected_order(cli: dict[str, dict]) -> list[str]:
    """The jobs with findings first: the worst severity, then the events affected."""
    ranks = {"critical": 2, "warning": 1, "info": 0}

    def key(job: str) -> tuple[int, float, str]:
        found = [f for f in cli[job]["findings"] if f["cause"] != "healthy"]
        worst = max((ranks[f["severity"]] for f in found), default=-1)
        events = sum(f["impact"]["events_affected"] for f in found)
        return -worst, -events, job

    return sorted(cli, key=key)


def choose(at: object, job: str) -> None:
    at.sidebar.selectbox(key="job_scope").set_value(job).run()  # type: ignore[attr-defined]
    assert not at.exception, [e.value for e in at.exception]  # type: ignore[attr-defined]


def test_the_sidebar_offers_the_jobs_with_findings_first(open_app, fleet, cli) -> None:
    at = open_app("Partitions", fleet.agg)
    order = expected_order(cli)
    box = at.sidebar.selectbox(key="job_scope")
    assert box.options == [*order, "All jobs"]
    assert box.value == order[0]  # every page opens on it, the Partitions page too
    assert Severity.CRITICAL.value in {f["severity"] for f in cli[order[0]]["findings"]}


@pytest.mark.parametrize("job", [TELEMETRY, BILLING])
def test_each_page_shows_the_jobs_numbers(open_app, fleet, cli, rows, job) -> None:
    report = cli[job]
    found = {f["cause"]: f for f in report["findings"]}
    own = rows.filter(pl.col("job") == job)
    at = open_app("Overview", fleet.agg)
    choose(at, job)
    shown = metrics(at)
    for kind, (tile, cause) in TILES.items():
        events = int(own.filter(pl.col("kind") == kind)["event_count"].sum())
        if not events:
            assert tile not in shown, tile
            continue
        assert shown[tile] == f"{events:,}", tile
        assert found[cause]["impact"]["events_affected"] == events, cause
    idle = found.get("idle_partition")
    warnings = " ".join(w.value for w in at.warning)
    if idle is None:
        assert "Idle:" not in warnings
    else:
        assert f"Idle: partition {idle['evidence']['idle_partitions'][0]}" in warnings
    (top,) = [m for m in at.markdown if m.value.startswith("### ")]
    assert top.value == f"### {report['findings'][0]['title']}"

    # Findings: the command line's findings, in its order, with its numbers
    at.sidebar.radio(key="page").set_value("Findings").run()
    titles = [h.value for h in at.subheader]
    assert titles == [
        f"{i}. Job {job}: {f['title']}" for i, f in enumerate(report["findings"], start=1)
    ]
    said = " ".join(c.value for c in at.caption)
    assert "Tolerances: job " + job + ": tolerances not given, ASA's defaults assumed" in said
    assert "--" not in said  # the app says how to give them in its own words
    assert "upload the job's definition with the logs on the Load page" in said
    evidence = " ".join(str(v) for frame in at.dataframe for v in frame.value["value"])
    assert "5 s (ASA's default, assumed; the job's own was not given: upload" in evidence
    assert "--job-definition" not in evidence

    # Lateness: the job's example events only, every one with its partition
    at.sidebar.radio(key="page").set_value("Lateness").run()
    table = at.dataframe[0].value
    timed = own.filter(pl.col("lateness_seconds").is_not_null())
    assert int(table["events"].sum()) == int(timed["event_count"].sum())
    assert "unknown" not in set(table["group"])
    assert "5 s (ASA's default, assumed" in " ".join(c.value for c in at.caption)

    # Partitions: the job's idle episodes (the telemetry job's partition 5), or none
    at.sidebar.radio(key="page").set_value("Partitions").run()
    if idle is None:
        assert "No idle episodes" in at.success[0].value
    else:
        bars = traces(figures(at)[0])["idle"]
        assert set(bars["y"]) == {f"partition {p}" for p in idle["evidence"]["idle_partitions"]}
        partitions = at.dataframe[0].value
        assert (
            partitions.loc[partitions["idle_episodes"] > 0, "partition_id"].tolist()
            == (idle["evidence"]["idle_partitions"])
        )


def test_all_jobs_shows_the_folder_and_the_job_events(open_app, fleet, rows) -> None:
    at = open_app("Overview", fleet.agg)
    summary = json.loads((fleet.agg / "summary.json").read_text())
    choose(at, TELEMETRY)
    # the portal's "Start Job" (the Authoring log) on the telemetry job's timeline
    (fig,) = figures(at)
    events = traces(fig)["job events"]
    assert len(events["x"]) == 1
    assert events["text"][0].startswith("start (Succeeded): Start Stream Analytics Job")
    assert metrics(at)["Quarantined records"] == "0"  # the lifecycle record is not quarantined
    choose(at, "All jobs")
    shown = metrics(at)
    late = summary["events_by_kind"]["LateInputEvent"]
    assert shown["Late events"] == f"{late:,}"
    assert late == int(rows.filter(pl.col("kind") == "LateInputEvent")["event_count"].sum())
    assert "Jobs BILLING-AGG, FLEET-TELEMETRY" in at.caption[0].value
