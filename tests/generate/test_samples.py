"""``sample_logs/scenarios/`` is what ``scripts/make_samples.py`` makes, and stays small."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import polars as pl
import pytest

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_logs" / "scenarios"


def _load_script():
    spec = importlib.util.spec_from_file_location(
        "make_samples", ROOT / "scripts" / "make_samples.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def rebuilt(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("samples")
    script = _load_script()
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
