"""Several Parquet files as one capture: a folder (no .avro in it) or a glob, in path order,
one schema; the memory check counts their rows from the footers."""

from __future__ import annotations

import polars as pl
import pytest

from diagnostics.captures.footprint import estimate
from diagnostics.captures.reader import read_capture
from diagnostics.errors import InputError

FRAME = pl.DataFrame(
    {
        "arrival_time": [f"2024-01-01T00:00:0{i}Z" for i in range(6)],
        "partition_id": [0, 1, 0, 1, 0, 1],
        "status": ["a", "b", "c", "d", "e", "f"],
    }
)


def _folder(tmp_path):
    folder = tmp_path / "day"
    (folder / "sub").mkdir(parents=True)
    FRAME.slice(2, 2).write_parquet(folder / "b.parquet")
    FRAME.slice(0, 2).write_parquet(folder / "a.parquet")
    FRAME.slice(4).write_parquet(folder / "sub" / "c.parquet")
    (folder / "_SUCCESS").write_text("")
    FRAME.write_parquet(folder / ".hidden.parquet")
    return folder


def test_a_folder_of_parquet_files_is_read_in_path_order(tmp_path):
    capture = read_capture(_folder(tmp_path))
    assert capture.kind == "parquet"
    assert capture.events["input_status"].to_list() == FRAME["status"].to_list()
    assert capture.notes == ("3 Parquet files, read in path order",)
    assert estimate(tmp_path / "day").events == 6


def test_a_glob_names_parquet_files(tmp_path):
    folder = _folder(tmp_path)
    capture = read_capture(f"{folder}/*.parquet")
    assert capture.source == f"{folder}/*.parquet"
    assert capture.events.height == 4  # not the subfolder's file
    assert read_capture(f"{folder}/**/*.parquet").events.height == 6
    with pytest.raises(InputError, match="the pattern matches no file"):
        read_capture(f"{folder}/*.csv")


def test_files_of_another_schema_are_one_line_naming_the_file(tmp_path):
    folder = _folder(tmp_path)
    FRAME.drop("status").write_parquet(folder / "d.parquet")
    with pytest.raises(InputError) as error:
        read_capture(folder)
    assert str(error.value).startswith(f"{folder / 'd.parquet'}: its columns differ from")
    assert "lacks 'status'" in str(error.value)
    FRAME.with_columns(pl.col("partition_id").cast(pl.Int32)).write_parquet(folder / "d.parquet")
    with pytest.raises(InputError, match="column 'partition_id' is Int32 here but Int64"):
        read_capture(folder)
