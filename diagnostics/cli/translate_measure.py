"""``orderdoc translate --events CAPTURE``: the capture replayed under ASA's rules and under
the translated job's, the engine's setting that the search of ``whatif --rules flink|spark``
recommends with its measured effect beside the literal translation's, and the events that
moved the engine's watermark forward (docs/engines.md, "Translating an ASA job")."""

from __future__ import annotations

import argparse
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from diagnostics.errors import InputError

if TYPE_CHECKING:
    from diagnostics.captures.reader import Capture
    from diagnostics.cli.job_args import Resolved
    from diagnostics.engines.policy import EngineRules
    from diagnostics.engines.translate import Translation


def measure(
    args: argparse.Namespace, resolved: Resolved, translation: Translation, capture: Capture
) -> dict[str, Any]:
    """The measured difference, the recommendation and the watermark pushers, as data."""
    from diagnostics.engine.replay import declared_partitions, replay
    from diagnostics.engines.compare import compare
    from diagnostics.engines.pushers import watermark_pushers
    from diagnostics.engines.replay import replay_rules
    from diagnostics.whatif.engines import describe_setting, recommend_engine

    events, policy = capture.apply(resolved.policy, named_by=resolved.named_by)
    parts = declared_partitions(resolved.partitions) if resolved.partitions else None
    assert policy.timestamp_by is not None  # translate() refused a job on arrival time
    rules = replace(translation.rules, event_time=policy.timestamp_by)
    try:
        asa = replay(events, policy, partitions=parts, columns=capture.columns)
        other = replay_rules(events, rules, partitions=parts, columns=capture.columns)
        rec = recommend_engine(events, rules, columns=capture.columns, partitions=parts)
    except InputError as exc:
        msg = f"{args.events}: {exc}"
        raise InputError(msg) from exc
    per_timeline = policy.partition_by or bool(policy.over)
    measured = compare(
        asa.outcomes, other.outcomes, rules.window_ns, per_timeline=per_timeline
    ).to_dict()
    measured["capture"] = args.events
    measured["replay"] = replay_command(args.events, rules)
    measured["literal"] = _row(rec.current_row, describe_setting(rec.current))
    measured["recommended"] = {
        **_row(rec.row, describe_setting(rec.rules)),
        "rules": rec.rules.describe(),
        "replay": replay_command(args.events, replace(rec.rules, event_time=rules.event_time)),
        "same_as_literal": rec.rules == rec.current,
        "budget_pct": rec.rule.budget_pct,
    }
    lateness = getattr(rec.rules, "allowed_lateness_ns", 0)
    if args.to == "flink-sql" and lateness:
        measured["recommended"]["note"] = (
            "Flink SQL's window table functions have no allowedLateness: this setting needs "
            "the DataStream API (--to flink-datastream)"
        )
    pushed = watermark_pushers(other.outcomes, rules)
    measured["watermark_pushers"] = None if pushed is None else pushed.to_dict()
    measured["watermark_pushers_text"] = (
        [] if pushed is None else pushed.lines("Flink" if rules.rules.value == "flink" else "Spark")
    )
    return measured


def _row(row: dict[str, Any], setting: str) -> dict[str, Any]:
    """A measured setting as the report shows it."""
    return {
        "setting": setting,
        "dropped": row["dropped"],
        "pct_dropped": row["pct_dropped"],
        "emission_delay_p95_seconds": row["delay_p95_s"],
    }


def replay_command(events: str, rules: EngineRules) -> str:
    """The ``orderdoc replay`` line that replays ``events`` under ``rules``."""
    from diagnostics.durations import format_duration
    from diagnostics.engines.policy import FlinkRules

    parts = [f"orderdoc replay {events} --out DIR --rules {rules.rules.value}",
             f"--timestamp-by {rules.event_time}", f"--window {format_duration(rules.window_ns)}"]  # fmt: skip
    if isinstance(rules, FlinkRules):
        parts.append(f"--out-of-orderness {format_duration(rules.out_of_orderness_ns)}")
        if rules.idleness_ns is not None:
            parts.append(f"--idleness {format_duration(rules.idleness_ns)}")
        if rules.allowed_lateness_ns:
            parts.append(f"--allowed-lateness {format_duration(rules.allowed_lateness_ns)}")
        parts.append(f"--watermark-interval {format_duration(rules.watermark_interval_ns)}")
        parts.append(f"--flink-version {rules.version.value}")
    else:
        parts.append(f"--watermark-delay {format_duration(rules.watermark_delay_ns)}")
        parts.append(f"--trigger {format_duration(rules.trigger_ns)}")
    return " ".join(parts)
