"""``orderdoc cti EVENTS --out DIR``: replay under StreamInsight's CTIs (docs/cti.md).

Flags become a :class:`~diagnostics.cti.policy.CtiPolicy`, a window and columns here; the
replay and its outputs are :mod:`diagnostics.cti` (:mod:`diagnostics.cti.outputs`).

``orderdoc replay --cti-every …`` / ``--cti-import …`` is the former spelling: a deprecated
alias, rewritten to ``orderdoc cti`` by :func:`command_argv` until 0.2. ASA's watermark flags
(``--late-arrival`` …) are rejected in CTI mode and the CTI flags outside it, with one line.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from collections.abc import Sequence
from pathlib import Path

import polars as pl

from diagnostics.captures.far_off import far_off_notes
from diagnostics.cli.capture_args import add_cache_arguments, cache_of, is_capture_folder
from diagnostics.cli.flags import FLAGS
from diagnostics.cli.policy_args import positive_int
from diagnostics.cli.progress import note
from diagnostics.cli.values import flag_duration, out_folder
from diagnostics.cti.frames import CtiColumns
from diagnostics.cti.outputs import format_summary, write_outputs
from diagnostics.cti.policy import CtiPolicy, HoppingWindow, Operator, ViolationPolicy
from diagnostics.cti.replay import CtiReplayResult, replay_cti
from diagnostics.engine.events_io import read_events, read_events_renamed
from diagnostics.errors import InputError, PolicyError, UsageError
from diagnostics.instrument.options import InstrumentOptions, LogFormat
from diagnostics.timestamps import to_utc

IMPORT_OTHER = "other"
DEFAULT_ARRIVAL = "arrival_time"
#: Either one selects CTI mode in the deprecated ``orderdoc replay`` spelling.
MODE_FLAGS = ("--cti-every", "--cti-import")
#: Flags of ``orderdoc cti`` that ``orderdoc replay`` does not have.
CTI_FLAGS = (
    *MODE_FLAGS,
    "--cti-delay",
    "--cti-policy",
    "--cti-flush",
    "--cti-join",
    "--cti-union",
    "--cti-window",
    "--start-col",
    "--end-col",
    "--edge-col",
)
#: ``orderdoc replay`` flags for ASA's watermarks, partitions and outputs: none used by CTIs.
ASA_FLAGS = (
    "--late-arrival",
    "--out-of-order",
    "--action",
    "--partition-by",
    "--partitions",
    "--over",
    "--partition-col",
    "--capture-path-format",
    "--idle-notice",
    "--no-early-policy",
    "--outcomes-only",
)


def _flags(argv: Sequence[str]) -> set[str]:
    return {a.split("=", 1)[0] for a in argv if a.startswith("--")}


def command_argv(argv: Sequence[str]) -> list[str]:
    """``argv`` of ``orderdoc replay`` or ``orderdoc cti`` as the parser should see it.

    ``replay`` with ``--cti-every``/``--cti-import`` becomes ``cti`` (a note on stderr);
    a CTI flag in an ASA replay, or an ASA flag in a CTI replay, is a :class:`UsageError`.
    """
    command, rest = argv[0], list(argv[1:])
    flags = _flags(rest)
    if command == "replay" and not flags & set(MODE_FLAGS):
        stray = [f for f in CTI_FLAGS if f in flags]
        if stray:
            msg = (
                f"{', '.join(stray)}: CTI settings, no meaning for an ASA replay; "
                "use 'orderdoc cti' (docs/cti.md)"
            )
            raise UsageError(msg)
        return [command, *rest]
    ignored = [f for f in ASA_FLAGS if f in flags]
    if ignored:
        msg = (
            f"{', '.join(ignored)}: ASA replay settings, not used by a CTI replay; "
            "remove them (docs/cti.md)"
        )
        raise UsageError(msg)
    if command == "replay":
        sys.stderr.write(
            "orderdoc replay: note: 'replay --cti-every/--cti-import' is deprecated; "
            "use 'orderdoc cti' (the alias goes in 0.2)\n"
        )
    return ["cti", *rest]


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``cti`` command."""
    parser = subparsers.add_parser(
        "cti",
        help="replay an event capture under StreamInsight's CTIs (application-time advancement)",
        description=(
            "Replay an event capture (CSV, JSON Lines or Parquet, .gz accepted) under "
            "StreamInsight's application-time advancement: generated or imported CTIs, "
            "propagated through a join/union and a hopping window (docs/cti.md). Writes "
            "DIR/outcomes.parquet, ctis.parquet, diagnostics.jsonl, metrics.parquet (with "
            "arrival times) and cti_summary.json."
        ),
    )
    parser.add_argument("events", metavar="EVENTS", help="the event capture")
    parser.add_argument("--out", required=True, metavar="DIR", help="output folder")
    add_cache_arguments(parser)
    ctis = parser.add_argument_group("CTIs")
    ctis.add_argument(
        "--cti-every",
        metavar="N|DURATION",
        help="generate a CTI after every N start edges, or every DURATION of application time",
    )
    ctis.add_argument(
        "--cti-delay",
        default="0",
        metavar="DURATION",
        help="CTI = latest start − delay; may be negative down to -1tick (-100ns); default 0",
    )
    ctis.add_argument(
        "--cti-policy",
        choices=[v.value for v in ViolationPolicy],
        default=ViolationPolicy.ADJUST.value,
        help="events starting before the latest CTI are dropped, or adjusted (default)",
    )
    ctis.add_argument("--cti-flush", action="store_true", help="issue a CTI at +inf on close")
    ctis.add_argument(
        "--cti-import",
        metavar="FILE|other",
        help="import CTIs: a CTI table (cti, processing_time; a ctis.parquet works) or "
        "'other' for the other input of --cti-join/--cti-union",
    )
    two = ctis.add_mutually_exclusive_group()
    two.add_argument("--cti-join", metavar="FILE", help="second input, joined with EVENTS")
    two.add_argument("--cti-union", metavar="FILE", help="second input, unioned with EVENTS")
    ctis.add_argument(
        "--cti-window",
        metavar="SIZE[/HOP]",
        help="a hopping (or tumbling) window after the input/operator: holds CTIs back",
    )
    shape = parser.add_argument_group("event shape")
    start = shape.add_mutually_exclusive_group()
    start.add_argument("--start-col", metavar="COL", help="event start column; default start_time")
    start.add_argument(
        "--timestamp-by", dest="start_col", metavar="COL", help="the same as --start-col"
    )
    shape.add_argument("--end-col", metavar="COL", help="interval end column (interval events)")
    shape.add_argument(
        "--edge-col", metavar="COL", help="edge events: column holding 'start' or 'end'"
    )
    shape.add_argument(
        "--arrival-col",
        default=DEFAULT_ARRIVAL,
        metavar="COL",
        help="arrival (processing) time column; default arrival_time, absent = none",
    )
    logs = parser.add_argument_group("diagnostics (ASA-format logs and metrics)")
    logs.add_argument(
        "--error-window",
        default="1m",
        metavar="DURATION",
        help="processing-time window of one aggregated data-error record (default 1m, as ASA)",
    )
    logs.add_argument("--job", default="orderdoc-replay", help="job name in the resourceId")
    logs.add_argument("--source", default="input", help="input name (properties.Source)")
    logs.add_argument(
        "--log-format",
        choices=[f.value for f in LogFormat],
        default=LogFormat.RESOURCE.value,
        help="resource-log records (default) or activity-log messages",
    )
    parser.add_argument(
        "--batch-size",
        type=positive_int,
        default=1_000_000,
        metavar="N",
        help="items per engine batch (does not change the result); default 1000000",
    )
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    parser.set_defaults(func=run)


