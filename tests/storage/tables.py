"""Comparing a folder of aggregate tables (``orderdoc aggregate``, the watcher's ``agg``) with
one pure-Python aggregate of local files, ``source_file`` without its roots (a staged view's,
a mirror's and a local folder's differ; the names under them do not)."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from diagnostics.aggregates import TableName, table_files
from diagnostics.logs import aggregate as reference
from diagnostics.logs.inputs import expand_inputs
from tests.spark.conftest import canonical, read_table
from tests.spark.test_job import COLUMNS

#: What is taken off the front of ``source_file``: the folders before ``resourceId=``.
ROOTS = r"^.*?/(?:resourceId=)"


def relative(frame: pl.DataFrame, roots: str = ROOTS) -> pl.DataFrame:
    """``frame`` with the front of ``source_file`` that matches ``roots`` taken off."""
    if "source_file" not in frame.columns:
        return frame
    return frame.with_columns(pl.col("source_file").str.replace(roots, ""))


def assert_tables_equal_local(agg: Path, folders: list[Path], roots: str = ROOTS) -> None:
    """Every table under ``agg`` equals that of one aggregate of the logs in ``folders``
    (``source_file`` without the front ``roots`` matches: the roots differ)."""
    files = expand_inputs([str(f) for f in folders])
    expected = reference.aggregate_files(files.logs, files.metrics)
    for table, columns in COLUMNS.items():
        want = getattr(expected, table)
        if not table_files(agg, TableName(table)):
            assert want.is_empty(), table
            continue
        got = relative(read_table(agg / table), roots)
        assert canonical(got, columns) == canonical(relative(want, roots), columns), table
