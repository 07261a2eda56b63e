"""Dates as users have them: ASA reads ISO 8601 only, so does orderdoc; a run where most
application times are something else says so in one line (CLI and app) with an example
value and the accepted forms, and a bad arrival time names the forms expected."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from diagnostics.appdata import overview, store
from diagnostics.appdata.build import CaptureSettings
from diagnostics.appdata.capture_input import build_from_reader
from diagnostics.captures.reader import read_capture
from diagnostics.engine.policy import OrderingPolicy

from .helpers import run_cli, write_csv

START = dt.datetime(2024, 6, 3, 8, 0, 1, tzinfo=dt.UTC)


def _us_capture(tmp_path: Path, n: int = 20, valid: int = 0) -> Path:
    rows = []
    for i in range(n):
        at = START + dt.timedelta(seconds=i)
        when = at.isoformat() if i < valid else at.strftime("%m/%d/%Y %I:%M:%S %p")
        rows.append([i % 2, when, at.isoformat()])
    return write_csv(tmp_path / "us.csv", ["partition_id", "eventTime", "arrival_time"], rows)


def test_us_dates_under_timestamp_by_are_named_with_the_accepted_forms(tmp_path: Path) -> None:
    path = _us_capture(tmp_path)
    code, out, err = run_cli("replay", str(path), "--out", str(tmp_path / "o"),
                             "--timestamp-by", "eventTime")  # fmt: skip
    assert code == 0, err
    warnings = [line for line in out.splitlines() if line.startswith("warning")]
    assert len(warnings) == 1
    line = warnings[0]
    assert "20 of 20 events have no valid application time" in line
    assert "'06/03/2024 08:00:01 AM'" in line
    assert "accepted: ISO 8601, e.g. 2024-06-03T08:00:01Z" in line


def test_a_few_invalid_times_are_data_not_a_format_problem(tmp_path: Path) -> None:
    path = _us_capture(tmp_path, valid=15)
    code, out, err = run_cli("replay", str(path), "--out", str(tmp_path / "o"), "--json",
                             "--timestamp-by", "eventTime")  # fmt: skip
    assert code == 0, err
    summary = json.loads(out)
    assert summary["counts"]["dropped_invalid_timestamp"] == 5
    assert summary["warnings"] == []


def test_a_us_arrival_time_names_the_expected_forms(tmp_path: Path) -> None:
    rows = [[0, "2024-06-03T08:00:01Z", "06/03/2024 08:00:01 AM"]]
    path = write_csv(tmp_path / "a.csv", ["partition_id", "t", "arrival_time"], rows)
    code, _, err = run_cli("replay", str(path), "--out", str(tmp_path / "o"))
    assert code == 2
    assert err.count("\n") == 1
    assert (
        "arrival column 'arrival_time', row 1: '06/03/2024 08:00:01 AM' is not a timestamp" in err
    )
    assert "(expected ISO 8601, e.g. 2024-06-03T08:00:01Z" in err


def test_the_app_overview_carries_the_line(tmp_path: Path) -> None:
    capture = read_capture(_us_capture(tmp_path))
    settings = CaptureSettings(policy=OrderingPolicy(timestamp_by="eventTime"))
    agg = build_from_reader(capture, settings, tmp_path / "agg")
    kpis = overview.kpis(store.open_aggregate(agg))
    assert len(kpis.warnings) == 1
    assert "'06/03/2024 08:00:01 AM'" in kpis.warnings[0]
    assert "accepted: ISO 8601" in kpis.warnings[0]
