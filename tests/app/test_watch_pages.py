"""``orderdoc app --watch STATE_DIR``: live Overview and Alerts, alert history, runbooks."""

from __future__ import annotations

import json
import shutil
from datetime import timedelta
from pathlib import Path

import polars as pl
import pytest

from diagnostics.appdata.watching import WAITING, agg_dir, runbook_sections, waiting, watch_alerts
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
    (tmp_path / "notes.txt").write_text("not a state folder", encoding="utf-8")
    assert main(["app", "--watch", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith("not a state folder of 'orderdoc watch' (no manifest.json)")
    assert "\n" not in err


def test_a_state_folder_before_its_first_pass_is_accepted(tmp_path: Path) -> None:
    for folder in (tmp_path / "not-yet", tmp_path / "empty", tmp_path / "started"):
        folder.mkdir(exist_ok=folder.name == "not-yet")
        if folder.name == "started":  # the watcher made its alert store, no pass yet
            AlertStore(folder / "alerts").close()
        assert agg_dir(folder) == folder / "agg"
        assert waiting(folder)
        argv, _env = command(_args(watch=folder))
        assert argv[-2:] == ["--watch-state", str(folder.resolve())]


def test_the_live_pages_wait_for_the_first_pass(app_env, monkeypatch, tmp_path: Path) -> None:
    from streamlit.testing.v1 import AppTest

    state = tmp_path / "state"
    AlertStore(state / "alerts").close()
    monkeypatch.setenv("ORDERDOC_WATCH_STATE", str(state))
    at = AppTest.from_file(str(APP), default_timeout=120)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["page"] == "Overview"
    assert [i.value for i in at.info] == [WAITING.format(state=state)]
    at.session_state["page"] = "Alerts"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert [i.value for i in at.info] == [WAITING.format(state=state)]


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
    # a firing alert lasts until the watcher's last evaluation (10:23), not the wall clock
    firing = history[history["state"] == "firing"].iloc[0]
    assert firing["lasted"] == "20m"
    # the counts are the store's, as the history: no rule is evaluated again here
    assert metrics(at) == {"Firing": "1", "Pending": "0", "Resolved": "1"}
    # the firing alert's runbook only (the test alerts point at dropped-events)
    assert [e.label for e in at.expander if e.label.startswith("Runbook")] == [
        "Runbook: early-events"
    ]
    text = " ".join(m.value for m in at.markdown)
    assert "**What to change.**" in text
    captions = " ".join(c.value for c in at.caption)
    assert "2 passes, rules last evaluated at 2024-03-05 10:23 UTC" in captions


def test_overview_follows_a_pass_that_lands(app_env, monkeypatch, state, agg_idle) -> None:
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("ORDERDOC_WATCH_STATE", str(state))
    at = AppTest.from_file(str(APP), default_timeout=120)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["page"] == "Overview"
    at.sidebar.selectbox(key="job_scope").set_value("All jobs").run()  # every job's alerts
    before = metrics(at)
    # alerts firing: the watcher's store (early-events), as on the Alerts page
    firing = next(m for m in at.metric if m.label == "Alerts firing")
    assert firing.value == "1"
    assert "as the watcher recorded them at 2024-03-05 10:23 UTC" in firing.help
    # a pass lands: the tables under STATE/agg change; the next run shows the new numbers
    shutil.rmtree(state / "agg")
    shutil.copytree(agg_idle, state / "agg")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert metrics(at) != before


def test_what_the_refresh_shows_follows_the_store(state: Path) -> None:
    """AppTest cannot fire a fragment's ``run_every`` timer: this is the data the live pages'
    fragment reads on each refresh, before and after the watcher records a change."""
    before = watch_alerts(state)
    assert (before.count(AlertState.FIRING), before.count(AlertState.RESOLVED)) == (1, 1)
    assert [rule for rule, _text in before.runbooks(runbook_sections())] == ["early-events"]
    end = T0 + timedelta(minutes=45)
    with AlertStore(state / "alerts") as store:
        store.apply(
            [alert(AlertState.RESOLVED, job="PAYMENTS-JOB", rule="early-events", ends=end)], end
        )
    after = watch_alerts(state)
    assert (after.count(AlertState.FIRING), after.count(AlertState.RESOLVED)) == (0, 2)
    assert after.evaluated_at == end
    assert after.runbooks(runbook_sections()) == []
    assert after.history.filter(pl.col("rule") == "early-events")["lasted"].to_list() == ["45m"]
    assert after.alerts.height == 2


def test_a_corrupt_alert_store_is_one_error_on_the_live_pages(
    app_env, monkeypatch, state: Path
) -> None:
    from streamlit.testing.v1 import AppTest

    from diagnostics.errors import OrderdocError

    db = state / "alerts" / "alerts.db"
    for extra in db.parent.glob("alerts.db-*"):  # WAL and shared-memory files
        extra.unlink()
    db.write_bytes(b"\x00garbage, not a SQLite database\xff" * 64)
    with pytest.raises(OrderdocError, match=r"alerts\.db"):
        watch_alerts(state)
    monkeypatch.setenv("ORDERDOC_WATCH_STATE", str(state))
    at = AppTest.from_file(str(APP), default_timeout=120)
    at.session_state["page"] = "Alerts"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    [error] = [e.value for e in at.error]
    assert error.startswith("The watcher's alerts could not be read: ")
    assert str(db) in error
    assert "\n" not in error
    at.session_state["page"] = "Overview"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    [error] = [e.value for e in at.error]
    assert error.startswith("The alerts could not be shown: ")
    assert str(db) in error
    firing = next(m for m in at.metric if m.label == "Alerts firing")
    assert firing.value == "–"
