"""``orderdoc translate --job-definition FILE --to flink-sql|flink-datastream|spark
[--events CAPTURE]``: an ASA job's time handling in Flink's or Spark's settings, what has no
equivalent, and (with a capture) the measured difference (docs/engines.md, "Translating an
ASA job")."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from diagnostics.cli.capture_args import capture_from_args
from diagnostics.cli.engine_args import (
    DEFAULT_TRIGGER_NS,
    DEFAULT_WATERMARK_INTERVAL_NS,
    add_flink_version_argument,
    flink_version_of,
)
from diagnostics.cli.job_args import add_job_arguments, resolve_policy
from diagnostics.cli.policy_args import add_column_arguments, duration_arg
from diagnostics.errors import UsageError


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``translate`` command."""
    parser = subparsers.add_parser(
        "translate",
        help="an ASA job as a Flink SQL or PySpark script, with the measured difference",
        description=(
            "Translate an ASA job into a Flink SQL script for Flink's SQL client or a PySpark "
            "Structured Streaming script (Flink DataStream: the settings only): the input "
            "with its watermark (TIMESTAMP BY, the out-of-order and late arrival tolerances), "
            "each WITH step, each windowed output (tumbling, hopping and session windows, "
            "COUNT/SUM/AVG/MIN/MAX, WHERE, HAVING) and a JOIN with reference data, with only "
            "the connector options left to fill in; list what has no equivalent and the steps "
            "not translated. With --events, replay the capture under both rule sets: the "
            "events ASA keeps that the other engine would drop and why, the emission delay "
            "each gives, and the engine's recommended setting (docs/engines.md, "
            '"Translating an ASA job").'
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
        help="the tumbling window the measurement replays with (default: the query's first "
        "TumblingWindow, else its first HoppingWindow's hop)",
    )  # fmt: skip
    parser.add_argument(
        "--trigger", type=duration_arg, default=DEFAULT_TRIGGER_NS, metavar="DURATION",
        help="Spark: the processing-time trigger to translate to; default 1s",
    )  # fmt: skip
    parser.add_argument(
        "--watermark-interval", type=duration_arg, default=DEFAULT_WATERMARK_INTERVAL_NS,
        metavar="DURATION", help="Flink: pipeline.auto-watermark-interval; default 200ms",
    )  # fmt: skip
    add_flink_version_argument(parser)
    parser.add_argument(
        "--events", metavar="CAPTURE", help="a capture to measure the difference on"
    )
    add_column_arguments(parser)
    parser.add_argument("--partitions", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument(
        "--out", metavar="FILE", help="write the script to FILE (the report still prints)"
    )
    parser.add_argument("--json", action="store_true", help="print the translation as JSON")
    parser.set_defaults(func=run, over=(), partition_by=False, no_early_policy=False)


def run(args: argparse.Namespace) -> int:
    """Translate, optionally measure, print."""
    from diagnostics.cli.translate_measure import measure
    from diagnostics.cli.translate_text import report
    from diagnostics.engines.job_plan import plan_job
    from diagnostics.engines.translate import Target, measure_window, translate

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
    capture = None
    plan = None
    if resolved.policy.timestamp_by is not None:
        query = job.query.text if job.query is not None else None
        capture = (  # the passthrough columns the query does not name stay in the cache
            capture_from_args(args, args.events, defer=True).for_query(query or "")
            if args.events is not None
            else None
        )
        schema = None if capture is None else dict(capture.events.schema)
        references = {
            i.name: i.source for i in job.definition.inputs if i.kind.lower() == "reference"
        }
        plan = plan_job(query, job.input.name, resolved.policy.timestamp_by, schema, references)
    window = args.window
    found = None
    target = Target(args.to)
    if target.engine != "Flink" and hasattr(args, "flink_version"):
        msg = f"--flink-version: a Flink setting; --to {target.value} translates to Spark"
        raise UsageError(msg)
    # the window matters to the measurement and to the DataStream settings only: the scripts
    # carry the query's own windows
    needs_window = args.events is not None or target is Target.FLINK_DATASTREAM
    if window is None and plan is not None:
        found = measure_window(plan)
        if found is None and needs_window:
            what = "the measurement replays with" if args.events else "the DataStream job uses"
            msg = (
                f"the query of {job.describe_source()} has no TumblingWindow or HoppingWindow "
                f"over the input: give --window SIZE, the tumbling window {what}"
            )
            raise UsageError(msg)
        window = None if found is None else found.size_ns
    translation = translate(
        resolved.policy,
        window,
        target,
        plan=plan,
        title=f"{job.describe_source()}: translated by orderdoc translate --to {target.value}",
        trigger_ns=args.trigger,
        watermark_interval_ns=args.watermark_interval,
        input_type=job.input.source,
        flink_version=flink_version_of(args),
    )
    data: dict[str, Any] = {
        "job": resolved.describe(),
        "window": None if found is None else {"step": found.step, "window": found.text},
        "target": target.value,
        "rules": translation.rules.describe(),
        "mapping": list(translation.mapping),
        "no_equivalent": list(translation.no_equivalent),
        "not_translated": list(translation.not_translated),
        "script": "\n".join(translation.script) + "\n",
    }
    if args.out is not None:
        _write(args.out, data["script"])
        data["script_file"] = args.out
    if args.events is not None:
        assert capture is not None
        data["measured"] = measure(args, resolved, translation, capture)
    if args.json:
        json.dump(data, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(report(data, target.engine) + "\n")
    return 0


def _write(path: str, text: str) -> None:
    from pathlib import Path

    try:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(text, encoding="utf-8")
    except OSError as exc:
        msg = f"--out {path}: cannot write ({exc.strerror})"
        raise UsageError(msg) from exc
