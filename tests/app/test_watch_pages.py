"""``orderdoc app --watch STATE_DIR``: live Overview and Alerts, alert history, runbooks."""

from __future__ import annotations

import json
import shutil
from datetime import timedelta
from pathlib import Path

import pytest

from diagnostics.cli import main
from diagnostics.cli.app import command
from diagnostics.rules.model import AlertState
from diagnostics.watch.alertstate import AlertStore
from tests.app.conftest import APP, metrics
from tests.app.test_cli import _args
from tests.watch.test_alertstate import T0, alert


@pytest.fixture
def state(agg_asa: Path, tmp_path: Path) -> Path:
    """A watcher state folder: the ASA sample tables, two passes, one firing and one
    resolved alert."""
    folder = tmp_path / "state"
    shutil.copytree(agg_asa, folder / "agg")
    manifest = {"version": 1, "passes": 2, "files": [], "metrics": [], "skipped": []}
    (folder / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    with AlertStore(folder / "alerts") as store:
        store.apply([alert(AlertState.FIRING, job="ORDERS-JOB")], T0)
        later = T0 + timedelta(minutes=20)
        store.apply(
            [
                alert(AlertState.FIRING, job="ORDERS-JOB"),
                alert(AlertState.FIRING, job="PAYMENTS-JOB", rule="early-events"),
            ],
            T0 + timedelta(minutes=1),
        )
        store.apply(
            [
                alert(AlertState.RESOLVED, job="ORDERS-JOB", ends=later),
                alert(AlertState.FIRING, job="PAYMENTS-JOB", rule="early-events"),
            ],
            later,
        )
    return folder


def test_command_passes_the_state_folder(state: Path) -> None:
    argv, _env = command(_args(watch=state))
    assert argv[-2:] == ["--watch-state", str(state.resolve())]


def test_a_folder_that_is_not_a_state_folder_is_one_line(tmp_path: Path, capsys) -> None:
    assert main(["app", "--watch", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith("not a state folder of 'orderdoc watch' (no manifest.json)")
    assert "\n" not in err


def test_alerts_page_shows_history_and_runbook(app_env, monkeypatch, state: Path) -> None:
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("ORDERDOC_WATCH_STATE", str(state))
    at = AppTest.from_file(str(APP), default_timeout=120)
    at.session_state["page"] = "Alerts"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    history = at.dataframe[0].value
    assert sorted(zip(history["rule"], history["state"], strict=True)) == [
        ("dropped-events", "resolved"),
        ("early-events", "firing"),
    ]
    resolved = history[history["state"] == "resolved"].iloc[0]
    assert resolved["where"] == "job=ORDERS-JOB"
    assert resolved["fired"] == "2024-03-05T10:03:00Z"
    assert resolved["resolved"] == "2024-03-05T10:23:00Z"
    assert resolved["lasted"] == "20m"
    # the firing alert's runbook, from docs/runbooks.md (the test alert points at dropped-events)
    expanders = [e.label for e in at.expander]
    assert "Runbook: early-events" in expanders
    text = " ".join(m.value for m in at.markdown)
    assert "**What to change.**" in text
    assert "2 pass(es)" in " ".join(c.value for c in at.caption)


def test_overview_follows_a_pass_that_lands(app_env, monkeypatch, state, agg_idle) -> None:
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("ORDERDOC_WATCH_STATE", str(state))
    at = AppTest.from_file(str(APP), default_timeout=120)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["page"] == "Overview"
    before = metrics(at)
    # a pass lands: the tables under STATE/agg change; the next run shows the new numbers
    shutil.rmtree(state / "agg")
    shutil.copytree(agg_idle, state / "agg")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert metrics(at) != before
