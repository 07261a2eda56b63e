"""The production-shaped fleet: each injected cause is where its settings put it, the Capture
folder is what Capture writes, and the logs hold two jobs and a lifecycle record."""

from __future__ import annotations

import json
from pathlib import Path

import fastavro
import numpy as np
import polars as pl
import pytest

from diagnostics.cli import main
from diagnostics.errors import UsageError
from diagnostics.generate.fleet import (
    FAR_OFF_MS,
    FleetConfig,
    bodies,
    device_name,
    fleet_events,
    groups,
)
from diagnostics.generate.fleet_files import BILLING_JOB, TELEMETRY_JOB

SMALL = FleetConfig(
    events=30_000, duration_ms=40 * 60_000, silent_from_ms=5 * 60_000, silent_for_ms=10 * 60_000
)


@pytest.fixture(scope="module")
def events():
    return fleet_events(SMALL)


def test_groups_are_the_configured_devices():
    found = groups(FleetConfig())
    assert found["batching_gateway"] == tuple(range(40, 60))
    assert found["fast_clocks"] == tuple(range(120, 125))
    assert found["slow_clocks"] == tuple(range(160, 165))
    assert found["us_times"] == (78,)


def test_clock_offsets_and_far_off(events):
    offset = events.event_ms - events.true_ms
    found = groups(SMALL)
    far = events.event_ms >= FAR_OFF_MS
    assert int(far.sum()) == SMALL.far_off
    fast = np.isin(events.device, found["fast_clocks"]) & ~far
    slow = np.isin(events.device, found["slow_clocks"]) & ~far
    assert set(offset[fast].tolist()) == {SMALL.fast_by_ms}
    assert set(offset[slow].tolist()) == {-SMALL.slow_by_ms}
    assert set(offset[~fast & ~slow & ~far].tolist()) == {0}


def test_batching_gateway_is_a_sawtooth(events):
    batched = np.isin(events.device, groups(SMALL)["batching_gateway"])
    lateness = events.arrival_ms[batched] - events.true_ms[batched]
    assert lateness.min() >= 0
    assert lateness.max() <= SMALL.gateway_period_ms + 3_000
    # flushes: arrivals cluster in a few distinct moments a period apart
    flushes = np.unique(events.arrival_ms[batched] // 10_000)
    assert len(flushes) <= 2 * (SMALL.duration_ms // SMALL.gateway_period_ms + 2)
    others = events.arrival_ms[~batched] - events.true_ms[~batched]
    assert others.max() < 1_000


def test_silent_partition_and_order(events):
    p = events.partition == SMALL.silent_partition
    begin = SMALL.start_ms + SMALL.silent_from_ms
    inside = (events.arrival_ms >= begin) & (events.arrival_ms < begin + SMALL.silent_for_ms)
    assert not (p & inside).any()
    assert (~p & inside).any()
    key = events.partition * 10**13 + events.arrival_ms
    assert (np.diff(key) >= 0).all()


def test_bodies_have_each_bad_time(events):
    texts = [b.decode() for b in bodies(events)]
    assert sum(not t.endswith("}") for t in texts) == SMALL.non_json
    parsed = [json.loads(t) for t in texts if t.endswith("}")]
    assert sum("eventTime" not in b for b in parsed) >= SMALL.missing_times - SMALL.non_json
    assert sum(b.get("eventTime", "") is None for b in parsed) >= 1
    us = [b["eventTime"] for b in parsed if b["deviceId"] == device_name(78) and b.get("eventTime")]
    assert any(t.endswith((" AM", " PM")) for t in us)
    assert 120 <= np.mean([len(t) for t in texts]) <= 180


def test_config_is_checked():
    with pytest.raises(UsageError, match="fast_clocks"):
        FleetConfig(fast_first=45)  # inside the batching gateway's devices
    with pytest.raises(UsageError, match="silent_partition"):
        FleetConfig(partitions=4)
    with pytest.raises(UsageError, match="number of events"):
        FleetConfig(events=0)


def test_fleet_folder(tmp_path: Path, capsys):
    out = tmp_path / "fleet"
    assert main(["generate", "fleet", "--out", str(out), "--events", "20000", "--logs"]) == 0
    said = capsys.readouterr().out
    assert "Event Hubs Capture files" in said
    assert "logs in" in said
    files = sorted((out / "capture").rglob("*.avro"))
    counts = []
    for path in files:
        with path.open("rb") as handle:
            reader = fastavro.reader(handle)
            records = list(reader)
        counts.append(len(records))
        if records:
            record = records[0]
            assert set(record["SystemProperties"]) >= {"x-opt-enqueued-time", "x-opt-offset"}
            assert record["Properties"]["content-type"] == "application/json"
            assert record["EnqueuedTimeUtc"].endswith(("AM", "PM"))
    assert sum(counts) > 19_000
    assert 0 in counts  # the silent partition's empty files
    job = json.loads((out / "job.arm.json").read_text())
    props = job["resources"][0]["properties"]
    assert props["eventsLateArrivalMaxDelayInSeconds"] == 10
    assert props["eventsOutOfOrderMaxDelayInSeconds"] == 3
    logs = list((out / "logs").rglob("PT1H.json"))
    records = [json.loads(line) for p in logs for line in p.read_text().splitlines()]
    jobs = {r["resourceId"].rsplit("/", 1)[1] for r in records}
    assert jobs == {TELEMETRY_JOB.upper(), BILLING_JOB.upper()}
    [start] = [r for r in records if r["category"] == "Authoring"]
    assert start["operationName"] == "Start Stream Analytics Job"
    assert set(json.loads(start["properties"])) == {"Error", "Message", "Type", "Correlation ID"}
    kinds = pl.Series(
        [r["properties"].get("DataErrorType") for r in records if r["category"] == "Execution"]
    ).value_counts()
    assert {"LateInputEvent", "EarlyInputEvent", "InvalidInputTimeStamp"} <= set(
        kinds.to_series(0).drop_nulls().to_list()
    )
    assert all("/y=2024/m=06/d=03/h=" in str(p) for p in logs)


def test_fleet_out_must_be_empty(tmp_path: Path, capsys):
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "f").write_text("")
    assert main(["generate", "fleet", "--out", str(tmp_path / "x"), "--events", "100"]) == 2
    assert "not an empty folder" in capsys.readouterr().err
