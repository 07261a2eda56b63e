"""The memory estimate the local replay makes before reading a capture, and its refusal."""

from __future__ import annotations

import gzip
from datetime import UTC, datetime, timedelta

import polars as pl
import pytest

from diagnostics.captures.capture_writer import write_capture_folder
from diagnostics.captures.footprint import (
    BASE_BYTES,
    JSON_TEXT_FACTOR,
    PER_EVENT,
    CaptureTooLargeError,
    Footprint,
    available_memory,
    check_fits,
    estimate,
)
from diagnostics.cli import main

N = 20_000


def events(n: int = N) -> pl.DataFrame:
    start = datetime(2024, 1, 1, tzinfo=UTC)
    return pl.DataFrame(
        {
            "arrival_time": [start + timedelta(milliseconds=50 * i) for i in range(n)],
            "ts": [start + timedelta(milliseconds=50 * i - 300) for i in range(n)],
            "device": [f"d{i % 37}" for i in range(n)],
            "partition_id": [i % 4 for i in range(n)],
        }
    )


def test_parquet_counts_rows_from_the_footer(tmp_path):
    path = tmp_path / "cap.parquet"
    events().write_parquet(path, row_group_size=3_000)
    found = estimate(path)
    assert found.events == N
    assert found.text_bytes == 0
    assert found.needed == BASE_BYTES + N * PER_EVENT["parquet"]


@pytest.mark.parametrize("name", ["cap.csv", "cap.jsonl", "cap.csv.gz", "cap.jsonl.gz"])
def test_text_estimates_lines_and_holds_the_text(tmp_path, name):
    frame = events()
    text = (frame.write_csv() if ".csv" in name else frame.write_ndjson()).encode()
    path = tmp_path / name
    path.write_bytes(gzip.compress(text) if name.endswith(".gz") else text)
    found = estimate(path)
    # the first MiB's lines scaled to the file: within 2 % of the true count (+1 header)
    assert abs(found.events - N) <= 0.02 * N
    gz = name.endswith(".gz")
    held = len(text) + (path.stat().st_size if gz else 0)
    assert abs(found.text_bytes - held) <= 0.02 * held
    kind = "csv" if ".csv" in name else "json"
    text = JSON_TEXT_FACTOR * found.text_bytes if kind == "json" else 0
    assert found.needed == int(BASE_BYTES + found.events * PER_EVENT[kind] + text)


def test_avro_folder_scales_the_first_file_records(tmp_path):
    write_capture_folder(events(), tmp_path / "cap", window_s=120)
    found = estimate(tmp_path / "cap")
    assert abs(found.events - N) <= 0.1 * N


def test_missing_and_unreadable_inputs_are_one_line_errors(tmp_path, capsys):
    bad = tmp_path / "cap.parquet"
    bad.write_bytes(b"not parquet at all")
    code = main(["replay", str(bad), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert err.count("\n") == 0
    assert str(bad) in err
    assert "parquet" in err
    code = main(["replay", str(tmp_path / "none.csv"), "--out", str(tmp_path / "out")])
    assert code == 2
    assert "no such file or folder" in capsys.readouterr().err


def test_check_fits_refuses_with_the_estimate():
    footprint = Footprint("cap.csv", 20_000_000, 1_500_000_000, "csv")
    check_fits(footprint, None)  # not known: no check
    check_fits(footprint, footprint.needed)  # exactly enough
    with pytest.raises(CaptureTooLargeError) as raised:
        check_fits(footprint, 4_000_000_000)
    text = str(raised.value)
    assert "\n" not in text
    assert "cap.csv" in text
    assert "20,000,000 events" in text
    assert "16.2 GB" in text  # 0.2 GB + 20M x 800 B
    assert "4.0 GB" in text
    assert "stopped before reading" in text


def test_available_memory_reads_meminfo_and_cgroup(tmp_path):
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:  24000000 kB\nMemAvailable:  8000000 kB\n")
    cgroup = tmp_path / "cgroup"
    cgroup.mkdir()
    assert available_memory(meminfo, cgroup) == 8_000_000 * 1024
    (cgroup / "memory.max").write_text("max\n")
    assert available_memory(meminfo, cgroup) == 8_000_000 * 1024
    (cgroup / "memory.max").write_text("3000000000\n")
    (cgroup / "memory.current").write_text("1000000000\n")
    assert available_memory(meminfo, cgroup) == 2_000_000_000
    assert available_memory(tmp_path / "none", tmp_path / "none") is None


def test_replay_stops_before_reading_when_memory_is_short(tmp_path, capsys, monkeypatch):
    path = tmp_path / "cap.parquet"
    events().write_parquet(path)
    out = tmp_path / "out"
    args = ["replay", str(path), "--out", str(out), "--timestamp-by", "ts"]
    monkeypatch.setattr("diagnostics.cli.replay.available_memory", lambda: 1_000_000)
    code = main(args)
    captured = capsys.readouterr()
    assert code == 2
    err = captured.err.strip()
    assert err.count("\n") == 0
    assert f"{N:,} events" in err
    needed = Footprint(str(path), N, 0).needed
    assert f"about {needed / 1e6:,.1f} MB of memory" in err
    assert "1.0 MB this machine has available" in err
    assert "replay it on Spark with --spark" in err
    assert "--skip-memory-check" in err
    assert not out.exists()  # nothing written, the capture not read
    assert main([*args, "--skip-memory-check"]) == 0
    assert pl.read_parquet(out / "outcomes.parquet").height == N
    monkeypatch.setattr("diagnostics.cli.replay.available_memory", lambda: 10**12)
    assert main([*args[:3], str(tmp_path / "out2"), *args[4:]]) == 0
