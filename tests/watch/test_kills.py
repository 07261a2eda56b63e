"""kill -9 of the watcher at the steps of a pass, with Spark and a plain webhook receiver (no
Alertmanager needed): after a pass was planned, after its derived tables were written, after
its manifest was committed, twice while an alert is firing. Nothing is lost, no notification
is repeated (a plain receiver does not de-duplicate), and the tables equal one aggregate of
the final files."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from diagnostics.aggregates import TableName, table_files
from diagnostics.logs import aggregate as reference
from diagnostics.logs.inputs import expand_inputs
from tests.spark.conftest import canonical, read_table
from tests.spark.test_job import COLUMNS
from tests.watch.servers import receiver
from tests.watch.test_end_to_end import RULE, SPARK, crash_at, env, line, notifications

pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.timeout(600)]

ROOT = Path(__file__).resolve().parents[2]
LABELS = {"alertname": "dropped-events", "job": "ORDERS-JOB", "kind": "EarlyInputEvent",
          "severity": "critical", "team": "streaming"}  # fmt: skip


def run_once(args: list[str], log: Path) -> None:
    with log.open("ab") as out:
        done = subprocess.run(
            [sys.executable, "-m", "diagnostics", *args, "--once"],
            cwd=ROOT, env=env(), stdout=out, stderr=subprocess.STDOUT, timeout=180, check=False,
        )  # fmt: skip
    assert done.returncode == 0, log.read_text()[-3000:]


def passes(state: Path) -> int:
    path = state / "manifest.json"
    return int(json.loads(path.read_text())["passes"]) if path.exists() else 0


def received(hook) -> list[tuple[str, dict]]:  # type: ignore[no-untyped-def]
    """("firing" or "resolved", alert) for every alert the receiver got, in order."""
    return [
        ("resolved" if "endsAt" in alert else "firing", alert)
        for body in hook.received()
        for alert in body
    ]


def _assert_tables_are(expected: reference.Tables, state: Path) -> None:
    """Every table the watcher keeps in ``state`` equals ``expected``'s (one aggregate of
    the same logs), row for row."""
    for table, columns in COLUMNS.items():
        want = getattr(expected, table)
        if not table_files(state / "agg", TableName(table)):
            assert want.is_empty(), table
            continue
        got = read_table(state / "agg" / table)
        assert canonical(got, columns) == canonical(want, columns), table


def _first_lines(tmp_path: Path) -> tuple[Path, Path, Path, Path]:
    """The logs folder with one live hourly file of two lines, the watcher's state folder,
    that file and the watcher's log."""
    logs, state = tmp_path / "logs", tmp_path / "state"
    live = logs / "y=2024" / "m=03" / "d=05" / "h=10" / "PT1H.json"
    live.parent.mkdir(parents=True)
    live.write_bytes(line(1, "LateInputEvent", 4) + line(2, "EarlyInputEvent", 3))
    return logs, state, live, tmp_path / "watch.log"


def test_kills_at_each_step_lose_and_repeat_nothing(tmp_path: Path) -> None:
    logs, state, live, log = _first_lines(tmp_path)
    with receiver() as hook:
        args = ["watch", str(logs), "--state", str(state), "--rules", str(RULE),
                "--webhook", hook.url, "--evaluate-at", "data-end", *SPARK]  # fmt: skip

        crash_at("planned", [*args, "--once"], log)  # pass 1 planned, nothing written
        assert (state / "plan.json").exists()
        assert passes(state) == 0
        run_once(args, log)  # pass 1 redone and committed; the drops of 10:02 fire
        assert passes(state) == 1
        assert [status for status, _alert in received(hook)] == ["firing"]

        # while it fires: killed after pass 2 committed (before the rules ran) ...
        with live.open("ab") as out:
            out.write(line(15, "LateInputEvent", 2))
        crash_at("committed", [*args, "--once"], log)
        assert passes(state) == 2
        assert not (state / "plan.json").exists()
        # ... and after pass 3's derived tables were written (its manifest not committed)
        with live.open("ab") as out:
            out.write(line(40, "LateInputEvent", 1))  # past keep_firing_for: resolves
        crash_at("derived", [*args, "--once"], log)
        assert passes(state) == 2
        assert (state / "plan.json").exists()
        run_once(args, log)  # pass 3 redone; resolved
        assert passes(state) == 3

    told = received(hook)
    assert [status for status, _alert in told] == ["firing", "resolved"], hook.received()
    assert [alert["labels"] for _status, alert in told] == [LABELS, LABELS]
    assert told[0][1]["startsAt"].startswith("2024-03-05T10:03:00")
    assert told[1][1]["endsAt"].startswith("2024-03-05T10:23:00")
    assert [(status, sent is not None) for status, sent in notifications(state)] == [
        ("firing", True),
        ("resolved", True),
    ]
    text = log.read_text()
    assert text.count("redoing the interrupted pass") == 2
    assert "Traceback" not in text
    assert "is not supported in streaming" not in text  # Spark's warning at every tick

    files = expand_inputs([str(logs)])
    expected = reference.aggregate_files(files.logs, files.metrics)
    summary = json.loads((state / "agg" / "summary.json").read_text())
    ignore = {"files_read": 0, "files_skipped": []}
    assert summary | ignore == expected.summary | ignore
    _assert_tables_are(expected, state)


def test_kills_while_compacting_lose_and_repeat_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Compaction after every pass, the watcher killed once its plan is written and once
    after its first merge: the next start finishes it; the tables equal one aggregate, the
    passes' files are one per folder, and the alert is told firing and resolved once each."""
    monkeypatch.setenv("ORDERDOC_TEST_COMPACT_EVERY", "1")
    logs, state, live, log = _first_lines(tmp_path)
    with receiver() as hook:
        args = ["watch", str(logs), "--state", str(state), "--rules", str(RULE),
                "--webhook", hook.url, "--evaluate-at", "data-end", *SPARK, "--once"]  # fmt: skip
        run_once(args[:-1], log)  # pass 1: nothing to compact yet
        with live.open("ab") as out:
            out.write(line(15, "LateInputEvent", 2))
        crash_at("compaction planned", args, log)  # pass 2 committed, compaction planned
        assert passes(state) == 2
        assert (state / "compaction.json").exists()
        with live.open("ab") as out:
            out.write(line(40, "LateInputEvent", 1))  # past keep_firing_for: resolves
        crash_at("compaction merged", args, log)  # started: finished pass 2's; then pass 3
        assert passes(state) == 3
        assert (state / "compaction.json").exists()
        run_once(args[:-1], log)  # finishes it; then the resolved notification goes out
        run_once(args[:-1], log)
    assert not (state / "compaction.json").exists()
    told = received(hook)
    assert [status for status, _alert in told] == ["firing", "resolved"], hook.received()
    assert {p.name for p in (state / "agg" / "data_errors").rglob("*.parquet")} == {
        "p00000003-compacted.parquet"
    }
    assert sorted(p.name for p in (state / "jobs").iterdir()) == ["p00000003.json"]
    assert "Traceback" not in log.read_text()
    files = expand_inputs([str(logs)])
    expected = reference.aggregate_files(files.logs, files.metrics)
    _assert_tables_are(expected, state)
