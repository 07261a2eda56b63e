"""``orderdoc translate --job-definition FILE --to flink-sql|flink-datastream|spark
[--events CAPTURE]``: an ASA job's time handling in Flink's or Spark's settings, what has no
equivalent, and (with a capture) the measured difference (docs/engines.md, "Translating an
ASA job")."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from diagnostics.cli.capture_args import capture_from_args
from diagnostics.cli.engine_args import DEFAULT_TRIGGER_NS, DEFAULT_WATERMARK_INTERVAL_NS
from diagnostics.cli.job_args import Resolved, add_job_arguments, resolve_policy
from diagnostics.cli.policy_args import add_column_arguments, duration_arg
from diagnostics.errors import InputError, UsageError

if TYPE_CHECKING:
    from diagnostics.engines.policy import EngineRules
    from diagnostics.engines.translate import Translation


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``translate`` command."""
    parser = subparsers.add_parser(
        "translate",
        help="an ASA job's time handling as Flink or Spark settings, with the measured difference",
        description=(
            "Translate an ASA job's event ordering settings (late arrival and out-of-order "
            "tolerances, TIMESTAMP BY, the query's TumblingWindow) into Flink SQL, Flink "
            "DataStream or Spark Structured Streaming settings, list what has no equivalent, "
            "and with --events replay the capture under both rule sets to measure the events "
            "ASA keeps that the other engine would drop and the output delay each gives."
        ),
    )
    parser.add_argument(
        "--to",
        required=True,
        choices=["flink-sql", "flink-datastream", "spark"],
        help="the target engine and API",
    )
    add_job_arguments(parser)
    parser.add_argument(
        "--timestamp-by", metavar="COL", help="the event-time column, when the query's "
        "TIMESTAMP BY is an expression the capture holds computed",
    )  # fmt: skip
    parser.add_argument(
        "--window", type=duration_arg, metavar="DURATION",
        help="the tumbling window size (default: the query's first TumblingWindow)",
    )  # fmt: skip
    parser.add_argument(
        "--trigger", type=duration_arg, default=DEFAULT_TRIGGER_NS, metavar="DURATION",
        help="Spark: the processing-time trigger to translate to; default 1s",
    )  # fmt: skip
    parser.add_argument(
        "--watermark-interval", type=duration_arg, default=DEFAULT_WATERMARK_INTERVAL_NS,
        metavar="DURATION", help="Flink: pipeline.auto-watermark-interval; default 200ms",
    )  # fmt: skip
    parser.add_argument(
        "--events", metavar="CAPTURE", help="a capture to measure the difference on"
    )
    add_column_arguments(parser)
    parser.add_argument("--partitions", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--json", action="store_true", help="print the translation as JSON")
    parser.set_defaults(func=run, over=(), partition_by=False, no_early_policy=False)


def run(args: argparse.Namespace) -> int:
    """Translate, optionally measure, print."""
    from diagnostics.engines.translate import Target, query_window, translate

    if args.job_definition is None:
        msg = "--job-definition FILE is required: the ASA job to translate"
        raise UsageError(msg)
    if args.events is None:
        stray = [
            f for f, a in (("--arrival-col", "arrival_col"), ("--partition-col", "partition_col"))
            if getattr(args, a, None)
        ]  # fmt: skip
        if stray:
            msg = f"{', '.join(stray)}: read the capture of --events; add --events CAPTURE"
            raise UsageError(msg)
    resolved = resolve_policy(args)
    job = resolved.job
    assert job is not None  # --job-definition was given
    window = args.window
    found = None
    if window is None:
        query = job.query.text if job.query is not None else None
        found = query_window(query, job.input.name)
        if found is None:
            msg = (
                f"the query of {job.describe_source()} has no TumblingWindow over the input: "
                "give --window SIZE, the window the translated job would use"
            )
            raise UsageError(msg)
        window = found.size_ns
    target = Target(args.to)
    translation = translate(
        resolved.policy,
        window,
        target,
        source=job.input.name,
        trigger_ns=args.trigger,
        watermark_interval_ns=args.watermark_interval,
    )
    data: dict[str, Any] = {
        "job": resolved.describe(),
        "window": None if found is None else {"step": found.step, "window": found.text},
        "target": target.value,
        "rules": translation.rules.describe(),
        "settings": list(translation.settings),
        "mapping": list(translation.mapping),
        "no_equivalent": list(translation.no_equivalent),
    }
    if args.events is not None:
        data["measured"] = _measure(args, resolved, translation)
    if args.json:
        json.dump(data, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(_text(data, target.engine) + "\n")
    return 0


def _measure(
    args: argparse.Namespace, resolved: Resolved, translation: Translation
) -> dict[str, Any]:
    from diagnostics.engine.replay import declared_partitions, replay
    from diagnostics.engines.compare import compare
    from diagnostics.engines.replay import replay_rules

    capture = capture_from_args(args, args.events)
    events, policy = capture.apply(resolved.policy, named_by=resolved.named_by)
    parts = declared_partitions(resolved.partitions) if resolved.partitions else None
    assert policy.timestamp_by is not None  # translate() refused a job on arrival time
    rules = replace(translation.rules, event_time=policy.timestamp_by)
    try:
        asa = replay(events, policy, partitions=parts, columns=capture.columns)
        other = replay_rules(events, rules, partitions=parts, columns=capture.columns)
    except InputError as exc:
        msg = f"{args.events}: {exc}"
        raise InputError(msg) from exc
    per_timeline = policy.partition_by or bool(policy.over)
    measured = compare(
        asa.outcomes, other.outcomes, rules.window_ns, per_timeline=per_timeline
    ).to_dict()
    measured["capture"] = args.events
    measured["replay"] = replay_command(args.events, rules)
    return measured


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
        parts.append(f"--watermark-interval {format_duration(rules.watermark_interval_ns)}")
    else:
        parts.append(f"--watermark-delay {format_duration(rules.watermark_delay_ns)}")
        parts.append(f"--trigger {format_duration(rules.trigger_ns)}")
    return " ".join(parts)


def _text(data: dict[str, Any], engine: str) -> str:
    lines = [f"ASA job     {data['job']}"]
    if data["window"] is not None:
        lines.append(
            f"window      {data['window']['window']} (query step {data['window']['step']})"
        )
    lines += ["", f"{engine} settings ({data['target']}):"]
    lines += [f"  {line}" for line in data["settings"]]
    lines += ["", "how each setting was chosen:"]
    lines += [f"  - {line}" for line in data["mapping"]]
    lines += ["", f"ASA features with no equivalent in {engine}:"]
    lines += [f"  - {line}" for line in data["no_equivalent"]]
    measured = data.get("measured")
    if measured is not None:
        lines += _measured_text(measured, engine)
    return "\n".join(lines)


def _when(change: float | None) -> str:
    """``2.5s later``, ``0.4s earlier`` or ``at the same time`` (engine − ASA, seconds)."""
    if not change:
        return "at the same time"
    return f"{abs(change)}s {'later' if change > 0 else 'earlier'}"


def _measured_text(m: dict[str, Any], engine: str) -> list[str]:
    from diagnostics.words import noun

    n = m["events"]
    keep = m["asa_keeps_engine_drops"]
    a, e, d = (
        m["asa_output_delay_seconds"],
        m["engine_output_delay_seconds"],
        m["delay_change_seconds"],
    )
    lines = [
        "",
        f"measured on {m['capture']} ({n:,} {noun(n, 'event')}):",
        f"  ASA keeps {keep:,} {noun(keep, 'event')} that {engine} would drop as late"
        f" ({m['asa_keeps_engine_drops_adjusted']:,} of them adjusted by ASA)",
        f"  {engine} keeps {m['engine_keeps_asa_drops']:,} that ASA drops"
        f" (ASA drops {m['asa_dropped']:,}, {engine} {m['engine_dropped']:,})",
    ]
    if a["p50"] is not None and e["p50"] is not None:
        lines.append(
            f"  output delay p50 / p95: ASA {a['p50']}s / {a['p95']}s, "
            f"{engine} {e['p50']}s / {e['p95']}s"
        )
    if d["p50"] is not None:
        lines.append(
            f"  per event emitted by both, {engine} emits its window {_when(d['p50'])} at the "
            f"median ({_when(d['p95'])} at the 95th percentile)"
        )
    lines.append(f"  replay it: {m['replay']}")
    return lines
