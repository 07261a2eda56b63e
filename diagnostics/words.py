"""Counts in words: a number with its noun in the singular or the plural, and the verb that
agrees with it, for every user-facing message (never ``noun(s)``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def number(value: Any) -> str:
    """``"1,234"``, ``"4.6"``, ``"yes"``/``"no"`` for a bool, ``str(value)`` otherwise."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.3g}" if abs(value) < 1000 else f"{value:,.0f}"
    return str(value)


def noun(count: float | None, one: str, many: str | None = None) -> str:
    """``one`` for a count of one, else ``many`` (by default ``one`` + s)."""
    return one if count == 1 else (many or f"{one}s")


def plural(count: float | None, one: str, many: str | None = None, *, minimum: bool = False) -> str:
    """``"1 event"``, ``"1,234 events"``, ``"at least 2 events"`` (``many``: the plural when
    it is not ``one`` + s; ``minimum``: the count is a lower bound)."""
    return f"{'at least ' if minimum else ''}{number(count)} {noun(count, one, many)}"


def verb(count: float | None, one: str, many: str) -> str:
    """``one`` for a count of one, else ``many`` (``was``/``were``)."""
    return one if count == 1 else many


def partitions(ids: Any) -> str:
    """``"partition 3"``, ``"partitions 1, 3"``: partition numbers as every page and command
    names them (never a bare number)."""
    listed = [int(p) for p in ids]
    return f"{noun(len(listed), 'partition')} {', '.join(map(str, listed))}"


def listed(items: Sequence[str]) -> str:
    """``"a"``, ``"a and b"``, ``"a, b and c"``: names in a sentence."""
    if len(items) < 2:
        return "".join(items)
    return f"{', '.join(items[:-1])} and {items[-1]}"
