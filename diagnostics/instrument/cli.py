"""The replay command's diagnostics flags and outputs (``diagnostics.jsonl``, ``metrics.parquet``).

``orderdoc replay`` calls :func:`add_arguments` on its parser and, once the replay is done,
:func:`write_outputs` with the parsed flags, the replay result and the output folder.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import polars as pl

from diagnostics.cli.values import flag_duration
from diagnostics.errors import UsageError
from diagnostics.instrument.options import InstrumentOptions, LogFormat
from diagnostics.instrument.run import Instrumented, instrument, write_diagnostics, write_metrics

DIAGNOSTICS_FILE = "diagnostics.jsonl"
METRICS_FILE = "metrics.parquet"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``--error-window``, ``--idle-notice``, ``--job``, ``--source``, ``--log-format``."""
    group = parser.add_argument_group("diagnostics (ASA-format logs and metrics)")
    group.add_argument(
        "--error-window",
        default="1m",
        metavar="DURATION",
        help="processing-time window of one aggregated data-error record (default 1m, as ASA)",
    )
    group.add_argument(
        "--idle-notice",
        default="5m",
        metavar="DURATION",
        help="write InputPartitionNotProgressing after this much idleness, repeated (default 5m)",
    )
    group.add_argument("--job", default="orderdoc-replay", help="job name in the resourceId")
    group.add_argument("--source", default="input", help="input name (properties.Source)")
    group.add_argument(
        "--log-format",
        choices=[f.value for f in LogFormat],
        default=LogFormat.RESOURCE.value,
        help="resource-log records (default) or activity-log messages",
    )


def options_from_args(
    args: argparse.Namespace, key_columns: tuple[str, ...] = ()
) -> InstrumentOptions:
    """Validated :class:`InstrumentOptions` from the parsed flags (errors name the flag)."""
    window = flag_duration("--error-window", args.error_window, positive=True)
    idle = flag_duration("--idle-notice", args.idle_notice, positive=True)
    try:
        return InstrumentOptions(
            error_window_ns=window,
            idle_notice_ns=idle,
            job=args.job,
            source=args.source,
            log_format=LogFormat(args.log_format),
            key_columns=key_columns,
        )
    except UsageError as exc:
        msg = f"--job/--source: {exc}"
        raise UsageError(msg) from exc


def engine_watermark_delay(run: Any) -> pl.DataFrame | None:
    """The engine's per-minute watermark delay for ``run``, or ``None`` if unavailable."""
    try:
        from diagnostics.engine.watermarks import watermark_delay_per_minute
    except ImportError:
        return None
    return watermark_delay_per_minute(run)


def write_outputs(args: argparse.Namespace, run: Any, out_dir: Path) -> Instrumented:
    """Write ``diagnostics.jsonl`` and ``metrics.parquet`` for a finished replay into ``out_dir``.

    ``run`` is the engine's ``ReplayResult`` (``outcomes``, ``policy``, ``partitions``). The
    ``TIMESTAMP BY ... OVER`` keys, when set, are the keys counted per aggregate.
    """
    policy = run.policy
    over = tuple(getattr(policy, "over", ()) or ())
    options = options_from_args(args, key_columns=over)
    policy_text = policy.describe() if hasattr(policy, "describe") else repr(policy)
    result = instrument(
        run.outcomes,
        options,
        policy_text=f"{policy_text}|{policy!r}",
        partitions=tuple(run.partitions),
        watermark_delay=lambda: engine_watermark_delay(run),
    )
    out_dir = Path(out_dir)
    write_diagnostics(out_dir / DIAGNOSTICS_FILE, result.records)
    write_metrics(out_dir / METRICS_FILE, result.metrics)
    return result
