"""A capture named by a URI on Spark (docs/spark-replay.md, S0): listed and copied by Spark's
own file systems, then replayed as the same files on this disk; ``file://`` URIs go through
that path here (no storage account), and a scheme the cluster cannot open is one line."""

from __future__ import annotations

import json
import os
from pathlib import Path
from unittest import mock

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from diagnostics.captures.capture_writer import write_capture_folder
from diagnostics.spark.replay_uris import COPY_FOLDER, scheme_of
from tests.captures.helpers import run_cli
from tests.spark.input_files import PATH_FORMAT, custom_capture
from tests.spark.test_replay_inputs import events

pytestmark = pytest.mark.spark


def test_schemes_and_local_paths():
    assert scheme_of("abfss://c@acct.dfs.core.windows.net/cap") == "abfss"
    assert scheme_of("wasbs://c@acct.blob.core.windows.net/x.csv") == "wasbs"
    assert scheme_of("dbfs:/mnt/cap") == "dbfs"
    assert scheme_of("file:///tmp/cap") == "file"
    assert scheme_of("S3A://bucket/cap") == "s3a"
    assert scheme_of("/tmp/cap") is None
    assert scheme_of("cap/day=1/a.csv") is None
    assert scheme_of("C:/captures/a.csv") is None  # a Windows drive


def _replay(path: str, out: Path, *flags: str) -> tuple[dict, pl.DataFrame]:
    spark = "--spark" in flags
    code, text, err = run_cli("replay", path, "--out", str(out), "--json", *flags)
    assert code == 0, err
    outcomes = pl.read_parquet(out / ("outcomes" if spark else "outcomes.parquet"))
    return json.loads(text), outcomes


def _same_as_local(local: Path, uri: str, tmp_path: Path, *flags: str) -> pl.DataFrame:
    """``uri`` replayed on Spark gives the outcomes and summary of ``local`` replayed here
    (the summary's input named by the URI); the copy is gone afterwards."""
    summary, outcomes = _replay(str(local), tmp_path / "lo", "--timestamp-by", "ts", *flags)
    got, spark_outcomes = _replay(uri, tmp_path / "sp", "--timestamp-by", "ts", "--spark", *flags)
    assert_frame_equal(spark_outcomes, outcomes)
    assert got["input"].pop("source") == uri
    summary["input"].pop("source")
    assert got == summary
    assert not (tmp_path / "sp" / COPY_FOLDER).exists()
    return spark_outcomes


def test_a_csv_file_uri(spark, tmp_path):
    path = tmp_path / "in" / "cap.csv"
    path.parent.mkdir()
    events(150, seed=4).write_csv(path, separator=";")
    outcomes = _same_as_local(path, path.as_uri(), tmp_path)
    assert outcomes.height == 150


def test_a_parquet_folder_glob_and_a_capture_folder_by_uri(spark, tmp_path):
    folder = tmp_path / "day"
    (folder / "later").mkdir(parents=True)
    frame = events(seed=5)
    frame.slice(0, 90).write_parquet(folder / "a.parquet", row_group_size=40)
    frame.slice(90, 100).write_parquet(folder / "c.parquet")
    frame.slice(190).write_parquet(folder / "later" / "d.parquet")
    assert _same_as_local(folder, folder.as_uri(), tmp_path / "1").height == frame.height
    glob = f"{folder.as_uri()}/*.parquet"  # not the subfolder's file, as locally
    outcomes = _same_as_local(Path(f"{folder}/*.parquet"), glob, tmp_path / "2")
    assert outcomes.height == 190
    capture = tmp_path / "capture"
    write_capture_folder(frame.drop("status"), capture, window_s=60)
    _same_as_local(capture, capture.as_uri(), tmp_path / "3")
    laid_out = tmp_path / "custom"
    given = custom_capture(laid_out)
    assert given == ["--capture-path-format", PATH_FORMAT]
    code, text, err = run_cli(
        "replay", laid_out.as_uri(), "--out", str(tmp_path / "4"), "--spark",
        "--timestamp-by", "event_time", *given,
    )  # fmt: skip
    assert code == 0, err
    assert laid_out.as_uri() in text


def _one_line_error(*argv: str) -> str:
    code, _, err = run_cli(*argv)
    assert code == 2, err
    errors = [line for line in err.splitlines() if "error:" in line]
    assert len(errors) == 1, err
    assert err.strip().splitlines()[-1] == errors[0]
    return errors[0]


def test_a_scheme_the_cluster_cannot_open_and_a_missing_path(spark, tmp_path):
    uri = "abfss://cap@account.dfs.core.windows.net/ns/hub"
    # handed to a cluster (--master), the URL is the cluster's to open: this one has no
    # hadoop-azure
    said = _one_line_error(
        "replay", uri, "--out", str(tmp_path / "o"), "--spark", "--master", "local[2]",
        "--timestamp-by", "ts",
    )  # fmt: skip
    assert f"{uri}: this Spark has no file system for scheme 'abfss'" in said
    # locally it is read through the storage library, with the environment's credentials
    # (none here): one line naming the URL
    env = {k: v for k, v in os.environ.items() if not k.startswith("AZURE_")}
    with mock.patch.dict(os.environ, env, clear=True):
        said = _one_line_error(
            "replay", uri, "--out", str(tmp_path / "o"), "--spark", "--timestamp-by", "ts"
        )
    assert f"{uri}: access refused" in said
    missing = (tmp_path / "nothing").as_uri()
    said = _one_line_error(
        "replay", missing, "--out", str(tmp_path / "o"), "--spark", "--timestamp-by", "ts"
    )
    assert said.endswith(f"{missing}: no such file or folder")


def test_errors_name_the_uri_not_the_copy(spark, tmp_path):
    ragged = tmp_path / "ragged.csv"
    ragged.write_text("ts,arrival_time\n2024-01-01T00:00:00Z,2024-01-01T00:00:00Z\n1,2,3\n")
    said = _one_line_error(
        "replay", ragged.as_uri(), "--out", str(tmp_path / "o"), "--spark", "--timestamp-by", "ts"
    )
    assert ragged.as_uri() in said
    assert "line 3" in said
    assert COPY_FOLDER not in said
