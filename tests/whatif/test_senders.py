"""The sender column is chosen on evidence (diagnostics.whatif.senders): Capture's system
columns never, a column with about one value per event never, a counter or a measurement
never (their values mix senders' lateness); the same rule gives explain's sender column and
the recommender's OVER candidates."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import polars as pl
import pytest

from diagnostics.engine.policy import OrderingPolicy
from diagnostics.generate.fleet import FleetConfig
from diagnostics.whatif.recommend import default_over_sets
from diagnostics.whatif.senders import (
    MIN_CONSISTENCY,
    LeftOut,
    choose_senders,
    consistency,
    lateness_seconds,
    sender_choice,
)
from tests.fleet_tables import COLUMNS, TIMESTAMP_BY, fleet_table

POLICY = OrderingPolicy(timestamp_by=TIMESTAMP_BY)
SYSTEM = ("SequenceNumber", "Offset", "Properties", "SystemProperties", "Body")
START = datetime(2024, 6, 3, 8, tzinfo=UTC)


@pytest.mark.parametrize(
    ("seed", "events", "minutes"), [(0, 20_000, 120), (1, 60_000, 120), (2, 30_000, 40)]
)
def test_the_fleets_sender_column_is_the_device(seed: int, events: int, minutes: int) -> None:
    config = FleetConfig(
        events=events,
        seed=seed,
        duration_ms=minutes * 60_000,
        silent_from_ms=minutes * 60_000 // 4,
        silent_for_ms=minutes * 60_000 // 4,
    )
    table = fleet_table(config)
    choice = sender_choice(table, POLICY, COLUMNS)
    assert choice.column == "deviceId"
    assert choice.reason.startswith("chosen on evidence")
    # Capture's system columns and the counters are never senders nor OVER candidates
    assert set(choice.over_columns).isdisjoint({*SYSTEM, "msgSeq", "battery"})
    why = dict(choice.left_out)
    assert {why[name] for name in SYSTEM} == {LeftOut.SYSTEM.value}
    assert why["msgSeq"] == why["battery"] == LeftOut.MIXED.value
    assert "SequenceNumber, Offset, Properties, SystemProperties and Body (system columns)" in (
        choice.reason
    )
    # the recommender tries the same columns, the chosen one first
    over = default_over_sets(table, POLICY, COLUMNS, 3)
    assert over[0] == ("deviceId",)
    assert [k for (k,) in over] == list(choice.over_columns[:3])


def _fleet_like(rng: np.random.Generator, n: int = 4_000) -> pl.DataFrame:
    """20 devices on 2 partitions, each with its own clock lag (0-60 s), a per-device
    message counter and a unique event id."""
    device = rng.integers(0, 20, n)
    sent = np.sort(rng.uniform(0, 3_600, n))
    lag = np.linspace(0, 60, 20)[device] + rng.uniform(0.05, 0.3, n)
    order = np.argsort(sent + lag, kind="stable")
    device, sent, lag = device[order], sent[order], lag[order]
    counter = np.zeros(n, dtype=np.int64)
    for d in range(20):
        mine = np.flatnonzero(device == d)
        counter[mine] = np.arange(mine.size)
    return pl.DataFrame(
        {
            "eventId": np.arange(n),
            "unit": [f"u{d:02d}" for d in device],
            "msgSeq": counter,
            "PartitionId": device % 2,
            "eventTime": [START + timedelta(seconds=float(s)) for s in sent],
            "EventEnqueuedUtcTime": [
                START + timedelta(seconds=float(s + g)) for s, g in zip(sent, lag, strict=True)
            ],
        }
    )


def test_an_id_or_a_counter_is_never_a_sender_whatever_its_name() -> None:
    frame = _fleet_like(np.random.default_rng(3)).rename({"msgSeq": "deviceSeq"})
    choice = sender_choice(frame, POLICY, COLUMNS)
    # not named like a sender, chosen on evidence: each unit's lateness is its own
    assert choice.column == "unit"
    assert choice.reason.startswith("chosen on evidence")
    why = dict(choice.left_out)
    assert why["eventId"] == LeftOut.ONE_PER_EVENT.value
    # named like a sender, but its values mix every sender's lateness
    assert why["deviceSeq"] == LeftOut.MIXED.value
    assert choice.over_columns == ("unit",)


def test_a_column_that_follows_the_partition_is_not_a_sender() -> None:
    """Each partition has its own network delay; a column that only says the partition
    (``region``) is no sender, and devices that are all equally punctual are chosen by name."""
    rng = np.random.default_rng(5)
    n = 3_000
    device = rng.integers(0, 12, n)
    part = device % 3
    sent = np.sort(rng.uniform(0, 1_800, n))
    arrival = sent + np.array([0.05, 0.3, 0.45])[part] + rng.uniform(0, 0.1, n)
    frame = pl.DataFrame(
        {
            "deviceId": [f"d{d}" for d in device],
            "region": [f"r{p}" for p in part],
            "partition": part,
            "ts": sent,
            "arr": arrival,
        }
    )
    lateness = pl.Series(arrival - sent)
    choice = choose_senders(frame, lateness, ("ts", "arr", "partition"), frame["partition"])
    assert choice.column == "deviceId"
    assert choice.reason.startswith("chosen by its name")
    assert "region" not in choice.over_columns
    assert consistency(frame["region"], lateness.rank(), frame["partition"]) == 0.0


def test_consistency_is_high_for_constant_offsets_and_none_for_mixed_values() -> None:
    rng = np.random.default_rng(9)
    keys = pl.Series(rng.integers(0, 10, 5_000))
    own = keys.cast(pl.Float64) * 5 + pl.Series(rng.uniform(0, 0.5, 5_000))
    noise = pl.Series(rng.uniform(0, 50, 5_000))
    assert consistency(keys, own.rank()) > 0.95
    assert abs(consistency(keys, noise.rank()) or 0.0) < 0.05
    assert consistency(keys, noise.rank()) < MIN_CONSISTENCY


def test_without_times_the_name_decides() -> None:
    frame = _fleet_like(np.random.default_rng(1)).rename({"unit": "sensorName"})
    choice = choose_senders(frame, None, ("eventTime", "EventEnqueuedUtcTime", "PartitionId"))
    assert choice.column == "sensorName"
    assert choice.reason.startswith("chosen by its name: the lateness cannot tell")
    late = lateness_seconds(
        frame["EventEnqueuedUtcTime"].cast(pl.Datetime("ns", "UTC")),
        frame["eventTime"].cast(pl.Datetime("ns", "UTC")),
    )
    assert late.min() > 0  # and with them, the evidence decides the same
    assert choose_senders(frame, late, ("eventTime",), frame["PartitionId"]).column == "sensorName"


def test_a_large_capture_is_measured_at_a_stride_with_the_same_choice(monkeypatch) -> None:
    """Rules 3 and 4 read a large capture at an even stride: the same column, the same OVER
    candidates, and rule 2 still counts every event."""
    import diagnostics.whatif.senders as senders

    table = fleet_table(FleetConfig(events=40_000, seed=3))
    whole = sender_choice(table, POLICY, COLUMNS)
    monkeypatch.setattr(senders, "MEASURED_EVENTS", 5_000)
    assert senders.measured_stride(table.height) == 8
    strided = sender_choice(table, POLICY, COLUMNS)
    assert strided.column == whole.column == "deviceId"
    assert strided.over_columns == whole.over_columns
    assert [c.values for c in strided.candidates] == [c.values for c in whole.candidates]
    assert [round(c.per_value) for c in strided.candidates] == [
        round(c.per_value) for c in whole.candidates
    ]
    assert dict(strided.left_out) == dict(whole.left_out)
