"""The default pack on the bundled sample logs, aggregated by the polars reference of the
Spark job (``diagnostics.logs.aggregate``) and written in the agreed folder layout."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from conftest import REPO, RULES_DIR

from diagnostics.cli import main
from diagnostics.logs.aggregate import aggregate_files
from diagnostics.logs.inputs import expand_inputs

DROPPED = {"EarlyInputEvent", "InvalidInputTimeStamp", "InvalidInputTimeStampKey"}


@pytest.fixture(scope="module")
def sample_agg(tmp_path_factory: pytest.TempPathFactory) -> Path:
    files = expand_inputs([str(REPO / "sample_logs" / "asa")])
    tables = aggregate_files(files.logs, files.metrics)
    root = tmp_path_factory.mktemp("agg")
    for name in ("data_errors", "error_rollup", "partition_idle", "metrics", "quarantine"):
        frame: pl.DataFrame = getattr(tables, name)
        folder = root / name
        folder.mkdir()
        if "date" in frame.columns and frame.height:
            for (day,), part in frame.group_by(["date"], maintain_order=True):
                sub = folder / f"date={day}"
                sub.mkdir()
                part.drop("date").write_parquet(sub / "part-0.parquet")
        elif frame.height:
            frame.write_parquet(folder / "part-0.parquet")
    (root / "summary.json").write_text(json.dumps(tables.summary), encoding="utf-8")
    return root


def test_sample_logs_alert_on_every_drop_and_on_quarantine(
    sample_agg: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "alerts.jsonl"
    code = main(
        [
            "alerts",
            str(sample_agg),
            "--rules",
            str(RULES_DIR),
            "--out",
            str(out),
            "--fail-on",
            "critical",
        ]
    )
    capsys.readouterr()
    alerts = [json.loads(line) for line in out.read_text().splitlines()]
    rollup = pl.read_parquet(
        sample_agg / "error_rollup" / "**" / "*.parquet", hive_partitioning=True
    )
    dropped = rollup.filter(pl.col("kind").is_in(DROPPED) & (pl.col("event_count") > 0))
    # one dropped-events group per (job, kind) that dropped anything, and exit 1 because of it
    expected_groups = set(dropped.select("job", "kind").unique().iter_rows())
    got_groups = {
        (a["labels"]["job"], a["labels"]["kind"])
        for a in alerts
        if a["rule_id"] == "dropped-events"
    }
    assert got_groups == expected_groups
    assert expected_groups
    assert code == 1
    # the quarantined records, counted per file
    summary = json.loads((sample_agg / "summary.json").read_text())
    quarantined = [a for a in alerts if a["rule_id"] == "quarantined-records"]
    assert sum(a["value"] for a in quarantined) == summary["records_quarantined"] > 0
    assert {a["state"] for a in quarantined} == {"firing"}
