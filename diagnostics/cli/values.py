"""Flag values every command checks the same way: durations and the ``--out`` folder.

Errors are :class:`~diagnostics.errors.UsageError` naming the flag and the value.
"""

from __future__ import annotations

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


def out_folder(path: str | Path, *, flag: str = "--out", create: bool = False) -> Path:
    """The output folder ``path``: an existing file there is an error; ``create`` makes it."""
    out = Path(path)
    if out.exists() and not out.is_dir():
        msg = f"{flag} {path}: exists and is not a folder"
        raise UsageError(msg)
    if create:
        out.mkdir(parents=True, exist_ok=True)
    return out
