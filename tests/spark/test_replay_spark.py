"""The replay on Spark equals the local replay: every outcome column, event for event,
``diagnostics.jsonl`` record for record, ``metrics.parquet`` and the summary (hypothesis over
random captures behind ``slow``; a few examples in the default run; the shared local[2]
session)."""

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
from diagnostics.instrument.options import InstrumentOptions
from diagnostics.instrument.outputs import DIAGNOSTICS_FILE, METRICS_FILE, write_outputs
from diagnostics.spark.replay import read_narrow, run_spark_replay
from diagnostics.spark.replay_over import with_substreams
from diagnostics.spark.replay_splits import plan_replay

pytestmark = pytest.mark.spark

BASE = datetime(2024, 1, 1, tzinfo=UTC)
#: application time minus arrival (s); None: not a time
OFFSETS = (None, -900, -20, -3, -1, 0, 0, 1, 2, 400)
#: seconds between arrivals: ties, short steps, a gap longer than the idle notice interval
STEPS = (0, 0, 1, 2, 7, 45, 400)
#: OVER key values; None: missing key
DEVICES = ("d0", "d1", "d2", None)


@st.composite
def captures(draw: st.DrawFn) -> tuple[pl.DataFrame, int, int | None, OrderingPolicy]:
    n = draw(st.integers(1, 40))
    parts = draw(st.integers(1, 3))
    declared = draw(st.sampled_from([None, parts, parts + 2]))
    rows = []
    second = 0
    for _ in range(n):
        second += draw(st.sampled_from(STEPS))
        arrival = BASE + timedelta(seconds=second)
        offset = draw(st.sampled_from(OFFSETS))
        ts = "not a time" if offset is None else (arrival + timedelta(seconds=offset)).isoformat()
        rows.append((ts, arrival, draw(st.sampled_from(DEVICES)), draw(st.integers(0, parts - 1))))
    frame = pl.DataFrame(
        rows, schema=["ts", "arrival_time", "device_id", "partition_id"], orient="row"
    )
    late = draw(st.sampled_from([None, 0, 5, 60]))  # None: unlimited
    over = ("device_id",) if draw(st.booleans()) else ()
    policy = OrderingPolicy(
        timestamp_by="ts",
        late_arrival_ns=None if late is None else late * 10**9,
        out_of_order_ns=draw(st.sampled_from([0, 2, 10])) * 10**9,
        action=draw(st.sampled_from(list(Action))),
        # OVER on several partitions needs PARTITION BY (else both replays stop, same error)
        partition_by=draw(st.booleans()) or (bool(over) and draw(st.integers(0, 3)) > 0),
        over=over,
    )
    row_group = draw(st.integers(1, max(1, n)))
    return frame, row_group, declared, policy


def local(
    path: Path, policy: OrderingPolicy, declared: int | None, out: Path | None = None
) -> tuple[pl.DataFrame, dict]:
    capture = read_capture(path)
    events, applied = capture.apply(policy)
    parts = declared_partitions(declared) if declared else None
    result = replay(events, applied, partitions=parts, columns=capture.columns)
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        write_outputs(result, out, InstrumentOptions())
    return result.outcomes, {"input": capture.to_dict(), **summarize(result)}


def assert_same_replay(spark, folder: Path, case) -> None:
    """Both replays of ``case`` (written to ``folder``): the same outcomes, diagnostics
    records, metrics and summary, or the same one-line error."""
    frame, row_group, declared, policy = case
    path = folder / "cap.parquet"
    frame.write_parquet(path, row_group_size=row_group)
    parts = declared_partitions(declared) if declared else None
    try:
        expected, summary = local(path, policy, declared, folder / "local")
    except InputError as exc:  # OVER on several partitions without PARTITION BY
        error = str(exc)
    else:
        error = None
    if error is not None:
        with pytest.raises(InputError) as spark_error:
            run_spark_replay(
                spark, path=str(path), arrival=None, partition=None, policy=policy,
                declared=parts, out=folder / "spark", instrument=InstrumentOptions(),
            )  # fmt: skip
        assert str(spark_error.value) == error
        return
    got = run_spark_replay(
        spark, path=str(path), arrival=None, partition=None, policy=policy,
        declared=parts, out=folder / "spark", instrument=InstrumentOptions(),
    )  # fmt: skip
    assert_frame_equal(pl.read_parquet(got.outcomes), expected)
    assert {"input": got.capture.to_dict(), **got.summary} == summary
    want = (folder / "local" / DIAGNOSTICS_FILE).read_text().splitlines()
    have = (folder / "spark" / DIAGNOSTICS_FILE).read_text().splitlines()
    assert have == want
    assert_frame_equal(
        pl.read_parquet(folder / "spark" / METRICS_FILE),
        pl.read_parquet(folder / "local" / METRICS_FILE),
    )


