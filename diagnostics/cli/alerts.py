"""``orderdoc alerts AGG_DIR``: evaluate alerting rules on an aggregate folder.

Exit codes: 0 ok; 1 when an alert at or above ``--fail-on`` fired during the evaluated data
(state firing, or resolved); 2 for bad input, bad rules, bad flags or a failed webhook
delivery (after the alerts file was written).

``--out FILE`` writes JSON Lines, one alert episode per line. When FILE already exists its
alerts are kept and updated by (fingerprint, active_at), and only episodes that are new or
changed state since that file are sent to ``--webhook``: re-running on overlapping data does
not notify twice.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from diagnostics.aggregates import require_aggregate
from diagnostics.errors import InputError, UsageError
from diagnostics.kinds import Severity
from diagnostics.resources import default_rule_paths
from diagnostics.rules.evaluate import evaluate_detailed
from diagnostics.rules.loader import load_rules
from diagnostics.rules.model import Alert, AlertState, iso
from diagnostics.rules.templates import format_value
from diagnostics.rules.webhook import DeliveryPolicy, check_url, deliver
from diagnostics.words import plural


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``alerts`` to the command line."""
    parser = subparsers.add_parser("alerts", help="evaluate alerting rules on aggregates")
    parser.add_argument("agg_dir", metavar="AGG_DIR", help="folder written by orderdoc aggregate")
    parser.add_argument(
        "--rules",
        action="append",
        metavar="DIR",
        help="rule file or folder (repeatable; default: $ORDERDOC_RULES, else the packaged pack)",
    )
    parser.add_argument("--out", metavar="FILE", help="write alerts as JSON Lines")
    parser.add_argument(
        "--fail-on",
        choices=["warning", "critical"],
        help="exit 1 when an alert of this severity or above fired",
    )
    parser.add_argument("--webhook", metavar="URL", help="POST Alertmanager-style payloads")
    parser.add_argument(
        "--webhook-timeout",
        type=float,
        default=5.0,
        metavar="SECONDS",
        help="timeout of one webhook attempt (default 5)",
    )
    parser.add_argument(
        "--webhook-attempts",
        type=int,
        default=3,
        metavar="N",
        help="webhook attempts in all, with exponential back-off (default 3)",
    )
    parser.add_argument(
        "--now",
        metavar="TIME",
        help="evaluation time, ISO 8601 with zone (default: end of the data)",
    )
    parser.set_defaults(func=run)


def _parse_now(text: str | None) -> datetime | None:
    if text is None:
        return None
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError as exc:
        msg = f"--now '{text}' is not an ISO 8601 time (e.g. 2024-05-01T12:00:00Z)"
        raise UsageError(msg) from exc
    if moment.tzinfo is None:
        msg = f"--now '{text}' has no time zone; add Z for UTC"
        raise UsageError(msg)
    return moment.astimezone(UTC)


def read_previous(path: Path) -> list[dict[str, Any]]:
    """The alerts of an earlier ``--out`` file (empty when it does not exist)."""
    if not path.exists():
        return []
    records = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        msg = f"--out {path}: cannot read the existing file: {exc}"
        raise InputError(msg) from exc
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            missing = [k for k in ("fingerprint", "active_at", "state") if k not in record]
            if missing:
                raise KeyError(missing[0])
        except (ValueError, KeyError, TypeError) as exc:
            msg = f"--out {path}:{number}: not an alert record of orderdoc alerts ({exc})"
            raise InputError(msg) from exc
        records.append(record)
    return records


