"""The recommender's budget counts only the events a setting can change: events early beyond
ASA's fixed 5-minute window and events without a valid time are dropped whatever the
setting ("unsaveable"), reported apart with their own fix, and the budget is taken over the
rest (issue 39, point 3).

The issue's probe, built with the fleet generator (docs/explain.md, "The budget and the
events no setting can keep"): 144,000 readings of 120 devices on 8 partitions over two
hours, one device uploading in batches every 120 s (0.83 % of the events late by up to
about 2 minutes), nothing else wrong; then the same with two devices' clocks 420 s fast
(1.67 % of the events early)."""

from __future__ import annotations

from dataclasses import replace

import polars as pl
import pytest

from diagnostics.durations import SECOND
from diagnostics.engine.policy import OrderingPolicy
from diagnostics.engine.replay import replay
from diagnostics.generate.fleet import FleetConfig
from diagnostics.whatif.choices import clauses, unsaveable_note
from diagnostics.whatif.recommend import recommend
from diagnostics.whatif.rule import DEFAULT_RULE
from diagnostics.whatif.sweep import sweep
from tests.fleet_tables import COLUMNS, TIMESTAMP_BY, fleet_table

#: The fleet job's policy (late 10 s, out-of-order 3 s, Adjust).
POLICY = OrderingPolicy(
    timestamp_by=TIMESTAMP_BY, late_arrival_ns=10 * SECOND, out_of_order_ns=3 * SECOND
)
#: The issue's probe: one batching device of 120, nothing else wrong (no fast clocks yet).
PROBE = FleetConfig(
    events=144_000,
    devices=120,
    batching_gateway=0,
    gateway_devices=1,
    gateway_period_ms=120_000,
    fast_devices=0,
    fast_first=60,
    slow_devices=0,
    silent_partition=None,
    us_time_device=None,
    missing_times=0,
    null_times=0,
    non_json=0,
    far_off=0,
)


@pytest.fixture(scope="module")
def clean() -> tuple[pl.DataFrame, object]:
    table = fleet_table(PROBE)
    return table, recommend(table, POLICY, columns=COLUMNS)


@pytest.fixture(scope="module")
def with_early() -> tuple[pl.DataFrame, object]:
    table = fleet_table(replace(PROBE, fast_devices=2))
    return table, recommend(table, POLICY, columns=COLUMNS)


def test_without_early_events_the_probe_gets_one_second(clean) -> None:
    _table, rec = clean
    row = rec.row
    assert (row["late_arrival_s"], row["out_of_order_s"]) == (1, 1)
    assert row["delay_p95_s"] < 1.0
    assert 0.7 < row["pct_adjusted"] < 1.0  # the batching device's events, within the budget
    assert rec.unsaveable.total == 0
    assert unsaveable_note(rec) is None


def test_two_fast_clocks_do_not_move_the_recommendation(clean, with_early) -> None:
    table, rec = with_early
    _, before = clean
    lost = rec.unsaveable
    assert lost.invalid == 0
    assert 0.015 < lost.early / table.height < 0.018  # two devices of 120: 1.67 %
    # the engine agrees: every one of them is dropped as early, whatever the setting
    out = replay(table, POLICY, columns=COLUMNS, partitions=tuple(range(8))).outcomes
    assert int(out["early"].sum()) == lost.early
    row = rec.row
    assert (row["late_arrival_s"], row["out_of_order_s"]) == (1, 1)  # not 120 s / 120 s
    assert row["delay_p95_s"] < 1.0
    assert row["adjusted"] == before.row["adjusted"]
    assert row["dropped"] == lost.early
    assert row["unsaveable"] == lost.early
    # counted over all events this setting is above the budget; over those a setting can
    # change it is within it
    assert row["pct_adjusted"] + row["pct_dropped"] > DEFAULT_RULE.budget_pct
    assert row["pct_budget"] <= DEFAULT_RULE.budget_pct
    # the automatic search tried 1 s
    assert 1 in rec.late_values_s
    assert rec.table.filter(pl.col("late_arrival_s") == 1).height > 0
    # reported apart, with their own fix
    note = unsaveable_note(rec)
    assert note is not None
    assert f"{lost.early:,} events early beyond ASA's fixed 5-minute window" in note
    assert "NTP" in note
    assert note in clauses(rec, 8)


def test_a_grid_counts_the_unsaveable_events_apart_too(with_early) -> None:
    table, rec = with_early
    grid = sweep(
        table,
        POLICY,
        late_values=[SECOND, 120 * SECOND],
        ooo_values=[SECOND, 120 * SECOND],
        columns=COLUMNS,
        partitions=tuple(range(8)),
    )
    assert set(grid.table["unsaveable"].to_list()) == {rec.unsaveable.total}
    best = grid.recommended
    assert best is not None
    assert (best["late_arrival_s"], best["out_of_order_s"]) == (1, 1)


def test_the_fleet_is_within_the_budget_not_the_fallback() -> None:
    """The fleet drops 2-3 % of its events whatever the setting (fast clocks, far-off and
    invalid times): counted in the budget no setting met it, and the fallback took the
    largest tolerances; counted apart, the recommendation is within the budget."""
    config = FleetConfig(events=40_000, duration_ms=60 * 60_000, silent_from_ms=10 * 60_000, seed=4)
    table = fleet_table(config)
    rec = recommend(table, POLICY, columns=COLUMNS)
    row = rec.row
    out = replay(table, POLICY, columns=COLUMNS, partitions=tuple(range(8))).outcomes
    assert rec.unsaveable.early == int(out["early"].sum())
    assert rec.unsaveable.invalid == int(out["invalid_timestamp"].sum())
    assert 100 * rec.unsaveable.total / table.height > DEFAULT_RULE.budget_pct
    assert row["pct_budget"] <= DEFAULT_RULE.budget_pct
    # the least delay within the budget: the largest tolerance measured is not it
    largest = rec.table["late_arrival_s"].drop_nulls().max()
    assert row["late_arrival_s"] < largest