def policy_from_args(args: argparse.Namespace) -> CtiPolicy:
    """The :class:`CtiPolicy` the flags describe (errors name the flag)."""
    every_events: int | None = None
    every_ns: int | None = None
    text = args.cti_every
    if text is not None:
        if text.strip().isdigit():
            every_events = int(text)
        else:
            every_ns = flag_duration("--cti-every", text)
    if text is None and args.cti_import is None:
        msg = "--cti-every or --cti-import is required: a CTI replay generates or imports CTIs"
        raise UsageError(msg)
    try:
        return CtiPolicy(
            every_events=every_events,
            every_ns=every_ns,
            delay_ns=flag_duration("--cti-delay", args.cti_delay),
            violation=ViolationPolicy(args.cti_policy),
            flush_at_infinity=args.cti_flush,
            imports=args.cti_import is not None,
        )
    except PolicyError as exc:
        msg = f"--cti-every/--cti-delay: {exc}"
        raise UsageError(msg) from exc


def window_from_args(args: argparse.Namespace) -> HoppingWindow | None:
    """The ``--cti-window SIZE[/HOP]`` window, or ``None``."""
    if args.cti_window is None:
        return None
    size_text, _, hop_text = args.cti_window.partition("/")
    size = flag_duration("--cti-window", size_text)
    hop = flag_duration("--cti-window", hop_text) if hop_text else size
    try:
        return HoppingWindow(size, hop)
    except PolicyError as exc:
        msg = f"--cti-window {args.cti_window!r}: {exc}"
        raise UsageError(msg) from exc


