"""``orderdoc replay --rules flink|spark`` end to end: outcomes.parquet with ASA's columns,
the summary in the engine's terms, and one-line errors (exit 2) for flags that do not apply."""

from __future__ import annotations

import json
import re
from pathlib import Path

import polars as pl
import pytest

from diagnostics.cli import main
from diagnostics.engine.columns import OUTCOME_COLUMNS

ROWS = [
    # name, ts, arrival_time, partition_id (docs/engines.md, example F2)
    ("a", "2024-01-01T00:00:01Z", "2024-01-01T00:00:01.100Z", 0),
    ("b", "2024-01-01T00:00:02Z", "2024-01-01T00:00:02.100Z", 1),
    ("c", "2024-01-01T00:00:15Z", "2024-01-01T00:00:15.100Z", 0),
    ("d", "2024-01-01T00:00:05Z", "2024-01-01T00:00:20.100Z", 1),
]


@pytest.fixture
def capture(tmp_path: Path) -> Path:
    path = tmp_path / "capture.csv"
    pl.DataFrame(
        ROWS, schema=["name", "ts", "arrival_time", "partition_id"], orient="row"
    ).write_csv(path)
    return path


def test_flink_replay_writes_the_outcome_columns_and_the_drop(capture, tmp_path, capsys) -> None:
    out = tmp_path / "out"
    code = main(["replay", str(capture), "--out", str(out), "--rules", "flink",
                 "--timestamp-by", "ts", "--window", "10s", "--idleness", "5s", "--json"])  # fmt: skip
    assert code == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["drop_counter"] == "numLateRecordsDropped"
    assert summary["counts"]["dropped_late"] == 1
    outcomes = pl.read_parquet(out / "outcomes.parquet")
    assert tuple(outcomes.columns[-len(OUTCOME_COLUMNS) :]) == OUTCOME_COLUMNS
    dropped = outcomes.filter(pl.col("dropped"))
    assert dropped.select("name", "event_id", "status").rows() == [("d", 3, "dropped")]
    assert sorted(p.name for p in out.iterdir()) == ["outcomes.parquet"]


def test_spark_replay_prints_the_summary_in_spark_terms(capture, tmp_path, capsys) -> None:
    code = main(["replay", str(capture), "--out", str(tmp_path / "o"), "--rules", "spark",
                 "--timestamp-by", "ts", "--window", "10s", "--trigger", "1s"])  # fmt: skip
    assert code == 0
    text = capsys.readouterr().out
    assert "Spark: withWatermark(ts, 0s), tumbling 10s window, trigger every 1s" in text
    assert "numRowsDroppedByWatermark" in text


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (
            ["--window", "10s"],
            "--window: Flink or Spark settings; add --rules flink or --rules spark",
        ),
        (["--rules", "flink", "--timestamp-by", "ts"], "--rules flink needs --window DURATION"),
        (["--rules", "flink", "--window", "10s"], "--rules flink needs the event-time column"),
        (
            ["--rules", "spark", "--timestamp-by", "ts", "--window", "10s", "--idleness", "1m"],
            "--idleness: not a setting of Spark's rules",
        ),
        (
            ["--rules", "flink", "--timestamp-by", "ts", "--window", "10s", "--trigger", "1s"],
            "--trigger: not a setting of Flink's rules",
        ),
        (
            ["--rules", "flink", "--timestamp-by", "ts", "--window", "10s", "--late-arrival", "5s"],
            "--late-arrival: ASA settings, which Flink's rules do not have",
        ),
        (
            ["--rules", "spark", "--timestamp-by", "ts", "--window", "10s", "--partition-by"],
            "--partition-by: ASA settings, which Spark's rules do not have",
        ),
        (
            ["--rules", "spark", "--timestamp-by", "ts", "--window", "10s", "--partitions", "4"],
            "--partitions: not a setting of Spark's rules",
        ),
        (
            [
                "--rules",
                "spark",
                "--timestamp-by",
                "ts",
                "--window",
                "10s",
                "--watermark-policy",
                "max",
            ],
            "--watermark-policy: chooses among the inputs --input-col COL tells apart",
        ),
        (
            ["--rules", "flink", "--timestamp-by", "ts", "--window", "1.5ms"],
            "window size 1ms500us is not whole milliseconds, the engine's time unit (use --window)",
        ),
        (
            ["--rules", "flink", "--timestamp-by", "ts", "--window", "10s", "--error-window", "1m"],
            "--error-window: only for ASA's rules",
        ),
        (
            ["--rules", "spark", "--timestamp-by", "ts", "--window", "10s", "--input-col", "nope"],
            "input column 'nope' is missing",
        ),
    ],
)
def test_flags_that_do_not_apply_are_one_line_errors(
    capture, tmp_path, capsys, flags, message
) -> None:
    code = main(["replay", str(capture), "--out", str(tmp_path / "o"), *flags])
    err = capsys.readouterr().err
    assert code == 2
    assert message in err
    assert len(err.strip().splitlines()) == 1


def test_an_unknown_rule_set_is_a_usage_error(capture, tmp_path, capsys) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["replay", str(capture), "--out", str(tmp_path / "o"), "--rules", "beam"])
    assert caught.value.code == 2
    assert "'beam' is not a rule set: asa, flink or spark" in capsys.readouterr().err


def test_most_event_times_invalid_is_a_warning_line(capture, tmp_path, capsys) -> None:
    code = main(["replay", str(capture), "--out", str(tmp_path / "o"), "--rules", "spark",
                 "--timestamp-by", "name", "--window", "10s"])  # fmt: skip
    assert code == 0
    text = capsys.readouterr().out
    assert (
        "warning     4 of 4 events have no valid event time: name holds values such as 'a'" in text
    )
    assert re.search(r"no valid event time +4 +100.00%", text)
