"""The memory check against the real thing: a replay of each format at two sizes, in a child
process whose own peak resident memory (``VmHWM``) is measured, lies within 1.5x of the estimate."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from diagnostics.captures.footprint import estimate
from diagnostics.captures.reader import read_capture
from diagnostics.generate.fleet import FleetConfig, fleet_events
from diagnostics.generate.fleet_files import write_capture

SIZES = (6_000, 48_000)
#: The child's own peak (VmHWM: its address space's, not the forked parent's)
_CHILD = """
import sys
from diagnostics.cli import main
code = main(sys.argv[1:])
peak = [l for l in open("/proc/self/status") if l.startswith("VmHWM:")][0].split()[1]
print(int(peak) * 1024)
sys.exit(code)
"""


@pytest.fixture(scope="module")
def captures(tmp_path_factory: pytest.TempPathFactory) -> dict[int, Path]:
    """A fleet Capture folder at each size, and the same events as CSV, JSON Lines, Parquet."""
    found = {}
    for size in SIZES:
        root = tmp_path_factory.mktemp(f"fleet{size}")
        config = FleetConfig().scaled(size)
        write_capture(fleet_events(config), config, root / "capture")
        frame = read_capture(root / "capture").events
        frame.write_csv(root / "events.csv")
        frame.write_ndjson(root / "events.jsonl")
        frame.write_parquet(root / "events.parquet")
        found[size] = root
    return found


def _peak(path: Path, out: Path) -> int:
    argv = ["replay", str(path), "--out", str(out), "--timestamp-by", "eventTime"]
    argv += ["--skip-memory-check", "--no-cache", "--outcomes-only"]
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, *argv], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    return int(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("name", ["capture", "events.csv", "events.jsonl", "events.parquet"])
def test_estimate_is_within_one_and_a_half_times_the_peak(
    captures: dict[int, Path], tmp_path: Path, name: str
) -> None:
    seen = {}
    for size, root in captures.items():
        needed = estimate(root / name).needed
        peak = _peak(root / name, tmp_path / f"out{size}")
        seen[size] = (needed, peak)
        assert peak / 1.5 <= needed <= peak * 1.5, json.dumps(seen)
    assert pl.Series([p for _, p in seen.values()]).is_sorted()  # a larger capture, more memory
