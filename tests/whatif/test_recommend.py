"""The one recommender: the search guide counts what the engine counts, and the recommended
setting is within 5 % (+1 s) of the least p95 delay any whole-second setting reaches under
the rule, on random small captures, every bundled scenario and the capture of issue 25."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from diagnostics.captures.reader import read_capture
from diagnostics.durations import SECOND
from diagnostics.engine.policy import Action, OrderingPolicy
from diagnostics.whatif.evaluate import evaluate, prepare
from diagnostics.whatif.recommend import CURRENT, RecommendConfig, recommend
from diagnostics.whatif.rule import Rule
from diagnostics.whatif.senders import choose_senders
from diagnostics.whatif.staircase import counts, timelines_of

from .brute import brute_best, fewest
from .conftest import SCENARIOS
from .usercapture import user_capture

START = datetime(2026, 1, 1, tzinfo=UTC)
POLICY = OrderingPolicy(timestamp_by="event_time")


def within(found: float, best: float) -> bool:
    """The issue's bound: within 5 % of the best, plus 1 s."""
    return found <= best * 1.05 + 1.0 + 1e-9


@st.composite
def small_captures(draw: st.DrawFn) -> pl.DataFrame:
    """12-40 events from 2-4 devices on 1-2 partitions over two minutes, some late by up to
    8 s, arrival order."""
    n = draw(st.integers(12, 30))
    devices = draw(st.integers(2, 4))
    parts = draw(st.integers(1, 2))
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    device = rng.integers(0, devices, n)
    sent = np.sort(rng.uniform(0, 120, n))
    lag = rng.uniform(0.05, 0.5, n)
    late_device = device == 0
    lag[late_device] += rng.uniform(0, 5, int(late_device.sum()))
    arrival = sent + lag
    order = np.argsort(arrival, kind="stable")
    return pl.DataFrame(
        {
            "device_id": [f"d{d}" for d in device[order]],
            "partition_id": (device[order] % parts).astype(np.int64),
            "event_time": [START + timedelta(seconds=float(s)) for s in sent[order]],
            "arrival_time": [START + timedelta(seconds=float(a)) for a in arrival[order]],
        }
    )


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    small_captures(),
    st.integers(0, 9),
    st.integers(0, 9),
    st.booleans(),
    st.sampled_from(list(Action)),
)
def test_the_search_guide_counts_what_the_engine_counts(frame, late, ooo, over, action) -> None:
    keys = ("device_id",) if over else ()
    prepared = prepare(frame, "event_time", keys)
    policy = replace(
        POLICY,
        late_arrival_ns=late * SECOND,
        out_of_order_ns=ooo * SECOND,
        over=keys,
        partition_by=True,
        action=action,
    )
    result = evaluate(prepared, policy)
    lines = timelines_of(prepared, "event_time", keys)
    c = counts(lines, late * SECOND, action)
    guide = lines.unavoidable + c.late + c.out_of_order(policy.effective_ooo_ns)
    assert guide == result.adjusted + result.dropped


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_captures())
def test_the_recommendation_is_within_5_percent_of_a_brute_force_on_random_captures(
    frame,
) -> None:
    rec = recommend(frame, POLICY, config=RecommendConfig(rule=Rule(budget_pct=5.0)))
    lateness = (frame["arrival_time"] - frame["event_time"]).dt.total_seconds(fractional=True)
    top = int(np.ceil(lateness.max())) + 1
    best = _brute_rule(frame, top, Rule(budget_pct=5.0))
    row = rec.row
    assert row["adjusted"] + row["dropped"] <= Rule(budget_pct=5.0).allowed(frame.height)
    assert within(row["delay_p95_s"], best)


def _brute_rule(frame: pl.DataFrame, top: int, rule: Rule) -> float:
    """Every whole-second setting (late 0..top, out-of-order 0..late, OVER device_id or
    not, PARTITION BY off and on): the least p95 delay within ``rule``'s budget."""
    from diagnostics.whatif.sweep import sweep

    result = sweep(
        frame,
        POLICY,
        late_values=[s * SECOND for s in range(top + 1)],
        ooo_values=[s * SECOND for s in range(top + 1)],
        partition_by_values=[False, True],
        over_values=[(), ("device_id",)],
        rule=rule,
    )
    t = result.table
    ok = t.filter(
        (pl.col("adjusted") + pl.col("dropped") <= rule.allowed(frame.height))
        & (pl.col("never_released") == 0)
    )
    return float(ok["delay_p95_s"].min())  # type: ignore[arg-type]


