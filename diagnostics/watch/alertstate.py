"""Alert state that survives restarts: an SQLite store in ``STATE/alerts/alerts.db``.

* ``alerts``: one row per alert episode, keyed by its fingerprint (a hash of the rule id and
  the group labels, :func:`diagnostics.rules.model.fingerprint`) and the ``active_at`` it was
  first recorded with, in its latest state, with the ``startsAt``/``endsAt`` it was told with.
  Which stored episode an evaluated one is does not depend on its start, which may move while
  the episode grows: :mod:`diagnostics.watch.episodes`. At most one episode of an alert is
  open (pending or firing).
* ``notifications``: the outbox. A state change that must be told (an episode fires, a firing
  one resolves) is recorded here in the same transaction as the change, *before* anything is
  sent; ``sent_at`` is set once the receiver accepted it. At most one firing and one resolved
  notification exist per episode (a unique key), so however often the watcher is killed and
  restarted an episode is told at most once per state; what was recorded but not marked sent
  is sent again after a restart (Alertmanager de-duplicates it by its labels).

An episode first seen already over (it began and ended while the watcher was not running, or
its logs came late) is told as it happened, firing and then resolved, except at the store's
first evaluation: that is the past of the logs the watcher started on (``evaluations`` keeps
the last evaluation's time). A resolved notification is sent only after its firing one was
delivered by an earlier :meth:`AlertStore.send_unsent` call, so receivers get them in that
order (Alertmanager does not notify a group it has only ever seen resolved). Times come from
the caller (``now``); nothing here reads the clock.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from diagnostics.errors import InputError
from diagnostics.rules.model import Alert, AlertState, iso
from diagnostics.watch.episodes import Span, match

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

    def _episodes(self, con: sqlite3.Connection) -> dict[str, list[dict[str, Any]]]:
        """Every stored episode by fingerprint, oldest first."""
        rows = con.execute(
            f"SELECT {', '.join(_COLUMNS)} FROM alerts ORDER BY fingerprint, active_at"
        ).fetchall()
        found: dict[str, list[dict[str, Any]]] = {}
        for row in rows:
            record = _record(row)
            found.setdefault(record["fingerprint"], []).append(record)
        for records in found.values():
            records.sort(key=lambda r: _time(r["active_at"]))
        return found

    def apply(self, alerts: Sequence[Alert], now: datetime) -> list[Notification]:
        """Record the alerts of one evaluation at ``now``; the notifications this added.
        Each evaluated episode is matched to the stored one it is
        (:mod:`diagnostics.watch.episodes`), whatever its start did since."""
        stamp = iso(now)
        evaluated: dict[str, list[dict[str, Any]]] = {}
        for alert in sorted(alerts, key=lambda a: (a.fingerprint, a.active_at)):
            evaluated.setdefault(alert.fingerprint, []).append(
                {**alert.to_dict(), "updated_at": stamp}
            )
        added: list[tuple[str, str, str]] = []
        with self._transaction() as con:
            first = _first_evaluation(con)
            con.execute("DELETE FROM evaluations")  # only the last one is ever read
            con.execute("INSERT INTO evaluations (at) VALUES (?)", (stamp,))
            stored = self._episodes(con)
            for fp in sorted(set(evaluated) | set(stored)):
                step = _Step(con, stamp, first)
                step.reconcile(stored.get(fp, []), evaluated.get(fp, []))
                added += step.added
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


_PENDING, _FIRING, _RESOLVED = (
    AlertState.PENDING.value,
    AlertState.FIRING.value,
    AlertState.RESOLVED.value,
)


_SECOND = timedelta(seconds=1)


def _time(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _span(record: dict[str, Any]) -> Span:
    """Where a stored or evaluated episode is (a stored one keeps its first ``active_at``)."""
    ends = record["ends_at"] if record["state"] == _RESOLVED else None
    return Span(_time(record["active_at"]), None if ends is None else _time(ends))


class _Step:
    """The changes one evaluation makes to one alert's episodes, and what they tell."""

    def __init__(self, con: sqlite3.Connection, stamp: str, first: bool) -> None:
        self.con, self.stamp, self.first = con, stamp, first
        self.added: list[tuple[str, str, str]] = []

    def tell(self, record: dict[str, Any], status: AlertState) -> None:
        self.added.append(_enqueue(self.con, record, status, self.stamp))

    def reconcile(self, stored: list[dict[str, Any]], evaluated: list[dict[str, Any]]) -> None:
        found = match([_span(r) for r in stored], [_span(r) for r in evaluated])
        for new_index, old_index in found.pairs:
            self.same(stored[old_index], evaluated[new_index])
        for new_index, floor in found.new:
            self.new(evaluated[new_index], floor)
        for old_index, ends in found.gone:
            self.gone(stored[old_index], ends)

    def same(self, old: dict[str, Any], new: dict[str, Any]) -> None:
        """``new`` is the stored episode ``old`` as evaluated now."""
        if old["state"] == _RESOLVED:
            return  # told resolved (or history): what was told stands
        told = {"active_at": old["active_at"], "updated_at": self.stamp}
        if old["state"] == _FIRING:  # it keeps the start it fired with, and firing
            told |= {"starts_at": old["starts_at"], "state": max(new["state"], _FIRING, key=_rank)}
        record = {**new, **told}
        _upsert(self.con, record)
        if old["state"] == _PENDING and record["state"] != _PENDING:
            self.tell(record, AlertState.FIRING)
        if record["state"] == _RESOLVED:
            self.tell(record, AlertState.RESOLVED)

    def new(self, record: dict[str, Any], floor: datetime | None) -> None:
        """An episode not stored yet; ``floor``: the end of a told one it must start after."""
        if floor is not None and floor > _time(record["active_at"]):
            record = {**record, "active_at": iso(floor)}
            if floor > _time(record["starts_at"]):
                record["starts_at"] = iso(floor)
        while _stored(self.con, record["fingerprint"], record["active_at"]) is not None:
            # a key taken by an episode it does not overlap (the data changed under it)
            record = {**record, "active_at": iso(_time(record["active_at"]) + _SECOND)}
        _upsert(self.con, record)
        if record["state"] == _FIRING:
            self.tell(record, AlertState.FIRING)
        elif record["state"] == _RESOLVED and not self.first:
            # it fired and resolved unseen: told as it happened, firing first. At the first
            # evaluation such episodes are the past of the logs the watcher starts on.
            self.tell(record, AlertState.FIRING)
            self.tell(record, AlertState.RESOLVED)

    def gone(self, old: dict[str, Any], ends: datetime | None) -> None:
        """An open episode that no evaluated one continues: forgotten while pending, else
        resolved at ``ends`` (the evaluation's time when ``None``)."""
        if old["state"] == _PENDING:
            self.con.execute(
                "DELETE FROM alerts WHERE fingerprint = ? AND active_at = ?",
                (old["fingerprint"], old["active_at"]),
            )
            return
        record = {**old, "state": _RESOLVED, "ends_at": self.stamp if ends is None else iso(ends)}
        record["updated_at"] = self.stamp
        _upsert(self.con, record)
        self.tell(record, AlertState.RESOLVED)


def _rank(state: str) -> int:
    return (_PENDING, _FIRING, _RESOLVED).index(state)


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
