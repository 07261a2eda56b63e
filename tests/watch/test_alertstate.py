"""The alert store: transitions notified once, state kept across restarts and kill -9."""

from __future__ import annotations

import signal
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from diagnostics.errors import InputError
from diagnostics.kinds import Severity
from diagnostics.rules.model import Alert, AlertState, fingerprint
from diagnostics.watch.alertstate import AlertStore
from tests.watch.servers import receiver

ROOT = Path(__file__).resolve().parents[2]
T0 = datetime(2024, 3, 5, 10, 3, tzinfo=UTC)


def alert(
    state: AlertState,
    *,
    job: str = "j1",
    active: datetime = T0,
    ends: datetime | None = None,
    rule: str = "dropped-events",
) -> Alert:
    group = {"job": job}
    return Alert(
        fingerprint=fingerprint(rule, group),
        rule_id=rule,
        title="Events are being dropped",
        state=state,
        severity=Severity.CRITICAL,
        active_at=active,
        starts_at=active,
        ends_at=ends,
        value=3.0,
        labels=(("alertname", rule), ("job", job), ("severity", "critical")),
        annotations=(("runbook", "docs/runbooks.md#dropped-events"),),
        cause="invalid_timestamps",
        group=(("job", job),),
    )


def statuses(store: AlertStore) -> list[tuple[str, bool]]:
    return [(n.status.value, n.sent_at is not None) for n in store.notifications()]


def test_each_transition_is_recorded_once(tmp_path: Path) -> None:
    later = T0 + timedelta(minutes=20)
    with AlertStore(tmp_path) as store:
        assert store.apply([alert(AlertState.PENDING)], T0) == []
        added = store.apply([alert(AlertState.FIRING)], T0 + timedelta(minutes=1))
        assert [n.status for n in added] == [AlertState.FIRING]
        assert added[0].body == {
            "labels": {"alertname": "dropped-events", "job": "j1", "severity": "critical"},
            "annotations": {"runbook": "docs/runbooks.md#dropped-events"},
            "startsAt": "2024-03-05T10:03:00Z",
            "generatorURL": "",
        }
        assert store.apply([alert(AlertState.FIRING)], T0 + timedelta(minutes=2)) == []
        resolved = store.apply([alert(AlertState.RESOLVED, ends=later)], later)
        assert [n.body["endsAt"] for n in resolved] == ["2024-03-05T10:23:00Z"]
        assert store.apply([alert(AlertState.RESOLVED, ends=later)], later) == []
    with AlertStore(tmp_path) as store:  # a restart remembers everything
        assert store.apply([alert(AlertState.RESOLVED, ends=later)], later) == []
        assert statuses(store) == [("firing", False), ("resolved", False)]
        [episode] = store.history()
        assert (episode.state, episode.ends_at) == (AlertState.RESOLVED, "2024-03-05T10:23:00Z")


def test_history_only_and_vanishing_alerts(tmp_path: Path) -> None:
    now = T0 + timedelta(hours=1)
    with AlertStore(tmp_path) as store:
        # began and ended before the watcher saw it: history, no notification
        past = alert(AlertState.RESOLVED, job="old", ends=T0 + timedelta(minutes=5))
        assert store.apply([past], now) == []
        # a pending alert that clears is forgotten; a firing one that vanishes is resolved
        store.apply([alert(AlertState.PENDING, job="p"), alert(AlertState.FIRING)], now)
        gone = store.apply([], now + timedelta(minutes=1))
        assert [(n.status, n.body["endsAt"]) for n in gone] == [
            (AlertState.RESOLVED, "2024-03-05T11:04:00Z")
        ]
        jobs = sorted(e.labels["job"] for e in store.history())
        assert jobs == ["j1", "old"]


