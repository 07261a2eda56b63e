"""Golden tests on the bundled scenarios: the windows each one's ordering changes, checked
against counts taken by hand (plain Python over the replay's outcomes) and against the
results the scenarios' README states."""

from __future__ import annotations

from collections import Counter
from datetime import timedelta
from pathlib import Path

import polars as pl
import pytest

from diagnostics.impact import measure_impact, summarize
from tests.scripts import load_script

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = ROOT / "sample_logs" / "scenarios"

SCRIPT = load_script("make_samples")


def impact(name: str):
    query, _ = SCRIPT.job_query(SCRIPT.Scenario(name))
    outcomes = pl.read_parquet(SCENARIOS / name / "outcomes.parquet")
    return outcomes, measure_impact(outcomes, query, "telemetry")


def _minute_end(t):
    """The end of the one-minute tumbling window holding ``t`` (> start, <= end)."""
    floor = t.replace(second=0, microsecond=0)
    return (
        floor
        if floor == t and t.microsecond == 0 and t.second == 0
        else floor + timedelta(minutes=1)
    )


@pytest.mark.parametrize("name", sorted(p.name for p in SCENARIOS.iterdir() if p.is_dir()))
def test_the_readme_states_the_measured_results(name):
    line = SCRIPT.results_line(SCENARIOS / name, SCRIPT.Scenario(name))
    assert line in (SCENARIOS / "README.md").read_text().splitlines()


@pytest.mark.parametrize("name", ["healthy", "idle_partition", "hot_partition"])
def test_no_window_changes_where_no_event_moves(name):
    _, result = impact(name)
    summary = summarize(result)
    assert summary["windows_compared"] > 200
    assert summary["windows_changed"] == 0


def test_late_senders_counts_by_hand():
    outcomes, result = impact("late_senders")
    emitted: Counter = Counter()
    on_time: Counter = Counter()
    for row in outcomes.select("device_id", "system_timestamp", "application_time").iter_rows():
        device, sys_, app = row
        on_time[(device, _minute_end(app))] += 1
        if sys_ is not None:
            emitted[(device, _minute_end(sys_))] += 1
    table = result.table
    got_e = {
        (k.removeprefix("device_id="), e): v
        for k, e, v in table.select("keys", "window_end", "value_as_emitted").iter_rows()
        if v is not None
    }
    got_o = {
        (k.removeprefix("device_id="), e): v
        for k, e, v in table.select("keys", "window_end", "value_on_time").iter_rows()
        if v is not None
    }
    assert got_e == dict(emitted)
    assert got_o == dict(on_time)
    wrong = {key for key in set(emitted) | set(on_time) if emitted.get(key) != on_time.get(key)}
    assert {d for d, _ in wrong} == {"dev-00000", "dev-00005"}
    changed = table.filter(pl.col("changed"))
    assert len(wrong) == changed.height == 60
    # every on-time minute of the two batching devices is wrong
    batching = {key for key in on_time if key[0] in ("dev-00000", "dev-00005")}
    assert batching == {key for key in wrong if key in on_time}
    assert summarize(result)["causes"][0] == {
        "cause": "late adjustments",
        "events": 259,
        "share": 1.0,
    }


def test_clock_skew_loses_every_average_of_the_fast_device():
    _, result = impact("clock_skew")
    changed = result.table.filter(pl.col("changed"))
    assert set(changed["keys"]) == {"device_id=dev-00000"}
    assert set(changed["output"]) == {"on time only"}
    on_time = result.table.filter(pl.col("keys") == "device_id=dev-00000")
    assert changed.height == on_time.height == 30
    causes = {c["cause"]: c["share"] for c in summarize(result)["causes"] if c["events"]}
    assert causes == {"early events": 1.0}


def test_cross_device_disorder_moves_few_windows_slightly():
    _, result = impact("cross_device_disorder")
    changed = result.table.filter(pl.col("changed"))
    assert 0 < changed.height < 20
    assert set(changed["output"]) == {"both"}
    assert changed["relative_difference"].max() < 0.04
    causes = {c["cause"] for c in summarize(result)["causes"] if c["events"]}
    assert causes == {"out-of-order adjustments"}


def test_historical_replay_changes_every_window():
    _, result = impact("historical_replay")
    summary = summarize(result)
    assert summary["windows_changed"] == summary["windows_compared"]
    assert not (result.table["output"] == "both").any()