@pytest.mark.parametrize("name", sorted(p.parent.name for p in SCENARIOS.glob("*/capture.csv")))
def test_the_recommendation_is_within_5_percent_of_a_brute_force_on_every_scenario(
    captures, name
) -> None:
    frame = captures[name]
    parts = (0, 1, 2, 3)
    rec = recommend(frame, POLICY, partitions=parts)
    row = rec.row
    lateness = (
        frame["arrival_time"].str.to_datetime(time_zone="UTC")
        - frame["event_time"].str.to_datetime(time_zone="UTC")
    ).dt.total_seconds()
    top = int(lateness.max()) + 1
    if top * SECOND > 20 * 86_400 * SECOND:  # later than any finite tolerance
        assert row["late_arrival_s"] is None
        assert row["adjusted"] + row["dropped"] == 0
        return
    over_sets: list[tuple[str, ...]] = [(), ("device_id",)]
    best = brute_best(frame, POLICY, over_sets, late_max_s=top, partitions=parts)
    allowed = fewest(frame, POLICY, over_sets, top, partitions=parts)
    assert row["adjusted"] + row["dropped"] <= allowed
    assert within(row["delay_p95_s"], best), (rec.policy.describe(), row["delay_p95_s"], best)


def test_the_users_capture_of_issue_25_gets_the_best_setting_it_allows() -> None:
    frame = user_capture()
    policy = OrderingPolicy(timestamp_by="eventTime", late_arrival_ns=5 * SECOND)
    cap = read_capture_frame(frame)
    events, mapped = cap.apply(policy)
    rec = recommend(events, mapped, columns=cap.columns)
    row = rec.row
    assert rec.keys == ("deviceId",)
    assert row["adjusted"] + row["dropped"] <= rec.rule.allowed(frame.height)
    best = brute_best(events, mapped, [(), ("deviceId",)], late_max_s=91, columns=cap.columns)
    assert within(row["delay_p95_s"], best), (rec.policy.describe(), row["delay_p95_s"], best)
    # better than every answer of the issue's table (89.9 s, and the grids' 15 % / 6.9 %)
    assert row["delay_p95_s"] < 89.9
    job = rec.table.filter(pl.col("tried_as") == CURRENT).row(0, named=True)
    assert job["late_arrival_s"] == 5
    assert job["out_of_order_s"] == 0


def read_capture_frame(frame: pl.DataFrame, tmp: str = "/dev/null"):
    """The frame read as a capture file is (its ASA passthrough columns detected)."""
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "capture.csv"
        frame.write_csv(path)
        return read_capture(path)


def test_sender_columns_are_found_by_their_names() -> None:
    frame = pl.DataFrame(
        {
            "DeviceName": ["a", "b", "a", "b"],
            "temperature": [1.0, 2.0, 3.0, 4.0],
            "site": ["x", "y", "x", "y"],
            "device_id": [1, 2, 1, 2],
            "PartitionId": [0, 1, 0, 1],
        }
    )
    # no times: the lateness cannot tell senders apart, so the names decide (rule 5)
    chosen = choose_senders(frame, None, ("PartitionId",))
    assert chosen.over_columns == ("DeviceName", "device_id")
    assert chosen.column == "DeviceName"
    assert chosen.reason.startswith("chosen by its name")
    assert choose_senders(frame.drop("DeviceName", "device_id")).over_columns == ()


@pytest.mark.parametrize(
    ("name", "sender"),
    [
        ("deviceId", True),
        ("DEVICE_ID", True),
        ("IoTHub.ConnectionDeviceId", True),
        ("hostname", True),
        ("sensor-name", True),
        ("gatewayKey", True),
        ("SourceSystem", True),
        ("parameter", False),
        ("resourceId", False),
        ("ghost_count", False),
        ("diameter_mm", False),
        ("barcode", False),
    ],
)
def test_a_sender_is_named_by_a_word_not_by_letters_inside_one(name: str, sender: bool) -> None:
    frame = pl.DataFrame({name: ["a", "b", "a", "b"], "other": [1, 2, 3, 4]})
    assert choose_senders(frame).over_columns == ((name,) if sender else ())


