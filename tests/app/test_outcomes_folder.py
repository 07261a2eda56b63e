"""An app folder whose capture outcomes are an ``outcomes/`` folder of part files (as
``replay --spark`` writes them) shows what the same folder with ``outcomes.parquet`` shows."""

from __future__ import annotations

import shutil
from pathlib import Path

import polars as pl
import pytest

from diagnostics.appdata import impact, lateness
from diagnostics.appdata.build import capture_context
from diagnostics.appdata.overview import kpis
from diagnostics.appdata.replays import loaded_outcomes
from diagnostics.appdata.store import open_aggregate
from diagnostics.engine.outcomes_files import read_outcomes
from tests.app.conftest import figures, metrics
from tests.outcome_parts import as_folder


@pytest.fixture(scope="module")
def agg_parts(agg_late: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The late_senders app folder, its capture outcomes cut into part files."""
    out = tmp_path_factory.mktemp("parts") / "late_senders"
    shutil.copytree(agg_late, out)
    as_folder(out / "capture")
    return out


def test_appdata_reads_the_folder_as_the_file(agg_late: Path, agg_parts: Path) -> None:
    file_ctx, folder_ctx = capture_context(agg_late), capture_context(agg_parts)
    assert file_ctx is not None
    assert folder_ctx is not None
    assert file_ctx.outcomes_path.name == "outcomes.parquet"
    assert folder_ctx.outcomes_path == agg_parts / "capture" / "outcomes"
    whole, parts = read_outcomes(file_ctx.outcomes_path), read_outcomes(folder_ctx.outcomes_path)
    assert parts.equals(whole)
    shown = kpis(open_aggregate(agg_parts)).distinct_data_errors
    assert shown == kpis(open_aggregate(agg_late)).distinct_data_errors
    assert shown is not None
    assert shown > 0
    assert lateness.from_outcomes(parts, "device_id").equals(
        lateness.from_outcomes(whole, "device_id")
    )
    policy = file_ctx.settings.policy
    query = impact.starting_query(agg_late, policy, "device_id")
    on_file = impact.compare(whole, query.text, query.input_name, policy)
    on_parts = impact.compare(parts, query.text, query.input_name, policy)
    assert on_parts.table.equals(on_file.table)
    assert impact.summary(on_parts)["windows_changed"] == 60


def test_pages_show_the_same_from_the_folder(open_app, agg_late: Path, agg_parts: Path) -> None:
    for page in ("Results", "Lateness"):
        from_file, from_parts = open_app(page, agg_late), open_app(page, agg_parts)
        assert metrics(from_parts) == metrics(from_file)
        assert figures(from_parts) == figures(from_file)
        assert len(from_parts.dataframe) == len(from_file.dataframe) > 0
        for a, b in zip(from_parts.dataframe, from_file.dataframe, strict=True):
            assert a.value.equals(b.value)
    assert metrics(open_app("Results", agg_parts))["Windows changed"] == "60"


@pytest.mark.parametrize("layout", ["file", "parts"])
def test_the_loads_outcomes_beside_its_events_are_the_file(
    agg_late: Path, agg_parts: Path, layout: str
) -> None:
    """The app reads only the engine's columns of the load's outcomes and puts them beside
    the events it holds: the same frame as the whole file, the events' columns not held
    twice (file or part files)."""
    agg = agg_late if layout == "file" else agg_parts
    ctx = capture_context(agg)
    assert ctx is not None
    events = pl.read_parquet(ctx.events_path)
    beside = loaded_outcomes(agg, events)
    assert beside.equals(read_outcomes(ctx.outcomes_path))
    assert beside.schema == read_outcomes(ctx.outcomes_path).schema
    assert beside.select(events.columns).equals(events)
    numeric = next(c for c, t in events.schema.items() if t.is_numeric())
    events = events.rechunk()  # one buffer a column, read without copying below
    beside = loaded_outcomes(agg, events)
    held = events[numeric].to_arrow().buffers()[1].address
    assert beside[numeric].to_arrow().buffers()[1].address == held  # one copy, not two


def test_outcomes_that_do_not_hold_the_events_columns_are_read_whole(
    agg_late: Path, tmp_path: Path
) -> None:
    """A file whose columns are not the events' then the engine's (an older layout, a file
    replaced by hand) is read as it is."""
    agg = tmp_path / "agg"
    shutil.copytree(agg_late, agg)
    ctx = capture_context(agg)
    assert ctx is not None
    events = pl.read_parquet(ctx.events_path)
    whole = read_outcomes(ctx.outcomes_path)
    shuffled = whole.select(reversed(whole.columns))
    shuffled.write_parquet(ctx.outcomes_path)
    assert loaded_outcomes(agg, events).equals(shuffled)
