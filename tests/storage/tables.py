"""Comparing a folder of aggregate tables (``orderdoc aggregate``, the watcher's ``agg``) with
one pure-Python aggregate of local files, ``source_file`` taken from ``resourceId=`` on (a
staged view's, a mirror's and a local folder's roots differ; the blob names do not)."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from diagnostics.aggregates import TableName, table_files
from diagnostics.logs import aggregate as reference
from diagnostics.logs.inputs import expand_inputs
from tests.spark.conftest import canonical, read_table
from tests.spark.test_job import COLUMNS


def relative(frame: pl.DataFrame) -> pl.DataFrame:
    """``frame`` with ``source_file`` from its ``resourceId=`` segment on."""
    if "source_file" not in frame.columns:
        return frame
    return frame.with_columns(pl.col("source_file").str.replace(r"^.*?/resourceId=", "resourceId="))


def assert_tables_equal_local(agg: Path, folders: list[Path]) -> None:
    """Every table under ``agg`` equals that of one aggregate of the logs in ``folders``."""
    files = expand_inputs([str(f) for f in folders])
    expected = reference.aggregate_files(files.logs, files.metrics)
    for table, columns in COLUMNS.items():
        want = getattr(expected, table)
        if not table_files(agg, TableName(table)):
            assert want.is_empty(), table
            continue
        got = read_table(agg / table)
        assert canonical(relative(got), columns) == canonical(relative(want), columns), table
