"""Outcomes as one file or one folder of part files: every reader reads both alike."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from diagnostics.engine.outcomes_files import outcomes_in, part_files, read_outcomes
from diagnostics.errors import InputError
from tests.outcome_parts import split_outcomes

LATE = Path(__file__).resolve().parents[2] / "sample_logs" / "scenarios" / "late_senders"


def test_a_folder_of_parts_reads_as_the_file(tmp_path: Path) -> None:
    whole = pl.read_parquet(LATE / "outcomes.parquet")
    folder = split_outcomes(LATE / "outcomes.parquet", tmp_path / "outcomes")
    assert len(part_files(folder)) > 10  # more parts than ten: name order, not 1, 10, 2
    back = read_outcomes(folder)
    assert back.schema == whole.schema
    assert back.equals(whole)
    assert back["event_id"].is_sorted()
    assert read_outcomes(folder, columns=["status"]).equals(whole.select("status"))
    assert read_outcomes(LATE / "outcomes.parquet").equals(whole)


def test_outcomes_in_prefers_the_file_then_the_folder(tmp_path: Path) -> None:
    assert outcomes_in(tmp_path) is None
    (tmp_path / "outcomes").mkdir()
    assert outcomes_in(tmp_path) == tmp_path / "outcomes"
    (tmp_path / "outcomes.parquet").write_bytes(b"")
    assert outcomes_in(tmp_path) == tmp_path / "outcomes.parquet"


def test_a_folder_without_parts_or_a_missing_path_names_it(tmp_path: Path) -> None:
    empty = tmp_path / "outcomes"
    empty.mkdir()
    (empty / ".part-00000.parquet.tmp").write_bytes(b"x")
    with pytest.raises(InputError, match=r"outcomes: no part-\*\.parquet file"):
        read_outcomes(empty)
    with pytest.raises(InputError, match="gone: no such outcomes file or folder"):
        read_outcomes(tmp_path / "gone")


def test_an_unreadable_part_or_parts_that_disagree_name_the_file(tmp_path: Path) -> None:
    folder = split_outcomes(LATE / "outcomes.parquet", tmp_path / "outcomes")
    (folder / "part-00003.parquet").write_bytes(b"not parquet")
    with pytest.raises(InputError, match=r"part-00003\.parquet: cannot be read as replay"):
        read_outcomes(folder)
    other = tmp_path / "other"
    other.mkdir()
    pl.DataFrame({"a": [1]}).write_parquet(other / "part-00000.parquet")
    pl.DataFrame({"b": ["x"]}).write_parquet(other / "part-00001.parquet")
    with pytest.raises(InputError, match="other: its part files do not hold the same columns"):
        read_outcomes(other)
