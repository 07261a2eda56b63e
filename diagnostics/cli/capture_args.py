"""Reading the capture a command names (replay, whatif, explain --events, impact, translate,
cti): the library's errors about a setting get the flag that sets it, and Event Hubs Capture
files go through the capture cache (``--cache DIR``, ``--no-cache``; one line on stderr says
what it did)."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from diagnostics.captures.capture_cache import CaptureCache, default_root
from diagnostics.captures.dialect import CsvOptions
from diagnostics.captures.reader import Capture, read_capture
from diagnostics.cli.flags import message
from diagnostics.cli.progress import ProgressLine, note
from diagnostics.errors import InputError, Setting, SettingError, UsageError


def with_flag(exc: SettingError) -> SettingError:
    """``exc`` with ``(use --flag)`` appended to its message."""
    return SettingError(message(exc), exc.setting)


def csv_options_of(args: argparse.Namespace) -> CsvOptions:
    """``--separator`` and ``--decimal-comma`` as the readers take them (local and Spark)."""
    return CsvOptions(
        separator=getattr(args, "separator", None),
        decimal_comma=True if getattr(args, "decimal_comma", False) else None,
    )


def add_cache_arguments(parser: argparse.ArgumentParser) -> None:
    """``--cache DIR`` and ``--no-cache``."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--cache",
        default=None,
        metavar="DIR",
        help=(
            "keep Event Hubs Capture files, once decoded, as columns in DIR and read them "
            "from there next time (default: $ORDERDOC_CACHE, else $XDG_CACHE_HOME/orderdoc, "
            "else ~/.cache/orderdoc)"
        ),
    )
    group.add_argument(
        "--no-cache",
        action="store_true",
        help="decode the Capture files again and keep nothing once the command ends",
    )


def cache_of(args: argparse.Namespace, *, defer: bool = False) -> CaptureCache | None:
    """The cache the flags choose: ``--cache DIR`` (an error when it cannot be used), none
    with ``--no-cache`` (a temporary one when the passthrough columns are deferred), else
    the user's cache folder (none, with a warning, when it cannot be used)."""
    if getattr(args, "no_cache", False):
        return CaptureCache.temporary() if defer else None
    given = getattr(args, "cache", None)
    if given is not None:
        if not str(given).strip():
            msg = "--cache: give a folder (or --no-cache)"
            raise UsageError(msg, Setting.OUTPUT)
        return CaptureCache.open(Path(given), flag="--cache")
    try:
        return CaptureCache.open(default_root())
    except InputError as exc:
        sys.stderr.write(f"warning: {exc}; reading without it\n")
        return CaptureCache.temporary() if defer else None


def is_capture_folder(path: str) -> bool:
    """Whether ``path`` is read as Event Hubs Capture files (a folder, an ``.avro`` file)."""
    found = Path(path)
    return found.is_dir() or (found.is_file() and found.suffix.lower() == ".avro")


def capture_from_args(
    args: argparse.Namespace, path: str | None = None, *, defer: bool = False
) -> Capture:
    """The capture at ``path`` (default ``args.events``), read as the column flags say;
    ``defer``: keep Capture's passthrough columns out of memory (:attr:`Capture.deferred`)."""
    where = path if path is not None else args.events
    cache = cache_of(args, defer=defer) if is_capture_folder(str(where)) else None
    progress = ProgressLine("read capture files")
    started = time.perf_counter()
    try:
        capture = read_capture(
            where,
            arrival=getattr(args, "arrival_col", None),
            partition=getattr(args, "partition_col", None),
            path_format=getattr(args, "capture_path_format", None),
            progress=progress,
            csv_options=csv_options_of(args),
            cache=cache,
            defer=defer,
        )
    except SettingError as exc:
        raise with_flag(exc) from exc
    finally:
        progress.finish()
    if capture.cache_line is not None:
        took = time.perf_counter() - started
        note(f"{capture.cache_line} ({took:.1f} s)")
    return capture
