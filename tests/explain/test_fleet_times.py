"""Issue 39, points 4 and 5, on the fleet: the six readings stamped 2099 are named apart
(count, rows, senders, values) by the replay's summary, explain and the app's charts, never
as ordinary lateness; the percentiles of how early events were come from the right tail."""

from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest

from diagnostics.appdata import figures, lateness
from diagnostics.appdata import impact as results
from diagnostics.captures.far_off import FAR_GAP_NS, far_off_mask
from diagnostics.captures.reader import read_capture
from diagnostics.cli import main
from diagnostics.engine.replay import replay
from diagnostics.explain import explain
from diagnostics.explain.kind_stats import KindStats
from diagnostics.explain.time_evidence import lateness_evidence
from diagnostics.generate.fleet import FAR_OFF_MS, device_name, fleet_events
from diagnostics.jobdef.definition import read_job_definition
from diagnostics.jobdef.job import job_policy

from ..fleet_small import SMALL_FLEET, small_fleet


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    return small_fleet(tmp_path_factory.mktemp("fleet4"))


@pytest.fixture(scope="module")
def replayed(fleet):
    capture = read_capture(fleet.capture)
    policy = job_policy(read_job_definition(fleet.job)).policy
    events, applied = capture.apply(policy)
    return events, applied, capture, replay(events, applied, columns=capture.columns)


def far_devices() -> list[str]:
    """The senders of the readings the generator stamped 2099."""
    events = fleet_events(SMALL_FLEET)
    return sorted({device_name(d) for d in events.device[events.event_ms >= FAR_OFF_MS]})


def test_the_rule_is_the_arrivals_rule():
    day, rest = FAR_GAP_NS, np.arange(1_000, dtype=np.int64) * 10**9
    values = np.r_[rest, rest[-1] + 75 * 365 * day, rest[0] - 3 * day]
    far, low, high = far_off_mask(values)
    assert far.tolist() == [False] * 1_000 + [True, True]
    assert (low, high) == (int(rest[0]), int(rest[-1]))
    # two busy stretches a day and more apart are both data, not far off
    twice = np.r_[rest, rest + 2 * day]
    assert not far_off_mask(twice)[0].any()


