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
from diagnostics.jobdef.job import JobPolicy

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
    group.add_argument(
        "--job",
        help="job name in the resourceId (default: the --job-definition's job, else "
        "orderdoc-replay)",
    )
    group.add_argument(
        "--source",
        help="input name (properties.Source; default: the --job-definition's input, else input)",
    )
    group.add_argument(
        "--log-format",
        choices=[f.value for f in LogFormat],
        help="resource-log records (default) or activity-log messages",
    )


def given_flags(args: argparse.Namespace) -> list[str]:
    """The diagnostics flags the user gave, in the order of :data:`DEFAULTS`."""
    return [flag for flag in DEFAULTS if getattr(args, _attr(flag), None) is not None]


def _value(args: argparse.Namespace, flag: str, named: dict[str, str | None] | None = None) -> str:
    value = getattr(args, _attr(flag), None)
    if value is not None:
        return str(value)
    return (named or {}).get(flag) or DEFAULTS[flag]


def options_from_args(args: argparse.Namespace, job: JobPolicy | None = None) -> InstrumentOptions:
    """Validated :class:`InstrumentOptions` from the parsed flags (errors name the flag).
    ``job``: the ``--job-definition``'s job, whose name and input name the records carry
    where ``--job`` and ``--source`` are not given (as the job's own logs would)."""
    named: dict[str, str | None] = (
        {} if job is None else {"--job": job.definition.name, "--source": job.input.name}
    )
    return InstrumentOptions(
        error_window_ns=flag_duration(
            "--error-window", _value(args, "--error-window"), positive=True
        ),
        idle_notice_ns=flag_duration("--idle-notice", _value(args, "--idle-notice"), positive=True),
        job=_value(args, "--job", named),
        source=_value(args, "--source", named),
        log_format=LogFormat(_value(args, "--log-format")),
    )
