"""Every input the local replay reads, replayed on Spark (docs/spark-replay.md, S0 and S1):
CSV (``;``, quoted cells over several lines), JSON Lines with ASA's passthrough columns,
Parquet folders and globs, ``.gz``, Event Hubs Capture folders written with fastavro, job
definitions; the outcomes and the summary equal the local replay's, column for column, and
bad input stops both with the same one line (exit 2)."""

from __future__ import annotations

import dataclasses
import gzip
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from diagnostics.captures.capture_writer import write_capture_folder
from diagnostics.captures.dialect import CsvOptions
from diagnostics.captures.reader import Capture, read_capture
from diagnostics.engine.policy import Action, OrderingPolicy
from diagnostics.engine.replay import replay
from diagnostics.engine.summary import summarize
from diagnostics.errors import UsageError
from diagnostics.spark.replay import run_spark_replay
from diagnostics.spark.replay_splits import ReplayPlan
from tests.captures.helpers import body, capture_record, run_cli, write_avro

pytestmark = pytest.mark.spark

BASE = datetime(2024, 1, 1, tzinfo=UTC)
POLICY = OrderingPolicy(timestamp_by="ts", late_arrival_ns=5 * 10**9, out_of_order_ns=2 * 10**9)


def events(n: int = 240, seed: int = 7) -> pl.DataFrame:
    """Events with ties in arrival, late, early and out-of-order times, invalid times, a
    column named like an outcome column (``status``: renamed ``input_status``) and text
    holding the separator, quotes and line breaks."""
    rng = np.random.default_rng(seed)
    seconds = np.cumsum(rng.choice([0, 0, 1, 2, 5], n))
    arrivals = [BASE + timedelta(seconds=int(s)) for s in seconds]
    offsets = rng.choice([-900, -20, -3, 0, 1, 2, 400], n)
    ts = [
        (a + timedelta(seconds=int(o))).isoformat() for a, o in zip(arrivals, offsets, strict=True)
    ]
    notes = ["plain", 'say "hi"; bye', "two\nlines", "a;b", ""]
    return pl.DataFrame(
        {
            "ts": [t if i % 37 else "not a time" for i, t in enumerate(ts)],
            "arrival_time": arrivals,
            "device": [f"d{i % 4}" for i in range(n)],
            "status": [notes[i % len(notes)] for i in range(n)],
            "partition_id": rng.integers(0, 3, n),
        }
    )


def same(
    spark,
    path: Path | str,
    out: Path,
    policy: OrderingPolicy = POLICY,
    *,
    csv: CsvOptions | None = None,
    path_format: str | None = None,
    planned: tuple[ReplayPlan, Capture] | None = None,
) -> pl.DataFrame:
    """Replays ``path`` locally and on Spark (with S0's ``planned`` result, if given) and
    asserts equal outcomes and summaries."""
    capture = read_capture(path, csv_options=csv, path_format=path_format)
    frame, applied = capture.apply(policy)
    result = replay(frame, applied, columns=capture.columns)
    got = run_spark_replay(
        spark, path=str(path), arrival=None, partition=None, policy=policy, declared=None,
        out=out, csv=csv, path_format=path_format, planned=planned,
    )  # fmt: skip
    outcomes = pl.read_parquet(got.outcomes)
    assert_frame_equal(outcomes, result.outcomes)
    assert {"input": got.capture.to_dict(), **got.summary} == {
        "input": capture.to_dict(),
        **summarize(result),
    }
    assert outcomes.height == frame.height
    return outcomes


def test_csv_with_semicolons_and_cells_over_several_lines(spark, tmp_path):
    path = tmp_path / "cap.csv"
    events().write_csv(path, separator=";")
    assert b'"two\nlines"' in path.read_bytes()
    outcomes = same(spark, path, tmp_path / "out")
    assert "input_status" in outcomes.columns  # the rename rule, as locally
    assert outcomes["input_status"].str.contains("\n").any()


def test_gzip_csv_and_a_separator_given(spark, tmp_path):
    path = tmp_path / "cap.tsv.gz"
    text = events(120, seed=3).write_csv(separator="\t")
    path.write_bytes(gzip.compress(text.encode()))
    same(spark, path, tmp_path / "out", csv=CsvOptions(separator="\t"))


def test_json_lines_with_asa_passthrough_columns(spark, tmp_path):
    frame = events(seed=11).rename(
        {"arrival_time": "EventEnqueuedUtcTime", "partition_id": "PartitionId"}
    )
    frame = frame.with_columns(EventProcessedUtcTime=pl.col("EventEnqueuedUtcTime"))
    path = tmp_path / "cap.jsonl"
    frame.write_ndjson(path)
    policy = OrderingPolicy(timestamp_by="ts", late_arrival_ns=5 * 10**9, partition_by=True)
    outcomes = same(spark, path, tmp_path / "out", policy)
    assert outcomes["partition"].n_unique() == 3  # PartitionId found as locally