@pytest.mark.slow
@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(case=captures())
def test_spark_replay_equals_local(spark, tmp_path_factory, case):
    assert_same_replay(spark, tmp_path_factory.mktemp("replay"), case)


def _capture(seconds, offsets, devices, parts) -> pl.DataFrame:
    arrivals = [BASE + timedelta(seconds=s) for s in seconds]
    return pl.DataFrame(
        {
            "ts": [
                "not a time" if o is None else (a + timedelta(seconds=o)).isoformat()
                for a, o in zip(arrivals, offsets, strict=True)
            ],
            "arrival_time": arrivals,
            "device_id": devices,
            "partition_id": parts,
        }
    )


#: A few cases of the hypothesis test for the default run: OVER keys with missing ones, late,
#: early, out-of-order and invalid times, ties, an idle gap, never-sent partitions; with and
#: without PARTITION BY, Adjust and Drop.
EXAMPLES = {
    "over, partition by, adjust, declared": (
        _capture(
            [0, 0, 1, 3, 3, 410, 411, 413, 420, 900],
            [0, -20, 1, None, -3, 0, -900, 400, -1, 2],
            ["d0", "d1", None, "d0", "d1", "d2", "d0", "d1", "d1", None],
            [0, 1, 0, 1, 0, 1, 0, 0, 1, 0],
        ),
        3,
        4,
        OrderingPolicy(
            timestamp_by="ts",
            late_arrival_ns=5 * 10**9,
            out_of_order_ns=2 * 10**9,
            partition_by=True,
            over=("device_id",),
        ),
    ),
    "merged watermark, drop, unlimited late": (
        _capture(
            [0, 1, 1, 2, 9, 16, 16, 500, 501, 505],
            [0, -3, 0, 1, -20, 2, None, -1, 0, 400],
            ["d0"] * 10,
            [0, 1, 1, 0, 1, 0, 1, 0, 0, 1],
        ),
        4,
        None,
        OrderingPolicy(timestamp_by="ts", out_of_order_ns=2 * 10**9, action=Action.DROP),
    ),
    "one event": (_capture([0], [0], ["d0"], [2]), 1, 3, OrderingPolicy(timestamp_by="ts")),
}


@pytest.mark.parametrize("name", list(EXAMPLES))
def test_spark_replay_equals_local_on_examples(spark, tmp_path, name):
    assert_same_replay(spark, tmp_path, EXAMPLES[name])


def both_errors(
    spark, tmp_path: Path, frame: pl.DataFrame, declared: int | None
) -> tuple[str, str]:
    """The one-line errors of the local and the Spark replay of ``frame`` (PARTITION BY,
    TIMESTAMP BY ts; two rows a row group, so two slices)."""
    path = tmp_path / "bad.parquet"
    frame.write_parquet(path, row_group_size=2)
    policy = OrderingPolicy(timestamp_by="ts", partition_by=True)
    with pytest.raises(InputError) as local_error:
        local(path, policy, declared)
    with pytest.raises(InputError) as spark_error:
        run_spark_replay(
            spark, path=str(path), arrival=None, partition=None, policy=policy,
            declared=declared_partitions(declared) if declared else None, out=tmp_path / "out",
        )  # fmt: skip
    return str(local_error.value), str(spark_error.value)


def test_bad_values_stop_with_the_local_error(spark, tmp_path):
    frame = pl.DataFrame(
        {
            "ts": [BASE.isoformat()] * 4,
            "arrival_time": [BASE.isoformat(), BASE.isoformat(), "soon", "later"],
            "partition_id": ["0", "x", "1", "0"],
        }
    )
    local_error, spark_error = both_errors(spark, tmp_path, frame, None)
    assert spark_error == local_error
    assert "row 3: 'soon'" in spark_error


