"""``sample_logs/scenarios/`` is what ``scripts/make_samples.py`` makes, and stays small."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from tests.scripts import load_script

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_logs" / "scenarios"


@pytest.fixture(scope="module")
def rebuilt(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("samples")
    script = load_script("make_samples")
    (out / "README.md").write_text(script.readme(script.build(out)))
    return out


def test_committed_samples_are_up_to_date(rebuilt: Path):
    made = sorted(p.relative_to(rebuilt) for p in rebuilt.rglob("*") if p.is_file())
    committed = sorted(p.relative_to(SAMPLES) for p in SAMPLES.rglob("*") if p.is_file())
    assert made == committed
    for relative in made:
        if relative.suffix == ".parquet":
            # Same table, not same bytes: the Parquet writer's encoding may change.
            fresh = pl.read_parquet(rebuilt / relative)
            assert fresh.equals(pl.read_parquet(SAMPLES / relative)), relative
        else:
            assert (rebuilt / relative).read_bytes() == (SAMPLES / relative).read_bytes(), relative


def test_samples_stay_under_6_mb():
    total = sum(p.stat().st_size for p in SAMPLES.rglob("*") if p.is_file())
    assert total < 6_000_000


@pytest.mark.parametrize("folder", sorted(p.name for p in SAMPLES.iterdir() if p.is_dir()))
def test_each_sample_accounts_for_its_outcomes(folder: str):
    path = SAMPLES / folder
    outcomes = pl.read_parquet(path / "outcomes.parquet")
    totals: dict[str, int] = {}
    for line in (path / "diagnostics.jsonl").read_text().splitlines():
        props = json.loads(line)["properties"]
        if props["Type"] == "DataError":
            totals[props["DataErrorType"]] = (
                totals.get(props["DataErrorType"], 0) + props["EventCount"]
            )
    assert totals.get("LateInputEvent", 0) == outcomes["late"].sum()
    assert totals.get("EarlyInputEvent", 0) == outcomes["early"].sum()
    assert totals.get("OutOfOrderEvent", 0) == outcomes["out_of_order"].sum()


CAPTURES = ROOT / "sample_logs" / "captures"


def test_committed_capture_samples_are_up_to_date(tmp_path: Path):
    script = load_script("make_samples")
    script.build_captures(tmp_path)
    made = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file())
    committed = sorted(p.relative_to(CAPTURES) for p in CAPTURES.rglob("*") if p.is_file())
    assert made == committed
    assert any(p.suffix == ".avro" for p in made)
    for relative in made:
        assert (tmp_path / relative).read_bytes() == (CAPTURES / relative).read_bytes(), relative


def test_capture_samples_replay_alike_with_no_column_flags(tmp_path: Path):
    from diagnostics.cli import main

    outcomes = {}
    for name in ("eventhubs-capture", "passthrough.csv"):
        out = tmp_path / name
        assert main(["replay", str(CAPTURES / name), "--out", str(out), "--timestamp-by",
                     "event_time", "--outcomes-only"]) == 0  # fmt: skip
        outcomes[name] = pl.read_parquet(out / "outcomes.parquet").sort("message_id")
    avro, csv = outcomes["eventhubs-capture"], outcomes["passthrough.csv"]
    assert avro.height == csv.height == 400
    assert avro["PartitionId"].to_list() == csv["PartitionId"].to_list()
    for column in ("arrival", "system_timestamp", "late", "out_of_order", "status", "release_time"):
        assert avro[column].to_list() == csv[column].to_list(), column
    late = avro.filter("late")
    assert late.height > 0  # the one cause built in: late senders
    assert set(late["device_id"]) <= {f"dev-{i:05d}" for i in range(0, 100, 5)}
