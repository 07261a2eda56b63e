"""``whatif --spark``: settings × partitions as Spark tasks give the numbers, the Pareto
front and the recommendation of the local evaluation (the shared local[2] session)."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from diagnostics.cli import main
from diagnostics.engine.columns import EventColumns
from diagnostics.engine.policy import Action, OrderingPolicy
from diagnostics.errors import InputError
from diagnostics.spark.whatif import EVERY, SparkEvaluator, tasks_of, write_units
from diagnostics.whatif.evaluate import evaluate_locally, prepare
from tests.spark.input_files import custom_capture, european_csv

pytestmark = pytest.mark.spark

BASE = datetime(2024, 1, 1, tzinfo=UTC)
LATE = Path(__file__).resolve().parents[2] / "sample_logs" / "scenarios" / "late_senders"
COLUMNS = EventColumns(partition="partition_id")


@st.composite
def captures(draw: st.DrawFn) -> tuple[pl.DataFrame, tuple[int, ...] | None]:
    n = draw(st.integers(1, 30))
    parts = draw(st.integers(1, 3))
    rows, second = [], 0
    for _ in range(n):
        second += draw(st.sampled_from([0, 1, 2, 7]))
        arrival = BASE + timedelta(seconds=second)
        offset = draw(st.sampled_from([None, -400, -20, -3, 0, 1, 400]))
        ts = None if offset is None else arrival + timedelta(seconds=offset)
        rows.append((ts, arrival, f"d{draw(st.integers(0, 2))}", draw(st.integers(0, parts - 1))))
    frame = pl.DataFrame(
        rows, schema=["ts", "arrival_time", "device", "partition_id"], orient="row"
    )
    declared = draw(st.sampled_from([None, tuple(range(parts + 1))]))  # one never sends
    return frame, declared


def policies(over: tuple[str, ...]) -> list[OrderingPolicy]:
    """Settings with and without PARTITION BY, late unlimited, Adjust and Drop."""
    found = []
    for late in (None, 0, 5):
        for ooo in (0, 3):
            for pby in (False, True):
                if over and not pby:
                    continue
                found.append(
                    OrderingPolicy(
                        timestamp_by="ts",
                        late_arrival_ns=None if late is None else late * 10**9,
                        out_of_order_ns=ooo * 10**9,
                        partition_by=pby,
                        over=over,
                        action=Action.DROP if ooo else Action.ADJUST,
                    )
                )
    return found


@pytest.mark.slow
@settings(
    max_examples=3,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(case=captures(), over=st.sampled_from([(), ("device",)]))
def test_spark_evaluation_equals_local(spark, tmp_path_factory, case, over):
    frame, declared = case
    prepared = prepare(frame, "ts", over, columns=COLUMNS, partitions=declared)
    batch = [p for p in policies(over) if p.partition_problem(len(prepared.partitions)) is None]
    evaluator = SparkEvaluator(spark, tmp_path_factory.mktemp("whatif"))
    try:
        assert evaluator(prepared, batch) == evaluate_locally(prepared, batch)
    finally:
        evaluator.close()
    assert not evaluator.folder.exists()


def test_tasks_are_settings_times_partitions(tmp_path):
    frame = pl.DataFrame({"ts": [BASE] * 3, "arrival_time": [BASE] * 3, "partition_id": [0, 2, 2]})
    prepared = prepare(frame, "ts", columns=COLUMNS, partitions=(0, 1, 2))
    units = write_units(prepared, tmp_path / "units")
    assert [part for part, _ in units.files] == [0, 2]  # partition 1 sends nothing
    own, merged = OrderingPolicy(timestamp_by="ts", partition_by=True), OrderingPolicy("ts")
    assert tasks_of(units, [own, merged, own]) == [(0, 0), (0, 2), (1, EVERY), (2, 0), (2, 2)]


@pytest.mark.parametrize("second", [5, None], ids=["undeclared", "no number"])
def test_an_undeclared_partition_stops_with_the_local_error(spark, tmp_path, second):
    frame = pl.DataFrame(
        {"ts": [BASE, BASE], "arrival_time": [BASE, BASE], "partition_id": [0, second]},
        schema_overrides={"partition_id": pl.Int64},
    )
    prepared = prepare(frame, "ts", columns=COLUMNS, partitions=(0, 1))
    batch = [OrderingPolicy(timestamp_by="ts", partition_by=True)]
    with pytest.raises(InputError) as local_error:
        evaluate_locally(prepared, batch)
    evaluator = SparkEvaluator(spark, tmp_path)
    with pytest.raises(InputError) as spark_error:
        evaluator(prepared, batch)
    evaluator.close()
    assert str(spark_error.value) == str(local_error.value)


@pytest.mark.slow
def test_cli_whatif_on_spark_prints_the_local_table(spark, tmp_path, capsys):
    capture = tmp_path / "late.csv"
    pl.read_csv(LATE / "capture.csv").head(400).write_csv(capture)
    flags = [str(capture), "--timestamp-by", "event_time", "--partitions", "4", "--no-verify"]
    assert main(["whatif", *flags, "--json"]) == 0
    local = capsys.readouterr().out
    assert main(["whatif", *flags, "--json", "--spark", "--master", "local[2]"]) == 0
    done = capsys.readouterr()
    assert done.out == local
    table = json.loads(local)
    assert any(row["over"] == "device_id" for row in table)
    assert {row["partition_by"] for row in table} == {False, True}
    assert sum(row["recommended"] for row in table) == 1
    assert re.search(r"\d+ batch(es)? of settings run as \d+ engine tasks? on Spark", done.err)
    # the grid given by hand: the same table too
    grid = [*flags, "--late-arrival", "0s,5s,unlimited", "--out-of-order", "0s,2s"]
    assert main(["whatif", *grid]) == 0
    local = capsys.readouterr().out
    assert main(["whatif", *grid, "--spark"]) == 0
    assert capsys.readouterr().out == local


@pytest.mark.parametrize("write", [european_csv, custom_capture], ids=["csv", "capture"])
def test_cli_whatif_on_spark_reads_the_capture_as_the_input_flags_say(
    spark, tmp_path, capsys, write
):
    capture = tmp_path / ("cap.csv" if write is european_csv else "cap")
    given = write(capture)
    flags = [str(capture), "--timestamp-by", "event_time", "--partitions", "4", "--no-verify"]
    grid = [*flags, *given, "--late-arrival", "0s,5s", "--out-of-order", "0s,2s", "--json"]
    assert main(["whatif", *grid]) == 0
    local = capsys.readouterr().out
    assert main(["whatif", *grid, "--spark", "--master", "local[2]"]) == 0
    assert capsys.readouterr().out == local
    assert sum(row["recommended"] for row in json.loads(local)) == 1
    assert main(["whatif", *flags, "--json"]) == 2  # unread without the flags
    unread = capsys.readouterr().err
    assert main(["whatif", *flags, "--json", "--spark"]) == 2
    assert capsys.readouterr().err == unread
