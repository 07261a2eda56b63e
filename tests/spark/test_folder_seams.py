"""The Spark job's aggregate folder reads, in every consumer, as the app's builder's does."""

from __future__ import annotations

from pathlib import Path

import pytest

from diagnostics.aggregates import TABLES, TableName
from diagnostics.aggregates.spark import spark_schema, write_frame
from diagnostics.appdata.build import build_from_logs
from diagnostics.spark.job import run_aggregate
from tests.aggregates.seams import read_everywhere, sample_inputs

pytestmark = pytest.mark.spark


def test_spark_folder_reads_as_the_app_folder_everywhere(spark, tmp_path: Path) -> None:
    files = sample_inputs()
    result = run_aggregate(spark, files, tmp_path / "spark")
    assert result.tables == tuple(TableName)
    assert (tmp_path / "spark" / "data_errors").is_dir()
    assert any((tmp_path / "spark" / "data_errors").glob("date=*/*.parquet"))
    build_from_logs(
        [Path(p) for p in files.logs],
        tmp_path / "app",
        metrics=[Path(p) for p in files.metrics],
    )
    got, want = read_everywhere(tmp_path / "spark"), read_everywhere(tmp_path / "app")
    assert got.app_tables == want.app_tables
    assert got.evidence == want.evidence
    assert got.alerts == want.alerts
    assert want.alerts
    # the app's builder is given the files to read, not the folders (nothing skipped)
    assert got.app_summary == want.app_summary | {"files_skipped": list(files.skipped)}


def test_spark_schemas_come_from_the_table_definitions(spark, tmp_path: Path) -> None:
    for table, spec in TABLES.items():
        assert spark_schema(table).names == list(spec.columns)
    frame = spark.createDataFrame(
        [("f", 1, "r", "x")], "source_file string, source_line long, reason string, raw string"
    )
    with pytest.raises(ValueError, match="aggregate table quarantine: columns"):
        write_frame(frame, tmp_path, TableName.QUARANTINE)
    assert not (tmp_path / "quarantine").exists()
