"""The replay command's diagnostics flags (``diagnostics.jsonl``, ``metrics.parquet``).

``orderdoc replay`` calls :func:`add_arguments` on its parser, :func:`given_flags` to reject
them where nothing is written (``--outcomes-only``) and :func:`options_from_args` for the
:class:`~diagnostics.instrument.InstrumentOptions` it passes to
:func:`diagnostics.instrument.outputs.write_outputs`.
"""

from __future__ import annotations

import argparse

from diagnostics.cli.values import flag_duration
from diagnostics.instrument.options import InstrumentOptions, LogFormat

#: Each diagnostics flag and its default (a flag not given is ``None`` in the namespace, so
#: that a given one can be told from its default).
DEFAULTS: dict[str, str] = {
    "--error-window": "1m",
    "--idle-notice": "5m",
    "--job": "orderdoc-replay",
    "--source": "input",
    "--log-format": LogFormat.RESOURCE.value,
}


def _attr(flag: str) -> str:
    return flag.lstrip("-").replace("-", "_")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``--error-window``, ``--idle-notice``, ``--job``, ``--source``, ``--log-format``."""
    group = parser.add_argument_group("diagnostics (ASA-format logs and metrics)")
    group.add_argument(
        "--error-window",
        metavar="DURATION",
        help="processing-time window of one aggregated data-error record (default 1m, as ASA)",
    )
    group.add_argument(
        "--idle-notice",
        metavar="DURATION",
        help="write InputPartitionNotProgressing after this much idleness, repeated (default 5m)",
    )
    group.add_argument("--job", help="job name in the resourceId (default orderdoc-replay)")
    group.add_argument("--source", help="input name (properties.Source; default input)")
    group.add_argument(
        "--log-format",
        choices=[f.value for f in LogFormat],
        help="resource-log records (default) or activity-log messages",
    )


def given_flags(args: argparse.Namespace) -> list[str]:
    """The diagnostics flags the user gave, in the order of :data:`DEFAULTS`."""
    return [flag for flag in DEFAULTS if getattr(args, _attr(flag), None) is not None]


def _value(args: argparse.Namespace, flag: str) -> str:
    value = getattr(args, _attr(flag), None)
    return DEFAULTS[flag] if value is None else str(value)


def options_from_args(args: argparse.Namespace) -> InstrumentOptions:
    """Validated :class:`InstrumentOptions` from the parsed flags (errors name the flag)."""
    return InstrumentOptions(
        error_window_ns=flag_duration(
            "--error-window", _value(args, "--error-window"), positive=True
        ),
        idle_notice_ns=flag_duration("--idle-notice", _value(args, "--idle-notice"), positive=True),
        job=_value(args, "--job"),
        source=_value(args, "--source"),
        log_format=LogFormat(_value(args, "--log-format")),
    )
