"""``orderdoc demo --spark``: replay, aggregation and the recommender's settings on Spark give
the report of the local demo and its diagnostics.jsonl; the replay's outcomes are an
``outcomes/`` folder, read back by the report."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from diagnostics.cli import main

pytestmark = pytest.mark.spark


def _demo(out: Path, *spark: str) -> str:
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        assert main(["demo", "--out", str(out), "--scenario", "late_senders", *spark]) == 0
    return buffer.getvalue().replace(str(out), "OUT")


@pytest.mark.slow
def test_demo_on_spark_reports_what_the_local_demo_reports(spark, tmp_path):
    local = _demo(tmp_path / "local")
    on_spark = _demo(tmp_path / "spark", "--spark", "--master", "local[2]")
    assert on_spark == local
    folder = tmp_path / "spark" / "late_senders"
    assert not (folder / "replay" / "outcomes.parquet").exists()
    assert (
        sorted(p.name for p in (folder / "replay" / "outcomes").iterdir())[0]
        == "part-00000.parquet"
    )
    for name in ("explain.json", "whatif/whatif.csv", "replay/diagnostics.jsonl"):
        assert (folder / name).read_text() == (
            tmp_path / "local" / "late_senders" / name
        ).read_text()
    assert (
        json.loads((folder / "explain.json").read_text())["findings"][0]["cause"]
        == "batching_senders"
    )
    md = (tmp_path / "spark" / "report.md").read_text().replace(str(tmp_path / "spark"), "OUT")
    assert md == (tmp_path / "local" / "report.md").read_text().replace(
        str(tmp_path / "local"), "OUT"
    )
    assert not list((tmp_path / "spark").glob("orderdoc-whatif-*"))  # the evaluator's files removed