def merge(
    previous: list[dict[str, Any]], alerts: list[Alert]
) -> tuple[list[dict[str, Any]], list[Alert]]:
    """Merge new alerts into earlier records; return the merged records and the alerts that
    are new or changed state (those to notify).

    An alert continues an earlier record with the same (fingerprint, active_at), or else the
    earlier *unresolved* record of its fingerprint that became active before it (a later run
    over a sliding window, or a rule on a table without time, sees the same episode start
    later); the continued record keeps its ``active_at`` and ``starts_at``.
    """
    merged: dict[tuple[str, str], dict[str, Any]] = {
        (r["fingerprint"], r["active_at"]): r for r in previous
    }
    open_by_fp: dict[str, tuple[str, str]] = {}
    for key, record in sorted(merged.items(), key=lambda kv: kv[0][1]):
        if record["state"] != AlertState.RESOLVED.value:
            open_by_fp[key[0]] = key
    changed: list[Alert] = []
    for alert in sorted(alerts, key=lambda a: (a.fingerprint, a.active_at)):
        key = (alert.fingerprint, iso(alert.active_at))
        record = alert.to_dict()
        if key not in merged and alert.fingerprint in open_by_fp:
            earlier = open_by_fp[alert.fingerprint]
            if earlier[1] <= key[1]:
                key = earlier
                record["active_at"] = merged[key]["active_at"]
                record["starts_at"] = merged[key]["starts_at"]
        old = merged.get(key)
        if old is None or old["state"] != record["state"]:
            changed.append(alert)
        merged[key] = record
        if record["state"] == AlertState.RESOLVED.value:
            open_by_fp.pop(alert.fingerprint, None)
        else:
            open_by_fp[alert.fingerprint] = key
    ordered = sorted(
        merged.values(), key=lambda r: (r["rule_id"], r["fingerprint"], r["active_at"])
    )
    return ordered, changed


def _summary_line(alert: Alert) -> str:
    group = ",".join(f"{k}={v}" for k, v in alert.group)
    since = iso(alert.starts_at)
    return (
        f"{alert.state.value.upper():8} {alert.severity.value:8} {alert.rule_id} "
        f"{{{group}}} value={format_value(alert.value)} since {since}"
    )


def run(args: argparse.Namespace) -> int:
    """Evaluate, write, notify; return the exit code."""
    if args.webhook:
        check_url(args.webhook)
    if not args.webhook_timeout > 0:
        msg = f"--webhook-timeout {args.webhook_timeout} must be more than 0 seconds"
        raise UsageError(msg)
    if args.webhook_attempts < 1:
        msg = f"--webhook-attempts {args.webhook_attempts} must be at least 1"
        raise UsageError(msg)
    policy = DeliveryPolicy(timeout=args.webhook_timeout, attempts=args.webhook_attempts)
    now = _parse_now(args.now)
    rules = load_rules(args.rules or default_rule_paths())
    result = evaluate_detailed(rules, require_aggregate(args.agg_dir), now=now)
    alerts = list(result.alerts)
    for rule_id, reason in result.skipped:
        sys.stderr.write(f"orderdoc alerts: note: rule '{rule_id}' skipped: {reason}\n")
    to_send = alerts
    if args.out:
        out = Path(args.out)
        records, to_send = merge(read_previous(out), alerts)
        out.parent.mkdir(parents=True, exist_ok=True)
        text = "".join(json.dumps(r, sort_keys=True) + "\n" for r in records)
        out.write_text(text, encoding="utf-8")
    counts = {state: sum(a.state is state for a in alerts) for state in AlertState}
    for alert in alerts:
        if alert.state is not AlertState.RESOLVED:
            sys.stdout.write(_summary_line(alert) + "\n")
    sys.stdout.write(
        f"{len(rules)} rules evaluated at {iso(result.now)}: "
        + ", ".join(f"{counts[s]} {s.value}" for s in AlertState)
        + "\n"
    )
    if args.webhook:
        posts = deliver(to_send, args.webhook, policy=policy)
        sys.stdout.write(f"webhook: {plural(posts, 'payload')} delivered\n")
    if args.fail_on:
        floor = Severity(args.fail_on).rank
        fired = [
            a for a in alerts if a.state is not AlertState.PENDING and a.severity.rank >= floor
        ]
        if fired:
            return 1
    return 0
