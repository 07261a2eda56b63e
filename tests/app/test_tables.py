"""No ``None`` in a table: columns a source cannot fill are left out with a note saying what
would fill them; values missing from a column are shown in words."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import polars as pl
import pytest

from diagnostics.appdata import tables
from diagnostics.appdata.build import build_from_logs
from diagnostics.appdata.partitions import METRICS_NOTE
from tests.app.conftest import SCENARIOS

pytestmark = pytest.mark.timeout(600)

PAGES = (
    "Overview",
    "Findings",
    "Lateness",
    "Partitions",
    "What-if",
    "Results",
    "Alerts",
    "Quarantine",
)


def test_shown_fills_missing_values_and_keeps_full_columns_typed():
    frame = pl.DataFrame(
        {
            "partition_id": [0, 1],
            "max_delay_s": [2.5, None],
            "ends_at": [datetime(2024, 1, 1, tzinfo=UTC), None],
        }
    )
    out = tables.shown(frame, {"ends_at": "not ended"})
    assert out["partition_id"].dtype == pl.Int64
    assert out["max_delay_s"].to_list() == ["2.5", tables.MISSING]
    assert out["ends_at"].to_list() == ["2024-01-01 00:00:00 UTC", "not ended"]
    assert tables.empty_columns(pl.DataFrame({"a": [None, None], "b": [1, None]})) == ["a"]
    assert tables.empty_columns(pl.DataFrame({"a": []})) == []


@pytest.fixture(scope="module")
def logs_only(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The idle_partition scenario's diagnostic logs alone: no metrics, no capture."""
    out = tmp_path_factory.mktemp("agg") / "idle-logs"
    build_from_logs([SCENARIOS / "idle_partition" / "diagnostics.jsonl"], out)
    return out


def test_partitions_of_logs_alone_leave_out_the_metric_columns_and_say_why(open_app, logs_only):
    at = open_app("Partitions", logs_only)
    table = at.dataframe[0].value
    assert list(table.columns) == ["partition_id", "idle_episodes", "idle_minutes"]
    assert 3 in set(table["partition_id"])
    assert METRICS_NOTE in [c.value for c in at.caption]
    assert "an event capture" in METRICS_NOTE


@pytest.mark.parametrize("folder", ["logs_only", "agg_late", "agg_asa"])
def test_no_table_on_any_page_has_a_missing_cell(open_app, folder, request):
    agg = request.getfixturevalue(folder)
    for page in PAGES:
        at = open_app(page, agg)
        for frame in at.dataframe:
            value = frame.value
            missing = [c for c in value.columns if value[c].isna().any()]
            assert missing == [], (page, missing)
            assert not (value.astype(str) == "None").any().any(), page


def test_headings_are_words():
    assert tables.heading("idle_minutes") == "idle minutes"
    assert tables.heading("p95_s") == "p95 (s)"
    assert tables.heading("partition_id") == "partition"
    assert tables.heading("pct_adjusted") == "% adjusted"
    assert tables.heading("max_delay_s") == "max watermark delay (s)"
    assert tables.heading("state") == "state"


def test_the_what_if_tables_say_unlimited_and_have_no_missing_cell(open_app, tmp_path):
    """Historical replay: the search measures an unlimited late-arrival tolerance, a missing
    value in the table's column: shown as "unlimited", never None; headings in words."""
    from tests.app.conftest import scenario_folder

    at = open_app("What-if", scenario_folder(tmp_path, "historical_replay"))
    frames = [f.value for f in at.dataframe]
    assert frames
    late = [str(v) for f in frames if "late_arrival_s" in f.columns for v in f["late_arrival_s"]]
    assert "unlimited" in late
    for value in frames:
        assert not value.isna().any().any()
        assert not (value.astype(str) == "None").any().any()
    assert tables.heading("late_arrival_s") == "late-arrival tolerance (s)"
    assert tables.heading("delay_p95_s") == "release delay p95 (s)"