def test_whatif_searches_by_default_prints_its_grid_and_still_takes_a_users_grid(
    tmp_path, capsys
) -> None:
    from diagnostics.cli import main as orderdoc

    capture = SCENARIOS / "late_senders" / "capture.csv"
    base = ["whatif", str(capture), "--timestamp-by", "event_time", "--partitions", "4",
            "--no-png", "--no-verify"]  # fmt: skip
    assert orderdoc([*base, "--out", str(tmp_path / "a")]) == 0
    text = capsys.readouterr().out
    rec = recommend(pl.read_csv(capture), POLICY, partitions=(0, 1, 2, 3))
    grid = ",".join(f"{v}s" for v in rec.late_values_s)
    assert f"late tolerances --late-arrival {grid}" in text
    assert f"recommended: late {rec.row['late_arrival_s']:g}s, out-of-order " in text
    assert orderdoc([*base, "--out", str(tmp_path / "b"), "--late-arrival", "0s,1m",
                     "--out-of-order", "0s"]) == 0  # fmt: skip
    text = capsys.readouterr().out
    assert "searched:" not in text
    table = pl.read_csv(tmp_path / "b" / "whatif.csv")
    assert set(table["late_arrival_s"]) == {0.0, 5.0, 60.0}  # the job's own 5 s added
    assert orderdoc([*base, "--out", str(tmp_path / "c"), "--try-drop"]) == 0
    tried = pl.read_csv(tmp_path / "c" / "whatif.csv")
    assert set(tried["action"]) == {"adjust", "drop"}
    dropped = tried.filter(pl.col("action") == "drop")
    assert (dropped["adjusted"] == 0).all()


def test_a_large_capture_is_searched_every_nth_second_then_every_second_near_the_best(
    captures,
) -> None:
    frame = captures["late_senders"]
    parts = (0, 1, 2, 3)
    full = recommend(frame, POLICY, partitions=parts)
    # a budget that makes the guide look at every 10th second first (2,000 events x 121 s)
    thin = recommend(frame, POLICY, partitions=parts, config=RecommendConfig(scan_budget=25_000))
    late = thin.table.filter(pl.col("tried_as") == "search")["late_arrival_s"].drop_nulls()
    assert any(v % 10 for v in late)  # refined: seconds off the coarse step were measured
    assert thin.row["adjusted"] + thin.row["dropped"] <= thin.rule.allowed(frame.height)
    assert within(thin.row["delay_p95_s"], full.row["delay_p95_s"])


def test_the_printed_grid_names_an_unlimited_late_tolerance_it_measured(captures) -> None:
    """Historical replay: the search measures an unlimited late tolerance (the events are
    days late); the grid printed as flags says so, so that it measures the same settings."""
    from diagnostics.whatif.report import searched_grid

    rec = recommend(captures["historical_replay"], POLICY, partitions=(0, 1, 2, 3))
    assert rec.table["late_arrival_s"].null_count()
    late = searched_grid(rec).split("--late-arrival ", 1)[1].split(", out-of-order", 1)[0]
    assert late.split(",")[-1] == "unlimited"
    assert all(v.endswith("s") for v in late.split(",")[:-1])


def test_whatif_refuses_more_partitions_than_an_input_can_have(tmp_path, capsys) -> None:
    """A mistyped --partitions is one line and exit 2 before the search, not hours of work."""
    from diagnostics.cli import main

    capture = tmp_path / "c.csv"
    capture.write_text("t,arrival_time\n2024-01-01T00:00:00Z,2024-01-01T00:00:01Z\n")
    code = main(["whatif", str(capture), "--timestamp-by", "t", "--partitions", "100000000"])
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert err == (
        "orderdoc whatif: error: partition count 100000000: at most 4,096 (more than an Event "
        "Hub or IoT Hub can have) (use --partitions)"
    )
