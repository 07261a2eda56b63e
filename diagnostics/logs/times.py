"""Parsing the time stamps found in ASA logs into timezone-aware UTC datetimes.

Accepted forms (all seen in real exports):

* ISO 8601 with ``T`` or a space, 0-9 fractional digits (.NET writes 7), and ``Z``, ``UTC``,
  an offset, or nothing (a naive value is UTC): ``2019-02-04T17:10:49.7250696Z``;
* US dates as in activity logs and Log Analytics CSV exports: ``2/3/2019 8:54:16 PM UTC``,
  ``02/04/2019 17:11:48``, ``2/4/2019, 5:11:52.725 PM``.

Invariant: the result is ``None`` or an aware UTC datetime truncated to microseconds; no
wall-clock read, no locale dependence.
"""

from __future__ import annotations

import datetime as dt
import re

_ISO = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})[T ](\d{1,2}):(\d{2}):(\d{2})(?:[.,](\d+))?"
    r"\s*(Z|UTC|GMT|[+-]\d{2}:?\d{2})?$",
    re.IGNORECASE,
)
_US = re.compile(
    r"^(\d{1,2})/(\d{1,2})/(\d{4}),?\s+(\d{1,2}):(\d{2}):(\d{2})(?:\.(\d+))?"
    r"\s*(AM|PM)?\s*(Z|UTC|GMT)?$",
    re.IGNORECASE,
)
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_UTC = dt.UTC
_FROMISO = dt.datetime.fromisoformat


def _micros(fraction: str | None) -> int:
    if not fraction:
        return 0
    return int((fraction + "000000")[:6])


def _offset(text: str | None) -> dt.timedelta:
    if not text or text.upper() in {"Z", "UTC", "GMT"}:
        return dt.timedelta(0)
    sign = -1 if text[0] == "-" else 1
    digits = text[1:].replace(":", "")
    return sign * dt.timedelta(hours=int(digits[:2]), minutes=int(digits[2:]))


def parse_log_time(value: object) -> dt.datetime | None:
    """The UTC datetime ``value`` denotes, or ``None`` if it is not a time string we know."""
    if not isinstance(value, str):
        return None
    text = value.strip()
    if len(text) >= 19 and text[4] == "-" and text[10] in "T ":
        # fast paths: Python's own ISO parser (truncates beyond microseconds, as we do)
        last = text[-1]
        try:
            if last == "Z":
                parsed = _FROMISO(text)
                return parsed if parsed.tzinfo is _UTC else parsed.astimezone(_UTC)
            if last in "0123456789":
                try:  # naive means UTC; a text that has an offset does not parse with a second
                    return _FROMISO(text + "+00:00")
                except ValueError:
                    parsed = _FROMISO(text)
                if parsed.tzinfo is None:
                    return parsed.replace(tzinfo=_UTC)
                return parsed.astimezone(_UTC)
        except (ValueError, OverflowError):
            pass
    match = _ISO.match(text)
    try:
        if match:
            year, month, day, hour, minute, second, frac, off = match.groups()
            naive = dt.datetime(
                int(year), int(month), int(day), int(hour), int(minute), int(second),
                _micros(frac), tzinfo=dt.UTC,
            )  # fmt: skip
            return naive - _offset(off)
        match = _US.match(text)
        if match:
            month, day, year, hour, minute, second, frac, ampm, _zone = match.groups()
            hour_int = int(hour)
            if ampm:
                if not 1 <= hour_int <= 12:
                    return None
                hour_int = hour_int % 12 + (12 if ampm.upper() == "PM" else 0)
            return dt.datetime(
                int(year), int(month), int(day), hour_int, int(minute), int(second),
                _micros(frac), tzinfo=dt.UTC,
            )  # fmt: skip
    except (ValueError, OverflowError):
        return None
    return None


def to_micros(value: dt.datetime | None) -> int | None:
    """Microseconds since the Unix epoch of an aware datetime (``None`` stays ``None``)."""
    if value is None:
        return None
    delta = value - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
