"""Deliver alerts to a webhook as Alertmanager does (webhook payload ``version: "4"``).

One POST per rule (Alertmanager's ``group_by: [alertname]``), each with a per-attempt timeout
and a bounded number of retries with exponential back-off. Retried: connection errors,
timeouts, HTTP 429 and 5xx. Not retried: other 4xx (the receiver refused the payload).
Pending alerts are never sent; for each fingerprint only its latest episode is sent, so a
receiver sees one alert per identity (de-duplication). ``sleep`` is injected for tests.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from diagnostics.errors import OrderdocError, Setting, UsageError
from diagnostics.rules.model import Alert, AlertState, iso
from diagnostics.words import plural

ZERO_TIME = "0001-01-01T00:00:00Z"  # Alertmanager's endsAt of an alert still firing
RETRY_STATUSES = frozenset({408, 429, 500, 502, 503, 504})


class DeliveryError(OrderdocError):
    """The webhook did not accept the alerts after every allowed attempt."""


@dataclass(frozen=True)
class DeliveryPolicy:
    """Timeout per attempt (seconds), attempts in all (>= 1), first back-off (seconds, doubled
    after each failure), and the most alerts in one payload (the rest are counted in
    ``truncatedAlerts``)."""

    timeout: float = 5.0
    attempts: int = 3
    backoff: float = 0.5
    max_alerts: int = 1000

    def __post_init__(self) -> None:
        if self.timeout <= 0 or self.attempts < 1 or self.backoff < 0 or self.max_alerts < 1:
            msg = f"invalid delivery policy {self}: need timeout > 0, attempts >= 1"
            raise UsageError(msg)


def check_url(url: str) -> str:
    """Accept an ``http``/``https`` URL with a host; raise :class:`UsageError` otherwise."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        msg = f"webhook URL '{url}' is not an http(s) URL with a host"
        raise UsageError(msg, Setting.WEBHOOK)
    return url


def to_notify(alerts: Iterable[Alert]) -> list[Alert]:
    """The alerts to send: not pending, and only the latest episode of each fingerprint."""
    latest: dict[str, Alert] = {}
    for alert in alerts:
        if alert.state is AlertState.PENDING:
            continue
        held = latest.get(alert.fingerprint)
        if held is None or alert.active_at > held.active_at:
            latest[alert.fingerprint] = alert
    return list(latest.values())


def _common(dicts: Sequence[dict[str, str]]) -> dict[str, str]:
    if not dicts:
        return {}
    first = dicts[0]
    return {k: v for k, v in first.items() if all(d.get(k) == v for d in dicts[1:])}


def payload(alerts: Sequence[Alert], *, receiver: str, max_alerts: int) -> dict[str, Any]:
    """The Alertmanager webhook payload for one group of alerts (one rule)."""
    items: list[dict[str, Any]] = [
        {
            "status": "firing" if a.state is AlertState.FIRING else "resolved",
            "labels": dict(a.labels),
            "annotations": dict(a.annotations),
            "startsAt": iso(a.starts_at),
            "endsAt": iso(a.ends_at) if a.ends_at else ZERO_TIME,
            "generatorURL": "",
            "fingerprint": a.fingerprint,
        }
        for a in alerts
    ]
    alertname = alerts[0].rule_id if alerts else ""
    return {
        "version": "4",
        "groupKey": f'{{}}:{{alertname="{alertname}"}}',
        "truncatedAlerts": max(0, len(items) - max_alerts),
        "status": "firing" if any(i["status"] == "firing" for i in items) else "resolved",
        "receiver": receiver,
        "groupLabels": {"alertname": alertname},
        "commonLabels": _common([i["labels"] for i in items]),
        "commonAnnotations": _common([i["annotations"] for i in items]),
        "externalURL": "",
        "alerts": items[:max_alerts],
    }


def post_json(
    url: str,
    body: dict[str, Any] | list[dict[str, Any]],
    *,
    policy: DeliveryPolicy,
    sleep: Callable[[float], None] = time.sleep,
) -> int:
    """POST ``body`` (a webhook payload, or the alert list of Alertmanager's API v2); return
    the number of attempts used, or raise :class:`DeliveryError`."""
    data = json.dumps(body).encode()
    delay = policy.backoff
    last = ""
    for attempt in range(1, policy.attempts + 1):
        request = urllib.request.Request(
            url,
            data=data,
            method="POST",
            headers={"Content-Type": "application/json", "User-Agent": "orderdoc-alerts"},
        )
        try:
            with urllib.request.urlopen(request, timeout=policy.timeout) as response:
                response.read()
            return attempt
        except urllib.error.HTTPError as exc:
            last = f"HTTP {exc.code} {exc.reason}"
            if exc.code not in RETRY_STATUSES:
                msg = f"webhook URL {url}: refused with {last} (not retried)"
                raise DeliveryError(msg) from exc
        except (urllib.error.URLError, TimeoutError, ConnectionError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            last = "timed out" if isinstance(reason, TimeoutError) else str(reason)
        if attempt < policy.attempts:
            sleep(delay)
            delay *= 2
    msg = f"webhook URL {url}: delivery failed after {plural(policy.attempts, 'attempt')}: {last}"
    raise DeliveryError(msg)


def deliver(
    alerts: Iterable[Alert],
    url: str,
    *,
    policy: DeliveryPolicy | None = None,
    receiver: str = "orderdoc",
    sleep: Callable[[float], None] = time.sleep,
) -> int:
    """Send the alerts to notify (see :func:`to_notify`), one POST per rule; return the number
    of POSTs made. Raises :class:`DeliveryError` when a group cannot be delivered."""
    check_url(url)
    policy = policy or DeliveryPolicy()
    groups: dict[str, list[Alert]] = {}
    for alert in to_notify(alerts):
        groups.setdefault(alert.rule_id, []).append(alert)
    posts = 0
    for rule_id in sorted(groups):
        body = payload(groups[rule_id], receiver=receiver, max_alerts=policy.max_alerts)
        post_json(url, body, policy=policy, sleep=sleep)
        posts += 1
    return posts
