"""Checked reads of the watcher's JSON state files (``STATE/manifest.json``,
``STATE/plan.json``; :mod:`diagnostics.watch.manifest`): each names the field and what is wrong
with it, so a corrupt state file is reported in one line instead of a traceback."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def whole(value: Mapping[str, Any], key: str) -> int:
    """``value[key]``, a whole number >= 0."""
    got = value[key]
    if isinstance(got, bool) or not isinstance(got, int) or got < 0:
        msg = f"{key!r} is {got!r}, not a whole number >= 0"
        raise TypeError(msg)
    return got


def strings(value: Mapping[str, Any], key: str, *, optional: bool = False) -> tuple[str, ...]:
    """``value[key]``, a list of strings (an empty one when ``optional`` and absent)."""
    got = value.get(key, []) if optional else value[key]
    if not isinstance(got, list) or not all(isinstance(item, str) for item in got):
        msg = f"{key!r} is not a list of strings"
        raise TypeError(msg)
    return tuple(got)


def objects(value: Mapping[str, Any], key: str) -> list[dict[str, Any]]:
    """``value[key]``, a list of JSON objects."""
    got = value[key]
    if not isinstance(got, list) or not all(isinstance(item, dict) for item in got):
        msg = f"{key!r} is not a list of objects"
        raise TypeError(msg)
    return got


def reason(exc: Exception) -> str:
    """What is wrong with a state file, in words (a bare ``KeyError`` is a missing field)."""
    if isinstance(exc, KeyError) and len(exc.args) == 1 and " " not in str(exc.args[0]):
        return f"no field {exc.args[0]!r}"
    return str(exc.args[0]) if len(exc.args) == 1 else str(exc)
