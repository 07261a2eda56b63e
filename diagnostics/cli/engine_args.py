"""``--rules asa|flink|spark`` and each engine's settings, shared by replay, whatif and
explain (docs/engines.md, "Command line"). A flag that does not apply to the chosen rules
is a one-line error naming it."""

from __future__ import annotations

import argparse

from diagnostics.cli.policy_args import application_time_flags, duration_arg
from diagnostics.durations import MS
from diagnostics.engines.policy import (
    NEWEST_FLINK,
    EngineRules,
    FlinkRules,
    FlinkVersion,
    Rules,
    SparkRules,
    WatermarkPolicy,
)
from diagnostics.errors import UsageError

#: Flink's default ``pipeline.auto-watermark-interval``.
DEFAULT_WATERMARK_INTERVAL_NS = 200 * MS
#: orderdoc's default trigger for Spark (Spark's own default runs batches back to back).
DEFAULT_TRIGGER_NS = 1_000 * MS

#: Flags of both engines, of Flink only and of Spark only (flag, attribute).
BOTH = (("--window", "window"),)
FLINK_ONLY = (
    ("--flink-version", "flink_version"),
    ("--out-of-orderness", "out_of_orderness"),
    ("--idleness", "idleness"),
    ("--allowed-lateness", "allowed_lateness"),
    ("--watermark-interval", "watermark_interval"),
)
SPARK_ONLY = (
    ("--watermark-delay", "watermark_delay"),
    ("--trigger", "trigger"),
    ("--input-col", "input_col"),
    ("--watermark-policy", "watermark_policy"),
)
#: ASA's settings that neither engine has.
ASA_ONLY = ("--late-arrival", "--out-of-order", "--action", "--no-early-policy")


def rules_arg(text: str) -> str:
    """``asa``, ``flink`` or ``spark``, in any case."""
    folded = text.strip().casefold()
    for rules in Rules:
        if rules.value == folded:
            return rules.value
    msg = f"'{text}' is not a rule set: asa, flink or spark"
    raise argparse.ArgumentTypeError(msg)


def flink_version_arg(text: str) -> str:
    """A Flink release orderdoc models: ``2.1`` or ``2.2`` (a patch release such as ``2.2.0``
    names its minor release)."""
    parts = text.strip().split(".")
    if len(parts) in (2, 3) and all(p.isdigit() for p in parts):
        minor = f"{int(parts[0])}.{int(parts[1])}"
        if minor in {v.value for v in FlinkVersion}:
            return minor
    known = " or ".join(v.value for v in FlinkVersion)
    msg = (
        f"'{text}' is not a Flink release orderdoc models: {known} (docs/engines.md, "
        '"Flink versions")'
    )
    raise argparse.ArgumentTypeError(msg)