def columns_from_args(args: argparse.Namespace, frame: pl.DataFrame) -> CtiColumns:
    """Start/end/edge/arrival columns; a missing default arrival column means no arrivals."""
    arrival: str | None = args.arrival_col
    if arrival not in frame.columns:
        if arrival != DEFAULT_ARRIVAL:
            msg = f"--arrival-col {arrival}: no such column in {args.events}"
            raise InputError(msg)
        arrival = None
    return CtiColumns(
        start=args.start_col or "start_time", end=args.end_col, edge=args.edge_col, arrival=arrival
    )


def options_from_args(args: argparse.Namespace) -> InstrumentOptions:
    """How the diagnostics records are aggregated and named (errors name the flag)."""
    window = flag_duration("--error-window", args.error_window, positive=True)
    try:
        return InstrumentOptions(
            error_window_ns=window,
            job=args.job,
            source=args.source,
            log_format=LogFormat(args.log_format),
        )
    except UsageError as exc:
        msg = f"--job/--source: {exc}"
        raise UsageError(msg) from exc


def _operator(args: argparse.Namespace) -> Operator | None:
    if args.cti_join:
        return Operator.JOIN
    return Operator.UNION if args.cti_union else None


def replay_from_args(args: argparse.Namespace) -> CtiReplayResult:
    """Read the inputs and replay them as the flags say."""
    policy = policy_from_args(args)
    window = window_from_args(args)
    second = args.cti_join or args.cti_union
    read = [
        read_events_renamed(
            path, cache=cache_of(args) if is_capture_folder(path) else None, report=note
        )
        for path in (args.events, *([second] if second else []))
    ]
    left = read[0][0]
    inputs = [frame for frame, _ in read]
    import_other = args.cti_import == IMPORT_OTHER
    if import_other and second is None:
        msg = "--cti-import other: needs a second input (--cti-join or --cti-union)"
        raise UsageError(msg)
    imported = None
    if args.cti_import is not None and not import_other:
        imported = read_events(args.cti_import)
    columns = columns_from_args(args, left)
    if columns.arrival is not None:  # far-off arrivals: one line each, as replay says them
        raw = left[columns.arrival]
        for line in far_off_notes(raw, to_utc(raw), columns.arrival):
            sys.stderr.write(f"warning: {line}\n")
    result = replay_cti(
        inputs,
        policy,
        columns,
        operator=_operator(args),
        window=window,
        imported=imported,
        import_other=import_other,
        labels=[args.events, *([second] if second else [])],
        batch_size=args.batch_size,
    )
    # the reader's renames (empty or repeated header cells) come first, then the replay's
    renames = tuple((*header, *own) for (_, header), own in zip(read, result.renames, strict=True))
    return dataclasses.replace(result, renames=renames)


def run(args: argparse.Namespace) -> int:
    """Replay in CTI mode, write the outputs, print the summary."""
    out = out_folder(args.out)
    options = options_from_args(args)
    result = replay_from_args(args)
    second = args.cti_join or args.cti_union
    sources = [options.source, *([Path(second).stem] if second else [])]
    summary, files = write_outputs(
        result, out, options, sources, operator=_operator(args), window=args.cti_window
    )
    if args.json:
        sys.stdout.write(json.dumps(summary, indent=2) + "\n")
    else:
        text = format_summary(summary, flag_of=FLAGS.get)
        sys.stdout.write(f"{text}\nwrote {out}/{', '.join(files)}\n")
    return 0
