"""Issue 39, point 12, on the fleet: OVER without PARTITION BY is refused before the capture
is read, by every command that replays it; the replay's diagnostics name the job of
``--job-definition``; and no numpy warning reaches the user."""

from __future__ import annotations

import json
import warnings

import polars as pl
import pytest

from diagnostics.cli import main
from diagnostics.engine.policy import OrderingPolicy
from diagnostics.generate.fleet_files import TELEMETRY_JOB
from diagnostics.whatif.evaluate import prepare
from diagnostics.whatif.staircase import timelines_of

from ..fleet_small import small_fleet


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    return small_fleet(tmp_path_factory.mktemp("fleet12"))


def _no_reading(monkeypatch) -> None:
    """Any read of a capture fails the test."""

    def refuse(*args, **kwargs):
        raise AssertionError("the capture was read before the flags were checked")

    monkeypatch.setattr("diagnostics.cli.capture_args.read_capture", refuse)


@pytest.mark.parametrize(
    "command",
    [
        ["replay", "{capture}", "--timestamp-by", "eventTime", "--out", "{out}"],
        ["replay", "{capture}", "--job-definition", "{job}", "--out", "{out}", "--spark"],
        ["explain", "--events", "{capture}", "--job-definition", "{job}"],
        ["impact", "{capture}", "--job-definition", "{job}", "--out", "{out}"],
    ],
    ids=["replay", "replay-spark", "explain", "impact"],
)
def test_over_without_partition_by_is_refused_before_reading(
    fleet, tmp_path, capsys, monkeypatch, command
):
    _no_reading(monkeypatch)
    monkeypatch.setattr(
        "diagnostics.cli.replay_spark.spark_session",
        lambda *a, **k: pytest.fail("Spark was started before the flags were checked"),
    )
    values = {"capture": str(fleet.capture), "job": str(fleet.job), "out": str(tmp_path / "o")}
    args = [part.format(**values) for part in command] + ["--over", "deviceId"]
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "OVER deviceId on an input with 8 partitions needs PARTITION BY" in err
    assert "(use --partition-by)" in err


def test_over_with_partition_by_is_not_refused(fleet, tmp_path, capsys):
    out = tmp_path / "o"
    args = ["replay", str(fleet.capture), "--timestamp-by", "eventTime", "--out", str(out)]
    assert main([*args, "--over", "deviceId", "--partition-by", "--outcomes-only"]) == 0
    assert (out / "outcomes.parquet").is_file()


def test_declared_partitions_are_checked_before_reading_a_table(tmp_path, capsys, monkeypatch):
    capture = tmp_path / "c.csv"
    pl.DataFrame(
        {"ts": ["2024-01-01T00:00:00Z"], "arrival_time": ["2024-01-01T00:00:01Z"], "k": ["a"]}
    ).write_csv(capture)
    _no_reading(monkeypatch)
    args = ["replay", str(capture), "--timestamp-by", "ts", "--over", "k", "--partitions", "2"]
    assert main([*args, "--out", str(tmp_path / "o")]) == 2
    assert "on an input with 2 partitions needs PARTITION BY" in capsys.readouterr().err


def test_a_parquet_capture_is_checked_from_its_partition_column(tmp_path, capsys, monkeypatch):
    capture = tmp_path / "c.parquet"
    pl.DataFrame(
        {
            "ts": ["2024-01-01T00:00:00Z"] * 3,
            "arrival_time": ["2024-01-01T00:00:01Z"] * 3,
            "k": ["a", "b", "c"],
            "partition_id": [0, 1, 2],
        }
    ).write_parquet(capture)
    _no_reading(monkeypatch)
    args = ["replay", str(capture), "--timestamp-by", "ts", "--over", "k"]
    assert main([*args, "--out", str(tmp_path / "o")]) == 2
    assert "on an input with 3 partitions needs PARTITION BY" in capsys.readouterr().err


def test_replay_diagnostics_name_the_definitions_job(fleet, tmp_path, capsys):
    out = tmp_path / "r"
    args = ["replay", str(fleet.capture), "--job-definition", str(fleet.job), "--out", str(out)]
    assert main(args) == 0
    records = [json.loads(line) for line in (out / "diagnostics.jsonl").read_text().splitlines()]
    assert records
    jobs = {r["resourceId"].rsplit("/", 1)[1] for r in records}
    assert jobs == {TELEMETRY_JOB}
    sources = {r["properties"]["Source"] for r in records if "Source" in r["properties"]}
    assert sources == {"telemetry-eh"}
    metrics = pl.read_parquet(out / "metrics.parquet")
    if "job" in metrics.columns:
        assert set(metrics["job"].unique().to_list()) == {TELEMETRY_JOB}
    # --job still names it when given
    again = tmp_path / "r2"
    assert main([*args[:-1], str(again), "--job", "other-job"]) == 0
    first = json.loads((again / "diagnostics.jsonl").read_text().splitlines()[0])
    assert first["resourceId"].endswith("/other-job")


def test_keys_missing_on_some_events_give_no_numpy_warning(fleet):
    """The fleet's bodies that are not JSON have no deviceId: their timeline is none, and
    reading the keys' ranks warns about nothing (it said ``invalid value encountered in
    cast``)."""
    from diagnostics.captures.reader import read_capture

    capture = read_capture(fleet.capture)
    events, _ = capture.apply(
        OrderingPolicy(timestamp_by="eventTime", over=("deviceId",), partition_by=True)
    )
    assert events["deviceId"].null_count() > 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        prepared = prepare(events, "eventTime", ("deviceId",), columns=capture.columns)
        lines = timelines_of(prepared, "eventTime", ("deviceId",))
    missing = prepared.frame["deviceId"].is_null().to_numpy()  # processing order
    assert missing.any()
    assert lines.ok[missing].sum() == 0  # no timeline: never decided by a tolerance
    assert lines.timelines == events["deviceId"].drop_nulls().n_unique()


def test_explain_prints_no_runtime_warning(fleet, capsys):
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        assert (
            main(["explain", "--events", str(fleet.capture), "--job-definition", str(fleet.job)])
            == 0
        )
    captured = capsys.readouterr()
    assert "RuntimeWarning" not in captured.err
    assert "Warning" not in captured.err
