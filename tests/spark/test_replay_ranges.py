"""One large CSV or JSON Lines file cut into byte ranges on Spark (docs/spark-replay.md, S0):
the range size forced small, the outcomes and the summary equal the local replay's event for
event, with quoted cells over several lines cut at a range edge, decimal commas, and the
local reader's fallback to text when a row after the first 10,000 does not parse."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from diagnostics.captures.dialect import CsvOptions
from diagnostics.captures.reader import read_capture
from diagnostics.errors import InputError
from diagnostics.spark.replay_ranges import plan_ranges
from diagnostics.spark.replay_splits import SliceRead, plan_replay
from tests.spark.test_replay_inputs import POLICY, events, same

pytestmark = pytest.mark.spark


def ranged_same(
    spark, path: Path, out: Path, range_bytes: int, csv: CsvOptions | None = None
) -> tuple[pl.DataFrame, list[tuple[int, int]]]:
    """``path`` replayed here and on Spark cut into ranges of ``range_bytes``: equal outcomes
    and summaries; the outcomes and the ranges' bytes."""
    planned = plan_replay(
        str(path), str(path), None, None, POLICY, spark=spark, csv=csv, range_bytes=range_bytes
    )
    ranges = [(s.start, s.stop) for s in planned[0].slices if s.read is SliceRead.RANGE]
    assert len(ranges) == len(planned[0].slices) >= 3
    outcomes = same(spark, path, out, csv=csv, planned=planned)
    return outcomes, ranges


def test_csv_ranges_cut_inside_a_quoted_cell(spark, tmp_path):
    path = tmp_path / "cap.csv"
    frame = events(400, seed=8).with_columns(
        reading=pl.Series([f"{i % 90},{i % 7}" for i in range(400)])  # decimal commas
    )
    frame.write_csv(path, separator=";")
    data = path.read_bytes()
    first = data.index(b"\n") + 1
    inside = data.index(b'"two\nlines"', first) + len(b'"two')  # the break inside the quotes
    outcomes, ranges = ranged_same(spark, path, tmp_path / "out", inside - first)
    assert all(data[start - 1 : start] == b"\n" for start, _ in ranges)
    assert inside + 1 not in [start for start, _ in ranges]  # not cut inside the cell
    assert outcomes["input_status"].str.contains("\n").any()
    assert outcomes["reading"].dtype == pl.Float64
    for size in (977, 2_500):
        ranged_same(spark, path, tmp_path / f"out{size}", size)


def test_csv_falls_back_to_text_as_the_local_reader(spark, tmp_path):
    """A number column whose row 10,500 is text: the local reader reads the whole file as
    text; so do the ranges (and the first 10,000 rows alone would say integers)."""
    n = 10_600
    frame = (
        events(n, seed=2)
        .drop("status")
        .with_columns(count=pl.Series([str(i) if i != 10_500 else "many" for i in range(n)]))
    )
    path = tmp_path / "big.csv"
    frame.write_csv(path)
    outcomes, _ = ranged_same(spark, path, tmp_path / "out", 120_000)
    assert outcomes["count"].dtype == pl.String
    assert outcomes["partition_id"].dtype == pl.String  # the whole file, as locally


def test_json_lines_ranges(spark, tmp_path):
    path = tmp_path / "cap.jsonl"
    events(300, seed=6).write_ndjson(path)
    outcomes, ranges = ranged_same(spark, path, tmp_path / "out", 3_000)
    assert len(ranges) >= 5
    assert outcomes.height == 300


@pytest.mark.parametrize("bad_line", [5, 11_900])
def test_a_ragged_row_gives_the_local_error(spark, tmp_path, bad_line):
    """In the head (the rows the types come from) or in a range after it (the survey finds
    it): the file is read whole again, so the error is the local reader's (file, line)."""
    path = tmp_path / "ragged.csv"
    rows = [f"2024-01-01T00:00:{i % 60:02d}Z,2024-01-01T00:00:{i % 60:02d}Z" for i in range(12_000)]
    rows[bad_line - 2] = "1,2,3"
    path.write_text("\n".join(["ts,arrival_time", *rows]) + "\n", encoding="utf-8")
    assert plan_ranges(spark, str(path), "csv", CsvOptions(), 40_000) is None
    with pytest.raises(InputError) as local:
        read_capture(path)
    with pytest.raises(InputError) as got:
        plan_replay(str(path), str(path), None, None, POLICY, spark=spark, range_bytes=40_000)
    assert str(got.value) == str(local.value)
    assert f"line {bad_line}" in str(got.value)
