"""The ``orderdoc replay`` flags of the CTI (StreamInsight) mode, and the mode's run.

``replay`` calls :func:`add_arguments` on its parser and hands over to :func:`run` when
:func:`wants_cti` is true (``--cti-every`` or ``--cti-import`` given). Outputs in ``--out``:
``outcomes.parquet`` (the input; with two inputs also ``outcomes_right.parquet``),
``ctis.parquet``, ``diagnostics.jsonl`` (``CtiViolation`` records), ``metrics.parquet`` (when
there are arrival times) and ``cti_summary.json``.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

import polars as pl

from diagnostics.cti.frames import CTI_OUTCOME_COLUMNS, CtiColumns
from diagnostics.cti.metrics import cti_metrics
from diagnostics.cti.policy import CtiPolicy, HoppingWindow, Operator, ViolationPolicy
from diagnostics.cti.records import suggest_cti_delay, violation_records
from diagnostics.cti.replay import CtiReplayResult, replay_cti
from diagnostics.durations import DurationError, format_duration, parse_duration
from diagnostics.engine.events_io import read_events
from diagnostics.errors import InputError, PolicyError, UsageError
from diagnostics.instrument.aggregate import aggregate_errors, example_payloads
from diagnostics.instrument.cli import options_from_args
from diagnostics.instrument.correlation import correlation_id
from diagnostics.instrument.options import InstrumentOptions
from diagnostics.instrument.records import data_error_record
from diagnostics.instrument.run import write_diagnostics, write_metrics
from diagnostics.timestamps import UTC_NS

IMPORT_OTHER = "other"
#: Arguments that are negative values, not flags: ``-1``, ``-1tick``, ``-100ns``, ``-0.5s``.
_NEGATIVE_VALUE = re.compile(r"^-\d[\w.:µ]*$")
DEFAULT_ARRIVAL = "arrival_time"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``--cti-*`` flags and the event-shape columns.

    argparse takes ``-1tick`` for an option unless told that ``-<digit>...`` is a value (a
    negative duration); no flag of ``replay`` starts with a digit, so this is safe.
    ``--cti-delay=-1tick`` works either way.
    """
    parser._negative_number_matcher = _NEGATIVE_VALUE
    group = parser.add_argument_group(
        "StreamInsight CTI mode (application-time advancement, docs/cti.md)"
    )
    group.add_argument(
        "--cti-every",
        metavar="N|DURATION",
        help="generate a CTI after every N start edges, or every DURATION of application "
        "time; turns on CTI mode",
    )
    group.add_argument(
        "--cti-delay",
        default="0",
        metavar="DURATION",
        help="CTI = latest start − delay; may be negative down to -1tick (-100ns); default 0",
    )
    group.add_argument(
        "--cti-policy",
        choices=[v.value for v in ViolationPolicy],
        default=ViolationPolicy.ADJUST.value,
        help="events starting before the latest CTI are dropped, or adjusted (default)",
    )
    group.add_argument("--cti-flush", action="store_true", help="issue a CTI at +inf on close")
    group.add_argument(
        "--start-col",
        metavar="COL",
        help="event start column (default: --timestamp-by, else start_time)",
    )
    group.add_argument("--end-col", metavar="COL", help="interval end column (interval events)")
    group.add_argument(
        "--edge-col", metavar="COL", help="edge events: column holding 'start' or 'end'"
    )
    group.add_argument(
        "--cti-import",
        metavar="FILE|other",
        help="import CTIs: a CTI table (cti, processing_time; a ctis.parquet works) or "
        "'other' for the other input of --cti-join/--cti-union; turns on CTI mode",
    )
    two = group.add_mutually_exclusive_group()
    two.add_argument("--cti-join", metavar="FILE", help="second input, joined with EVENTS")
    two.add_argument("--cti-union", metavar="FILE", help="second input, unioned with EVENTS")
    group.add_argument(
        "--cti-window",
        metavar="SIZE[/HOP]",
        help="a hopping (or tumbling) window after the input/operator: holds CTIs back",
    )


def wants_cti(args: argparse.Namespace) -> bool:
    """True when the flags ask for the CTI mode."""
    return (
        getattr(args, "cti_every", None) is not None
        or getattr(args, "cti_import", None) is not None
    )