def test_parquet_folder_and_glob(spark, tmp_path):
    frame = events(seed=5)
    folder = tmp_path / "day"
    (folder / "later").mkdir(parents=True)
    frame.slice(0, 90).write_parquet(folder / "a.parquet", row_group_size=40)
    frame.slice(90, 0).write_parquet(folder / "b.parquet")  # an empty file
    frame.slice(90, 100).write_parquet(folder / "c.parquet", row_group_size=33)
    frame.slice(190).write_parquet(folder / "later" / "d.parquet")
    (folder / "_SUCCESS").write_text("")
    outcomes = same(spark, folder, tmp_path / "out")
    assert outcomes["event_id"].to_list() == list(range(frame.height))
    glob = f"{folder}/*.parquet"  # not the subfolder's file
    outcomes = same(spark, glob, tmp_path / "out2", dataclasses.replace(POLICY, partition_by=True))
    assert outcomes.height == 190


def test_event_hubs_capture_folder(spark, tmp_path):
    """Written with fastavro as Capture writes it: input order is partition then path time,
    not arrival order, so output ties are broken by arrival as the local replay does."""
    frame = events(seed=1).drop("status")
    write_capture_folder(frame, tmp_path / "capture", window_s=60)
    outcomes = same(spark, tmp_path / "capture", tmp_path / "out")
    assert outcomes["PartitionId"].is_sorted()


def test_capture_body_fields_merge_across_files_or_are_refused(spark, tmp_path):
    root = tmp_path / "ns" / "hub"
    ms = int(BASE.timestamp() * 1000)
    first = [
        capture_record(0, body(ts=BASE.isoformat(), a=None, **{"": 1}), ms, ""),
        capture_record(1, b"not json", ms + 1000, ""),
    ]
    second = [capture_record(2, body(ts=BASE.isoformat(), a={"x": 1.5}, Offset="o"), ms, "")]
    write_avro(root / "0" / "2024/01/01/00/00/00.avro", first)
    write_avro(root / "1" / "2024/01/01/00/00/00.avro", second)
    outcomes = same(spark, tmp_path, tmp_path / "out")
    # the empty key named by its position among all files' fields (1-based), as locally
    assert {"column_3", "a", "input_Offset", "Body"} <= set(outcomes.columns)
    assert outcomes["a"].dtype == pl.Struct({"x": pl.Float64})
    third = [capture_record(3, body(ts=BASE.isoformat(), a="text"), ms, "")]
    write_avro(root / "2" / "2024/01/01/00/00/00.avro", third)
    with pytest.raises(UsageError) as refused:
        run_spark_replay(
            spark, path=str(tmp_path), arrival=None, partition=None, policy=POLICY,
            declared=None, out=tmp_path / "out2",
        )  # fmt: skip
    assert "body field 'a' is Struct" in str(refused.value)
    assert "replay this capture without --spark" in str(refused.value)


def _cli(*argv: str) -> tuple[int, str, str]:
    code, out, err = run_cli(*argv)
    return code, out, err.strip()


def test_job_definition_on_spark_prints_the_local_summary(spark, tmp_path):
    path = tmp_path / "cap.csv"
    events(150, seed=9).rename({"partition_id": "PartitionId"}).write_csv(path)
    query = "SELECT * INTO out FROM input TIMESTAMP BY ts PARTITION BY PartitionId"
    job = {
        "name": "job-1",
        "type": "Microsoft.StreamAnalytics/streamingjobs",
        "properties": {
            "eventsLateArrivalMaxDelayInSeconds": 5,
            "eventsOutOfOrderMaxDelayInSeconds": 2,
            "eventsOutOfOrderPolicy": "Drop",
            "inputs": [{"name": "input", "properties": {"type": "Stream"}}],
            "transformation": {"name": "t", "properties": {"query": query}},
        },
    }
    definition = tmp_path / "job.json"
    definition.write_text(json.dumps(job), encoding="utf-8")
    flags = ["--job-definition", str(definition), "--outcomes-only"]
    code, local_text, err = _cli("replay", str(path), "--out", str(tmp_path / "lo"), *flags)
    assert code == 0, err
    code, spark_text, err = _cli(
        "replay", str(path), "--out", str(tmp_path / "sp"), *flags, "--spark"
    )
    assert code == 0, err
    assert spark_text.splitlines()[0].startswith("policy: ")
    assert spark_text.splitlines()[:-1] == local_text.splitlines()[:-1]
    assert_frame_equal(
        pl.read_parquet(tmp_path / "sp" / "outcomes"),
        pl.read_parquet(tmp_path / "lo" / "outcomes.parquet"),
    )


