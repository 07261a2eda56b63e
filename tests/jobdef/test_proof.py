"""Proof that the written fix works: for each cause, the definition orderdoc writes, read back
and replayed by the engine, removes at least 90% of the events the cause produced."""

from __future__ import annotations

import json

import pytest

from diagnostics.durations import SECOND
from diagnostics.engine.columns import EventColumns
from diagnostics.engine.events_io import read_events
from diagnostics.engine.replay import declared_partitions
from diagnostics.explain import explain
from diagnostics.jobdef import job_policy, read_job_definition
from diagnostics.jobdef.plan import measure
from diagnostics.jobdef.roundtrip import fix_and_verify
from diagnostics.whatif.recommend import recommend

from .conftest import JOBS, SCENARIOS

PARTITIONS = declared_partitions(4)


def _round_trip(definition_path, scenario, tmp_path):
    job = job_policy(read_job_definition(definition_path))
    events = read_events(SCENARIOS / scenario / "capture.csv")
    report = explain(None, events=events, policy=job.policy, partitions=PARTITIONS)
    trip = fix_and_verify(
        job, report.findings, tmp_path / "fix", events=events, partitions=PARTITIONS
    )
    # Independently of the round trip: read what was written and replay the capture under it.
    written = job_policy(read_job_definition(trip.written["definition"]))
    after = measure(events, written.policy, columns=EventColumns(), partitions=PARTITIONS)
    assert after == trip.after
    return trip.fix.before, after, written


@pytest.mark.parametrize(
    ("file", "scenario"),
    [
        ("late_senders.arm.json", "late_senders"),
        ("cross_device_disorder.resource.json", "cross_device_disorder"),
    ],
)
def test_fix_removes_late_and_out_of_order_events(tmp_path, file, scenario):
    before, after, written = _round_trip(JOBS / file, scenario, tmp_path)
    assert before.targeted > 100
    assert after.targeted <= 0.1 * before.targeted
    assert after.dropped == 0
    assert after.early == before.early
    assert written.policy.over == ("device_id",)  # each sender on its own timeline


def test_fix_frees_output_held_back_by_an_idle_partition(tmp_path):
    # The sample job, with the 2-minute late tolerance a team sets for slow senders: while
    # partition 3 is silent it holds every other partition back by up to 2 minutes.
    document = json.loads((JOBS / "idle_partition.az-show.json").read_text())
    document["eventsLateArrivalMaxDelayInSeconds"] = 120
    path = tmp_path / "idle.json"
    path.write_text(json.dumps(document))
    before, after, written = _round_trip(path, "idle_partition", tmp_path)
    assert before.held_back > 500
    assert after.held_back <= 0.1 * before.held_back
    assert after.delay_p95_s < before.delay_p95_s / 10
    # the one recommendation for this capture: the capture shows no sender later than 1 s,
    # so a 1 s tolerance frees the output without PARTITION BY (which measures < 1 s less)
    events = read_events(SCENARIOS / "idle_partition" / "capture.csv")
    rec = recommend(events, written.policy, partitions=PARTITIONS)
    assert written.policy == rec.policy
    assert written.policy.late_arrival_ns == SECOND
    assert not written.policy.partition_by
    assert after.targeted == before.targeted == 0  # no event is adjusted for it