def test_an_episode_missed_while_down_is_told_once_in_order(tmp_path: Path) -> None:
    first = T0 + timedelta(hours=1)
    with AlertStore(tmp_path) as store:  # the first evaluation: older episodes are history
        old = alert(AlertState.RESOLVED, job="old", ends=T0 + timedelta(minutes=5))
        assert store.apply([old], first) == []
    # the watcher was down while job j1 fired at 11:10 and resolved at 11:40
    active, ends, later = (
        first + timedelta(minutes=10),
        first + timedelta(minutes=40),
        first + timedelta(hours=1),
    )
    missed = alert(AlertState.RESOLVED, active=active, ends=ends)
    with AlertStore(tmp_path) as store:  # restarted
        added = store.apply([old, missed], later)
        assert [(n.status, n.body) for n in added] == [
            (AlertState.FIRING, {**added[0].body, "startsAt": "2024-03-05T11:13:00Z"}),
            (AlertState.RESOLVED, {**added[0].body, "endsAt": "2024-03-05T11:43:00Z"}),
        ]
        assert "endsAt" not in added[0].body
        assert added[0].body["labels"]["job"] == "j1"
        sent: list = []
        assert store.send_unsent(sent.append, later) == 1  # firing first, alone
        assert store.apply([old, missed], later) == []
    with AlertStore(tmp_path) as store:  # restarted again: only the resolved one is left
        assert store.apply([old, missed], later + timedelta(minutes=1)) == []
        assert store.send_unsent(sent.append, later) == 1
        assert store.send_unsent(sent.append, later) == 0
    assert [[body.get("endsAt") for body in post] for post in sent] == [
        [None],
        ["2024-03-05T11:43:00Z"],
    ]
    assert sent[0][0]["startsAt"] == sent[1][0]["startsAt"] == "2024-03-05T11:13:00Z"


def test_a_firing_alert_resolved_and_another_episode_while_down(tmp_path: Path) -> None:
    fired, ends = T0 + timedelta(minutes=30), T0 + timedelta(minutes=50)
    with AlertStore(tmp_path) as store:
        store.apply([alert(AlertState.FIRING)], T0)
        store.send_unsent(lambda _body: None, T0)
    with AlertStore(tmp_path) as store:  # restarted after both happened
        added = store.apply(
            [
                alert(AlertState.RESOLVED, ends=T0 + timedelta(minutes=20)),
                alert(AlertState.RESOLVED, active=fired, ends=ends),
            ],
            T0 + timedelta(hours=1),
        )
        told = [(n.status.value, n.body["startsAt"], n.body.get("endsAt")) for n in added]
        assert told == [
            ("resolved", "2024-03-05T10:03:00Z", "2024-03-05T10:23:00Z"),
            ("firing", "2024-03-05T10:33:00Z", None),
            ("resolved", "2024-03-05T10:33:00Z", "2024-03-05T10:53:00Z"),
        ]
        history = [(e.active_at, e.state, e.ends_at) for e in store.history()]
        assert history == [
            ("2024-03-05T10:33:00Z", AlertState.RESOLVED, "2024-03-05T10:53:00Z"),
            ("2024-03-05T10:03:00Z", AlertState.RESOLVED, "2024-03-05T10:23:00Z"),
        ]


def test_an_untimed_rule_keeps_one_episode(tmp_path: Path) -> None:
    # rules over a table without time fire "now" at every evaluation: the same episode
    with AlertStore(tmp_path) as store:
        first = store.apply([alert(AlertState.FIRING, rule="q")], T0)
        again = T0 + timedelta(minutes=5)
        assert store.apply([alert(AlertState.FIRING, rule="q", active=again)], again) == []
        assert len(first) == 1
        assert len(store.history()) == 1


def test_unsent_notifications_survive_a_failed_send(tmp_path: Path) -> None:
    with AlertStore(tmp_path) as store:
        store.apply([alert(AlertState.FIRING)], T0)

        def refuse(_body: list) -> None:
            raise OSError("receiver down")

        with pytest.raises(OSError, match="receiver down"):
            store.send_unsent(refuse, T0)
        sent: list = []
        assert store.send_unsent(sent.append, T0) == 1
        assert store.send_unsent(sent.append, T0) == 0
        assert len(sent) == 1
        assert statuses(store) == [("firing", True)]


