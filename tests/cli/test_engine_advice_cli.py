"""``orderdoc whatif --rules flink|spark`` and ``orderdoc explain --events --rules ...``: the
engine's settings searched and findings worded in the engine's terms, one-line errors for
ASA's flags."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from diagnostics.cli import main

ROOT = Path(__file__).resolve().parents[2]
IDLE = ROOT / "sample_logs" / "scenarios" / "idle_partition" / "capture.csv"
LATE = ROOT / "sample_logs" / "scenarios" / "late_senders" / "capture.csv"
FLAGS = ["--timestamp-by", "event_time", "--window", "1m"]


def test_explain_flink_names_the_silent_split_and_the_idleness_that_fixes_it(capsys) -> None:
    assert main(["explain", "--events", str(IDLE), "--rules", "flink", *FLAGS]) == 0
    text = capsys.readouterr().out
    assert "a silent split held Flink's watermark back" in text
    assert "withIdleness(" in text.split("fix:")[1]
    assert "LateInputEvent" not in text
    assert "late arrival tolerance" not in text


def test_explain_spark_counts_the_drop_in_spark_terms(capsys) -> None:
    code = main(["explain", "--events", str(LATE), "--rules", "spark", *FLAGS, "--format", "json"])
    assert code == 0
    report = json.loads(capsys.readouterr().out)
    first = report["findings"][0]
    assert first["title"].startswith("Spark drops 259 of 2,000 events as late")
    assert "numRowsDroppedByWatermark" in first["title"]
    assert "withWatermark delay" in first["fix"]


def test_whatif_flink_writes_the_table_and_recommends_in_flink_settings(tmp_path, capsys) -> None:
    code = main(["whatif", str(LATE), "--rules", "flink", *FLAGS, "--idleness", "5s",
                 "--out", str(tmp_path)])  # fmt: skip
    assert code == 0
    text = capsys.readouterr().out
    assert "recommended: forBoundedOutOfOrderness(" in text
    table = pl.read_csv(tmp_path / "whatif.csv")
    assert {"out_of_orderness_s", "idleness_s", "allowed_lateness_s", "pct_dropped"} <= set(
        table.columns
    )
    assert table.filter(pl.col("tried_as") == "job as it is").height == 1
    assert table["recommended"].sum() == 1


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["whatif", str(LATE), "--rules", "spark", *FLAGS, "--late-arrival", "5s"],
            "--late-arrival: ASA's settings or outputs, not spark's",
        ),
        (
            ["explain", "agg", "--events", str(LATE), "--rules", "flink", *FLAGS],
            "give --events CAPTURE and no AGG_DIR",
        ),
        (
            ["explain", "--events", str(LATE), "--rules", "flink", *FLAGS, "--trigger", "1s"],
            "--trigger: not a setting of Flink's rules",
        ),
    ],
)
def test_asa_flags_with_engine_rules_are_one_line_errors(argv, message, capsys) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err
    assert len(err.strip().splitlines()) == 1
