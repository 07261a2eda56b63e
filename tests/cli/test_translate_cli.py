"""``orderdoc translate`` end to end on the bundled job definitions and captures: the settings,
what has no equivalent, and a measured difference that the two replays confirm."""

from __future__ import annotations

import io
import json
from pathlib import Path

import polars as pl
import pytest

from diagnostics.cli import main

ROOT = Path(__file__).resolve().parents[2]
JOB = ROOT / "sample_logs" / "jobs" / "cross_device_disorder.resource.json"
CAPTURE = ROOT / "sample_logs" / "scenarios" / "cross_device_disorder" / "capture.csv"


PORTAL = ROOT / "sample_logs" / "jobs" / "telemetry.portal-export.json"
CLOCK_SKEW = ROOT / "sample_logs" / "scenarios" / "clock_skew" / "capture.csv"


def test_flink_sql_translation_reads_the_window_from_the_query(capsys) -> None:
    assert main(["translate", "--job-definition", str(JOB), "--to", "flink-sql"]) == 0
    text = capsys.readouterr().out
    assert "measured    TumblingWindow(1m) (query step output)" in text
    assert "WATERMARK FOR `event_time` AS `event_time` - INTERVAL '0.001' SECOND" in text
    assert "SET 'table.exec.source.idle-timeout' = '5 s';" in text
    assert "ASA features with no equivalent in Flink:" in text
    assert "  - Adjust: ASA keeps late and out-of-order events" in text
    # the script comes last, whole: the output table and the INSERT of the query's step
    script = text.split("then paste it into Flink's SQL client:\n\n", 1)[1]
    assert script.startswith("-- job ")
    assert "INSERT INTO `output`\nSELECT `device_id`,\n       window_start," in script


def test_the_portal_export_is_translated_whole_and_written_to_a_file(tmp_path, capsys) -> None:
    out = tmp_path / "job.sql"
    code = main(["translate", "--job-definition", str(PORTAL), "--to", "flink-sql",
                 "--out", str(out)])  # fmt: skip
    assert code == 0
    text = capsys.readouterr().out
    script = out.read_text(encoding="utf-8")
    assert f"  written to {out}" in text
    assert "CREATE TABLE `telemetry-eh` (" in script
    assert "CREATE TEMPORARY VIEW `Readings` AS" in script
    assert "INSERT INTO `device-stats`" in script
    assert "INSERT INTO `minute-counts`" in script
    # the JOIN with the reference input: an event-time temporal join
    assert "JOIN `devices` FOR SYSTEM_TIME AS OF `r`.`event_time` AS `d`" in script
    for left_out in ("step Smoothed: SlidingWindow(2m) has no equivalent",
                     "step smoothed-values: no window aggregate; its rows are step Smoothed's results"):  # fmt: skip
        assert f"  - {left_out}" in text
        assert f"--   {left_out}" in script


def test_translate_recommends_the_engine_setting_and_names_the_fast_clocks(capsys) -> None:
    code = main(["translate", "--job-definition", str(PORTAL), "--to", "spark",
                 "--events", str(CLOCK_SKEW), "--json"])  # fmt: skip
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    m = data["measured"]
    # the recommendation is whatif --rules spark's, measured beside the literal translation
    assert main(["whatif", str(CLOCK_SKEW), "--rules", "spark", "--timestamp-by", "event_time",
                 "--window", "1m", "--watermark-delay", "0s", "--trigger", "1s",
                 "--json"]) == 0  # fmt: skip
    table = pl.read_json(io.StringIO(capsys.readouterr().out))
    best = table.filter(pl.col("recommended")).row(0, named=True)
    assert m["recommended"]["dropped"] == best["dropped"]
    assert m["recommended"]["emission_delay_p95_seconds"] == best["delay_p95_s"]
    assert m["literal"]["dropped"] == m["engine_dropped"] > m["recommended"]["dropped"]
    # why Spark drops them: one device's clock runs ahead
    pushed = m["watermark_pushers"]
    assert pushed["sender_column"] == "device_id"
    assert pushed["made_late"] > 0
    assert pushed["made_late"] <= m["engine_dropped"]
    assert pushed["senders"][0]["most_ahead_seconds"] > 60


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
    session = tmp_path / "q.json"
    job = json.loads(JOB.read_text())
    job["properties"]["transformation"]["properties"]["query"] = (
        "SELECT COUNT(*) INTO output FROM telemetry TIMESTAMP BY event_time "
        "GROUP BY SessionWindow(minute, 10, 60)"
    )
    session.write_text(json.dumps(job))
    # the script carries the query's own window: only a measurement needs a tumbling one
    argv = ["translate", "--job-definition", str(session), "--to", "spark"]
    assert main([*argv, "--events", str(CAPTURE)]) == 2
    err = capsys.readouterr().err
    assert "no TumblingWindow or HoppingWindow over the input: give --window SIZE" in err
    assert len(err.strip().splitlines()) == 1
    assert main([*argv, "--events", str(CAPTURE), "--window", "1m"]) == 0
    capsys.readouterr()
    assert main(argv) == 0
    assert "F.session_window(F.col('`event_time`'), \"10 minutes\")" in capsys.readouterr().out
    argv = ["translate", "--job-definition", str(JOB), "--to", "spark"]
    (tmp_path / "a-file").write_text("", encoding="utf-8")
    assert main([*argv, "--out", str(tmp_path / "a-file" / "x.py")]) == 2
    assert "--out " in capsys.readouterr().err


def test_translate_follows_the_flink_release_named(capsys) -> None:
    base = ["translate", "--job-definition", str(JOB), "--to", "flink-datastream", "--json"]
    assert main(base) == 0
    assert json.loads(capsys.readouterr().out)["rules"].startswith("Flink 2.2: ")
    assert main([*base, "--flink-version", "2.1"]) == 0
    assert json.loads(capsys.readouterr().out)["rules"].startswith("Flink 2.1: ")
    code = main(
        ["translate", "--job-definition", str(JOB), "--to", "spark", "--flink-version", "2.1"]
    )
    assert code == 2
    assert "--flink-version: a Flink setting; --to spark" in capsys.readouterr().err
