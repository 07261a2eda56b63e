"""The replay on Spark equals the local replay: every outcome column, event for event, and
the summary (hypothesis over random captures; a few examples, the shared local[2] session)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from diagnostics.captures.reader import read_capture
from diagnostics.cli import main
from diagnostics.engine.policy import Action, OrderingPolicy
from diagnostics.engine.replay import declared_partitions, replay
from diagnostics.engine.summary import summarize
from diagnostics.errors import InputError, UsageError
from diagnostics.spark.replay import run_spark_replay

pytestmark = pytest.mark.spark

BASE = datetime(2024, 1, 1, tzinfo=UTC)
#: application time minus arrival (s); None: not a time
OFFSETS = (None, -900, -20, -3, -1, 0, 0, 1, 2, 400)


@st.composite
def captures(draw: st.DrawFn) -> tuple[pl.DataFrame, int, int | None, OrderingPolicy]:
    n = draw(st.integers(1, 40))
    parts = draw(st.integers(1, 3))
    declared = draw(st.sampled_from([None, parts, parts + 2]))
    rows = []
    second = 0
    for _ in range(n):
        second += draw(st.sampled_from([0, 0, 1, 2, 7]))  # ties in arrival time
        arrival = BASE + timedelta(seconds=second)
        offset = draw(st.sampled_from(OFFSETS))
        ts = "not a time" if offset is None else (arrival + timedelta(seconds=offset)).isoformat()
        rows.append((ts, arrival, f"d{draw(st.integers(0, 3))}", draw(st.integers(0, parts - 1))))
    frame = pl.DataFrame(
        rows, schema=["ts", "arrival_time", "device", "partition_id"], orient="row"
    )
    late = draw(st.sampled_from([None, 0, 5, 60]))  # None: unlimited
    policy = OrderingPolicy(
        timestamp_by="ts",
        late_arrival_ns=None if late is None else late * 10**9,
        out_of_order_ns=draw(st.sampled_from([0, 2, 10])) * 10**9,
        action=draw(st.sampled_from(list(Action))),
        partition_by=draw(st.booleans()),
    )
    row_group = draw(st.integers(1, max(1, n)))
    return frame, row_group, declared, policy


def local(path: Path, policy: OrderingPolicy, declared: int | None) -> tuple[pl.DataFrame, dict]:
    capture = read_capture(path)
    events, applied = capture.apply(policy)
    parts = declared_partitions(declared) if declared else None
    result = replay(events, applied, partitions=parts, columns=capture.columns)
    return result.outcomes, {"input": capture.to_dict(), **summarize(result)}


@pytest.mark.slow
@settings(
    max_examples=8,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(case=captures())
def test_spark_replay_equals_local(spark, tmp_path_factory, case):
    frame, row_group, declared, policy = case
    folder = tmp_path_factory.mktemp("replay")
    path = folder / "cap.parquet"
    frame.write_parquet(path, row_group_size=row_group)
    expected, summary = local(path, policy, declared)
    got = run_spark_replay(
        spark,
        path=str(path),
        arrival=None,
        partition=None,
        policy=policy,
        declared=declared_partitions(declared) if declared else None,
        out=folder / "out",
    )
    outcomes = pl.read_parquet(got.outcomes)
    assert_frame_equal(outcomes, expected)
    assert {"input": got.capture.to_dict(), **got.summary} == summary


def test_one_event_and_never_sent_partitions(spark, tmp_path):
    frame = pl.DataFrame({"ts": [BASE.isoformat()], "arrival_time": [BASE], "partition_id": [2]})
    path = tmp_path / "one.parquet"
    frame.write_parquet(path)
    policy = OrderingPolicy(timestamp_by="ts", partition_by=True)
    expected, summary = local(path, policy, 4)
    got = run_spark_replay(
        spark, path=str(path), arrival=None, partition=None, policy=policy,
        declared=declared_partitions(4), out=tmp_path / "out",
    )  # fmt: skip
    assert_frame_equal(pl.read_parquet(got.outcomes), expected)
    assert got.summary["partitions"] == [0, 1, 2, 3]
    assert {"input": got.capture.to_dict(), **got.summary} == summary


def test_bad_values_stop_with_the_local_error(spark, tmp_path):
    frame = pl.DataFrame(
        {
            "ts": [BASE.isoformat()] * 4,
            "arrival_time": [BASE.isoformat(), BASE.isoformat(), "soon", "later"],
            "partition_id": ["0", "x", "1", "0"],
        }
    )
    path = tmp_path / "bad.parquet"
    frame.write_parquet(path, row_group_size=2)
    policy = OrderingPolicy(timestamp_by="ts", partition_by=True)
    with pytest.raises(InputError) as local_error:
        local(path, policy, None)
    with pytest.raises(InputError) as spark_error:
        run_spark_replay(
            spark, path=str(path), arrival=None, partition=None, policy=policy,
            declared=None, out=tmp_path / "out",
        )  # fmt: skip
    assert str(spark_error.value) == str(local_error.value)
    assert "row 3: 'soon'" in str(spark_error.value)


def test_cli_replays_on_spark_and_prints_the_local_summary(spark, tmp_path, capsys):
    frame = pl.DataFrame(
        {
            "ts": [(BASE + timedelta(seconds=s)).isoformat() for s in (0, -30, 5, 2)],
            "arrival_time": [BASE + timedelta(seconds=s) for s in (0, 1, 3, 3)],
            "partition_id": [0, 1, 0, 1],
        }
    )
    path = tmp_path / "cap.parquet"
    frame.write_parquet(path)
    flags = ["--timestamp-by", "ts", "--partition-by", "--outcomes-only"]
    assert main(["replay", str(path), "--out", str(tmp_path / "lo"), *flags]) == 0
    local_text = capsys.readouterr().out
    assert main(["replay", str(path), "--out", str(tmp_path / "sp"), *flags, "--spark"]) == 0
    spark_text = capsys.readouterr().out
    assert spark_text.splitlines()[:-1] == local_text.splitlines()[:-1]
    assert spark_text.splitlines()[-1] == f"wrote {tmp_path / 'sp' / 'outcomes'}/"
    assert_frame_equal(
        pl.read_parquet(tmp_path / "sp" / "outcomes"),
        pl.read_parquet(tmp_path / "lo" / "outcomes.parquet"),
    )


def test_most_times_invalid_warns_as_locally_and_far_off_arrivals_are_refused(spark, tmp_path):
    arrivals = [BASE + timedelta(seconds=s) for s in range(5)]
    frame = pl.DataFrame(
        {
            "ts": [None, "06/03/2024 08:00:01 AM", "soon", BASE.isoformat(), None],
            "arrival_time": arrivals,
            "partition_id": [0, 1, 0, 1, 0],
        }
    )
    path = tmp_path / "invalid.parquet"
    frame.write_parquet(path, row_group_size=2)
    policy = OrderingPolicy(timestamp_by="ts")
    expected, summary = local(path, policy, None)
    got = run_spark_replay(
        spark, path=str(path), arrival=None, partition=None, policy=policy,
        declared=None, out=tmp_path / "out",
    )  # fmt: skip
    assert_frame_equal(pl.read_parquet(got.outcomes), expected)
    assert got.summary["warnings"] == summary["warnings"]
    assert "06/03/2024 08:00:01 AM" in got.summary["warnings"][0]
    far = frame.with_columns(pl.Series("arrival_time", [*arrivals[:4], BASE + timedelta(days=3)]))
    far.write_parquet(path)
    assert read_capture(path).warnings  # the local replay reports it
    with pytest.raises(UsageError) as refused:
        run_spark_replay(
            spark, path=str(path), arrival=None, partition=None, policy=policy,
            declared=None, out=tmp_path / "out2",
        )  # fmt: skip
    assert "more than a day off the others" in str(refused.value)
