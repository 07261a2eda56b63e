"""The replay command's diagnostics flags (``diagnostics.jsonl``, ``metrics.parquet``).

``orderdoc replay`` calls :func:`add_arguments` on its parser and :func:`options_from_args`
for the :class:`~diagnostics.instrument.InstrumentOptions` it passes to
:func:`diagnostics.instrument.outputs.write_outputs`.
"""

from __future__ import annotations

import argparse

from diagnostics.cli.values import flag_duration
from diagnostics.instrument.options import InstrumentOptions, LogFormat


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


def options_from_args(args: argparse.Namespace) -> InstrumentOptions:
    """Validated :class:`InstrumentOptions` from the parsed flags (errors name the flag)."""
    return InstrumentOptions(
        error_window_ns=flag_duration("--error-window", args.error_window, positive=True),
        idle_notice_ns=flag_duration("--idle-notice", args.idle_notice, positive=True),
        job=args.job,
        source=args.source,
        log_format=LogFormat(args.log_format),
    )
