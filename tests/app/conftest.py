"""Fixtures for the app tests: aggregate folders built from the bundled samples, the app's
rule pack for tests, and an AppTest factory."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import polars as pl
import pytest

from diagnostics.appdata import samples
from diagnostics.appdata.build import build_from_capture, build_from_logs
from diagnostics.logs.inputs import expand_inputs

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "app" / "streamlit_app.py"
SCENARIOS = ROOT / "sample_logs" / "scenarios"
ASA = ROOT / "sample_logs" / "asa"
JOBS = ROOT / "sample_logs" / "jobs"
RULES_GOOD = Path(__file__).resolve().parent / "rules" / "good"
RULES_BAD = Path(__file__).resolve().parent / "rules" / "bad"


def scenario_folder(tmp: Path, name: str) -> Path:
    """Replay ``sample_logs/scenarios/<name>/capture.csv`` as the Load page does."""
    out = tmp / name
    events = pl.read_csv(SCENARIOS / name / "capture.csv")
    build_from_capture(
        events,
        samples.default_settings(name),
        out,
        partitions=range(samples.SCENARIO_PARTITIONS),
    )
    return out


@pytest.fixture(scope="session")
def agg_late(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The late_senders scenario, replayed and aggregated."""
    return scenario_folder(tmp_path_factory.mktemp("agg"), "late_senders")


@pytest.fixture(scope="session")
def agg_idle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The idle_partition scenario, replayed and aggregated."""
    return scenario_folder(tmp_path_factory.mktemp("agg"), "idle_partition")


@pytest.fixture(scope="session")
def agg_asa(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The hand-made ASA log shapes of sample_logs/asa, aggregated."""
    files = expand_inputs([str(ASA)])
    out = tmp_path_factory.mktemp("agg") / "asa"
    build_from_logs([Path(p) for p in files.logs], out, metrics=[Path(p) for p in files.metrics])
    return out


@pytest.fixture(scope="session")
def late_outcomes() -> pl.DataFrame:
    """The committed engine outcomes of late_senders (made by scripts/make_samples.py)."""
    return pl.read_parquet(SCENARIOS / "late_senders" / "outcomes.parquet")


@pytest.fixture
def app_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """The test rule pack and a private working folder for uploads."""
    monkeypatch.setenv("ORDERDOC_RULES", f"{RULES_GOOD}")
    monkeypatch.setenv("ORDERDOC_APP_WORKDIR", str(tmp_path / "work"))
    monkeypatch.delenv("ORDERDOC_AGG_DIR", raising=False)
    return tmp_path / "work"


@pytest.fixture
def open_app(app_env: Path) -> Callable[..., object]:
    """``open_app(page, agg_dir=None)``: an AppTest run on ``page`` with ``agg_dir`` loaded."""
    from streamlit.testing.v1 import AppTest

    def opener(page: str, agg_dir: Path | None = None) -> AppTest:
        at = AppTest.from_file(str(APP), default_timeout=120)
        if agg_dir is not None:
            at.session_state["agg_dir"] = str(agg_dir)
            at.session_state["source_label"] = agg_dir.name
        at.session_state["page"] = page
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        return at

    return opener


def figures(at: object) -> list[dict]:
    """The plotly figures an AppTest run shows, as dicts (data and layout)."""
    return [json.loads(el.proto.spec) for el in at.get("plotly_chart")]  # type: ignore[attr-defined]


def traces(figure: dict) -> dict[str, dict]:
    """A figure's traces by name."""
    return {t.get("name", ""): t for t in figure["data"]}


def metrics(at: object) -> dict[str, str]:
    """Metric label → shown value."""
    return {m.label: m.value for m in at.metric}  # type: ignore[attr-defined]


#: A user's capture as ASA's passthrough writes it (the late_senders events, renamed).
USER_COLUMNS = {
    "device_id": "deviceId",
    "value": "temperature",
    "event_time": "eventTime",
    "arrival_time": "EventEnqueuedUtcTime",
    "partition_id": "PartitionId",
}
USER_JOB = "contoso-telemetry"
USER_QUERY = (
    "SELECT deviceId, AVG(temperature) AS avgTemperature, System.Timestamp() AS windowEnd\n"
    "INTO [alerts]\n"
    "FROM [telemetry] TIMESTAMP BY eventTime\n"
    "GROUP BY deviceId, TumblingWindow(minute, 1)\n"
)


def user_capture(folder: Path) -> Path:
    """``readings.csv``: the late_senders capture with a user's column names (deviceId,
    temperature, eventTime, EventEnqueuedUtcTime, PartitionId) and partition 3 silent from
    minute 10 to minute 20, in ``folder``."""
    events = pl.read_csv(SCENARIOS / "late_senders" / "capture.csv")
    arrival = pl.col("arrival_time").str.slice(11, 5)
    silent = (pl.col("partition_id") == 3) & (arrival >= "00:10") & (arrival < "00:20")
    out = folder / "readings.csv"
    events.filter(~silent).drop("message_id").rename(USER_COLUMNS).select(
        *USER_COLUMNS.values()
    ).write_csv(out)
    return out


def user_job(folder: Path) -> Path:
    """``contoso-telemetry.json``: the late_senders ARM template as a user's job: named
    contoso-telemetry, one input, ``TIMESTAMP BY eventTime``, a per-device aggregate."""
    template = json.loads((JOBS / "late_senders.arm.json").read_text(encoding="utf-8"))
    template["parameters"]["jobName"]["defaultValue"] = USER_JOB
    job = template["resources"][0]["properties"]
    job["inputs"] = job["inputs"][:1]
    job["outputs"] = job["outputs"][:1]
    job["transformation"]["properties"]["query"] = USER_QUERY
    out = folder / f"{USER_JOB}.json"
    out.write_text(json.dumps(template, indent=2), encoding="utf-8")
    return out