def _duration(flag: str, text: str) -> int:
    try:
        return parse_duration(text)
    except DurationError as exc:
        msg = f"{flag} {text!r}: {exc}"
        raise UsageError(msg) from exc


def policy_from_args(args: argparse.Namespace) -> CtiPolicy:
    """The :class:`CtiPolicy` the flags describe (errors name the flag)."""
    every_events: int | None = None
    every_ns: int | None = None
    text = args.cti_every
    if text is not None:
        if text.strip().isdigit():
            every_events = int(text)
        else:
            every_ns = _duration("--cti-every", text)
    try:
        return CtiPolicy(
            every_events=every_events,
            every_ns=every_ns,
            delay_ns=_duration("--cti-delay", args.cti_delay),
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
    size = _duration("--cti-window", size_text)
    hop = _duration("--cti-window", hop_text) if hop_text else size
    try:
        return HoppingWindow(size, hop)
    except PolicyError as exc:
        msg = f"--cti-window {args.cti_window!r}: {exc}"
        raise UsageError(msg) from exc


def columns_from_args(args: argparse.Namespace, frame: pl.DataFrame) -> CtiColumns:
    """Start/end/edge/arrival columns; a missing default arrival column means no arrivals."""
    start = args.start_col or getattr(args, "timestamp_by", None) or "start_time"
    arrival = getattr(args, "arrival_col", DEFAULT_ARRIVAL)
    if arrival not in frame.columns:
        if arrival != DEFAULT_ARRIVAL:
            msg = f"--arrival-col {arrival}: no such column in {args.events}"
            raise InputError(msg)
        arrival = None
    return CtiColumns(start=start, end=args.end_col, edge=args.edge_col, arrival=arrival)


def replay_from_args(args: argparse.Namespace) -> CtiReplayResult:
    """Read the inputs and replay them as the flags say."""
    policy = policy_from_args(args)
    window = window_from_args(args)
    left = read_events(args.events)
    second = args.cti_join or args.cti_union
    inputs = [left] if second is None else [left, read_events(second)]
    operator = None if second is None else Operator.JOIN if args.cti_join else Operator.UNION
    import_other = args.cti_import == IMPORT_OTHER
    if import_other and second is None:
        msg = "--cti-import other: needs a second input (--cti-join or --cti-union)"
        raise UsageError(msg)
    imported = None
    if args.cti_import is not None and not import_other:
        imported = read_events(args.cti_import)
    return replay_cti(
        inputs,
        policy,
        columns_from_args(args, left),
        operator=operator,
        window=window,
        imported=imported,
        import_other=import_other,
        labels=[args.events, *([second] if second else [])],
        batch_size=args.batch_size,
    )


def summarize(result: CtiReplayResult, args: argparse.Namespace) -> dict[str, Any]:
    """Counts per input, CTI counts and the suggested delay (JSON-ready)."""
    ctis = result.ctis
    inputs = []
    for index, frame in enumerate(result.outcomes):
        inputs.append(
            {
                "events": frame.height,
                "violations": int(frame["violation"].sum()),
                "adjusted": int((frame["status"] == "adjusted").sum()),
                "dropped": int((frame["violation"] & frame["dropped"]).sum()),
                "invalid_timestamp": int(frame["invalid_timestamp"].sum()),
                "released": int(frame["release_time"].is_not_null().sum()),
                "committed_at_infinity": int(frame["committed_at_infinity"].sum()),
                "ctis": int((ctis["stream"] == ("left", "right")[index]).sum()),
            }
        )
    suggestion = suggest_cti_delay(result.violations, result.policy.delay_ns)
    return {
        "mode": "cti",
        "policy": result.policy.describe(),
        "operator": "join" if args.cti_join else "union" if args.cti_union else None,
        "window": args.cti_window,
        "inputs": inputs,
        "output_ctis": int((ctis["stream"] == "output").sum()),
        "cti_delay_ns": result.policy.delay_ns,
        "suggested_cti_delay_ns": suggestion,
        "suggested_cti_delay": format_duration(suggestion),
    }


def _format(summary: dict[str, Any]) -> str:
    lines = [f"CTI replay: {summary['policy']}"]
    for name, item in zip(("input", "second input"), summary["inputs"], strict=False):
        lines.append(
            f"{name}: {item['events']} events, {item['violations']} CTI violations "
            f"({item['dropped']} dropped, {item['adjusted']} adjusted), "
            f"{item['invalid_timestamp']} with an invalid time (dropped), "
            f"{item['released']} released ({item['committed_at_infinity']} only by the flush), "
            f"{item['ctis']} CTIs"
        )
    lines.append(f"output CTIs: {summary['output_ctis']}")
    if summary["suggested_cti_delay_ns"] != summary["cti_delay_ns"]:
        lines.append(
            f"a --cti-delay of {summary['suggested_cti_delay']} would have avoided the "
            "violations of generated CTIs"
        )
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Replay in CTI mode and write the outputs (see the module docstring)."""
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        msg = f"--out {args.out}: exists and is not a folder"
        raise InputError(msg)
    result = replay_from_args(args)
    out.mkdir(parents=True, exist_ok=True)
    result.outcomes[0].write_parquet(out / "outcomes.parquet")
    if len(result.outcomes) == 2:
        result.outcomes[1].write_parquet(out / "outcomes_right.parquet")
    result.ctis.write_parquet(out / "ctis.parquet")
    options = options_from_args(args)
    records: list[dict[str, Any]] = []
    for index, frame in enumerate(result.outcomes):
        source = options.source if index == 0 else Path(args.cti_join or args.cti_union).stem
        mine = [v for v in result.violations if v.stream == index]
        payloads = _payloads(frame, [v.event_id for v in mine])
        scoped = options_from_args(argparse.Namespace(**{**vars(args), "source": source}))
        records += violation_records(
            mine, scoped, policy_text=result.policy.describe(), payloads=payloads
        )
        records += _invalid_records(frame, scoped, result.policy.describe())
    records.sort(key=lambda r: str(r.get("time") or r.get("message Time")))
    write_diagnostics(out / "diagnostics.jsonl", records)
    metrics = cti_metrics(result.outcomes, result.cti_records, options.job)
    if metrics is not None:
        write_metrics(out / "metrics.parquet", metrics)
    summary = summarize(result, args)
    (out / "cti_summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    if args.json:
        sys.stdout.write(json.dumps(summary, indent=2) + "\n")
    else:
        sys.stdout.write(
            _format(summary) + f"\nwrote {out}/outcomes.parquet, ctis.parquet, diagnostics.jsonl\n"
        )
    return 0


def _payloads(frame: pl.DataFrame, event_ids: list[int]) -> dict[int, dict[str, Any]]:
    """Input columns of the given events, for ``ExampleEvents``."""
    keep = [c for c in frame.columns if c not in CTI_OUTCOME_COLUMNS]
    rows = frame.filter(pl.col("event_id").is_in(event_ids)).select("event_id", *keep)
    return {int(row["event_id"]): {c: row[c] for c in keep} for row in rows.iter_rows(named=True)}


def _invalid_records(
    frame: pl.DataFrame, options: InstrumentOptions, policy_text: str
) -> list[dict[str, Any]]:
    """``InvalidInputTimeStamp`` records for rows whose start/end could not be used, through
    the ASA replay's own aggregation (needs arrival times to place them in windows)."""
    bad = frame.filter(pl.col("invalid_timestamp") & pl.col("arrival").is_not_null())
    if bad.is_empty():
        return []
    shaped = bad.with_columns(
        pl.lit(0, pl.Int64).alias("partition"),
        pl.lit(None, UTC_NS).alias("application_time"),
        *(pl.lit(False).alias(flag) for flag in ("late", "early", "out_of_order", "invalid_key")),
    )
    aggregates = aggregate_errors(shaped, options.error_window_ns)
    payload_columns = [c for c in frame.columns if c not in CTI_OUTCOME_COLUMNS]
    examples = example_payloads(
        shaped.select("event_id", *payload_columns), aggregates["example_event_id"].to_list()
    )
    cid = correlation_id(str(bad["event_id"].to_list()), policy_text)
    return [
        data_error_record(row, examples.get(row["example_event_id"], "[]"), options, cid, ())
        for row in aggregates.iter_rows(named=True)
    ]
