"""Command-line flags that describe a job's ordering policy, shared by replay/whatif/explain."""

from __future__ import annotations

import argparse

from diagnostics.durations import DurationError, parse_duration
from diagnostics.engine.policy import Action, OrderingPolicy


def duration_arg(text: str) -> int:
    """argparse ``type`` for a non-negative duration in ns."""
    try:
        value = parse_duration(text)
    except DurationError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc
    if value < 0:
        msg = f"'{text}' is negative; a tolerance is 0s or more"
        raise argparse.ArgumentTypeError(msg)
    return value


def late_arg(text: str) -> int | None:
    """argparse ``type`` for the late-arrival tolerance: a duration or ``unlimited`` (``-1``)."""
    if text.strip().lower() in ("unlimited", "-1", "infinite", "indefinitely"):
        return None
    return duration_arg(text)


def action_arg(text: str) -> str:
    """``adjust`` or ``drop``, in any case (ARM templates write ``Adjust``/``Drop``)."""
    folded = text.strip().casefold()
    for action in Action:
        if action.value == folded:
            return action.value
    msg = f"'{text}' is not an action: adjust or drop (ARM's Adjust and Drop too)"
    raise argparse.ArgumentTypeError(msg)


def columns_arg(text: str) -> tuple[str, ...]:
    """argparse ``type`` for ``COL[,COL]``."""
    names = tuple(part.strip() for part in text.split(",") if part.strip())
    if not names:
        msg = f"'{text}' names no column"
        raise argparse.ArgumentTypeError(msg)
    return names


def positive_int(text: str) -> int:
    """argparse ``type`` for a whole number ≥ 1."""
    try:
        value = int(text)
    except ValueError as exc:
        msg = f"'{text}' is not a whole number"
        raise argparse.ArgumentTypeError(msg) from exc
    if value < 1:
        msg = f"'{text}' must be 1 or more"
        raise argparse.ArgumentTypeError(msg)
    return value


def separator_arg(text: str) -> str:
    """A CSV separator: one character; ``tab`` or ``\\t`` for a tab."""
    value = "\t" if text in {"tab", "\\t", "TAB"} else text
    if len(value) != 1:
        msg = f"'{text}' is not one character (',', ';' or tab)"
        raise argparse.ArgumentTypeError(msg)
    return value


def add_column_arguments(parser: argparse.ArgumentParser) -> None:
    """``--arrival-col``, ``--partition-col``, ``--capture-path-format``, ``--separator``,
    ``--decimal-comma``, and the capture cache's ``--cache DIR`` / ``--no-cache``."""
    parser.add_argument(
        "--separator",
        type=separator_arg,
        default=None,
        metavar="CHAR",
        help="CSV separator: ',', ';' or tab (default: the one the header line uses)",
    )
    parser.add_argument(
        "--decimal-comma",
        action="store_true",
        help="CSV numbers use a decimal comma (12,5); default: detected with ';' or tab",
    )
    parser.add_argument(
        "--arrival-col",
        default=None,
        metavar="COL",
        help=(
            "arrival time column; default: arrival_time, else ASA's EventEnqueuedUtcTime, "
            "IoTHub.EnqueuedTime or BlobLastModifiedUtcTime (never EventProcessedUtcTime)"
        ),
    )
    parser.add_argument(
        "--partition-col",
        default=None,
        metavar="COL",
        help="input partition column; default: partition_id, else PartitionId, else one partition 0",
    )
    parser.add_argument(
        "--capture-path-format",
        default=None,
        metavar="FORMAT",
        help=(
            "Event Hubs Capture file naming, with {PartitionId}; default "
            "{Namespace}/{EventHub}/{PartitionId}/{Year}/{Month}/{Day}/{Hour}/{Minute}/{Second}"
        ),
    )
    from diagnostics.cli.capture_args import add_cache_arguments

    add_cache_arguments(parser)


