"""Alert state that survives restarts: an SQLite store in ``STATE/alerts/alerts.db``.

Two tables:

* ``alerts``: one row per alert episode, keyed by (fingerprint, active_at), in its latest
  state (pending, firing, resolved). The fingerprint is a hash of the rule id and the group
  labels (:func:`diagnostics.rules.model.fingerprint`), stable across runs.
* ``notifications``: the outbox. A state change that must be told (an episode starts firing,
  a firing episode resolves) is recorded here, in the same transaction as the state change,
  *before* anything is sent; ``sent_at`` is set once the receiver accepted it. At most one
  firing and one resolved notification exist per episode (a unique key), so however often
  the watcher is killed and restarted, an episode is notified at most once per state; what
  was recorded but not marked sent is sent again after a restart, which Alertmanager
  de-duplicates by fingerprint.

An episode first seen already resolved (it began and ended while the watcher was not
running, or its logs came late) was never told: it is notified as it happened, firing (its
``startsAt``) and then resolved (its ``endsAt``), once each like any other episode. Only the
store's first evaluation records such episodes as history without notifying them: they are
the past of the logs the watcher was started on, not something it missed (``evaluations``
keeps the time of every evaluation, in the same transaction as its state changes). A
resolved notification is sent only after its firing one was delivered by an earlier
:meth:`AlertStore.send_unsent` call, so receivers always get them in that order and
Alertmanager, which does not notify a group it has only ever seen resolved, gets the firing
alert first. A firing episode that no longer appears in an evaluation (its rule was removed)
is resolved at that evaluation's time. Times come from the caller (``now``); nothing here
reads the clock.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from diagnostics.errors import InputError
from diagnostics.rules.model import Alert, AlertState, iso

_SCHEMA = """
CREATE TABLE IF NOT EXISTS alerts (
    fingerprint TEXT NOT NULL,
    active_at TEXT NOT NULL,
    rule_id TEXT NOT NULL,
    title TEXT NOT NULL,
    state TEXT NOT NULL,
    severity TEXT NOT NULL,
    starts_at TEXT NOT NULL,
    ends_at TEXT,
    value REAL,
    labels TEXT NOT NULL,
    annotations TEXT NOT NULL,
    cause TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (fingerprint, active_at)
);
CREATE TABLE IF NOT EXISTS notifications (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    fingerprint TEXT NOT NULL,
    active_at TEXT NOT NULL,
    status TEXT NOT NULL,
    body TEXT NOT NULL,
    created_at TEXT NOT NULL,
    sent_at TEXT,
    UNIQUE (fingerprint, active_at, status)
);
CREATE TABLE IF NOT EXISTS evaluations (at TEXT NOT NULL);
"""
_COLUMNS = (
    "fingerprint", "active_at", "rule_id", "title", "state", "severity", "starts_at",
    "ends_at", "value", "labels", "annotations", "cause", "updated_at",
)  # fmt: skip


@dataclass(frozen=True)
class Notification:
    """One recorded notification: the episode, firing or resolved, and the Alertmanager API v2
    alert object to post (``labels``, ``annotations``, ``startsAt``, ``endsAt``)."""

    id: int
    fingerprint: str
    active_at: str
    status: AlertState
    body: dict[str, Any]
    sent_at: str | None


@dataclass(frozen=True)
class Episode:
    """One row of the alert history."""

    fingerprint: str
    rule_id: str
    title: str
    state: AlertState
    severity: str
    active_at: str
    starts_at: str
    ends_at: str | None
    value: float | None
    labels: dict[str, str]
    annotations: dict[str, str]


def api_alert(record: dict[str, Any]) -> dict[str, Any]:
    """The Alertmanager API v2 (``POST /api/v2/alerts``) object of an alert record."""
    body: dict[str, Any] = {
        "labels": record["labels"],
        "annotations": record["annotations"],
        "startsAt": record["starts_at"],
        "generatorURL": "",
    }
    if record["state"] == AlertState.RESOLVED.value and record["ends_at"]:
        body["endsAt"] = record["ends_at"]
    return body


class AlertStore:
    """The SQLite alert store of one state folder. Use as a context manager (closes)."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / "alerts.db"
        try:
            folder.mkdir(parents=True, exist_ok=True)
            self.con = sqlite3.connect(self.path, isolation_level=None)
            self.con.execute("PRAGMA journal_mode=WAL")
            self.con.execute("PRAGMA synchronous=FULL")
            self.con.executescript(_SCHEMA)
        except (OSError, sqlite3.Error) as exc:
            msg = f"{self.path}: cannot open the alert store ({exc}); move it away to start over"
            raise InputError(msg) from exc

    def __enter__(self) -> AlertStore:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the database."""
        self.con.close()

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        try:
            self.con.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            msg = f"{self.path}: the alert store cannot be written ({exc})"
            raise InputError(msg) from exc
        try:
            yield self.con
        except BaseException:
            self.con.execute("ROLLBACK")
            raise
        self.con.execute("COMMIT")

    def _open_records(self, con: sqlite3.Connection) -> dict[str, dict[str, Any]]:
        rows = con.execute(
            f"SELECT {', '.join(_COLUMNS)} FROM alerts WHERE state != ? ORDER BY active_at",
            (AlertState.RESOLVED.value,),
        ).fetchall()
        return {row[0]: _record(row) for row in rows}

    def apply(self, alerts: Sequence[Alert], now: datetime) -> list[Notification]:
        """Record the alerts of one evaluation at ``now``; the notifications this added."""
        stamp = iso(now)
        added: list[tuple[str, str, str]] = []
        with self._transaction() as con:
            first = _first_evaluation(con)
            con.execute("INSERT INTO evaluations (at) VALUES (?)", (stamp,))
            open_by_fp = self._open_records(con)
            seen: set[str] = set()
            for alert in sorted(alerts, key=lambda a: (a.fingerprint, a.active_at)):
                record = {**alert.to_dict(), "updated_at": stamp}
                old = _stored(con, alert.fingerprint, record["active_at"])
                held = open_by_fp.get(alert.fingerprint)
                if old is None and held is not None and held["active_at"] <= record["active_at"]:
                    old = held  # the same episode seen again (a sliding or untimed window)
                    record["active_at"], record["starts_at"] = held["active_at"], held["starts_at"]
                seen.add(alert.fingerprint)
                before = None if old is None else old["state"]
                _upsert(con, record)
                if record["state"] == AlertState.RESOLVED.value:  # a later episode is new
                    open_by_fp.pop(alert.fingerprint, None)
                else:
                    open_by_fp[alert.fingerprint] = record
                if record["state"] == AlertState.FIRING.value and before != "firing":
                    added.append(_enqueue(con, record, AlertState.FIRING, stamp))
                elif record["state"] == AlertState.RESOLVED.value and before == "firing":
                    added.append(_enqueue(con, record, AlertState.RESOLVED, stamp))
                elif record["state"] == AlertState.RESOLVED.value and before != "resolved":
                    if first:  # the past of the logs the watcher starts on: history only
                        continue
                    # it fired and resolved unseen: told as it happened, firing first
                    added.append(_enqueue(con, record, AlertState.FIRING, stamp))
                    added.append(_enqueue(con, record, AlertState.RESOLVED, stamp))
            for fp, held in open_by_fp.items():
                if fp in seen:
                    continue
                if held["state"] == AlertState.PENDING.value:
                    con.execute(
                        "DELETE FROM alerts WHERE fingerprint = ? AND active_at = ?",
                        (fp, held["active_at"]),
                    )
                    continue
                record = {**held, "state": AlertState.RESOLVED.value, "ends_at": stamp}
                record["updated_at"] = stamp
                _upsert(con, record)
                added.append(_enqueue(con, record, AlertState.RESOLVED, stamp))
        wanted = set(added)
        return [
            n
            for n in self.notifications(unsent_only=True)
            if (n.fingerprint, n.active_at, n.status.value) in wanted
        ]

    def notifications(self, *, unsent_only: bool = False) -> list[Notification]:
        """Recorded notifications in the order they were recorded."""
        where = "WHERE sent_at IS NULL" if unsent_only else ""
        rows = self.con.execute(
            "SELECT id, fingerprint, active_at, status, body, sent_at FROM notifications "
            f"{where} ORDER BY id"
        ).fetchall()
        return [
            Notification(r[0], r[1], r[2], AlertState(r[3]), json.loads(r[4]), r[5]) for r in rows
        ]

    def mark_sent(self, ids: Sequence[int], now: datetime) -> None:
        """Record that the notifications ``ids`` were accepted by the receiver."""
        with self._transaction() as con:
            con.executemany(
                "UPDATE notifications SET sent_at = ? WHERE id = ?", [(iso(now), i) for i in ids]
            )

    def send_unsent(
        self, send: Callable[[list[dict[str, Any]]], object], now: datetime, *, chunk: int = 100
    ) -> int:
        """Send every unsent notification (oldest first, ``chunk`` per call of ``send``) and
        mark each chunk sent once ``send`` returned; the number sent. ``send`` raising stops
        here: the rest stay unsent for the next call. A resolved notification whose firing one
        is not marked sent yet waits for a later call."""
        told = {
            (n.fingerprint, n.active_at): n.sent_at is not None
            for n in self.notifications()
            if n.status is AlertState.FIRING
        }
        pending = [  # a resolved one waits until its firing one went out in an earlier call
            n
            for n in self.notifications(unsent_only=True)
            if n.status is not AlertState.RESOLVED or told.get((n.fingerprint, n.active_at), True)
        ]
        done = 0
        for first in range(0, len(pending), chunk):
            part = pending[first : first + chunk]
            send([n.body for n in part])
            self.mark_sent([n.id for n in part], now)
            done += len(part)
        return done

    def firing_alerts(self, ends_at: datetime) -> list[dict[str, Any]]:
        """The API v2 objects of every firing alert with ``endsAt`` = ``ends_at``: what a
        refresh posts so that Alertmanager keeps them firing (as Prometheus re-sends its
        firing alerts). Not notifications: nothing is recorded."""
        rows = self.con.execute(
            f"SELECT {', '.join(_COLUMNS)} FROM alerts WHERE state = ? ORDER BY rule_id, fingerprint",
            (AlertState.FIRING.value,),
        ).fetchall()
        return [{**api_alert(_record(row)), "endsAt": iso(ends_at)} for row in rows]

    def last_evaluation(self) -> datetime | None:
        """The time the rules were last evaluated at (``None`` before the first evaluation)."""
        row = self.con.execute("SELECT at FROM evaluations ORDER BY rowid DESC LIMIT 1").fetchone()
        if row is None or row[0] is None:
            return None
        return datetime.fromisoformat(str(row[0]).replace("Z", "+00:00"))

    def history(self) -> list[Episode]:
        """Every recorded episode, newest activation first."""
        rows = self.con.execute(
            f"SELECT {', '.join(_COLUMNS)} FROM alerts ORDER BY active_at DESC, rule_id"
        ).fetchall()
        return [_episode(_record(row)) for row in rows]


def _episode(r: dict[str, Any]) -> Episode:
    return Episode(
        fingerprint=r["fingerprint"],
        rule_id=r["rule_id"],
        title=r["title"],
        state=AlertState(r["state"]),
        severity=r["severity"],
        active_at=r["active_at"],
        starts_at=r["starts_at"],
        ends_at=r["ends_at"],
        value=r["value"],
        labels=r["labels"],
        annotations=r["annotations"],
    )


def _record(row: Sequence[Any]) -> dict[str, Any]:
    record = dict(zip(_COLUMNS, row, strict=True))
    record["labels"] = json.loads(record["labels"])
    record["annotations"] = json.loads(record["annotations"])
    return record


def _first_evaluation(con: sqlite3.Connection) -> bool:
    """True when nothing was evaluated before (a store of an earlier version that holds
    alerts but no evaluation times counts as evaluated)."""
    for table in ("evaluations", "alerts"):
        if con.execute(f"SELECT 1 FROM {table} LIMIT 1").fetchone() is not None:
            return False
    return True


def _stored(con: sqlite3.Connection, fingerprint: str, active_at: str) -> dict[str, Any] | None:
    row = con.execute(
        f"SELECT {', '.join(_COLUMNS)} FROM alerts WHERE fingerprint = ? AND active_at = ?",
        (fingerprint, active_at),
    ).fetchone()
    return None if row is None else _record(row)


def _upsert(con: sqlite3.Connection, record: dict[str, Any]) -> None:
    values = [
        json.dumps(record[c], sort_keys=True) if c in ("labels", "annotations") else record[c]
        for c in _COLUMNS
    ]
    con.execute(
        f"INSERT OR REPLACE INTO alerts ({', '.join(_COLUMNS)}) "
        f"VALUES ({', '.join('?' for _ in _COLUMNS)})",
        values,
    )


def _enqueue(
    con: sqlite3.Connection, record: dict[str, Any], status: AlertState, stamp: str
) -> tuple[str, str, str]:
    body = api_alert({**record, "state": status.value})
    con.execute(
        "INSERT OR IGNORE INTO notifications "
        "(fingerprint, active_at, status, body, created_at) VALUES (?, ?, ?, ?, ?)",
        (record["fingerprint"], record["active_at"], status.value, json.dumps(body), stamp),
    )
    return (record["fingerprint"], record["active_at"], status.value)
