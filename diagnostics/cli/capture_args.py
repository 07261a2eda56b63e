"""Reading the capture a command names (replay, whatif, explain --events): the library's
errors about a setting get the flag that sets it."""

from __future__ import annotations

import argparse

from diagnostics.captures.dialect import CsvOptions
from diagnostics.captures.reader import Capture, read_capture
from diagnostics.cli.flags import message
from diagnostics.cli.progress import ProgressLine
from diagnostics.errors import SettingError


def with_flag(exc: SettingError) -> SettingError:
    """``exc`` with ``(use --flag)`` appended to its message."""
    return SettingError(message(exc), exc.setting)


def csv_options_of(args: argparse.Namespace) -> CsvOptions:
    """``--separator`` and ``--decimal-comma`` as the readers take them (local and Spark)."""
    return CsvOptions(
        separator=getattr(args, "separator", None),
        decimal_comma=True if getattr(args, "decimal_comma", False) else None,
    )


def capture_from_args(args: argparse.Namespace, path: str | None = None) -> Capture:
    """The capture at ``path`` (default ``args.events``), read as the column flags say."""
    progress = ProgressLine("read capture files")
    try:
        return read_capture(
            path if path is not None else args.events,
            arrival=getattr(args, "arrival_col", None),
            partition=getattr(args, "partition_col", None),
            path_format=getattr(args, "capture_path_format", None),
            progress=progress,
            csv_options=csv_options_of(args),
        )
    except SettingError as exc:
        raise with_flag(exc) from exc
    finally:
        progress.finish()
