"""``explain --events CAPTURE --spark``: the capture replayed on Spark (its ``outcomes/``
folder read back) and the recommender's settings as Spark tasks give the local report."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from diagnostics.cli import main
from tests.spark.input_files import custom_capture, european_csv

pytestmark = pytest.mark.spark

LATE = Path(__file__).resolve().parents[2] / "sample_logs" / "scenarios" / "late_senders"


@pytest.mark.slow
def test_explain_on_spark_prints_the_local_report(spark, tmp_path, capsys):
    capture = tmp_path / "late.parquet"
    pl.read_csv(LATE / "capture.csv").head(400).write_parquet(capture, row_group_size=150)
    flags = ["--events", str(capture), "--timestamp-by", "event_time", "--partitions", "4"]
    assert main(["explain", *flags, "--format", "json"]) == 0
    local = capsys.readouterr().out
    assert main(["explain", *flags, "--format", "json", "--spark", "--master", "local[2]"]) == 0
    assert capsys.readouterr().out == local
    report = json.loads(local)
    assert report["findings"][0]["cause"] == "late_arrivals"
    assert report["recommended"] is not None


def test_spark_without_a_capture_is_one_line(capsys):
    assert main(["explain", str(LATE), "--spark"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "--spark replays the event capture on Spark: give --events CAPTURE" in err


@pytest.mark.parametrize("write", [european_csv, custom_capture], ids=["csv", "capture"])
def test_explain_on_spark_reads_the_capture_as_the_input_flags_say(spark, tmp_path, capsys, write):
    """``--separator ';' --decimal-comma`` and ``--capture-path-format`` reach the Spark
    replay: without them neither run reads these captures."""
    capture = tmp_path / ("cap.csv" if write is european_csv else "cap")
    given = write(capture)
    flags = ["--events", str(capture), "--timestamp-by", "event_time", "--partitions", "4"]
    assert main(["explain", *flags, "--format", "json", *given]) == 0
    local = capsys.readouterr().out
    spark_flags = ["--spark", "--master", "local[2]"]
    assert main(["explain", *flags, "--format", "json", *given, *spark_flags]) == 0
    assert capsys.readouterr().out == local
    assert json.loads(local)["findings"][0]["cause"] == "late_arrivals"
    assert main(["explain", *flags, "--format", "json"]) == 2  # unread without the flags
    unread = capsys.readouterr().err
    assert main(["explain", *flags, "--format", "json", *spark_flags]) == 2
    assert capsys.readouterr().err == unread
