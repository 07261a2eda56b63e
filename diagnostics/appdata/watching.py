"""What the app shows of a watcher's state folder (``orderdoc app --watch STATE_DIR``).

The alert history comes from the watcher's alert store (:mod:`diagnostics.watch.alertstate`),
the runbook text from ``docs/runbooks.md`` (shipped as package data). The aggregate tables are
``STATE_DIR/agg``, read like any aggregate folder.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from diagnostics.errors import InputError
from diagnostics.rules.model import AlertState

if TYPE_CHECKING:
    from diagnostics.appdata.alerts import AlertsView

#: Labels every alert of the default pack carries; the rest tell which job, partition, kind.
COMMON_LABELS = frozenset({"alertname", "severity", "team"})
_HEADING = re.compile(r"^## (.+)$", re.MULTILINE)


#: What a watcher puts in its state folder; a folder holding none of these (and not empty) is
#: not one. The watcher makes ``alerts`` when it starts, ``manifest.json`` after its first pass.
STATE_ENTRIES = ("manifest.json", "plan.json", "alerts", "checkpoint")


def agg_dir(state: Path) -> Path:
    """The aggregate folder of a watcher's state folder (an InputError if it is not one).

    A folder that does not exist yet, is empty, or holds a watcher's state before its first
    pass is accepted: the app waits for the first pass (:func:`waiting`)."""
    if state.exists() and not state.is_dir():
        msg = f"{state}: not a state folder of 'orderdoc watch' (a file)"
        raise InputError(msg)
    known = any((state / name).exists() for name in STATE_ENTRIES)
    if state.is_dir() and not known and any(state.iterdir()):
        msg = f"{state}: not a state folder of 'orderdoc watch' (no manifest.json)"
        raise InputError(msg)
    return state / "agg"


#: What the live pages show before the watcher's first pass (``{state}``: the folder).
WAITING = (
    "Waiting for the first pass of `orderdoc watch` on `{state}`: this page refreshes "
    "itself when it lands."
)


def waiting(state: Path) -> bool:
    """True while the watcher has not completed its first pass (no tables to show yet)."""
    return not (state / "manifest.json").is_file() or not (state / "agg").is_dir()


def passes(state: Path) -> int:
    """Passes the watcher has completed (0 when none or unreadable)."""
    try:
        return int(json.loads((state / "manifest.json").read_text(encoding="utf-8"))["passes"])
    except (OSError, ValueError, KeyError, TypeError):
        return 0


def _slug(heading: str) -> str:
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def runbook_sections(text: str | None = None) -> dict[str, str]:
    """The sections of ``docs/runbooks.md`` by anchor (``dropped-events`` -> its Markdown)."""
    if text is None:
        source = resources.files("diagnostics").joinpath("_data", "runbooks.md")
        try:
            text = source.read_text(encoding="utf-8")
        except OSError:
            return {}
    parts = _HEADING.split(text)
    return {
        _slug(title): f"### {title}\n{body.strip()}\n"
        for title, body in zip(parts[1::2], parts[2::2], strict=True)
    }


def runbook_text(annotation: str | None, sections: dict[str, str]) -> str | None:
    """The runbook section a ``runbook`` annotation (``docs/runbooks.md#anchor``) points to."""
    if not annotation or "#" not in annotation:
        return None
    return sections.get(annotation.split("#", 1)[1])


def _duration(start: str, end: str | None, now: datetime | None) -> str | None:
    begin = datetime.fromisoformat(start.replace("Z", "+00:00"))
    if end:
        finish = datetime.fromisoformat(end.replace("Z", "+00:00"))
    elif now is not None:
        finish = now
    else:
        return None
    minutes = max(0, int((finish - begin).total_seconds() // 60))
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h {minutes:02d}m" if hours else f"{minutes}m"


HISTORY_SCHEMA: dict[str, type[pl.DataType]] = {
    "state": pl.String, "severity": pl.String, "rule": pl.String, "where": pl.String,
    "fired": pl.String, "resolved": pl.String, "lasted": pl.String, "summary": pl.String,
    "runbook": pl.String,
}  # fmt: skip


@dataclass(frozen=True)
class WatchAlerts:
    """The watcher's alerts as its store holds them (no rule is evaluated here): the history
    (schema :data:`HISTORY_SCHEMA`, newest first), the same episodes as alert rows for the
    Overview's chart (:data:`diagnostics.appdata.alerts.ALERT_SCHEMA`), the time of the
    watcher's last evaluation and its passes."""

    history: pl.DataFrame
    alerts: pl.DataFrame
    evaluated_at: datetime | None
    passes: int

    def count(self, state: AlertState) -> int:
        """Episodes in ``state`` now."""
        return int((self.history["state"] == state.value).sum())

    def runbooks(self, sections: dict[str, str]) -> list[tuple[str, str]]:
        """(rule, runbook text) of the firing alerts, each runbook once, in history order."""
        shown: dict[str, tuple[str, str]] = {}
        firing = self.history.filter(pl.col("state") == AlertState.FIRING.value)
        for row in firing.iter_rows(named=True):
            text = runbook_text(row["runbook"], sections)
            if text and row["runbook"] not in shown:
                shown[row["runbook"]] = (row["rule"], text)
        return list(shown.values())


def _where(labels: dict[str, str]) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(labels.items()) if k not in COMMON_LABELS)


def _stamp(text: str | None) -> datetime | None:
    return None if not text else datetime.fromisoformat(text.replace("Z", "+00:00"))


def watch_alerts(state: Path) -> WatchAlerts:
    """What the Overview and Alerts pages show of a watcher's alerts, read from its store.

    "lasted" of a firing alert runs to the watcher's last evaluation (the time its state was
    last known), not to the wall clock: with ``--evaluate-at data-end`` that is the end of
    the data, and a watcher that stopped does not make its alerts last longer.

    A store that cannot be opened or read (corrupt, not a database) is an
    :class:`~diagnostics.errors.InputError` naming the file."""
    from diagnostics.appdata.alerts import ALERT_SCHEMA
    from diagnostics.watch.alertstate import AlertStore

    db = state / "alerts" / "alerts.db"
    if not db.is_file():
        empty = pl.DataFrame(schema=HISTORY_SCHEMA)
        return WatchAlerts(empty, pl.DataFrame(schema=ALERT_SCHEMA), None, passes(state))
    with AlertStore(db.parent) as store:
        try:
            episodes = store.history()
            evaluated = store.last_evaluation()
        except (sqlite3.Error, ValueError) as exc:
            msg = f"{db}: cannot read the watcher's alert store ({exc})"
            raise InputError(msg) from None
    rows = [
        {
            "state": e.state.value,
            "severity": e.severity,
            "rule": e.rule_id,
            "where": _where(e.labels),
            "fired": None if e.state is AlertState.PENDING else e.starts_at,
            "resolved": e.ends_at,
            "lasted": None
            if e.state is AlertState.PENDING
            else _duration(e.starts_at, e.ends_at, evaluated),
            "summary": e.annotations.get("summary"),
            "runbook": e.annotations.get("runbook"),
        }
        for e in episodes
    ]
    alerts = [
        {
            "rule_id": e.rule_id,
            "title": e.title,
            "state": e.state.value,
            "severity": e.severity,
            "starts_at": _stamp(e.starts_at),
            "ends_at": _stamp(e.ends_at),
            "value": e.value,
            "group": _where(e.labels),
            "summary": e.annotations.get("summary", ""),
            "cause": "",
        }
        for e in episodes
    ]
    return WatchAlerts(
        pl.DataFrame(rows, schema=HISTORY_SCHEMA),
        pl.DataFrame(alerts, schema=ALERT_SCHEMA, orient="row"),
        evaluated,
        passes(state),
    )


@dataclass(frozen=True)
class OverviewAlerts:
    """The Overview's alerts: the rows for the chart's markers (schema
    :data:`diagnostics.appdata.alerts.ALERT_SCHEMA`), how many fire and are resolved, and
    where they come from (``note``)."""

    alerts: pl.DataFrame
    firing: int
    resolved: int
    note: str


def overview_alerts(state: Path | None, evaluate: Callable[[], AlertsView]) -> OverviewAlerts:
    """The Overview's alerts: with a watcher's state folder, its store as the Alerts page
    shows it (:func:`watch_alerts`; no rule is evaluated); otherwise ``evaluate()``, the
    rules evaluated at the end of the data. Raises an ``OrderdocError`` when either fails."""
    if state is not None:
        watched = watch_alerts(state)
        when = f" at {watched.evaluated_at:%Y-%m-%d %H:%M} UTC" if watched.evaluated_at else ""
        return OverviewAlerts(
            watched.alerts,
            watched.count(AlertState.FIRING),
            watched.count(AlertState.RESOLVED),
            f"as the watcher recorded them{when}",
        )
    view = evaluate()
    return OverviewAlerts(
        view.alerts,
        view.count(AlertState.FIRING),
        view.count(AlertState.RESOLVED),
        "the rules evaluated at the end of the data",
    )
