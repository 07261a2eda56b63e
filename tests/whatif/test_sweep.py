"""Sweeps: the table, the Pareto front, the stated recommendation rule, files and the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

from diagnostics.cli import main as orderdoc
from diagnostics.durations import SECOND
from diagnostics.engine.policy import OrderingPolicy
from diagnostics.engine.replay import replay
from diagnostics.engine.summary import summarize
from diagnostics.whatif import RULE, chart, sweep, write_outputs
from diagnostics.whatif.sweep import BUDGET_PCT, pareto_mask

from .conftest import SCENARIOS

S = SECOND
POLICY = OrderingPolicy(timestamp_by="event_time")
PARTS = (0, 1, 2, 3)
COLUMNS = [
    "late_arrival_s", "out_of_order_s", "partition_by", "over", "pct_adjusted", "pct_dropped",
    "delay_p50_s", "delay_p95_s", "delay_max_s", "pareto", "recommended",
]  # fmt: skip


@pytest.fixture(scope="module")
def late_sweep(captures):
    return sweep(
        captures["late_senders"], POLICY, late_values=[0, 5 * S, 60 * S, 121 * S, None],
        ooo_values=[0, 5 * S, 121 * S], partition_by_values=[False, True],
        over_values=[(), ("device_id",)], partitions=PARTS,
    )  # fmt: skip


def test_table_has_the_agreed_columns_and_one_row_per_valid_setting(late_sweep) -> None:
    table = late_sweep.table
    assert all(c in table.columns for c in COLUMNS)
    # 5 x 3 x 2 without OVER, 5 x 3 with OVER and PARTITION BY; OVER without it is skipped
    assert table.height == 30 + 15
    assert len(late_sweep.skipped) == 15
    # the reason is the engine's own rule, OrderingPolicy.partition_problem
    assert all(
        reason.endswith(": TIMESTAMP BY ... OVER device_id on an input with 4 partitions needs "
                        "PARTITION BY PartitionId, as ASA requires")
        for reason in late_sweep.skipped
    )  # fmt: skip
    assert table["late_arrival_s"].null_count() == 9
    assert late_sweep.rule == RULE
    assert int(table["recommended"].sum()) == 1


def test_rows_agree_with_the_engine_summary(captures, late_sweep) -> None:
    row = late_sweep.table.filter(
        (pl.col("late_arrival_s") == 60) & (pl.col("out_of_order_s") == 5) & ~pl.col("partition_by")
    ).row(0, named=True)
    policy = OrderingPolicy(
        timestamp_by="event_time", late_arrival_ns=60 * S, out_of_order_ns=5 * S
    )
    summary = summarize(replay(captures["late_senders"], policy, partitions=PARTS))
    counts, delay = summary["counts"], summary["release_delay_seconds"]
    assert row["pct_adjusted"] == pytest.approx(100 * counts["adjusted"] / counts["events"])
    assert row["pct_dropped"] == pytest.approx(100 * counts["dropped"] / counts["events"])
    assert row["delay_p50_s"] == pytest.approx(delay["p50"], abs=1e-3)
    assert row["delay_p95_s"] == pytest.approx(delay["p95"], abs=1e-3)
    assert row["delay_max_s"] == pytest.approx(delay["max"], abs=1e-3)


def test_recommendation_follows_the_stated_rule(late_sweep) -> None:
    table = late_sweep.table.with_columns(
        (pl.col("pct_adjusted") + pl.col("pct_dropped")).alias("affected")
    )
    best = table.filter(pl.col("recommended")).row(0, named=True)
    within = table.filter(pl.col("affected") <= BUDGET_PCT)
    assert within.height
    assert best["affected"] <= BUDGET_PCT
    assert best["delay_p95_s"] == within["delay_p95_s"].min()
    assert best["pareto"]


def _dominated(a: np.ndarray, d: np.ndarray, i: int) -> bool:
    return bool(np.any((a <= a[i]) & (d <= d[i]) & ((a < a[i]) | (d < d[i]))))


@given(st.lists(st.tuples(st.integers(0, 20), st.integers(0, 20)), min_size=1, max_size=30))
def test_pareto_front_is_exactly_the_non_dominated_points(points) -> None:
    a = np.array([p[0] for p in points], dtype=float)
    d = np.array([p[1] for p in points], dtype=float)
    mask = pareto_mask(a, d)
    for i in range(len(points)):
        assert mask[i] == (not _dominated(a, d, i))
    assert mask.any()


def test_outputs_csv_json_html_and_png_or_a_note(tmp_path, late_sweep) -> None:
    written = write_outputs(late_sweep, tmp_path)
    csv = pl.read_csv(tmp_path / "whatif.csv")
    assert csv.height == late_sweep.table.height
    doc = json.loads((tmp_path / "whatif.json").read_text())
    assert doc["rule"] == RULE
    assert doc["recommended"] == late_sweep.recommended
    assert "plotly" in (tmp_path / "whatif.html").read_text()[:200_000].lower()
    if "png" in written:
        assert (tmp_path / "whatif.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    else:
        assert written["png_note"].startswith("PNG skipped")
    figure = chart(late_sweep)
    assert {t.name for t in figure.data} == {"other settings", "Pareto front", "recommended"}


def _disorder_grid(out: Path, *extra: str) -> int:
    """``whatif`` on the cross-device disorder capture over a small grid, into ``out``."""
    capture = SCENARIOS / "cross_device_disorder" / "capture.csv"
    return orderdoc(
        ["whatif", str(capture), "--timestamp-by", "event_time", "--late-arrival", "5s,1m",
         "--out-of-order", "0s,5s", "--partitions", "4", *extra, "--out", str(out), "--no-png"]
    )  # fmt: skip


def test_cli_writes_the_table_and_marks_the_recommendation(tmp_path, capsys) -> None:
    assert _disorder_grid(tmp_path, "--over", "device_id") == 0
    out = capsys.readouterr().out
    assert "recommended: late 5s, out-of-order 0s, PARTITION BY PartitionId" in out
    assert "engine check:" in out
    assert out.split("engine check:")[1].splitlines()[0].endswith(": agrees")
    table = pl.read_csv(tmp_path / "whatif.csv")
    assert table.height == 4 + 4 + 4  # off, on, on + OVER
    assert not (tmp_path / "whatif.png").exists()


def test_a_grid_without_over_tries_the_sender_columns_as_the_search_does(tmp_path, capsys) -> None:
    """--help: --over defaults to the sender columns and --partition-by to off,on;
    a grid of the user's own tolerances keeps those defaults, so it can find what explain and the
    search find (OVER device_id with PARTITION BY) instead of a far larger tolerance."""
    assert _disorder_grid(tmp_path) == 0
    out = capsys.readouterr().out
    assert "recommended: late 5s, out-of-order 0s, PARTITION BY PartitionId" in out
    assert "OVER device_id" in out.split("recommended:")[1].splitlines()[0]
    table = pl.read_csv(tmp_path / "whatif.csv")
    assert table.height == 4 + 4 + 4  # off, on, on + OVER: as with --over device_id
    assert _disorder_grid(tmp_path / "named", "--over", "device_id") == 0
    assert table.equals(pl.read_csv(tmp_path / "named" / "whatif.csv"))


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["--late-arrival", "5q"], "--late-arrival"),
        (["--late-arrival", "5s,,1m"], "'5s,,1m' has an empty item"),
        (["--partition-by", "maybe"], "--partition-by"),
        (["--timestamp-by", "nope"], "'nope' is missing"),
    ],
)
def test_cli_errors_are_one_line_exit_2(tmp_path, capsys, argv, needle) -> None:
    capture = SCENARIOS / "healthy" / "capture.csv"
    base = ["whatif", str(capture), "--out", str(tmp_path / "w")]
    if "--timestamp-by" not in argv:
        base += ["--timestamp-by", "event_time"]
    if argv[0] == "--timestamp-by":  # a bad column: the command runs and exits 2
        assert orderdoc([*base, *argv]) == 2
    else:  # a bad flag value: argparse exits 2
        with pytest.raises(SystemExit) as exc:
            orderdoc([*base, *argv])
        assert exc.value.code == 2
    err = capsys.readouterr().err.strip()
    assert needle in err
    assert len(err.splitlines()) == 1


@pytest.mark.parametrize("scenario", ["late_senders", "idle_partition", "clock_skew"])
def test_the_engine_agrees_with_the_recommended_row(captures, scenario) -> None:
    from diagnostics.whatif.verify import verify_recommended

    result = sweep(
        captures[scenario], POLICY, late_values=[0, 5 * S, 2 * 60 * S, None],
        ooo_values=[0, 2 * S], partition_by_values=[False, True], partitions=PARTS,
    )  # fmt: skip
    check = verify_recommended(result, captures[scenario], partitions=PARTS)
    assert check is not None
    assert check["agrees"]
    assert check["adjusted"] == result.recommended["adjusted"]