def test_replay_summary_names_the_far_off_times(fleet, tmp_path, capsys):
    args = ["replay", str(fleet.capture), "--job-definition", str(fleet.job)]
    assert main([*args, "--out", str(tmp_path / "r"), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    far = summary["far_off_application_times"]
    assert far["events"] == SMALL_FLEET.far_off == 6
    assert far["column"] == "eventTime"
    assert far["device_column"] == "deviceId"
    assert len(far_devices()) == 6  # six readings, six senders
    assert set(far["devices"]) < set(far_devices())  # the first five named, then "..."
    assert len(far["devices"]) == 5
    assert len(far["rows"]) == 5
    assert all(v.startswith("2099-") for v in far["values"])
    assert far["fate"] == "dropped as early (EarlyInputEvent)"
    outcomes = pl.read_parquet(tmp_path / "r" / "outcomes.parquet")
    for row, value in zip(far["rows"], far["values"], strict=True):
        assert outcomes["eventTime"][row - 1] == value
    assert any("6 events are far off the others" in w for w in summary["warnings"])
    # and in the text summary, one line per event as far-off arrivals are said
    assert main([*args, "--out", str(tmp_path / "r2")]) == 0
    text = capsys.readouterr().out
    assert "warning     application time 'eventTime': 6 events are far off the others" in text
    assert text.count("is 74 years after the others") == 5
    assert "1 more far-off value" in text


def test_explain_names_them_apart_from_how_early(replayed):
    events, policy, capture, _ = replayed
    report = explain(None, events=events, policy=policy, columns=capture.columns)
    by_cause = {f.cause.value: f for f in report.findings}
    # the fast clocks are 420 s ahead: their own finding says so, none of its figures is 74 years
    fast = by_cause["fast_clocks"].evidence["early_by"]
    for name in ("p50_seconds", "p99_9_seconds", "max_seconds"):
        assert 400 < fast[name] < 425, (name, fast)
    # the general early finding keeps the events no group names: the six far-off readings,
    # named apart and left out of how early
    early = by_cause["early_arrivals"].evidence["early_by"]
    assert early["far_off"]["events"] == 6
    assert all(v.startswith("2099-") for v in early["far_off"]["values"])
    assert early.get("max_seconds") is None
    from diagnostics.explain import render

    text = render(report, "text")
    assert "6 events with an application time far off the others" in text
    assert "days)" not in text.split("early by:")[1].split("\n   impact")[0]


def test_early_percentiles_come_from_the_earliest_tail():
    """How early: the 95th percentile is of the earliest 5 %; how late: of the latest 5 %."""
    seconds = np.arange(1, 1001, dtype=np.float64)
    late = KindStats(events=1000, lateness=seconds, weights=np.ones(1000), exact=True)
    early = KindStats(events=1000, lateness=-seconds, weights=np.ones(1000), exact=True)
    got_late = lateness_evidence(late)
    got_early = lateness_evidence(early, sign=-1.0)
    for got in (got_late, got_early):
        assert got["p50_seconds"] == 500
        assert got["p95_seconds"] == 950
        assert got["p99_9_seconds"] == 999
        assert got["max_seconds"] == 1000
        assert (
            got["p50_seconds"] <= got["p95_seconds"] <= got["p99_9_seconds"] <= got["max_seconds"]
        )
    # weights count: 10 events at 1 s early and one at 100 s early
    weighted = KindStats(
        events=11, lateness=np.array([-1.0, -100.0]), weights=np.array([10.0, 1.0]), exact=True
    )
    got = lateness_evidence(weighted, sign=-1.0)
    assert got["p50_seconds"] == 1
    assert got["p95_seconds"] == 100
    assert got["max_seconds"] == 100


def test_fleet_early_and_late_tails(replayed):
    events, policy, capture, _ = replayed
    report = explain(None, events=events, policy=policy, columns=capture.columns)
    by_cause = {f.cause.value: f for f in report.findings}
    early = by_cause["fast_clocks"].evidence["early_by"]
    late = by_cause["batching_senders"].evidence["lateness"]
    for got in (early, late):
        assert got["p50_seconds"] <= got["p99_9_seconds"] <= got["max_seconds"]
    # the earliest tail: the fast clocks are about 420 s ahead, the largest the most ahead
    assert early["max_seconds"] - early["p50_seconds"] < 5
    # the latest tail: the gateway's 180 s batches
    assert 170 <= late["max_seconds"] <= 185


def test_lateness_charts_clip_to_the_bulk(replayed):
    _, _, _, result = replayed
    frame = lateness.from_outcomes(result.outcomes, "partition")
    span = lateness.bulk(frame)
    assert span is not None
    assert span.outside == 6
    assert -430 < span.low < -400
    assert 170 < span.high < 190
    fig = figures.lateness_ecdf(lateness.ecdf(frame), 10.0, span)
    low, high = fig.layout.xaxis.range
    assert -460 < low < span.low
    assert span.high < high < 220
    assert "6 events outside the chart" in fig.layout.title.text
    hist = figures.lateness_histogram(frame, 10.0, span=span)
    drawn = [x for trace in hist.data if trace.type == "histogram" for x in trace.x]
    assert len(drawn) == frame.height - 6
    assert min(drawn) > -430
    assert "6 events outside the chart" in hist.layout.title.text
    # without far-off values nothing is clipped or said
    ordinary = frame.filter(pl.col("lateness_seconds") > -1e6)
    assert lateness.bulk(ordinary) is None
    plain = figures.lateness_ecdf(lateness.ecdf(ordinary), 10.0, lateness.bulk(ordinary))
    assert plain.layout.xaxis.range is None
    assert "outside" not in plain.layout.title.text


def test_results_chart_leaves_far_off_windows_out(replayed):
    _, policy, _, result = replayed
    query = (
        "SELECT deviceId, COUNT(*) AS readings INTO o FROM telemetry TIMESTAMP BY eventTime "
        "GROUP BY deviceId, TumblingWindow(minute, 1)"
    )
    measured = results.compare(result.outcomes, query, "telemetry", policy)
    far = result.outcomes.filter(pl.col("eventTime").str.starts_with("2099"))
    device = far["deviceId"][0]
    series = results.series(measured.table, "o", "readings", f"deviceId={device}")
    assert series["window_end"].dt.year().max() == 2099
    fig = results.figure(series, f"readings deviceId={device}")
    years = {x.year for trace in fig.data for x in trace.x}
    assert years == {2024}
    assert "1 window outside the chart" in fig.layout.title.text


def test_the_app_overview_names_them(replayed, tmp_path):
    """The app's replay of the fleet says on the Overview what the replay's summary says."""
    from diagnostics.aggregates import read_summary
    from diagnostics.appdata.build import CaptureSettings, build_from_capture

    events, policy, capture, _ = replayed
    out = tmp_path / "agg"
    build_from_capture(events, CaptureSettings(policy, capture.columns), out)
    said = read_summary(out)["capture_warnings"]
    assert any("6 events are far off the others" in line for line in said)
    assert sum("is 74 years after the others" in line for line in said) == 5