@pytest.mark.parametrize("declared", [None, 2])
def test_the_first_bad_partition_in_input_or_arrival_order_as_locally(spark, tmp_path, declared):
    """Two values that are not partition numbers, the first in input order arriving last:
    the local replay names the first in input order, or, with declared partitions, the first
    the engine meets (arrival order); the Spark replay's one grouped check names the same."""
    late, early = BASE + timedelta(seconds=9), BASE + timedelta(seconds=1)
    frame = pl.DataFrame(
        {
            "ts": [BASE.isoformat()] * 4,
            "arrival_time": [t.isoformat() for t in (BASE, late, early, BASE)],
            "partition_id": ["0", "x", "y", "1"],
        }
    )
    local_error, spark_error = both_errors(spark, tmp_path, frame, declared)
    assert spark_error == local_error
    assert ("'y'" if declared else "'x'") in spark_error


def test_cli_replays_on_spark_and_prints_the_local_summary(spark, tmp_path, capsys):
    frame = pl.DataFrame(
        {
            "ts": [(BASE + timedelta(seconds=s)).isoformat() for s in (0, -30, 5, 2)],
            "arrival_time": [BASE + timedelta(seconds=s) for s in (0, 1, 3, 3)],
            "partition_id": [0, 1, 0, 1],
            "device": ["a", "b", None, "a"],
        }
    )
    path = tmp_path / "cap.parquet"
    frame.write_parquet(path)
    flags = ["--timestamp-by", "ts", "--partition-by", "--over", "device", "--job", "j1"]
    assert main(["replay", str(path), "--out", str(tmp_path / "lo"), *flags]) == 0
    local_text = capsys.readouterr().out
    assert main(["replay", str(path), "--out", str(tmp_path / "sp"), *flags, "--spark"]) == 0
    spark_text = capsys.readouterr().out
    assert spark_text.splitlines()[:-1] == local_text.splitlines()[:-1]
    sp = tmp_path / "sp"
    written = f"wrote {sp / 'outcomes'}/, {sp / DIAGNOSTICS_FILE}, {sp / METRICS_FILE}"
    assert spark_text.splitlines()[-1] == written
    assert_frame_equal(
        pl.read_parquet(sp / "outcomes"), pl.read_parquet(tmp_path / "lo" / "outcomes.parquet")
    )
    assert (sp / DIAGNOSTICS_FILE).read_text() == (tmp_path / "lo" / DIAGNOSTICS_FILE).read_text()
    assert pl.read_parquet(sp / METRICS_FILE)["job"].unique().to_list() == ["j1"]
    assert_frame_equal(
        pl.read_parquet(sp / METRICS_FILE), pl.read_parquet(tmp_path / "lo" / METRICS_FILE)
    )
    only = ["replay", str(path), "--out", str(tmp_path / "only"), *flags[:-2], "--spark"]
    assert main([*only, "--outcomes-only"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == f"wrote {tmp_path / 'only' / 'outcomes'}/"
    assert not (tmp_path / "only" / DIAGNOSTICS_FILE).exists()


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


def test_many_substreams_are_numbered_across_buckets_as_locally(spark, tmp_path):
    """S2 numbers 300 substreams (first arrivals tied in pairs) with a distributed sort over
    several buckets, never one task: the outcomes (their ``timeline`` included) equal the
    local replay's, and the numbering's plan moves no rows to a single partition (a window
    without a partition, which Spark warns about on the console at every query)."""
    seconds = [i // 2 for i in range(600)]
    frame = _capture(
        seconds,
        [0 if i % 7 else -3 for i in range(600)],
        [f"d{(i * 37) % 300:03d}" for i in range(600)],
        [i % 2 for i in range(600)],
    )
    policy = OrderingPolicy(
        timestamp_by="ts", out_of_order_ns=2 * 10**9, partition_by=True, over=("device_id",)
    )
    assert_same_replay(spark, tmp_path, (frame, 100, None, policy))

    path = tmp_path / "cap.parquet"
    plan, _capture_read = plan_replay(str(path), str(path), None, None, policy, spark=spark)
    plan = plan.with_partitions((0, 1))
    with with_substreams(spark, read_narrow(spark, plan), plan, ("device_id",), 2) as frame:
        subs = frame.select("sub").distinct().count()
        executed = frame._jdf.queryExecution().executedPlan().toString()
    assert subs == 300
    assert "SinglePartition" not in executed, executed
