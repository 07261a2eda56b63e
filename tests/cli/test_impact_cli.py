"""``orderdoc impact``: the late senders' one-minute counts compared, impact.parquet written,
and one-line errors (exit 2) for a missing query or an unreadable one."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl

from diagnostics.cli import main
from diagnostics.impact.compare import IMPACT_COLUMNS

ROOT = Path(__file__).resolve().parents[2]
JOBS = ROOT / "sample_logs" / "jobs"
LATE = ROOT / "sample_logs" / "scenarios" / "late_senders" / "capture.csv"
HEALTHY = ROOT / "sample_logs" / "scenarios" / "healthy" / "capture.csv"


def test_impact_writes_the_windows_and_prints_the_summary(tmp_path, capsys):
    code = main(
        [
            "impact", str(LATE), "--partitions", "4",
            "--job-definition", str(JOBS / "late_senders.arm.json"),
            "--parameters", str(JOBS / "late_senders.parameters.json"),
            "--query", str(JOBS / "late_senders.counts.asaql"), "--out", str(tmp_path),
        ]
    )  # fmt: skip
    assert code == 0
    text = capsys.readouterr().out
    assert "replayed: step `counts`: COUNT(*) by device_id over TumblingWindow(1m)" in text
    assert "windows compared: 241; changed by the ordering: 60 (25%)" in text
    assert "late adjustments:" in text
    assert "largest relative error" not in text
    assert "periodic, every 2 min: 1 window in 2 is 90 % high" in text
    assert "  capture start: 9 windows (2 changed)" in text
    table = pl.read_parquet(tmp_path / "impact.parquet")
    assert tuple(table.columns) == IMPACT_COLUMNS
    assert set(table["edge"].drop_nulls().unique()) == {"capture start", "capture end"}
    changed = table.filter(pl.col("changed"))
    # only the batching devices (every fifth: dev-00000, dev-00005, ...) are wrong
    devices = {k.removeprefix("device_id=") for k in changed["keys"]}
    assert devices
    assert all(int(d.removeprefix("dev-")) % 5 == 0 for d in devices)
    # every count moved is a count moved in or out: the totals agree
    both = table.filter(pl.col("output") == "both")
    assert (both["value_as_emitted"] - both["value_on_time"]).to_list() == (
        both["events_moved_in"] - both["events_moved_out"] - both["events_missing"]
    ).cast(pl.Float64).to_list()
    assert table["value_as_emitted"].sum() == table["value_on_time"].sum() == 2000


def test_the_definition_query_names_what_is_not_replayed(tmp_path, capsys):
    code = main(
        [
            "impact", str(LATE), "--json", "--out", str(tmp_path),
            "--job-definition", str(JOBS / "late_senders.arm.json"),
            "--parameters", str(JOBS / "late_senders.parameters.json"),
        ]
    )  # fmt: skip
    assert code == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["steps"] == []
    assert summary["not_replayed"] == [
        "step `Enriched`: JOIN is not replayed; events only",
        "step `alerts`: reads Enriched, which is not replayed (JOIN is not replayed; events only)",
        "step `archive`: no window aggregate; its rows are the events themselves (events only)",
    ]


def test_healthy_job_changes_no_window(tmp_path, capsys):
    code = main(
        ["impact", str(HEALTHY), "--partitions", "4", "--json", "--out", str(tmp_path),
         "--job-definition", str(JOBS / "healthy.resource.json")]
    )  # fmt: skip
    assert code == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["windows_changed"] == 0
    assert summary["windows_compared"] > 0


def test_errors_are_one_line(tmp_path, capsys):
    assert main(["impact", str(LATE), "--out", str(tmp_path)]) == 2
    assert "give --job-definition FILE or --query FILE.asaql" in capsys.readouterr().err
    assert (
        main(["impact", str(LATE), "--query", str(tmp_path / "no.asaql"), "--out", str(tmp_path)])
        == 2
    )
    assert "no.asaql: no such file" in capsys.readouterr().err
    bad = tmp_path / "bad.asaql"
    bad.write_text(
        "SELECT COUNT(*) INTO o\nFROM telemetry TIMESTAMP BY event_time\nGROUP BY TumblingWindow(week, 1)"
    )
    assert main(["impact", str(LATE), "--query", str(bad), "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "'week' is not a time unit" in err
    assert err.count("\n") == 1
    missing = tmp_path / "missing.asaql"
    missing.write_text(
        "SELECT AVG(nope) INTO o FROM telemetry TIMESTAMP BY event_time GROUP BY TumblingWindow(minute, 1)"
    )
    assert main(["impact", str(LATE), "--query", str(missing), "--out", str(tmp_path)]) == 2
    assert "column 'nope' is not in the capture" in capsys.readouterr().err


def test_explain_events_adds_the_results_section(capsys):
    args = [
        "explain", "--events", str(LATE), "--partitions", "4",
        "--job-definition", str(JOBS / "late_senders.arm.json"),
        "--parameters", str(JOBS / "late_senders.parameters.json"),
        "--query", str(JOBS / "late_senders.counts.asaql"),
    ]  # fmt: skip
    assert main(args) == 0
    text = capsys.readouterr().out
    assert "What the ordering did to the job's windowed results:" in text
    assert "  windows compared: 241; changed by the ordering: 60 (25%)" in text
    assert main([*args, "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["results"]["windows_changed"] == 60
    assert report["findings"]
    assert main([*args, "--format", "markdown"]) == 0
    assert "## What the ordering did to the job's windowed results" in capsys.readouterr().out


def test_explain_says_when_the_results_cannot_be_compared(tmp_path, capsys):
    bad = tmp_path / "bad.asaql"
    bad.write_text(
        "SELECT COUNT(*) INTO o FROM telemetry TIMESTAMP BY event_time GROUP BY TumblingWindow(week, 1)"
    )
    code = main(
        ["explain", "--events", str(LATE), "--partitions", "4", "--query", str(bad),
         "--job-definition", str(JOBS / "late_senders.arm.json"),
         "--parameters", str(JOBS / "late_senders.parameters.json")]
    )  # fmt: skip
    assert code == 0
    assert "not compared: " in capsys.readouterr().out
    assert main(["explain", str(tmp_path), "--query", str(bad)]) == 2
    assert "--query: read the capture, so they need --events CAPTURE" in capsys.readouterr().err


def test_whatif_weighs_settings_by_results(tmp_path, capsys):
    args = [
        "whatif", str(LATE), "--partitions", "4", "--timestamp-by", "event_time",
        "--query", str(JOBS / "late_senders.counts.asaql"), "--no-png", "--no-verify",
        "--late-arrival", "5s,2m1s", "--out-of-order", "0s,2m1s", "--out", str(tmp_path),
    ]  # fmt: skip
    assert main([*args, "--optimise", "results"]) == 0
    text = capsys.readouterr().out
    assert "windows changed" in text
    assert "rule: fewest windows of the query's aggregates changed" in text
    assert (
        "(windows changed 0; interior windows off by more than 5 %: 0, p95 relative error 0.0%)"
    ) in text
    table = pl.read_csv(tmp_path / "whatif.csv")
    plain = table.filter(~pl.col("partition_by") & (pl.col("over").fill_null("") == ""))
    # the job's own setting (late 5 s, out of order 0 s) gets the late senders' 60 windows
    own = plain.filter((pl.col("late_arrival_s") == 5) & (pl.col("out_of_order_s") == 0))
    assert own["windows_changed"].to_list() == [60]
    # a 2-minute late tolerance alone still leaves them wrong (out-of-order adjustments)
    late_only = plain.filter((pl.col("late_arrival_s") == 121) & (pl.col("out_of_order_s") == 0))
    assert late_only["windows_changed"].to_list() == [60]
    both = plain.filter((pl.col("late_arrival_s") == 121) & (pl.col("out_of_order_s") == 121))
    assert both["windows_changed"].to_list() == [0]
    # with OVER device_id (the sender column, tried without --over) the late tolerance alone
    # makes them right with less delay: recommended, as explain --write-fix writes it
    chosen = table.filter(pl.col("recommended"))
    assert chosen.select(
        "late_arrival_s", "out_of_order_s", "partition_by", "over", "windows_changed"
    ).rows() == [(121.0, 0.0, True, "device_id", 0)]
    assert chosen["delay_p95_s"][0] < both["delay_p95_s"][0]


def test_optimise_results_needs_a_query(tmp_path, capsys):
    code = main(
        ["whatif", str(LATE), "--timestamp-by", "event_time", "--optimise", "results",
         "--out", str(tmp_path), "--no-png"]
    )  # fmt: skip
    assert code == 2
    assert "--optimise results needs the job's query" in capsys.readouterr().err
    code = main(
        ["explain", "--events", str(LATE), "--timestamp-by", "event_time", "--optimise", "results"]
    )
    assert code == 2
    assert "give --write-fix DIR" in capsys.readouterr().err


def test_write_fix_reports_the_windows_it_makes_right(tmp_path, capsys):
    out = tmp_path / "fix"
    code = main(
        [
            "explain", "--events", str(LATE), "--partitions", "4",
            "--job-definition", str(JOBS / "late_senders.arm.json"),
            "--parameters", str(JOBS / "late_senders.parameters.json"),
            "--query", str(JOBS / "late_senders.counts.asaql"),
            "--optimise", "results", "--write-fix", str(out),
        ]
    )  # fmt: skip
    assert code == 0
    text = capsys.readouterr().out
    assert (
        "windows of the query's results changed by the ordering: 60 -> 0 (the fix makes 60 "
        "windows right); interior windows off by more than 5 %: 56 -> 0; p95 relative error "
        "of the interior windows 100.0% -> 0.0%"
    ) in text
    fix_md = (out / "FIX.md").read_text()
    assert "| windows changed by the ordering | 60 | 0 |" in fix_md
    assert "| interior windows off by more than 5 % | 56 | 0 |" in fix_md
    assert "| relative error of the interior windows, 95th percentile | 100.0% | 0.0% |" in fix_md
    assert "largest relative error" not in fix_md


def test_impact_says_how_the_capture_was_read_far_off_arrivals_and_unread_times(tmp_path, capsys):
    query = tmp_path / "q.asaql"
    query.write_text(
        "SELECT COUNT(*) AS n INTO o FROM input TIMESTAMP BY t GROUP BY TumblingWindow(second, 10)"
    )
    capture = tmp_path / "c.csv"
    capture.write_text(
        "t;arrival_time;v\n"
        "2024-01-01T00:00:01Z;2024-01-01T00:00:01Z;1,5\n"
        "2024-01-01T00:00:02Z;9999-12-31T23:59:59Z;2,5\n"
        "2024-01-01T00:00:03Z;2024-01-01T00:00:03Z;3,5\n"
    )
    out = tmp_path / "out"
    assert main(["impact", str(capture), "--query", str(query), "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "CSV: semicolon-separated (detected from the header line)" in text
    assert "row 2: '9999-12-31T23:59:59Z' is after 2150-01-01" in text
    us = tmp_path / "us.csv"
    us.write_text(
        "t,arrival_time\n"
        "01/01/2024 12:00:01 AM,2024-01-01T00:00:01Z\n"
        "01/01/2024 12:00:02 AM,2024-01-01T00:00:02Z\n"
    )
    code = main(["impact", str(us), "--query", str(query), "--out", str(out), "--json"])
    assert code == 0
    said = json.loads(capsys.readouterr().out)
    assert len(said["warnings"]) == 1
    assert said["warnings"][0].startswith("2 of 2 events have no valid application time")
    assert "'01/01/2024 12:00:01 AM'" in said["warnings"][0]
    assert said["input"]["source"] == str(us)


def test_a_query_files_timestamp_column_missing_names_the_query_not_the_flag(tmp_path, capsys):
    query = tmp_path / "q.asaql"
    query.write_text(
        "SELECT COUNT(*) AS n INTO o FROM input TIMESTAMP BY evnt_time "
        "GROUP BY TumblingWindow(second, 10)"
    )
    code = main(["impact", str(LATE), "--query", str(query), "--out", str(tmp_path / "o")])
    assert code == 2
    err = capsys.readouterr().err
    assert f"TIMESTAMP BY column 'evnt_time' of the query of --query {query} is missing" in err
    assert "did you mean 'event_time'?" in err
    assert "--timestamp-by" not in err
