"""A short soak: ``orderdoc watch`` for 3 minutes after its first pass on live logs
(bench/watch_soak.py at a short length, a tick every second): the state folder's files stay
bounded as passes go on (compaction), no table file is empty, and what was told equals
``orderdoc alerts`` on one aggregate of the final logs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.timeout(900)]

ROOT = Path(__file__).resolve().parents[2]
#: Files the state may hold whatever the number of passes (docs/watch.md, "State that stays
#: small"): per table folder 2 compacted files and the files of up to 8 passes since, up to 9
#: job files, the checkpoint's last 5 batches, the metrics cache, the derived tables.
MOST_FILES = 160


def test_files_stay_bounded_and_told_alerts_equal_one_shot(tmp_path: Path) -> None:
    out = tmp_path / "soak.json"
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "watch_soak.py"), "--minutes", "3", "--every",
         "20", "--interval", "1s", "--json", str(out), "--keep", str(tmp_path / "work")],
        cwd=ROOT, capture_output=True, text=True, timeout=840, check=False,
    )  # fmt: skip
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
    result = json.loads(out.read_text())
    samples = result["samples"]
    assert result["tracebacks"] == 0
    assert result["watch_exit"] == 130  # stopped by Ctrl-C, as a user stops it
    assert result["lines_split"] > 0
    assert result["malformed_lines"] > 0
    # compaction ran, and the files stay bounded: never more than the design allows, the job
    # files and each table's files never more than the passes between two compactions leave
    if result["passes"] > 8:  # 8 passes with files, then each pass compacts the 9 before
        assert result["compactions"] >= 1, result["passes"]
    assert max(s["files"] for s in samples) <= MOST_FILES, samples
    assert max(s["jobs_files"] for s in samples) <= 9
    assert max(s["data_errors_files"] for s in samples) <= 2 * (2 + 2 * 8)
    assert max(s["quarantine_files"] for s in samples) <= 9
    assert max(s["checkpoint_files"] for s in samples) <= 40
    assert result["empty_parquet_files"] <= 1
    late = samples[len(samples) // 2 :]
    assert (
        max(s["files"] for s in late) <= max(s["files"] for s in samples[: len(samples) // 2]) + 30
    )
    # what was told equals the episodes of one aggregate of the final logs
    alerts = result["alerts"]
    assert alerts["episodes_match"], alerts
    assert alerts["told_twice"] == 0
    assert alerts["unsent"] == 0
    assert alerts["most_open_of_one_alert"] <= 1
    assert alerts["firing_gauge"] == alerts["firing_one_shot"]
    assert alerts["firing_told"] <= alerts["episodes_stored"]