def add_flink_version_argument(parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """``--flink-version 2.1|2.2`` (read it with :func:`flink_version_of`)."""
    parser.add_argument(
        "--flink-version",
        type=flink_version_arg,
        default=argparse.SUPPRESS,
        metavar="{" + ",".join(v.value for v in FlinkVersion) + "}",
        help="Flink: the release whose rules to follow (they differ when every split is "
        f"idle); default {NEWEST_FLINK.value}, the newest modelled",
    )


def flink_version_of(args: argparse.Namespace) -> FlinkVersion:
    """The release ``--flink-version`` names (the newest modelled without it)."""
    return FlinkVersion(getattr(args, "flink_version", NEWEST_FLINK.value))


def add_rules_arguments(parser: argparse.ArgumentParser, *, sweep: bool = False) -> None:
    """``--rules`` and the engines' settings. With ``sweep`` the settings a what-if varies
    (out-of-orderness, idleness, allowed lateness, watermark delay, trigger) are left to it."""
    parser.add_argument(
        "--rules",
        type=rules_arg,
        default=Rules.ASA.value,
        metavar="{asa,flink,spark}",
        help="whose event-time rules to replay under: ASA's (default), Flink's or Spark "
        "Structured Streaming's (docs/engines.md)",
    )
    group = parser.add_argument_group("Flink and Spark rules (with --rules flink|spark)")
    add = group.add_argument
    add("--window", type=duration_arg, default=argparse.SUPPRESS, metavar="DURATION",
        help="the job's tumbling event-time window size, e.g. 10s (required)")  # fmt: skip
    add_flink_version_argument(group)
    if not sweep:
        add("--out-of-orderness", type=duration_arg, default=argparse.SUPPRESS,
            metavar="DURATION", help="Flink: forBoundedOutOfOrderness bound; default 0s")  # fmt: skip
        add("--idleness", type=duration_arg, default=argparse.SUPPRESS, metavar="DURATION",
            help="Flink: withIdleness timeout; default none")  # fmt: skip
        add("--allowed-lateness", type=duration_arg, default=argparse.SUPPRESS,
            metavar="DURATION", help="Flink: the window's allowedLateness; default 0s")  # fmt: skip
    add("--watermark-interval", type=duration_arg, default=argparse.SUPPRESS, metavar="DURATION",
        help="Flink: pipeline.auto-watermark-interval; default 200ms")  # fmt: skip
    if not sweep:
        add("--watermark-delay", type=duration_arg, default=argparse.SUPPRESS,
            metavar="DURATION", help="Spark: withWatermark delay; default 0s")  # fmt: skip
        add("--trigger", type=duration_arg, default=argparse.SUPPRESS, metavar="DURATION",
            help="Spark: processing-time trigger interval; 0 = back to back; default 1s")  # fmt: skip
    add("--input-col", default=argparse.SUPPRESS, metavar="COL",
        help="Spark: column naming each event's input (each its own withWatermark)")  # fmt: skip
    add("--watermark-policy", choices=[p.value for p in WatermarkPolicy],
        default=argparse.SUPPRESS,
        help="Spark: spark.sql.streaming.multipleWatermarkPolicy with --input-col; default min")  # fmt: skip


def chosen_rules(args: argparse.Namespace) -> Rules:
    """The rule set ``--rules`` names (ASA when the command has no such flag)."""
    return Rules(getattr(args, "rules", Rules.ASA.value))


def _given(args: argparse.Namespace, flags: tuple[tuple[str, str], ...]) -> list[str]:
    return [flag for flag, attr in flags if hasattr(args, attr)]


def check_rules_flags(args: argparse.Namespace) -> None:
    """One line naming every flag that does not apply to the chosen rules, and why."""
    rules = chosen_rules(args)
    if rules is Rules.ASA:
        stray = _given(args, BOTH + FLINK_ONLY + SPARK_ONLY)
        if stray:
            msg = f"{', '.join(stray)}: Flink or Spark settings; add --rules flink or --rules spark"
            raise UsageError(msg)
        return
    name = "Flink" if rules is Rules.FLINK else "Spark"
    asa = [f for f in application_time_flags(args) if f in ASA_ONLY]
    asa += [
        flag
        for flag, attr in (("--over", "over"), ("--partition-by", "partition_by"))
        if getattr(args, attr, None)
    ]
    if asa:
        msg = (
            f"{', '.join(asa)}: ASA settings, which {name}'s rules do not have "
            "(docs/engines.md); remove them or use --rules asa"
        )
        raise UsageError(msg)
    other = _given(args, SPARK_ONLY if rules is Rules.FLINK else FLINK_ONLY)
    if rules is Rules.SPARK and getattr(args, "partitions", None) is not None:
        other.append("--partitions")
    if other:
        msg = f"{', '.join(other)}: not a setting of {name}'s rules (docs/engines.md)"
        raise UsageError(msg)
    if not hasattr(args, "window"):
        msg = f"--rules {rules.value} needs --window DURATION: the job's tumbling window size"
        raise UsageError(msg)
    if hasattr(args, "watermark_policy") and not hasattr(args, "input_col"):
        msg = "--watermark-policy: chooses among the inputs --input-col COL tells apart; add it"
        raise UsageError(msg)


def rules_from_args(
    args: argparse.Namespace,
    event_time: str | None,
    **overrides: int | None,
) -> EngineRules:
    """The engine's rules the flags describe; ``event_time`` is the event-time column
    (``--timestamp-by`` or the job definition's); ``overrides`` replace flag values (the
    what-if's sweep: ``out_of_orderness_ns=...``)."""
    rules = chosen_rules(args)
    if event_time is None:
        msg = (
            f"--rules {rules.value} needs the event-time column: give --timestamp-by COL "
            "(or a --job-definition whose query has TIMESTAMP BY)"
        )
        raise UsageError(msg)
    window = args.window
    if rules is Rules.FLINK:
        values: dict[str, int | None] = {
            "out_of_orderness_ns": getattr(args, "out_of_orderness", 0),
            "idleness_ns": getattr(args, "idleness", None),
            "allowed_lateness_ns": getattr(args, "allowed_lateness", 0),
            "watermark_interval_ns": getattr(
                args, "watermark_interval", DEFAULT_WATERMARK_INTERVAL_NS
            ),
        }
        values.update(overrides)
        return FlinkRules(
            event_time=event_time,
            window_ns=window,
            version=flink_version_of(args),
            **values,  # type: ignore[arg-type]
        )
    values = {
        "watermark_delay_ns": getattr(args, "watermark_delay", 0),
        "trigger_ns": getattr(args, "trigger", DEFAULT_TRIGGER_NS),
    }
    values.update(overrides)
    return SparkRules(
        event_time=event_time,
        window_ns=window,
        input_column=getattr(args, "input_col", None),
        watermark_policy=WatermarkPolicy(getattr(args, "watermark_policy", "min")),
        **values,  # type: ignore[arg-type]
    )
