"""Webhook delivery against local servers on 127.0.0.1: ok, failing, flaky, refusing, hanging."""

from __future__ import annotations

import socket
from datetime import UTC, datetime

import pytest
from conftest import Hook

from diagnostics.errors import UsageError
from diagnostics.kinds import Severity
from diagnostics.rules.model import Alert, AlertState, fingerprint
from diagnostics.rules.webhook import (
    ZERO_TIME,
    DeliveryError,
    DeliveryPolicy,
    check_url,
    deliver,
    payload,
    to_notify,
)

T0 = datetime(2024, 3, 1, 10, 0, tzinfo=UTC)
T1 = datetime(2024, 3, 1, 10, 20, tzinfo=UTC)


def make(
    rule: str, job: str, state: AlertState, active: datetime, ends: datetime | None = None
) -> Alert:
    group = {"job": job}
    return Alert(
        fingerprint=fingerprint(rule, group),
        rule_id=rule,
        title="t",
        state=state,
        severity=Severity.CRITICAL,
        active_at=active,
        starts_at=active,
        ends_at=ends,
        value=3.0,
        labels=(("alertname", rule), ("job", job), ("severity", "critical")),
        annotations=(("summary", f"{job} dropped 3 events"),),
        cause="invalid_timestamps",
        group=(("job", job),),
    )


FAST = DeliveryPolicy(timeout=0.5, attempts=3, backoff=0.01)


def test_payload_is_alertmanager_webhook_v4() -> None:
    alerts = [
        make("dropped-events", "j1", AlertState.FIRING, T0),
        make("dropped-events", "j2", AlertState.RESOLVED, T0, T1),
    ]
    body = payload(alerts, receiver="orderdoc", max_alerts=10)
    assert body["version"] == "4"
    assert body["status"] == "firing"
    assert body["groupKey"] == '{}:{alertname="dropped-events"}'
    assert body["groupLabels"] == {"alertname": "dropped-events"}
    assert body["commonLabels"] == {"alertname": "dropped-events", "severity": "critical"}
    assert body["truncatedAlerts"] == 0
    first, second = body["alerts"]
    assert first == {
        "status": "firing",
        "labels": {"alertname": "dropped-events", "job": "j1", "severity": "critical"},
        "annotations": {"summary": "j1 dropped 3 events"},
        "startsAt": "2024-03-01T10:00:00Z",
        "endsAt": ZERO_TIME,
        "generatorURL": "",
        "fingerprint": fingerprint("dropped-events", {"job": "j1"}),
    }
    assert second["status"] == "resolved"
    assert second["endsAt"] == "2024-03-01T10:20:00Z"


def test_truncation_counts_the_alerts_left_out() -> None:
    alerts = [make("r", f"j{i}", AlertState.FIRING, T0) for i in range(5)]
    body = payload(alerts, receiver="orderdoc", max_alerts=2)
    assert len(body["alerts"]) == 2
    assert body["truncatedAlerts"] == 3


def test_only_latest_episode_per_fingerprint_and_never_pending() -> None:
    old = make("r", "j1", AlertState.RESOLVED, T0, T1)
    new = make("r", "j1", AlertState.FIRING, T1)
    pending = make("r", "j2", AlertState.PENDING, T1)
    assert to_notify([old, new, pending]) == [new]


def test_delivers_one_post_per_rule(ok_hook: Hook) -> None:
    alerts = [
        make("dropped-events", "j1", AlertState.FIRING, T0),
        make("early-events", "j1", AlertState.RESOLVED, T0, T1),
        make("early-events", "j2", AlertState.PENDING, T0),
    ]
    assert deliver(alerts, ok_hook.url, policy=FAST) == 2
    names = sorted(b["groupLabels"]["alertname"] for b in ok_hook.bodies)
    assert names == ["dropped-events", "early-events"]
    early = next(b for b in ok_hook.bodies if b["groupLabels"]["alertname"] == "early-events")
    assert [a["labels"]["job"] for a in early["alerts"]] == ["j1"]
    assert early["status"] == "resolved"


def test_retries_a_failing_server_then_gives_up(failing_hook: Hook) -> None:
    sleeps: list[float] = []
    alerts = [make("r", "j1", AlertState.FIRING, T0)]
    with pytest.raises(DeliveryError) as caught:
        deliver(alerts, failing_hook.url, policy=FAST, sleep=sleeps.append)
    assert failing_hook.requests == 3
    assert sleeps == [0.01, 0.02]
    assert str(caught.value) == (
        f"webhook URL {failing_hook.url}: delivery failed after 3 attempts: "
        "HTTP 503 Service Unavailable"
    )


def test_retry_succeeds_after_one_failure(flaky_hook: Hook) -> None:
    alerts = [make("r", "j1", AlertState.FIRING, T0)]
    assert deliver(alerts, flaky_hook.url, policy=FAST, sleep=lambda _s: None) == 1
    assert flaky_hook.requests == 2
    assert len(flaky_hook.bodies) == 1


def test_a_single_attempt_is_counted_in_the_singular(failing_hook: Hook) -> None:
    once = DeliveryPolicy(timeout=0.5, attempts=1, backoff=0.0)
    with pytest.raises(DeliveryError) as caught:
        deliver([make("r", "j1", AlertState.FIRING, T0)], failing_hook.url, policy=once)
    assert failing_hook.requests == 1
    assert str(caught.value).endswith(
        "delivery failed after 1 attempt: HTTP 503 Service Unavailable"
    )


def test_client_error_is_not_retried(rejecting_hook: Hook) -> None:
    alerts = [make("r", "j1", AlertState.FIRING, T0)]
    with pytest.raises(DeliveryError, match="refused with HTTP 400"):
        deliver(alerts, rejecting_hook.url, policy=FAST, sleep=lambda _s: None)
    assert rejecting_hook.requests == 1


@pytest.mark.timeout(20)
def test_hanging_server_times_out_on_every_attempt(hanging_hook: Hook) -> None:
    policy = DeliveryPolicy(timeout=0.3, attempts=2, backoff=0.0)
    alerts = [make("r", "j1", AlertState.FIRING, T0)]
    with pytest.raises(DeliveryError) as caught:
        deliver(alerts, hanging_hook.url, policy=policy, sleep=lambda _s: None)
    assert str(caught.value).endswith("delivery failed after 2 attempts: timed out")
    assert hanging_hook.requests == 2


def test_unreachable_server_fails_after_the_attempts() -> None:
    with socket.socket() as probe:  # a port that was free a moment ago: nothing listens
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    alerts = [make("r", "j1", AlertState.FIRING, T0)]
    with pytest.raises(DeliveryError, match="delivery failed after 2 attempt"):
        deliver(
            alerts,
            f"http://127.0.0.1:{port}/hook",
            policy=DeliveryPolicy(timeout=0.5, attempts=2, backoff=0.0),
            sleep=lambda _s: None,
        )


@pytest.mark.parametrize("url", ["ftp://host/x", "127.0.0.1:9093", "http://"])
def test_bad_url_is_a_usage_error(url: str) -> None:
    with pytest.raises(UsageError, match="is not an http"):
        check_url(url)
