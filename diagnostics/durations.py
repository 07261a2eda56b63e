"""Durations as integer nanoseconds, parsed from the forms users type.

Accepted: ``500ms``, ``5s``, ``3m``, ``1h30m``, ``20d``, ``2d4h``, ``1.5s``, ``100ns``,
``1tick`` (100 ns, .NET's tick), ``0``, and clock forms ``hh:mm:ss[.fff]`` or ``d.hh:mm:ss``
(the ASA portal form). A leading ``-`` makes a negative duration where the caller allows it.
"""

from __future__ import annotations

import re

NS = 1
US = 1_000
MS = 1_000_000
SECOND = 1_000_000_000
MINUTE = 60 * SECOND
HOUR = 60 * MINUTE
DAY = 24 * HOUR
TICK = 100

_UNITS = {
    "ns": NS,
    "tick": TICK,
    "ticks": TICK,
    "us": US,
    "µs": US,
    "ms": MS,
    "s": SECOND,
    "sec": SECOND,
    "m": MINUTE,
    "min": MINUTE,
    "h": HOUR,
    "d": DAY,
}
_PART = re.compile(r"(\d+(?:\.\d+)?)\s*(ticks|tick|ns|us|µs|ms|sec|min|s|m|h|d)", re.IGNORECASE)
_CLOCK = re.compile(r"^(?:(\d+)\.)?(\d{1,2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?$")


class DurationError(ValueError):
    """The text is not a duration this module understands."""


def parse_duration(text: str) -> int:
    """Return ``text`` as nanoseconds, or raise :class:`DurationError` saying why."""
    raw = text.strip()
    if not raw:
        msg = "empty duration; expected e.g. 500ms, 5s, 3m, 1h30m, 20d or hh:mm:ss"
        raise DurationError(msg)
    sign = 1
    body = raw
    if body[0] in "+-":
        sign = -1 if body[0] == "-" else 1
        body = body[1:].strip()
    if body == "0":
        return 0
    clock = _CLOCK.match(body)
    if clock:
        days, hours, minutes, seconds, frac = clock.groups()
        total = int(days or 0) * DAY + int(hours) * HOUR + int(minutes) * MINUTE
        total += int(seconds) * SECOND
        if frac:
            total += int(frac.ljust(9, "0"))
        if int(minutes) > 59 or int(seconds) > 59:
            msg = f"'{text}' is not a valid hh:mm:ss duration (minutes and seconds must be < 60)"
            raise DurationError(msg)
        return sign * total
    pos = 0
    total = 0
    for match in _PART.finditer(body):
        if body[pos : match.start()].strip():
            break
        number, unit = match.groups()
        total += round(float(number) * _UNITS[unit.lower()])
        pos = match.end()
    if pos == 0 or body[pos:].strip():
        msg = (
            f"'{text}' is not a duration; expected e.g. 500ms, 5s, 3m, 1h30m, 20d, "
            "hh:mm:ss or d.hh:mm:ss"
        )
        raise DurationError(msg)
    return sign * total


def format_duration(ns: int | None) -> str:
    """Render nanoseconds compactly (``1h30m``, ``5s``, ``250ms``, ``500us``), in the forms
    :func:`parse_duration` reads; ``None`` is ``unlimited``."""
    if ns is None:
        return "unlimited"
    if ns == 0:
        return "0s"
    sign = "-" if ns < 0 else ""
    rest = abs(ns)
    parts: list[str] = []
    units = (("d", DAY), ("h", HOUR), ("m", MINUTE), ("s", SECOND), ("ms", MS), ("us", US))
    for unit, size in units:
        count, rest = divmod(rest, size)
        if count:
            parts.append(f"{count}{unit}")
    if rest:
        parts.append(f"{rest}ns")
    return sign + "".join(parts)


def format_clock(ns: int) -> str:
    """Render as the ASA portal shows tolerances: ``hh:mm:ss`` (``d.hh:mm:ss`` beyond a day)."""
    seconds = ns // SECOND
    days, seconds = divmod(seconds, 86_400)
    hours, seconds = divmod(seconds, 3_600)
    minutes, seconds = divmod(seconds, 60)
    clock = f"{hours:02d}:{minutes:02d}:{seconds:02d}"
    return f"{days}.{clock}" if days else clock