def _both_fail(tmp_path: Path, path: Path | str, *flags: str) -> str:
    """The local replay's and the Spark replay's one-line error (asserted equal, exit 2)."""
    lines = []
    for name, extra in (("lo", []), ("sp", ["--spark"])):
        argv = ["replay", str(path), "--out", str(tmp_path / name), *flags, "--outcomes-only"]
        code, _, err = _cli(*argv, *extra)
        assert code == 2, err
        errors = [line for line in err.splitlines() if "error:" in line]
        assert len(errors) == 1, err  # the others are --spark's progress lines
        assert err.splitlines()[-1] == errors[0]
        lines.append(errors[0])
    assert lines[0] == lines[1]
    return lines[1]


def test_bad_input_gives_the_local_one_line_errors(spark, tmp_path):
    frame = events(60, seed=2)
    arrivals = frame["arrival_time"].dt.to_string("iso").to_list()
    arrivals[41] = "soon"
    csv = tmp_path / "bad.csv"
    frame.with_columns(arrival_time=pl.Series(arrivals)).write_csv(csv)
    said = _both_fail(tmp_path, csv, "--timestamp-by", "ts")
    assert "row 42: 'soon'" in said
    ragged = tmp_path / "ragged.csv"
    ragged.write_text("ts,arrival_time\n2024-01-01T00:00:00Z,2024-01-01T00:00:00Z\n1,2,3\n")
    assert "line 3" in _both_fail(tmp_path, ragged, "--timestamp-by", "ts")
    assert "'event_time' is missing" in _both_fail(tmp_path, csv, "--timestamp-by", "event_time")
    folder = tmp_path / "mixed"
    folder.mkdir()
    frame.write_parquet(folder / "a.parquet")
    frame.drop("device").write_parquet(folder / "b.parquet")
    assert "lacks 'device'" in _both_fail(tmp_path, folder, "--timestamp-by", "ts")
    root = tmp_path / "capture" / "ns" / "hub" / "0" / "2024/01/01/00/00"
    write_avro(root / "00.avro", [capture_record(0, body(ts="x"), None, "not a time")])
    said = _both_fail(tmp_path, tmp_path / "capture", "--timestamp-by", "ts")
    assert "record 1: no arrival time" in said
    header_only = tmp_path / "header.csv"
    header_only.write_text("ts,arrival_time,partition_id\n")
    said = _both_fail(tmp_path, header_only, "--timestamp-by", "ts")
    assert said.endswith(f"{header_only}: the capture holds no events")
    truncated = tmp_path / "truncated.csv"
    truncated.write_text(
        "ts,arrival_time,partition_id\n2024-01-01T00:00:00Z,2024-01-01T00:00:01Z,0\n"
        "2024-01-01T00:00:01Z,2024-01-0"
    )
    assert "row 2: '2024-01-0'" in _both_fail(tmp_path, truncated, "--timestamp-by", "ts")


@st.composite
def _inputs(draw: st.DrawFn) -> tuple[pl.DataFrame, str, OrderingPolicy]:
    n = draw(st.integers(1, 120))
    frame = events(n, seed=draw(st.integers(0, 10_000)))
    fmt = draw(st.sampled_from(["csv", "jsonl", "csv.gz", "folder", "capture"]))
    late = draw(st.sampled_from([None, 0, 5, 60]))  # None: unlimited
    policy = OrderingPolicy(
        timestamp_by="ts",
        late_arrival_ns=None if late is None else late * 10**9,
        out_of_order_ns=draw(st.sampled_from([0, 2, 10])) * 10**9,
        action=draw(st.sampled_from(list(Action))),
        partition_by=draw(st.booleans()),
    )
    return frame, fmt, policy


def _write(frame: pl.DataFrame, fmt: str, folder: Path) -> Path:
    if fmt == "csv":
        frame.write_csv(folder / "cap.csv", separator=";")
        return folder / "cap.csv"
    if fmt == "jsonl":
        frame.write_ndjson(folder / "cap.jsonl")
        return folder / "cap.jsonl"
    if fmt == "csv.gz":
        (folder / "cap.csv.gz").write_bytes(gzip.compress(frame.write_csv().encode()))
        return folder / "cap.csv.gz"
    if fmt == "folder":
        half = frame.height // 2
        (folder / "p").mkdir()
        frame.slice(0, half).write_parquet(folder / "p" / "0.parquet", row_group_size=17)
        frame.slice(half).write_parquet(folder / "p" / "1.parquet", row_group_size=17)
        return folder / "p"
    write_capture_folder(frame.drop("status"), folder / "c", window_s=30)
    return folder / "c"


@pytest.mark.slow
@settings(
    max_examples=10,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(case=_inputs())
def test_random_inputs_replay_on_spark_as_locally(spark, tmp_path_factory, case):
    frame, fmt, policy = case
    folder = tmp_path_factory.mktemp("inputs")
    path = _write(frame, fmt, folder)
    same(spark, path, folder / "out", policy)
