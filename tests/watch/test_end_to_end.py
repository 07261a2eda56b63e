"""``orderdoc watch`` end to end: logs appended in steps, kill -9 in the middle of a pass, a
real Alertmanager delivering firing then resolved to a loopback receiver, ``/metrics``
scraped, and the tables equal to one ``orderdoc aggregate`` of the final files.

(Kills between recording and sending a notification, which need no Spark, are in
test_alertstate.py: they run in a plain subprocess in a fraction of the time.)"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from diagnostics.aggregates import TableName, table_files
from diagnostics.logs import aggregate as reference
from diagnostics.logs.inputs import expand_inputs
from tests.spark.conftest import canonical, read_table
from tests.spark.test_job import COLUMNS
from tests.watch.servers import (
    alertmanager,
    alertmanager_available,
    free_port,
    receiver,
    wait_for,
)

pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.timeout(420)]

ROOT = Path(__file__).resolve().parents[2]
RULE = ROOT / "rules" / "dropped_events.yaml"
JOB = "/SUBSCRIPTIONS/0/RESOURCEGROUPS/RG/PROVIDERS/MICROSOFT.STREAMANALYTICS/STREAMINGJOBS/ORDERS-JOB"
#: The watcher's Spark: small, and its queries interpreted as the shared session's are
#: (tests/conftest.py, "Spark's generated code"; measured, a pass on the samples took 32 CPU-s
#: instead of 36, two runs each). The generated path runs end to end in tests/spark's
#: commands and cluster.
SPARK = ["--master", "local[2]", "--conf", "spark.sql.shuffle.partitions=2",
         "--conf", "spark.ui.enabled=false", "--conf", "spark.driver.memory=1g",
         "--conf", "spark.sql.codegen.wholeStage=false",
         "--conf", "spark.sql.codegen.factoryMode=NO_CODEGEN"]  # fmt: skip


def line(minute: int, kind: str, count: int) -> bytes:
    """One ASA diagnostic log line of ``count`` events of ``kind`` at ``minute`` minutes past
    10:00 on 2024-03-05 (JSON Lines)."""
    at = (datetime(2024, 3, 5, 10, tzinfo=UTC) + timedelta(minutes=minute)).strftime(
        "%Y-%m-%dT%H:%M"
    )
    record = {
        "time": f"{at}:30.0000000Z",
        "resourceId": JOB,
        "category": "Execution",
        "operationName": "Process Events",
        "level": "Information",
        "properties": {
            "Source": "orders-eh",
            "Type": "DataError",
            "DataErrorType": kind,
            "BriefMessage": "Input event arrival time is earlier than its application timestamp.",
            "Message": "Input event arrival time is earlier than its application timestamp.",
            "FromTimestamp": f"{at}:00.0000000Z",
            "ToTimestamp": f"{at}:20.0000000Z",
            "EventCount": count,
        },
    }
    return json.dumps(record).encode() + b"\n"


def env() -> dict[str, str]:
    return {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "PYTHONPATH": str(ROOT)}


def crash_at(step: str, args: list[str], log: Path) -> None:
    """Run the watcher once and have it killed with SIGKILL when it reaches ``step``."""
    with log.open("ab") as out:
        done = subprocess.run(
            [sys.executable, "-m", "tests.watch.crashing", step, *args],
            cwd=ROOT, env=env(), stdout=out, stderr=subprocess.STDOUT, timeout=180, check=False,
        )  # fmt: skip
    assert done.returncode == -signal.SIGKILL, log.read_text()[-3000:]


def notifications(state: Path) -> list[tuple[str, str | None]]:
    with sqlite3.connect(state / "alerts" / "alerts.db") as con:
        rows = con.execute("SELECT status, sent_at FROM notifications ORDER BY id").fetchall()
    return [(status, sent) for status, sent in rows]


def delivered(hook, status: str) -> list[dict]:
    """Alerts of ``dropped-events`` that Alertmanager delivered with ``status``."""
    return [
        alert
        for body in hook.received()
        for alert in body["alerts"]
        if alert["labels"].get("alertname") == "dropped-events" and alert["status"] == status
    ]


@pytest.mark.skipif(
    not alertmanager_available(),
    reason="Debian's prometheus-alertmanager is not installed (scripts/install-alertmanager.sh "
    "installs it; it needs root and apt)",
)
def test_watch_through_alertmanager_with_kills(tmp_path: Path) -> None:
    logs, state = tmp_path / "logs", tmp_path / "state"
    live = logs / "y=2024" / "m=03" / "d=05" / "h=10" / "PT1H.json"
    live.parent.mkdir(parents=True)
    live.write_bytes(line(1, "LateInputEvent", 4) + line(2, "EarlyInputEvent", 3))
    run_log = tmp_path / "watch.log"
    with receiver() as hook, alertmanager(tmp_path, hook.url) as am:
        args = ["watch", str(logs), "--state", str(state), "--rules", str(RULE),
                "--webhook", f"{am}/api/v2/alerts", "--evaluate-at", "data-end", *SPARK]  # fmt: skip

        # killed in the middle of the first pass: nothing committed, the plan is kept
        crash_at("written", [*args, "--once"], run_log)
        assert (state / "plan.json").exists()
        assert not (state / "manifest.json").exists()
        # the watcher running: it redoes the pass, fires, and follows the appends; it re-posts
        # the firing alert every second, which Alertmanager must not turn into notifications
        port = free_port()
        with watching([*args, "--metrics-port", str(port)], run_log):
            firing = wait_for(
                lambda: delivered(hook, "firing"), timeout=150, what="the firing notification"
            )
            scrape = wait_for(
                lambda: _scrape(port, 'orderdoc_alerts_firing{alertname="dropped-events"'),
                timeout=60,
                what="/metrics with the firing alert",
            )
            assert (
                'orderdoc_events{job="ORDERS-JOB",kind="EarlyInputEvent",partition=""} 3.0'
                in scrape
            )
            assert "orderdoc_watch_lag_seconds" in scrape
            # more lines appended while it runs: still within keep_firing_for, then past it
            with live.open("ab") as out:
                out.write(line(15, "LateInputEvent", 2))
            wait_for(lambda: _passes(state) >= 2, timeout=120, what="a pass over the append")
            with live.open("ab") as out:
                out.write(line(40, "LateInputEvent", 1))
            resolved = wait_for(
                lambda: delivered(hook, "resolved"), timeout=120, what="the resolved notification"
            )
        # while the watcher is down, drops at 10:50 fire and resolve (data up to 11:15)
        with live.open("ab") as out:
            out.write(line(50, "EarlyInputEvent", 2) + line(75, "LateInputEvent", 1))
        with watching(args, run_log):  # restarted: told as it happened, firing then resolved
            wait_for(
                lambda: len(delivered(hook, "resolved")) >= 2,
                timeout=150,
                what="the missed episode's resolved notification",
            )
        missed_firing = delivered(hook, "firing")[1:]
        missed_resolved = delivered(hook, "resolved")[1:]

    assert len(firing) == 1, hook.received()
    assert len(resolved) == 1, hook.received()
    labels = {"alertname": "dropped-events", "job": "ORDERS-JOB", "kind": "EarlyInputEvent",
              "severity": "critical", "team": "streaming"}  # fmt: skip
    assert firing[0]["labels"] == labels
    assert resolved[0]["labels"] == labels
    assert firing[0]["annotations"]["runbook"] == "docs/runbooks.md#dropped-events"
    assert "ORDERS-JOB dropped 3 events" in firing[0]["annotations"]["summary"]
    assert firing[0]["startsAt"].startswith("2024-03-05T10:03:00")
    # the drops were in minute 10:02: the 5-minute window holds them until 10:08, and the
    # alert keeps firing 15 minutes more
    assert resolved[0]["endsAt"].startswith("2024-03-05T10:23:00")
    # the episode missed while down: one firing, one resolved, none of the first re-sent
    assert [a["labels"] for a in missed_firing + missed_resolved] == [labels, labels]
    assert missed_firing[0]["startsAt"].startswith("2024-03-05T10:51:00")
    assert missed_resolved[0]["startsAt"].startswith("2024-03-05T10:51:00")
    assert missed_resolved[0]["endsAt"].startswith("2024-03-05T11:11:00")
    told = notifications(state)
    assert [status for status, _sent in told] == ["firing", "resolved", "firing", "resolved"]
    assert all(sent is not None for _status, sent in told)

    # equal to one aggregate of the final files (the polars reference, which the Spark
    # tests hold equal to the Spark job; test_passes.py compares with the Spark job itself)
    files = expand_inputs([str(logs)])
    expected = reference.aggregate_files(files.logs, files.metrics)
    summary = json.loads((state / "agg" / "summary.json").read_text())
    assert summary | {"files_read": 0, "files_skipped": []} == expected.summary | {
        "files_read": 0,
        "files_skipped": [],
    }
    for table, columns in COLUMNS.items():
        want = getattr(expected, table)
        if not table_files(state / "agg", TableName(table)):  # Spark writes no file for no row
            assert want.is_empty(), table
            continue
        got = read_table(state / "agg" / table)
        assert dict(got.schema) == dict(want.schema), table
        assert canonical(got, columns) == canonical(want, columns), table


@contextmanager
def watching(args: list[str], log: Path) -> Iterator[subprocess.Popen]:
    """``orderdoc ARGS --interval 1s --resend-every 1s`` running; stopped with Ctrl-C, which
    lets the tick under way finish and exits with 130."""
    stops = log.read_text().count("stopped (Ctrl-C)")
    with log.open("ab") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "diagnostics", *args, "--interval", "1s",
             "--resend-every", "1s"],
            cwd=ROOT, env=env(), stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
    try:
        yield process
    except BaseException:
        process.kill()
        process.wait(timeout=10)
        raise
    process.send_signal(signal.SIGINT)
    assert process.wait(timeout=60) == 130, log.read_text()[-3000:]
    assert log.read_text().count("stopped (Ctrl-C)") == stops + 1


def _scrape(port: int, needle: str) -> str | None:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
            text = response.read().decode()
    except OSError:
        return None
    return text if needle in text else None


def _passes(state: Path) -> int:
    try:
        return int(json.loads((state / "manifest.json").read_text())["passes"])
    except (OSError, ValueError, KeyError):
        return 0
