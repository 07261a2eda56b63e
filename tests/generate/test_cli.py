"""``orderdoc generate``: formats by extension, byte-identical reruns, one-line errors."""

from __future__ import annotations

import gzip
from pathlib import Path

import polars as pl
import pytest

from diagnostics.cli import main
from diagnostics.engine.events_io import read_events


def _generate(out: Path, *flags: str, scenario: str = "clock_skew") -> int:
    return main(["generate", scenario, "--out", str(out), "--events", "800", "--seed", "4", *flags])


@pytest.mark.parametrize("name", ["c.parquet", "c.csv", "c.jsonl", "c.csv.gz", "c.jsonl.gz"])
def test_formats_round_trip_and_repeat(tmp_path: Path, capsys, name: str):
    first, second = tmp_path / "a" / name, tmp_path / "b" / name
    first.parent.mkdir()
    second.parent.mkdir()
    assert _generate(first) == 0
    assert _generate(second) == 0
    assert "800 events" in capsys.readouterr().out
    assert first.read_bytes() == second.read_bytes()
    frame = read_events(first)
    assert frame.height == 800
    assert frame.select(pl.col("message_id").cast(pl.Int64))["message_id"].to_list() == list(
        range(800)
    )
    if name.endswith(".gz"):
        assert gzip.decompress(first.read_bytes())


def test_start_and_duration(tmp_path: Path, capsys):
    out = tmp_path / "x.csv"
    assert (
        _generate(out, "--start", "2025-06-01T12:00:00Z", "--duration", "10m", scenario="healthy")
        == 0
    )
    capsys.readouterr()
    frame = pl.read_csv(out)
    assert frame["arrival_time"].min().startswith("2025-06-01T12:00:00")
    assert frame["arrival_time"].max() < "2025-06-01T12:10:01"


@pytest.mark.parametrize(
    ("flags", "needle"),
    [
        (["--duration", "often"], "--duration"),
        (["--events", "0"], "--events"),
        (["--events", "999999999999"], "--events"),
        (["--partitions", "100000"], "--partitions"),
        (["--duration", "400d"], "--duration"),
        (["--start", "yesterday"], "--start"),
    ],
)
def test_bad_flags(tmp_path: Path, capsys, flags, needle):
    assert _generate(tmp_path / "x.csv", *flags) == 2
    err = capsys.readouterr().err
    assert needle in err
    assert len(err.strip().splitlines()) == 1


def test_bad_output_names(tmp_path: Path, capsys):
    assert _generate(tmp_path / "x.txt") == 2
    assert _generate(tmp_path / "x.parquet.gz") == 2
    assert _generate(tmp_path / "missing" / "x.csv") == 2
    (tmp_path / "afile").write_text("")
    assert _generate(tmp_path / "afile" / "x.csv") == 2
    errors = capsys.readouterr().err.strip().splitlines()
    assert len(errors) == 4
    assert all("--out" in line for line in errors)
    assert errors[2].endswith(f"folder {tmp_path / 'missing'} does not exist (use --out)")
    assert errors[3].endswith(f"folder {tmp_path / 'afile'} is a file, not a folder (use --out)")


def test_unknown_scenario(tmp_path: Path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        _generate(tmp_path / "x.csv", scenario="sunny")
    assert exit_info.value.code == 2
    assert "invalid choice" in capsys.readouterr().err


def test_avro_format_writes_a_capture_folder_that_replays_like_the_csv(tmp_path: Path, capsys):
    assert _generate(tmp_path / "cap", "--format", "avro", scenario="late_senders") == 0
    assert "Event Hubs Capture files" in capsys.readouterr().out
    files = sorted((tmp_path / "cap").rglob("*.avro"))
    assert files
    assert all(
        f.relative_to(tmp_path / "cap").parts[:2] == ("orderdoc", "late-senders") for f in files
    )
    assert _generate(tmp_path / "again", "--format", "avro", scenario="late_senders") == 0
    again = sorted((tmp_path / "again").rglob("*.avro"))
    assert [f.read_bytes() for f in files] == [f.read_bytes() for f in again]
    assert _generate(tmp_path / "c.csv", scenario="late_senders") == 0
    outs = {}
    for name in ("cap", "c.csv"):
        code = main(["replay", str(tmp_path / name), "--out", str(tmp_path / f"o-{name}"),
                     "--timestamp-by", "event_time", "--outcomes-only"])  # fmt: skip
        assert code == 0
        outs[name] = pl.read_parquet(tmp_path / f"o-{name}" / "outcomes.parquet").sort("message_id")
    capsys.readouterr()
    for column in ("device_id", "partition", "arrival", "system_timestamp", "late", "status"):
        assert outs["cap"][column].to_list() == outs["c.csv"][column].to_list(), column
    assert outs["cap"]["late"].any()


def test_avro_format_refuses_a_folder_that_is_not_empty(tmp_path: Path, capsys):
    (tmp_path / "cap").mkdir()
    (tmp_path / "cap" / "keep.txt").write_text("x")
    assert _generate(tmp_path / "cap", "--format", "avro") == 2
    assert "not an empty folder" in capsys.readouterr().err
    assert _generate(tmp_path / "c.csv", "--format", "parquet") == 2
    assert "names a csv file" in capsys.readouterr().err
