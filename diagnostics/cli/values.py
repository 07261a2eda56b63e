"""Flag values every command checks the same way: durations and the ``--out`` folder.

Errors are :class:`~diagnostics.errors.UsageError` naming the flag and the value.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from diagnostics.durations import DurationError, parse_duration
from diagnostics.errors import UsageError


def flag_duration(flag: str, text: str, *, positive: bool = False) -> int:
    """``text`` (the value of ``flag``) in nanoseconds; with ``positive`` it must be > 0."""
    try:
        value = parse_duration(text)
    except DurationError as exc:
        msg = f"{flag} {text!r}: {exc}"
        raise UsageError(msg) from exc
    if positive and value <= 0:
        msg = f"{flag} {text!r}: must be a positive duration"
        raise UsageError(msg)
    return value


def path_arg(text: str) -> Path:
    """argparse ``type`` for a path that must be named (``Path("")`` would be the current
    folder)."""
    if not text.strip():
        msg = "the path is empty; name a folder"
        raise argparse.ArgumentTypeError(msg)
    return Path(text)


def out_folder(path: str | Path, *, flag: str = "--out", create: bool = False) -> Path:
    """The output folder ``path``, checked before any work starts: an empty path, a file there
    or a file where one of its parent folders would be is an error naming ``flag``; ``create``
    makes it (a folder that cannot be made is an error too)."""
    if not str(path).strip():
        msg = f"{flag}: the output folder is empty; name a folder"
        raise UsageError(msg)
    out = Path(path)
    if out.exists() and not out.is_dir():
        msg = f"{flag} {path}: exists and is not a folder"
        raise UsageError(msg)
    blocking = next((p for p in out.parents if p.exists() and not p.is_dir()), None)
    if blocking is not None:
        msg = f"{flag} {path}: {blocking} is a file, so no folder can be made inside it"
        raise UsageError(msg)
    if create:
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            msg = f"{flag} {path}: cannot make the folder ({exc.strerror or exc})"
            raise UsageError(msg) from exc
    return out
