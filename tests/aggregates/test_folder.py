"""The aggregate folder has one owner: every producer's folder reads the same in every consumer.

The Spark job's folder is checked the same way in tests/spark/test_folder_seams.py.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import polars as pl
import pytest

from diagnostics import aggregates
from diagnostics.aggregates import TABLES, TableName, Tables, table_files, write_tables
from diagnostics.aggregates.folder import write_table
from diagnostics.appdata.build import build_from_logs
from diagnostics.logs.aggregate import aggregate_files
from diagnostics.logs.metrics import METRICS_SCHEMA
from diagnostics.logs.records import PARSED_SCHEMA
from diagnostics.report.pipeline import write_agg_dir
from diagnostics.rules import tables as rule_tables
from tests.aggregates.seams import Views, read_everywhere, rows, sample_inputs


@pytest.fixture(scope="module")
def reference() -> Tables:
    files = sample_inputs()
    return aggregate_files(files.logs, files.metrics)


@pytest.fixture(scope="module")
def app_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    files = sample_inputs()
    out = tmp_path_factory.mktemp("app") / "agg"
    build_from_logs([Path(p) for p in files.logs], out, metrics=[Path(p) for p in files.metrics])
    return out


@pytest.fixture(scope="module")
def app_views(app_folder: Path) -> Views:
    return read_everywhere(app_folder)


def test_every_table_reads_back_as_the_reference_computed_it(
    app_views: Views, reference: Tables
) -> None:
    assert list(app_views.app_tables) == list(TableName)
    for table in TableName:
        want = reference.frame(table)
        assert not want.is_empty(), table
        assert app_views.app_tables[table] == rows(want), table
    assert app_views.app_summary["records_quarantined"] == reference.quarantine.height == 5
    assert app_views.alerts, "the sample data fires rules of the default pack"
    assert app_views.evidence["kinds"]
    assert app_views.evidence["idle"]
    job_rows = reference.metrics.filter(pl.col("partition_id").is_null())
    assert app_views.evidence["total"] == job_rows["input_events"].sum() > 0


def test_demo_and_app_folders_read_the_same_everywhere(app_views: Views, tmp_path: Path) -> None:
    files = sample_inputs()
    write_agg_dir([Path(p) for p in files.logs], [Path(p) for p in files.metrics], tmp_path)
    demo = read_everywhere(tmp_path)
    assert demo.app_tables == app_views.app_tables
    assert demo.evidence == app_views.evidence
    assert demo.alerts == app_views.alerts
    assert demo.app_summary == app_views.app_summary


def _copy(src: Path, dst: Path) -> Path:
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(src, dst)
    return dst


def test_hidden_files_and_spark_temporaries_are_skipped_by_every_reader(
    app_folder: Path, app_views: Views, tmp_path: Path
) -> None:
    agg = tmp_path / "agg"
    shutil.copytree(app_folder, agg)
    for table in TableName:  # a second copy of the rows in places every reader must skip
        part = agg / table.value / "part-0.parquet"
        _copy(part, agg / table.value / "_temporary" / "0" / "part-1.parquet")
        _copy(part, agg / table.value / ".part-2.parquet")
        _copy(part, agg / table.value / "date=2020-01-01" / ".hidden" / "part-3.parquet")
    assert [p.name for p in table_files(agg, TableName.DATA_ERRORS)] == ["part-0.parquet"]
    assert read_everywhere(agg) == app_views


def test_a_table_as_a_single_file_is_read_by_every_consumer(
    app_folder: Path, app_views: Views, tmp_path: Path
) -> None:
    agg = tmp_path / "agg"
    shutil.copytree(app_folder, agg)
    for table in (TableName.METRICS, TableName.PARTITION_IDLE, TableName.DATA_ERRORS):
        (agg / table.value / "part-0.parquet").rename(agg / f"{table.value}.parquet")
    (agg / TableName.METRICS.value).rmdir()
    # a folder without Parquet files does not hide the single file
    assert table_files(agg, TableName.PARTITION_IDLE) == [agg / "partition_idle.parquet"]
    assert read_everywhere(agg) == app_views


def test_a_folder_with_parquet_files_wins_over_a_single_file(tmp_path: Path) -> None:
    frame = pl.DataFrame({"raw": ["x"]})
    (tmp_path / "quarantine").mkdir()
    frame.write_parquet(tmp_path / "quarantine" / "part-0.parquet")
    frame.write_parquet(tmp_path / "quarantine.parquet")
    assert table_files(tmp_path, TableName.QUARANTINE) == [
        tmp_path / "quarantine" / "part-0.parquet"
    ]
    assert table_files(tmp_path, TableName.METRICS) == []


def test_writing_replaces_a_table_and_drops_an_empty_metrics_table(
    app_folder: Path, reference: Tables, tmp_path: Path
) -> None:
    agg = tmp_path / "agg"
    shutil.copytree(app_folder, agg)
    stale = _copy(
        agg / "data_errors" / "part-0.parquet",
        agg / "data_errors" / "date=2020-01-01" / "part-9.parquet",
    )
    _copy(agg / "metrics" / "part-0.parquet", agg / "metrics.parquet")
    empty_metrics = reference.metrics.clear()
    write_tables(Tables(**{**reference.__dict__, "metrics": empty_metrics}), agg)
    assert not stale.exists()
    assert table_files(agg, TableName.METRICS) == []
    assert aggregates.present_tables(agg) == tuple(
        t for t in TableName if t is not TableName.METRICS
    )
    no_events = reference.job_events.clear()
    write_tables(Tables(**{**reference.__dict__, "job_events": no_events}), agg)
    assert table_files(agg, TableName.JOB_EVENTS) == []  # no lifecycle record, no table


def test_a_frame_that_differs_from_the_definition_is_not_written(
    reference: Tables, tmp_path: Path
) -> None:
    with pytest.raises(ValueError, match="aggregate table quarantine: columns"):
        write_table(reference.quarantine.drop("raw_bytes"), tmp_path, TableName.QUARANTINE)
    frame = reference.error_rollup.with_columns(pl.col("records").cast(pl.Int32))
    with pytest.raises(ValueError, match="aggregate table error_rollup"):
        write_table(frame, tmp_path, TableName.ERROR_ROLLUP)
    assert not (tmp_path / "quarantine").exists()


def test_every_view_of_a_table_comes_from_its_one_definition(reference: Tables) -> None:
    assert rule_tables.TABLES is TABLES  # the rules' column check
    for table, spec in TABLES.items():
        arrow = aggregates.arrow_schema(table)
        assert arrow.names == list(spec.columns)
        assert dict(reference.frame(table).schema) == dict(aggregates.polars_schema(table))
    data_errors = TABLES[TableName.DATA_ERRORS]
    events = TABLES[TableName.JOB_EVENTS]
    only_events = [c for c in events.input_columns if c not in data_errors.input_columns]
    assert only_events == ["category", "operation", "action", "status", "message"]
    assert PARSED_SCHEMA.names == [
        *data_errors.input_columns,
        *only_events,
        "reason",
        "raw",
        "raw_bytes",
    ]
    assert data_errors.input_columns == tuple(c for c in data_errors.columns if c != "date")
    metrics = aggregates.arrow_schema(TableName.METRICS, derived=False)
    assert METRICS_SCHEMA.names == [*metrics.names, "source_file"]
    assert all(
        TABLES[t].partition_by == ("date",) for t in TableName if t is not TableName.QUARANTINE
    )


def test_the_reference_summary_names_its_files_as_the_spark_job_does(tmp_path: Path) -> None:
    """summary.json has files_read and files_skipped whoever wrote it (the Spark job's are
    compared with these in tests/spark/test_job.py)."""
    files = sample_inputs()
    assert any(Path(p).name == "README.md" for p in files.skipped)
    tables = aggregate_files(files.logs, files.metrics, skipped=files.skipped)
    assert list(tables.summary)[-2:] == ["files_read", "files_skipped"]
    assert tables.summary["files_read"] == len(files.logs) + len(files.metrics)
    assert tables.summary["files_skipped"] == sorted(files.skipped)
    write_tables(tables, tmp_path)
    assert aggregates.read_summary(tmp_path) == tables.summary
    alone = aggregate_files(files.logs[:1])
    assert (alone.summary["files_read"], alone.summary["files_skipped"]) == (1, [])