def test_a_corrupt_store_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "alerts.db").write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(InputError, match=r"alerts\.db: cannot open the alert store"):
        AlertStore(tmp_path)


CRASHING = """
import os, signal, sys
from datetime import UTC, datetime
from diagnostics.rules.model import AlertState
from diagnostics.rules.webhook import DeliveryPolicy, post_json
from diagnostics.watch.alertstate import AlertStore
from tests.watch.test_alertstate import T0, alert

folder, url, step = sys.argv[1:]
def hook(at):
    if at == step:
        os.kill(os.getpid(), signal.SIGKILL)
with AlertStore(__import__("pathlib").Path(folder)) as store:
    store.apply([alert(AlertState.FIRING)], T0)
    hook("recorded")
    def send(body):
        post_json(url, body, policy=DeliveryPolicy(timeout=5, attempts=1))
        hook("sent")
    store.send_unsent(send, T0)
"""


@pytest.mark.parametrize(("step", "delivered_before_restart"), [("recorded", 0), ("sent", 1)])
def test_kill_9_loses_nothing_and_duplicates_nothing_new(
    tmp_path: Path, step: str, delivered_before_restart: int
) -> None:
    with receiver() as hook:
        run = [sys.executable, "-c", CRASHING, str(tmp_path), hook.url]
        killed = subprocess.run([*run, step], cwd=ROOT, timeout=60, check=False)
        assert killed.returncode == -signal.SIGKILL
        assert len(hook.received()) == delivered_before_restart
        with AlertStore(tmp_path) as store:
            assert statuses(store) == [("firing", False)]  # recorded, not marked sent
        # the restart: same evaluation again, then the outbox
        done = subprocess.run([*run, "none"], cwd=ROOT, timeout=60, check=False)
        assert done.returncode == 0
        bodies = hook.received()
    with AlertStore(tmp_path) as store:
        assert statuses(store) == [("firing", True)]  # still one notification, now sent
    # the alert itself was sent once, or (killed between sending and marking) once more,
    # identical, for the receiver to de-duplicate by its labels as Alertmanager does
    assert len(bodies) == delivered_before_restart + 1
    assert all(body == bodies[0] for body in bodies)


def test_refresh_posts_the_firing_alerts_and_records_nothing(tmp_path: Path) -> None:
    with AlertStore(tmp_path) as store:
        store.apply([alert(AlertState.FIRING), alert(AlertState.PENDING, job="p")], T0)
        ends = T0 + timedelta(minutes=4)
        [body] = store.firing_alerts(ends)
        assert body["labels"]["job"] == "j1"
        assert body["endsAt"] == "2024-03-05T10:07:00Z"
        assert statuses(store) == [("firing", False)]  # the one notification, unchanged


def idle(
    state: AlertState,
    active: datetime,
    ends: datetime | None = None,
    *,
    fired: datetime | None = None,
) -> Alert:
    """An alert of the idle-partition rule, whose start follows its episode's last notice."""
    base = alert(state, job="orders", active=active, ends=ends, rule="partition-not-progressing")
    return Alert(**{**base.__dict__, "starts_at": fired or active})


def open_episodes(store: AlertStore) -> list[str]:
    return [e.active_at for e in store.history() if e.state is not AlertState.RESOLVED]


