"""Timestamp renderings used by ASA's logs, from integer nanoseconds since the epoch (UTC).

- :func:`iso_ticks` ``2019-02-04T17:10:49.7250696Z``: resource-log times, processing times;
- :func:`iso_ticks_naive` ``2019-02-04T17:05:51.6050000``: times inside ``BriefMessage``;
- :func:`activity_short` ``2019-02-04 17:11:52Z``: ``message Time`` of a DiagnosticMessage;
- :func:`activity_us` ``2/3/2019 8:54:16 PM UTC``: ``message Time`` of a partition notice;
- :func:`first_occurred` ``02/04/2019 17:11:48``: the activity message's "First Occurred".

All are exact (no rounding up); sub-tick nanoseconds are truncated, as .NET would.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def to_datetime(ns: int) -> datetime:
    """The aware UTC datetime of ``ns`` (microsecond precision)."""
    return _EPOCH + timedelta(microseconds=ns // 1000)


def _ticks(ns: int) -> str:
    return f"{(ns % 1_000_000_000) // 100:07d}"


def iso_ticks(ns: int) -> str:
    """``YYYY-MM-DDTHH:MM:SS.fffffffZ`` (seven fractional digits, .NET ticks)."""
    return to_datetime(ns).strftime("%Y-%m-%dT%H:%M:%S.") + _ticks(ns) + "Z"


def iso_ticks_naive(ns: int) -> str:
    """As :func:`iso_ticks` without the ``Z`` (how ``BriefMessage`` quotes event times)."""
    return iso_ticks(ns)[:-1]


def activity_short(ns: int) -> str:
    """``YYYY-MM-DD HH:MM:SSZ``."""
    return to_datetime(ns).strftime("%Y-%m-%d %H:%M:%SZ")


def activity_us(ns: int) -> str:
    """``M/D/YYYY h:MM:SS AM|PM UTC`` (US culture, no leading zeros on month, day, hour)."""
    moment = to_datetime(ns)
    hour = moment.hour % 12 or 12
    half = "AM" if moment.hour < 12 else "PM"
    return (
        f"{moment.month}/{moment.day}/{moment.year} "
        f"{hour}:{moment.minute:02d}:{moment.second:02d} {half} UTC"
    )


def first_occurred(ns: int) -> str:
    """``MM/DD/YYYY HH:MM:SS``."""
    return to_datetime(ns).strftime("%m/%d/%Y %H:%M:%S")
