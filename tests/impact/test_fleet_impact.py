"""Issue 10, point 10, on the fleet: impact's summary says what happened: the spread of the
errors over interior windows, the batching gateway's period, and the edge windows (the
capture's first and last minutes, the silent partition, the fast clocks' early events, the
readings stamped 2099) apart."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import polars as pl
import pytest

from diagnostics.captures.reader import read_capture
from diagnostics.engine.replay import replay
from diagnostics.impact import format_summary, measure_impact, summarize
from diagnostics.impact.edges import Edge
from diagnostics.impact.model import AggregateStep, Window, WindowKind
from diagnostics.impact.spread import find_pattern
from diagnostics.jobdef.definition import read_job_definition
from diagnostics.jobdef.job import job_policy

from ..fleet_small import SMALL_FLEET, small_fleet


@pytest.fixture(scope="module")
def replayed(tmp_path_factory):
    fleet = small_fleet(tmp_path_factory.mktemp("fleet10"))
    capture = read_capture(fleet.capture)
    job = job_policy(read_job_definition(fleet.job))
    events, policy = capture.apply(job.policy)
    return replay(events, policy, columns=capture.columns).outcomes, job


@pytest.fixture(scope="module")
def measured(replayed):
    outcomes, job = replayed
    assert job.definition.query is not None
    impact = measure_impact(outcomes, job.definition.query, job.input.name)
    return impact, summarize(impact)


def _aggregate(summary: dict, step: str, aggregate: str) -> dict:
    (row,) = [
        r
        for r in summary["interior"]["by_aggregate"]
        if (r["step"], r["aggregate"]) == (step, aggregate)
    ]
    return row


def test_the_gateway_period_is_found_in_the_partition_counts(measured):
    _, summary = measured
    counts = _aggregate(summary, "partition-counts", "events")
    pattern = counts["pattern"]
    assert pattern is not None
    assert pattern["period_seconds"] == SMALL_FLEET.gateway_period_ms / 1000 == 180
    assert pattern["period"] == "3 min"
    # every third minute high (the batch lands), the two others low
    assert pattern["high"]["phases"] == 1
    assert pattern["low"]["phases"] == 2
    assert 0.10 < pattern["high"]["median"] < 0.35
    assert -0.15 < pattern["low"]["median"] < -0.04
    assert pattern["explained"] > 0.6
    # the spread: most per-partition minutes are off by more than 5 %
    assert 0.05 < counts["median"] < 0.2
    assert counts["median"] < counts["p95"] < 0.4
    assert counts["off_share"] > 0.5


def test_the_averages_are_barely_moved_and_have_no_pattern(measured):
    _, summary = measured
    avg = _aggregate(summary, "device-stats", "avgTemperature")
    assert avg["median"] == 0
    assert avg["p95"] < 0.05
    assert avg["pattern"] is None


def test_edge_windows_are_reported_apart(measured):
    impact, summary = measured
    edges = {e["edge"]: e for e in summary["edges"]}
    assert set(edges) == {e.value for e in Edge}
    assert "partition 5" in edges["silent partition"]["what"]
    assert edges["far-off times"]["windows"] == 6 * (5 + 1)  # 2099: 5 hopping + 1 tumbling
    table = impact.table
    start = datetime(2024, 6, 3, 8, tzinfo=UTC)
    silence = (
        start + timedelta(milliseconds=SMALL_FLEET.silent_from_ms),
        start + timedelta(milliseconds=SMALL_FLEET.silent_from_ms + SMALL_FLEET.silent_for_ms),
    )
    counts = table.filter(pl.col("step") == "partition-counts")
    silent = counts.filter(pl.col("edge") == "silent partition")
    assert set(silent["keys"]) == {"PartitionId=5"}
    assert silent["window_end"].min() <= silence[0] + timedelta(minutes=1)
    assert silent["window_end"].max() >= silence[1]
    end = start + timedelta(milliseconds=SMALL_FLEET.duration_ms)
    last = counts.filter(pl.col("window_end").is_between(end, end + timedelta(days=1)))
    assert not last.is_empty()
    assert set(last["edge"]) == {"capture end"}
    # the fast clocks' (dev-120 .. dev-124) windows hold early events: apart, every one
    fast = table.filter(
        (pl.col("step") == "device-stats")
        & pl.col("keys").is_in([f"deviceId=dev-{d}" for d in range(120, 125)])
        & pl.col("edge").is_null()
        & pl.col("changed")
    )
    assert fast.is_empty()
    # the largest differences listed are interior windows
    for row in summary["largest"]:
        hit = table.filter(
            (pl.col("step") == row["step"])
            & (pl.col("keys") == row["keys"])
            & (pl.col("window_end").dt.strftime("%Y-%m-%dT%H:%M:%SZ") == row["window_end"])
        )
        assert hit["edge"].is_null().all()


def test_the_summary_says_it_and_no_largest_error(measured):
    _, summary = measured
    text = format_summary(summary)
    assert "largest relative error" not in text
    assert "100%" not in text.split("largest differences")[0]
    assert "step partition-counts, events:" in text
    assert "periodic, every 3 min: 1 window in 3 is" in text
    assert "edge windows, reported apart" in text
    assert "  silent partition:" in text
    assert "  early events:" in text


def _windows(errors: list[float], keys: int = 4, hop_s: int = 60) -> pl.DataFrame:
    """Interior rows of one aggregate: ``errors`` per window (signed), for ``keys`` keys."""
    start = datetime(2024, 6, 3, 8, tzinfo=UTC)
    rows = []
    for k in range(keys):
        for i, e in enumerate(errors):
            on_time = 100.0
            rows.append(
                {
                    "step": "s",
                    "aggregate": "n",
                    "keys": f"k={k}",
                    "window_end": start + timedelta(seconds=hop_s * (i + 1)),
                    "value_as_emitted": on_time * (1 + e),
                    "value_on_time": on_time,
                    "relative_difference": float(abs(e)),
                    "changed": bool(e != 0),
                }
            )
    return pl.DataFrame(rows)


STEP = AggregateStep("s", Window(WindowKind.TUMBLING, 60 * 10**9, 60 * 10**9), (), ())


def test_a_period_is_found_and_noise_is_not_one():
    periodic = _windows([0.25, -0.08, -0.08] * 12)
    found = find_pattern(periodic, STEP)
    assert found is not None
    assert found["period_windows"] == 3
    assert found["period"] == "3 min"
    assert found["high"]["median"] == 0.25
    assert found["low"]["median"] == -0.08
    rng = np.random.default_rng(3)
    noise = _windows(list(rng.normal(0, 0.1, 36)))
    assert find_pattern(noise, STEP) is None
    steady = _windows([0.02] * 36)  # every window a little off, the same: no period
    assert find_pattern(steady, STEP) is None
    session = AggregateStep("s", Window(WindowKind.SESSION, 60 * 10**9, 0, 0, 600 * 10**9), (), ())
    assert find_pattern(periodic, session) is None


def test_unreadable_bodies_are_not_counted_as_invalid_timestamps(replayed, measured):
    """Issue 39, point 9: a body that is not JSON is rejected by ASA's input
    (InputDeserializerError.InvalidData) before TIMESTAMP BY: impact counts it apart from
    the events without a valid application time, each event once."""
    outcomes, _ = replayed
    _, summary = measured
    no_time = outcomes["application_time"].null_count()
    assert summary["events_unreadable"] == SMALL_FLEET.non_json == 84
    assert summary["events_without_application_time"] == no_time - 84 > 0
    text = format_summary(summary)
    assert "84 events whose body the input could not read (InputDeserializerError.InvalidData)" in (
        text
    )
    unplaced = summary["events_without_application_time"]
    assert f"{unplaced:,} events without a valid application time (InvalidInputTimeStamp)" in text