def test_a_growing_episode_after_a_resolved_one_is_one_episode(tmp_path: Path) -> None:
    """The reported bug: from the second idle episode on, every tick moved the episode's start
    (its last notice moved) and the resolved first episode made the store forget the open one,
    so each tick posted a new "firing" and none of them was ever resolved."""
    first = idle(AlertState.RESOLVED, T0, T0 + timedelta(minutes=25))
    told: list = []
    with AlertStore(tmp_path) as store:
        ticks = [T0 + timedelta(minutes=m) for m in (61, 66, 71, 76)]
        for minute, now in enumerate(ticks):
            growing = idle(AlertState.FIRING, T0 + timedelta(minutes=60 + 5 * minute))
            told += [
                (n.status.value, n.body["startsAt"]) for n in store.apply([first, growing], now)
            ]
            assert len(open_episodes(store)) == 1
        # the episode's last notice was at 11:18: it resolves 10 minutes after, at 11:29
        over = idle(AlertState.RESOLVED, T0 + timedelta(minutes=76), T0 + timedelta(minutes=86))
        told += [
            (n.status.value, n.body["startsAt"], n.body["endsAt"])
            for n in store.apply([first, over], T0 + timedelta(minutes=90))
        ]
        assert open_episodes(store) == []
        assert [e.state for e in store.history()] == [AlertState.RESOLVED, AlertState.RESOLVED]
    assert told == [
        ("firing", "2024-03-05T11:03:00Z"),
        ("resolved", "2024-03-05T11:03:00Z", "2024-03-05T11:29:00Z"),
    ]


def test_a_past_episode_seen_again_with_a_new_start_is_not_told_again(tmp_path: Path) -> None:
    """The other half: an episode already told resolved (21:21-21:45) that the next evaluation
    shows with a later start (21:35, its last notice moved) is the same episode."""
    start = datetime(2024, 3, 5, 21, 21, tzinfo=UTC)
    with AlertStore(tmp_path) as store:
        assert [n.status for n in store.apply([idle(AlertState.FIRING, start)], start)] == [
            AlertState.FIRING
        ]
        moved = idle(AlertState.FIRING, start + timedelta(minutes=9))
        assert store.apply([moved], start + timedelta(minutes=10)) == []
        over = idle(
            AlertState.RESOLVED, start + timedelta(minutes=14), start + timedelta(minutes=24)
        )
        [resolved] = store.apply([over], start + timedelta(minutes=30))
        assert (resolved.body["startsAt"], resolved.body["endsAt"]) == (
            "2024-03-05T21:21:00Z",
            "2024-03-05T21:45:00Z",
        )
        for later in (31, 40, 90):  # the same data again, and again: nothing new to tell
            assert store.apply([over], start + timedelta(minutes=later)) == []
        [episode] = store.history()
        assert (episode.state, episode.starts_at, episode.ends_at) == (
            AlertState.RESOLVED,
            "2024-03-05T21:21:00Z",
            "2024-03-05T21:45:00Z",
        )
        assert [n.status for n in store.notifications()] == [AlertState.FIRING, AlertState.RESOLVED]


def test_a_new_episode_never_takes_the_key_of_a_stored_one(tmp_path: Path) -> None:
    """An evaluated episode that overlaps no stored one but starts when a stored one started
    (an empty span: the data changed under it) gets a key of its own, so the told episode
    and its notifications stay as they were."""
    with AlertStore(tmp_path) as store:
        store.apply([alert(AlertState.FIRING)], T0)
        ends = T0 + timedelta(minutes=20)
        store.apply([alert(AlertState.RESOLVED, ends=ends)], T0 + timedelta(minutes=30))
        empty = alert(AlertState.RESOLVED, ends=T0)
        added = store.apply([empty], T0 + timedelta(minutes=40))
        assert [n.status for n in added] == [AlertState.FIRING, AlertState.RESOLVED]
        keys = sorted(e.active_at for e in store.history())
        assert keys == ["2024-03-05T10:03:00Z", "2024-03-05T10:03:01Z"]
        told = [(n.active_at, n.status.value) for n in store.notifications()]
        assert told[:2] == [
            ("2024-03-05T10:03:00Z", "firing"),
            ("2024-03-05T10:03:00Z", "resolved"),
        ]
