"""Passes over growing files: the tables always equal one ``orderdoc aggregate`` of the files."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

from diagnostics.logs.inputs import expand_inputs
from diagnostics.rules.loader import load_rules
from diagnostics.spark.job import run_aggregate
from diagnostics.watch.runner import EvaluateAt, WatchConfig, Watcher
from tests.spark.conftest import canonical, read_table
from tests.spark.test_job import COLUMNS

pytestmark = pytest.mark.spark

RULES = Path(__file__).resolve().parents[2] / "rules"
NOW = datetime(2024, 3, 6, 12, 0, tzinfo=UTC)


def watcher(spark, logs: Path, state: Path) -> Watcher:
    config = WatchConfig(folders=(logs,), state=state, once=True, evaluate_at=EvaluateAt.DATA_END)
    return Watcher(spark, config, load_rules([RULES]), clock=lambda: NOW, say=print)


def assert_equals_one_shot(spark, logs: Path, agg: Path, tmp: Path) -> None:
    files = expand_inputs([str(logs)])
    one_shot = tmp / "one-shot"
    expected = run_aggregate(spark, files, one_shot)
    summary = json.loads((agg / "summary.json").read_text())
    assert summary == expected.summary
    for table, columns in COLUMNS.items():
        if not (one_shot / table).exists():
            assert not (agg / table).exists(), table
            continue
        assert canonical(read_table(agg / table), columns) == canonical(
            read_table(one_shot / table), columns
        ), table
    shutil.rmtree(one_shot)


def test_growing_files_equal_one_shot(spark, samples: Path, tmp_path: Path) -> None:
    logs, state = tmp_path / "logs", tmp_path / "state"
    (logs / "h12").mkdir(parents=True)
    lines = (samples / "PT1H.json").read_bytes().splitlines(keepends=True)
    live = logs / "h12" / "PT1H.json"
    live.write_bytes(b"".join(lines[:2]))
    shutil.copy(samples / "loganalytics-azurediagnostics.csv", logs / "export.csv")
    shutil.copy(samples / "bare-array.json", logs / "bare-array.json")
    w = watcher(spark, logs, state)

    first = w.tick()
    assert first.passes == (1,)
    assert_equals_one_shot(spark, logs, state / "agg", tmp_path)

    # appended lines (the last one still being written), a new gzip file, a new folder
    partial = lines[4][: len(lines[4]) // 2]
    live.write_bytes(b"".join(lines[:4]) + partial)
    (logs / "h13").mkdir()
    shutil.copy(samples / "PT1H-archive.json.gz", logs / "h13" / "PT1H-archive.json.gz")
    shutil.copy(samples / "mixed-malformed.json", logs / "h13" / "PT1H.json")
    second = w.tick()
    assert second.passes == (2,)  # one batch of new files; its pass also reads the growth
    manifest = json.loads((state / "manifest.json").read_text())
    followed = {f["path"]: f for f in manifest["files"]}[str(live.resolve())]
    assert followed["offset"] == len(b"".join(lines[:4]))  # the partial line waits
    # the one-shot reads the half-written line as it is now: compare once it is complete

    live.write_bytes(b"".join(lines))
    export = (logs / "export.csv").read_text(encoding="utf-8")
    (logs / "export.csv").write_text(export + export.splitlines()[1] + "\n", encoding="utf-8")
    third = w.tick()
    assert third.passes == (3,)  # no new file: the pass after the query
    assert_equals_one_shot(spark, logs, state / "agg", tmp_path)

    # nothing changed: no pass, the table files untouched
    before = {p: p.stat().st_mtime_ns for p in (state / "agg").rglob("*") if p.is_file()}
    assert w.tick().passes == ()
    after = {p: p.stat().st_mtime_ns for p in (state / "agg").rglob("*") if p.is_file()}
    assert after == before
