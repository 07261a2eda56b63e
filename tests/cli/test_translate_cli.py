"""``orderdoc translate`` end to end on the bundled job definitions and captures: the settings,
what has no equivalent, and a measured difference that the two replays confirm."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from diagnostics.cli import main

ROOT = Path(__file__).resolve().parents[2]
JOB = ROOT / "sample_logs" / "jobs" / "cross_device_disorder.resource.json"
CAPTURE = ROOT / "sample_logs" / "scenarios" / "cross_device_disorder" / "capture.csv"


def test_flink_sql_translation_reads_the_window_from_the_query(capsys) -> None:
    assert main(["translate", "--job-definition", str(JOB), "--to", "flink-sql"]) == 0
    text = capsys.readouterr().out
    assert "window      TumblingWindow(1m) (query step output)" in text
    assert "WATERMARK FOR event_time AS event_time - INTERVAL '0' SECOND" in text
    assert "SET 'table.exec.source.idle-timeout' = '5 s';" in text
    assert "ASA features with no equivalent in Flink:" in text
    assert "  - Adjust: ASA keeps late and out-of-order events" in text


@pytest.mark.parametrize("target", ["flink-datastream", "spark"])
def test_the_measured_difference_is_what_the_two_replays_give(target, tmp_path, capsys) -> None:
    code = main(["translate", "--job-definition", str(JOB), "--to", target,
                 "--events", str(CAPTURE), "--json"])  # fmt: skip
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    measured = data["measured"]
    # Replay the same capture both ways with the command the translation prints.
    replay_line = measured["replay"].split()
    assert replay_line[:2] == ["orderdoc", "replay"]
    out = tmp_path / "engine"
    argv = [a if a != "DIR" else str(out) for a in replay_line[2:]]
    assert main(["replay", *argv]) == 0
    engine = pl.read_parquet(out / "outcomes.parquet")
    assert main(["replay", str(CAPTURE), "--out", str(tmp_path / "asa"),
                 "--job-definition", str(JOB), "--outcomes-only"]) == 0  # fmt: skip
    asa = pl.read_parquet(tmp_path / "asa" / "outcomes.parquet")
    keeps = int((~asa["dropped"] & engine["dropped"]).sum())
    assert measured["asa_keeps_engine_drops"] == keeps
    assert measured["engine_dropped"] == int(engine["dropped"].sum())
    assert measured["events"] == asa.height
    assert keeps > 0  # this scenario's disorder: ASA adjusts what the engines drop


def test_translate_errors_are_one_line(tmp_path, capsys) -> None:
    assert main(["translate", "--to", "spark"]) == 2
    assert "--job-definition FILE is required" in capsys.readouterr().err
    hopping = tmp_path / "q.json"
    job = json.loads(JOB.read_text())
    job["properties"]["transformation"]["properties"]["query"] = (
        "SELECT COUNT(*) INTO output FROM telemetry TIMESTAMP BY event_time "
        "GROUP BY HoppingWindow(minute, 10, 5)"
    )
    hopping.write_text(json.dumps(job))
    assert main(["translate", "--job-definition", str(hopping), "--to", "spark"]) == 2
    err = capsys.readouterr().err
    assert "replays tumbling windows; give --window SIZE" in err
    assert len(err.strip().splitlines()) == 1
    assert (
        main(["translate", "--job-definition", str(hopping), "--to", "spark", "--window", "1m"])
        == 0
    )
