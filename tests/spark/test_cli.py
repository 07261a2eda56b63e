"""``orderdoc aggregate`` on the command line: one-line errors, exit codes, summary output."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from diagnostics.cli import main


def run(args: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "diagnostics", "aggregate", *args],
        capture_output=True, text=True, env=env, timeout=120, check=False,
    )  # fmt: skip


def test_missing_java_is_one_line_exit_2(samples: Path, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "JAVA_HOME"}
    env["PATH"] = str(tmp_path / "empty-bin")
    done = run([str(samples), "--out", str(tmp_path / "out")], env)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1
    assert done.stderr.startswith("orderdoc aggregate: error: Java 17+ is needed")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["/no/such/folder", "--out", "x"], "input '/no/such/folder': no such file or folder"),
        (["{samples}", "--out", "x", "--master", "moon://1"], "Spark master 'moon://1' is not a Spark master URL (local[N], spark://host:port, yarn, k8s://...) (use --master)"),
        (["{samples}", "--out", "x", "--remote", "http://h:1"], "Spark Connect URL 'http://h:1' is not of the form sc://host:port (use --remote)"),
        (["{samples}", "--out", "x", "--conf", "novalue"], "--conf: 'novalue' is not KEY=VALUE"),
        (["{samples}", "--out", "{samples}/PT1H.json"], "PT1H.json: exists and is not a folder"),
    ],
)  # fmt: skip
def test_bad_flags_and_inputs_are_one_line(samples: Path, args: list[str], message: str) -> None:
    done = run([a.replace("{samples}", str(samples)) for a in args])
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1
    assert message in done.stderr


def test_master_and_remote_exclude_each_other(samples: Path) -> None:
    done = run([str(samples), "--out", "x", "--master", "local[1]", "--remote", "sc://h:1"])
    assert done.returncode == 2
    assert "not allowed with argument" in done.stderr


@pytest.mark.spark
def test_in_process_run_prints_summary_and_progress(
    spark, samples: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["aggregate", str(samples), "--out", str(tmp_path / "agg"), "--master", "local[2]"])
    captured = capsys.readouterr()
    assert code == 0
    assert "records: 28 total, 23 parsed, 5 quarantined" in captured.out
    assert (
        "silent partitions (InputPartitionNotProgressing): partitions 0, 2, 3 of job "
        "ORDERS-JOB; partition 1 of job PAYMENTS-JOB; partition 1 of job REPLAY; partition 2 "
        "of records naming no job"
    ) in captured.out
    assert "writing data_errors" in captured.err
    summary = json.loads((tmp_path / "agg" / "summary.json").read_text())
    assert summary["events_by_kind"]["LateInputEvent"] == 82
    assert spark.range(3).count() == 3  # the shared session was not stopped by the command
