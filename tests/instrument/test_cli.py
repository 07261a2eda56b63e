"""``orderdoc replay`` writes diagnostics.jsonl and metrics.parquet beside outcomes.parquet."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from diagnostics.cli import main
from diagnostics.generate import GenerateConfig, generate, write_capture

CONFIG = GenerateConfig(events=3_000, partitions=3, duration_ms=30 * 60_000, seed=3)


@pytest.fixture(scope="module")
def capture(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("capture") / "late.csv"
    write_capture(generate("late_senders", CONFIG), path)
    return path


def _replay(capture: Path, out: Path, *flags: str) -> int:
    return main(["replay", str(capture), "--out", str(out), "--timestamp-by", "event_time", *flags])


def _records(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "diagnostics.jsonl").read_text().splitlines()]


def test_replay_writes_consistent_diagnostics_and_metrics(capture: Path, tmp_path: Path, capsys):
    out = tmp_path / "run"
    assert _replay(capture, out, "--job", "fleet", "--source", "hub") == 0
    capsys.readouterr()
    outcomes = pl.read_parquet(out / "outcomes.parquet")
    records = _records(out)
    assert records, "late_senders must produce data errors"
    totals: dict[str, int] = {}
    for record in records:
        assert record["resourceId"].endswith("/STREAMINGJOBS/fleet")
        assert record["properties"]["Source"] == "hub"
        kind = record["properties"].get("DataErrorType")
        if kind:
            totals[kind] = totals.get(kind, 0) + record["properties"]["EventCount"]
    assert totals["LateInputEvent"] == outcomes["late"].sum()
    assert totals.get("OutOfOrderEvent", 0) == outcomes["out_of_order"].sum()
    metrics = pl.read_parquet(out / "metrics.parquet")
    job = metrics.filter(pl.col("partition_id").is_null())
    assert job["InputEvents"].sum() == outcomes.height
    assert job["LateInputEvents"].sum() == outcomes["late"].sum()
    assert job["OutputWatermarkDelaySeconds"].null_count() == 0
    assert metrics["job"].unique().to_list() == ["fleet"]


def test_replays_repeat_byte_for_byte(capture: Path, tmp_path: Path, capsys):
    assert _replay(capture, tmp_path / "a", "--error-window", "30s") == 0
    assert _replay(capture, tmp_path / "b", "--error-window", "30s") == 0
    capsys.readouterr()
    first = (tmp_path / "a" / "diagnostics.jsonl").read_bytes()
    assert first == (tmp_path / "b" / "diagnostics.jsonl").read_bytes()


def test_window_size_changes_records_not_totals(capture: Path, tmp_path: Path, capsys):
    counts = []
    for window in ("10s", "1m", "10m"):
        out = tmp_path / window
        assert _replay(capture, out, "--error-window", window) == 0
        records = _records(out)
        counts.append((len(records), sum(r["properties"].get("EventCount", 0) for r in records)))
    capsys.readouterr()
    # Batches land within a second of each 2-minute boundary, so 10 s and 1 min windows hold
    # the same events; 10 min windows merge five boundaries.
    assert counts[0][0] == counts[1][0] > counts[2][0]
    assert counts[0][1] == counts[1][1] == counts[2][1]


def test_activity_log_format(capture: Path, tmp_path: Path, capsys):
    out = tmp_path / "act"
    assert _replay(capture, out, "--log-format", "activity") == 0
    capsys.readouterr()
    records = _records(out)
    assert {r["type"] for r in records} == {"DiagnosticMessage"}
    assert all(r["message"].startswith("First Occurred: ") for r in records)
    assert len({r["correlation ID"] for r in records}) == 1


@pytest.mark.parametrize(
    ("flags", "needle"),
    [
        (["--error-window", "soon"], "--error-window"),
        (["--idle-notice", "0"], "--idle-notice"),
        (["--job", "a/b"], "--job"),
    ],
)
def test_bad_flags_exit_2_with_one_line(capture: Path, tmp_path: Path, capsys, flags, needle):
    assert _replay(capture, tmp_path / "bad", *flags) == 2
    err = capsys.readouterr().err
    assert needle in err
    assert len(err.strip().splitlines()) == 1


def test_declared_silent_partition_gets_idle_notices(capture: Path, tmp_path: Path, capsys):
    out = tmp_path / "declared"
    assert _replay(capture, out, "--partitions", "4", "--idle-notice", "10m") == 0
    capsys.readouterr()
    notices = [
        r for r in _records(out) if r["properties"]["Type"] == "InputPartitionNotProgressing"
    ]
    # Partition 3 never sends: idle from the first arrival to the last, a notice each
    # 10 minutes strictly inside that span.
    arrivals = pl.read_parquet(out / "outcomes.parquet")["arrival"].dt.epoch("ns")
    span = int(arrivals.max()) - int(arrivals.min())
    interval = 600 * 10**9
    expected = -(-span // interval) - 1
    assert expected >= 2
    assert [r["orderdoc"]["partition_id"] for r in notices] == [3] * expected
    assert [r["orderdoc"]["idle_seconds"] for r in notices] == [
        600.0 * k for k in range(1, expected + 1)
    ]
    assert "[10] minute(s)" in notices[0]["properties"]["Message"]
    metrics = pl.read_parquet(out / "metrics.parquet")
    silent = metrics.filter(pl.col("partition_id") == 3)
    assert silent.height > 0
    assert silent["InputEvents"].sum() == 0