def add_policy_arguments(parser: argparse.ArgumentParser, *, sweep: bool = False) -> None:
    """The job's time-handling settings. With ``sweep`` the tolerances are left to the caller."""
    parser.add_argument(
        "--timestamp-by",
        metavar="COL",
        help="application time column (TIMESTAMP BY); absent: arrival-time processing",
    )
    parser.add_argument(
        "--over",
        type=columns_arg,
        default=(),
        metavar="COL[,COL]",
        help="TIMESTAMP BY ... OVER key columns: one timeline per key (substreams)",
    )
    parser.add_argument(
        "--partition-by",
        action="store_true",
        help="PARTITION BY PartitionId: each partition releases on its own watermark",
    )
    parser.add_argument(
        "--partitions",
        type=positive_int,
        metavar="N",
        help="declare partitions 0..N-1 (including ones that never sent data)",
    )
    if not sweep:
        parser.add_argument(
            "--late-arrival",
            type=late_arg,
            default=argparse.SUPPRESS,
            metavar="DURATION|unlimited",
            help="late arrival tolerance, 0s..20d23h59m59s or unlimited; default 5s (or the --job-definition's)",
        )
        parser.add_argument(
            "--out-of-order",
            type=duration_arg,
            default=argparse.SUPPRESS,
            metavar="DURATION",
            help="out-of-order tolerance, 0s..20d23h59m59s; default 0s (or the --job-definition's)",
        )
    parser.add_argument(
        "--action",
        type=action_arg,
        metavar="{adjust,drop}",
        default=argparse.SUPPRESS,
        help="what happens to events outside the tolerances; default adjust (or the --job-definition's)",
    )
    parser.add_argument(
        "--no-early-policy",
        action="store_true",
        help="what-if only: do not drop events more than 5 minutes early (ASA always does)",
    )


#: ASA's defaults for a new job (the portal's): late 5 s, out-of-order 0 s, Adjust.
DEFAULT_LATE_NS = parse_duration("5s")


def given_policy_flags(args: argparse.Namespace) -> list[str]:
    """The policy flags the user gave (tolerances and action are absent from ``args`` when
    not given, so that a job definition's values are not silently replaced by defaults)."""
    given = [
        flag
        for flag, attr in (
            ("--late-arrival", "late_arrival"),
            ("--out-of-order", "out_of_order"),
            ("--action", "action"),
        )
        if hasattr(args, attr)
    ]
    if getattr(args, "timestamp_by", None):
        given.insert(0, "--timestamp-by")
    if getattr(args, "over", ()):
        given.append("--over")
    if getattr(args, "partition_by", False) is True:
        given.append("--partition-by")
    return given


#: Flags that set how application time is handled: no meaning on arrival time.
APPLICATION_TIME_FLAGS = ("--late-arrival", "--out-of-order", "--action", "--no-early-policy")


def application_time_flags(args: argparse.Namespace) -> list[str]:
    """The flags of :data:`APPLICATION_TIME_FLAGS` the user gave."""
    given = [f for f in given_policy_flags(args) if f in APPLICATION_TIME_FLAGS]
    if getattr(args, "no_early_policy", False) is True:
        given.append("--no-early-policy")
    return given


def policy_from_args(
    args: argparse.Namespace, *, late: int | None = None, ooo: int | None = None
) -> OrderingPolicy:
    """The :class:`OrderingPolicy` the flags describe (``late``/``ooo`` override the flags)."""
    return OrderingPolicy(
        timestamp_by=args.timestamp_by,
        late_arrival_ns=getattr(args, "late_arrival", DEFAULT_LATE_NS) if late is None else late,
        out_of_order_ns=getattr(args, "out_of_order", 0) if ooo is None else ooo,
        action=Action(getattr(args, "action", Action.ADJUST.value)),
        early_policy=not args.no_early_policy,
        partition_by=args.partition_by,
        over=tuple(args.over),
    )
